"""The WikiHop model: it reads Google's features, builds the attention as Google's code does, and
puts Google's head on the global output.

Attention is derived from the features as Google's run_wikihop_lib.py derives it (multihop_utils
make_global_local_transformer_side_inputs, with candidate_ignore_hard_g2l, query_ignore_hard_g2l
and enable_l2g_linking all true): segments from the paragraph breakpoints, hard masks from
long_sentence_ids / long_paragraph_ids, "own" relative ids for the sentence, the paragraph and
the linked candidate. These eight side inputs go to the encoder as given (docs/model_inputs.md,
"Side inputs"); a padding token attends only to itself (Google's attend to other padding), which
leaves real tokens' outputs the same. Head (run_wikihop_lib.process_model_output): with
add_final_layer a post-LN residual block on the global output, then one logit per global token,
-10000 on non-candidates; loss: mean cross-entropy against label_id over real examples. Every
detail: docs/official_layouts/wikihop.md, "Model".
"""

import tensorflow as tf
import tf_keras

from etc_realformer.autograph import without_autograph
from etc_realformer.layers.scopes import build_in_scope
from etc_realformer.ops import blocking
from etc_realformer.ops import relative
from etc_realformer.ops.activations import activation

from tasks.common.task_model import NEG, TaskModel
from tasks.wikihop import features as features_lib


def side_inputs(features, local_radius: int, max_distance: int, use_hard_g2l_mask: bool,
                use_hard_l2g_mask: bool, relative_ids: bool = True):
  """The eight side inputs (int32) from Google's WikiHop features."""
  def as_int(name):
    return tf.cast(features[name], tf.int32)

  long_segment = tf.cumsum(as_int("long_paragraph_breakpoints"), axis=-1, reverse=True)  # [B, L]
  global_segment = tf.cumsum(as_int("global_paragraph_breakpoints"), axis=-1,
                             reverse=True)                                              # [B, G]
  long_real, global_real = long_segment > 0, global_segment > 0
  sentence, paragraph = as_int("long_sentence_ids"), as_int("long_paragraph_ids")       # [B, L]
  global_types = as_int("global_token_type_ids")                                        # [B, G]
  global_len = blocking.static_or_dynamic(global_types, 1)
  positions = tf.range(global_len)[None, :, None]                                       # [1, G, 1]

  r = local_radius
  framed = blocking.frame_window(long_segment, r, pad_value=-1)                 # [B, L, 2r+1]
  center = tf.one_hot(r, 2 * r + 1, on_value=True, off_value=False, dtype=tf.bool)      # [2r+1]
  l2l = tf.logical_or(tf.logical_and(tf.equal(framed, long_segment[:, :, None]),
                                     long_real[:, :, None]),
                      tf.logical_and(tf.logical_not(long_real)[:, :, None], center))
  g2g = tf.logical_and(global_real[:, :, None], global_real[:, None, :])                # [B, G, G]
  g2g = tf.logical_or(g2g, tf.logical_and(tf.logical_not(global_real)[:, :, None],
                                          tf.eye(global_len, dtype=tf.bool)[None]))
  g2l = tf.logical_and(global_real[:, :, None], long_real[:, None, :])                  # [B, G, L]
  l2g = tf.logical_and(long_real[:, :, None], global_real[:, None, :])                  # [B, L, G]
  owns = tf.logical_or(tf.equal(positions, sentence[:, None, :]),
                       tf.equal(positions, paragraph[:, None, :]))                      # [B, G, L]
  if use_hard_g2l_mask:
    exempt = tf.logical_or(tf.equal(global_types, features_lib.CANDIDATE_GLOBAL_TYPE_ID),
                           tf.equal(global_types, features_lib.QUESTION_GLOBAL_TYPE_ID))    # [B, G]
    g2l = tf.logical_and(g2l, tf.logical_or(owns, exempt[:, :, None]))
  if use_hard_l2g_mask:
    l2g = tf.logical_and(l2g, tf.transpose(owns, [0, 2, 1]))
  side = {"l2l_att_mask": l2l, "g2g_att_mask": g2g, "l2g_att_mask": l2g, "g2l_att_mask": g2l}
  side = {name: tf.cast(mask, tf.int32) for name, mask in side.items()}
  if relative_ids:
    k = max_distance
    batch = blocking.static_or_dynamic(long_segment, 0)
    long_len = blocking.static_or_dynamic(long_segment, 1)
    side["l2l_relative_att_ids"] = tf.broadcast_to(
        relative.window_relative_ids(r, k)[None, None, :], [batch, long_len, 2 * r + 1])
    g2g_ids = tf.broadcast_to(relative.full_relative_ids(global_len, global_len, k)[None],
                              [batch, global_len, global_len])                           # [B, G, G]
    side["g2g_relative_att_ids"] = tf.where(
        tf.not_equal(global_segment[:, :, None], global_segment[:, None, :]),
        relative.unordered_context_id(k), g2g_ids)
    linked = tf.equal(positions, as_int("l2g_linked_ids")[:, None, :])                  # [B, G, L]
    side.update(relative.stream_relative_ids(tf.logical_or(owns, linked), k))
  return side


class WikiHopModel(TaskModel):
  """EtcModel on Google's WikiHop features + Google's head: logits [B, G] over candidates."""

  model_features = ()   # the encoder's inputs are built in `call`
  metric_names = ("loss", "accuracy")

  def __init__(self, config, add_final_layer: bool = True, **kwargs):
    self.add_final_layer = add_final_layer
    super().__init__(config, **kwargs)

  def get_config(self):
    return dict(super().get_config(), add_final_layer=self.add_final_layer)

  def make_heads(self):
    config = self.etc_config
    self.output_layer = self.dense(1, "output")
    if not self.add_final_layer:
      return [self.output_layer]
    self.final_inner = self.dense(config.intermediate_size, "final_layer_inner")
    self.final_output = self.dense(config.hidden_size, "final_layer_output")
    self.final_norm = tf_keras.layers.LayerNormalization(epsilon=1e-12, name="final_layer_norm")
    self.final_dropout = tf_keras.layers.Dropout(config.hidden_dropout_prob)
    return [self.final_inner, self.output_layer]

  def build(self, input_shape=None):
    super().build(input_shape)
    if not self.add_final_layer:
      return
    build_in_scope(self.final_output, [None, self.etc_config.intermediate_size])
    build_in_scope(self.final_norm, [None, None, self.etc_config.hidden_size])   # [B, G, H]
    self.built = True

  def encoder_inputs(self, features):
    """Google's features -> the encoder's features (ids, token types, the side inputs)."""
    config = self.etc_config
    inputs = {"token_ids": features["long_token_ids"],
              "segment_ids": features["long_token_type_ids"],
              "global_token_ids": features["global_token_ids"],
              "global_segment_ids": features["global_token_type_ids"]}
    inputs.update(side_inputs(features, config.local_radius, config.relative_pos_max_distance,
                              config.use_hard_g2l_mask, config.use_hard_l2g_mask,
                              relative_ids=bool(config.relative_vocab_size)))
    return inputs

  @without_autograph
  def call(self, features, training=None):
    global_x = self.encoder(self.encoder_inputs(features), training=training)["global_output"]
    if self.add_final_layer:
      inner = activation(self.etc_config.hidden_act)(self.final_inner(global_x))  # [B, G, I]
      global_x = self.final_norm(
          global_x + self.final_dropout(self.final_output(inner), training=training))  # [B, G, H]
    logits = tf.cast(self.output_layer(global_x)[..., 0], tf.float32)                # [B, G]
    candidate = tf.equal(tf.cast(features["global_token_type_ids"], tf.int32),
                         features_lib.CANDIDATE_GLOBAL_TYPE_ID)                            # [B, G]
    return {"candidate_logits": tf.where(candidate, logits, NEG)}

  def loss_weights(self, features):
    """Real examples weigh 1, Google's padding examples (is_real_example 0) nothing."""
    if "is_real_example" in features:
      return {"real": tf.reshape(tf.cast(features["is_real_example"], tf.float32), [-1])}
    return {"real": tf.ones_like(tf.reshape(tf.cast(features["label_id"], tf.float32), [-1]))}

  def compute_losses(self, features, outputs):
    logits = outputs["candidate_logits"]                                               # [B, G]
    labels = tf.reshape(tf.cast(features["label_id"], tf.int32), [-1])                 # [B]
    real = self.loss_weights(features)["real"]                                         # [B]
    losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)           # [B]
    right = tf.cast(tf.equal(tf.argmax(logits, -1, output_type=tf.int32), labels), tf.float32)
    weight = self.weight_total(features, "real", real) + 1e-5
    return {"loss": tf.reduce_sum(losses * real) / weight,
            "accuracy": tf.reduce_sum(right * real) / weight}
