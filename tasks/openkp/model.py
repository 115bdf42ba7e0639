"""The OpenKP model of Google's run_finetuning_lib.py on Google's features (tasks/openkp/features.py).

See `OpenKpModel` for what it computes; its loss is Google's (softmax cross-entropy over every
(n, start) cell against the gold cells, with additive smoothing).
"""

import math
from typing import Any, Dict, Union

import tensorflow as tf
import tf_keras

from etc_realformer.config import EtcConfig
from etc_realformer.autograph import without_autograph
from etc_realformer.layers.scopes import build_in_scope
from etc_realformer.ops.activations import activation
from tasks.common.task_model import NEG, TaskModel
from tasks.openkp.features import FONT_ID_VOCAB_SIZE

# (feature, clip range) of the eight dense visual features, as Google's run_finetuning.py flag
# defaults (x_coords_min/max, ...); the parent's features use the element's range.
DENSE_RANGES = (
    ("global_x_coords", (-50.0, 1500.0)), ("global_y_coords", (-50.0, 6000.0)),
    ("global_widths", (0.0, 1500.0)), ("global_heights", (0.0, 18000.0)),
    ("global_parent_x_coords", (-50.0, 1500.0)), ("global_parent_y_coords", (-50.0, 6000.0)),
    ("global_parent_widths", (0.0, 1500.0)), ("global_parent_heights", (0.0, 18000.0)))
# Indicators crossed into one categorical id (run_finetuning.py --indicators_to_cross), the
# first the most significant bit; the other indicators are dense inputs, in this order.
CROSSED_INDICATORS = ("global_block_indicator", "global_heading_indicator", "global_bold_indicator")
DENSE_INDICATORS = ("global_inline_indicator", "global_leaf_indicator",
                    "global_parent_heading_indicator", "global_parent_leaf_indicator",
                    "global_parent_bold_indicator")
_gelu = activation("gelu")   # the tanh form, as official ETC


def example_breakpoints(mask: tf.Tensor) -> tf.Tensor:
  """[B, N] 0/1 prefix mask -> [B, N] breakpoints: 1 on its last 1 (one example per row)."""
  mask = tf.cast(mask, tf.int32)
  following = tf.pad(mask[:, 1:], [[0, 0], [0, 1]])
  return mask * (1 - following)


def scale_dense(values: tf.Tensor, low: float, high: float) -> tf.Tensor:
  """Clip to [low, high], then map linearly onto [-1, 1] (Google's DenseFeatureScaler)."""
  mid, half = (high + low) / 2.0, (high - low) / 2.0
  return (tf.clip_by_value(tf.cast(values, tf.float32), low, high) - mid) / half


class OpenKpModel(TaskModel):
  """The OpenKP model of Google's run_finetuning_lib.py, on Google's feature names.

    global adder = E_cross[block*4 + heading*2 + bold] + E_font[global_font_ids]
                   + E_parent_font[global_parent_font_ids]
                   + gelu(Dense(gelu(Dense(13 dense inputs))))           [B, G, H]
      (13 = the 8 coordinates clipped and scaled to [-1, 1], then 5 indicators as floats)
    long adder = global adder gathered by long_vdom_idx                  [B, L, H]
    encoder: token_ids = long_token_ids, sentence_ids = long_vdom_idx, one example per row
      (breakpoints at the last 1 of long_input_mask / global_input_mask)
    words = LayerNorm(sum of the pieces' outputs per long_word_idx)      [B, W=L, H]
    for n = 1..5: Dense_1(LayerNorm(gelu(Conv1D(width n, valid)(words))))  [B, L - n + 1],
      padded right to L; -10000 where word start + n - 1 is past long_word_input_mask
    ngram_logits                                                         [B, 5, L]

  Loss: softmax cross-entropy over the 5 * L cells against Google's labels: the one-hot cells
  of (label_phrase_len - 1, label_start_idx) normalised, plus `additive_smoothing_mass`
  spread over all cells (run_finetuning.py's default 1e-4). A label longer than 5 words or a
  -1 slot adds nothing.
  """

  metric_names = ("loss", "top1_in_gold")

  def __init__(self, config: Union[EtcConfig, Dict[str, Any]], implementation: str = "blocked",
               max_phrase_words: int = 5, additive_smoothing_mass: float = 1e-4, **kwargs):
    super().__init__(config, implementation, **kwargs)
    self.max_phrase_words = max_phrase_words
    self.additive_smoothing_mass = max(additive_smoothing_mass, 1e-6)
    hidden = self.etc_config.hidden_size
    init = self.initializer
    embedding = lambda size, name: tf_keras.layers.Embedding(
        size, hidden, embeddings_initializer=init(), name=name)
    self.cross_embedding = embedding(2 ** len(CROSSED_INDICATORS), "indicator_cross_emb_lookup")
    self.font_embedding = embedding(FONT_ID_VOCAB_SIZE, "font_id_emb_lookup")
    self.parent_font_embedding = embedding(FONT_ID_VOCAB_SIZE, "parent_font_id_emb_lookup")
    dense = lambda name: tf_keras.layers.Dense(
        hidden, activation=_gelu, kernel_initializer=init(), name=name)
    self.dense_projection = dense("dense_feature_projection")
    self.dense_layer2 = dense("dense_feature_layer2")
    self.word_norm = tf_keras.layers.LayerNormalization(epsilon=1e-12, name="word_emb_layer_norm")
    self.convolutions, self.norms, self.scorers = [], [], []
    for n in range(1, max_phrase_words + 1):
      self.convolutions.append(tf_keras.layers.Conv1D(
          hidden, n, activation=_gelu, name=f"{n}gram_conv",
          kernel_initializer=tf_keras.initializers.TruncatedNormal(stddev=0.02 / math.sqrt(n))))
      self.norms.append(tf_keras.layers.LayerNormalization(epsilon=1e-12,
                                                           name=f"{n}gram_layer_norm"))
      self.scorers.append(tf_keras.layers.Dense(1, use_bias=False, kernel_initializer=init(),
                                                name=f"logit_dense{n - 1}"))

  def build(self, input_shape=None):
    hidden = self.etc_config.hidden_size
    for layer in (self.cross_embedding, self.font_embedding, self.parent_font_embedding):
      build_in_scope(layer, [None, None])
    build_in_scope(self.dense_projection, [None, len(DENSE_RANGES) + len(DENSE_INDICATORS)])
    for layer in ([self.dense_layer2, self.word_norm] + self.norms + self.scorers
                  + self.convolutions):
      build_in_scope(layer, [None, None, hidden])   # [B, G or W, H] inputs
    super().build(input_shape)

  def visual_embeddings(self, features) -> tf.Tensor:
    """The global embedding adder [B, G, H] of the visual features."""
    cross = 0
    for name in CROSSED_INDICATORS:
      cross = cross * 2 + tf.cast(features[name], tf.int32)                 # [B, G] in 0..7
    dense = [scale_dense(features[name], *bounds) for name, bounds in DENSE_RANGES]
    dense += [tf.cast(features[name], tf.float32) for name in DENSE_INDICATORS]
    dense = tf.stack(dense, axis=-1)                                        # [B, G, 13]
    adder = (self.cross_embedding(cross)
             + self.font_embedding(tf.cast(features["global_font_ids"], tf.int32))
             + self.parent_font_embedding(tf.cast(features["global_parent_font_ids"], tf.int32)))
    return adder + tf.cast(self.dense_layer2(self.dense_projection(dense)), adder.dtype)

  @without_autograph
  def call(self, features, training=None):
    vdom_idx = tf.cast(features["long_vdom_idx"], tf.int32)                 # [B, L]
    global_extra = self.visual_embeddings(features)                          # [B, G, H]
    long_extra = tf.gather(global_extra, vdom_idx, batch_dims=1)            # [B, L, H]
    inputs = {"token_ids": features["long_token_ids"],
              "global_token_ids": features["global_token_ids"],
              "sentence_ids": vdom_idx,
              "long_breakpoints": example_breakpoints(features["long_input_mask"]),
              "global_breakpoints": example_breakpoints(features["global_input_mask"])}
    long_x = self.encoder(inputs, training=training, long_extra_embeddings=long_extra,
                          global_extra_embeddings=global_extra)["long_output"]   # [B, L, H]
    batch, length = tf.shape(long_x)[0], tf.shape(long_x)[1]
    piece_mask = tf.cast(features["long_input_mask"], long_x.dtype)         # [B, L]
    word_idx = tf.cast(features["long_word_idx"], tf.int32)                 # [B, L]
    segments = word_idx + tf.range(batch)[:, None] * length                 # [B, L]
    words = tf.math.unsorted_segment_sum(long_x * piece_mask[..., None], segments,
                                         batch * length)                     # [B * L, H]
    words = self.word_norm(tf.reshape(words, [batch, length, long_x.shape[-1]]))   # [B, W, H]
    word_mask = tf.cast(features["long_word_input_mask"], tf.float32)       # [B, W]
    rows = []
    for n, (conv, norm, scorer) in enumerate(zip(self.convolutions, self.norms, self.scorers),
                                             start=1):
      scores = tf.cast(scorer(norm(conv(words)))[..., 0], tf.float32)       # [B, W - n + 1]
      scores = tf.pad(scores, [[0, 0], [0, n - 1]])                         # [B, W]
      last_word = tf.pad(word_mask[:, n - 1:], [[0, 0], [0, n - 1]])        # [B, W]
      rows.append(scores * last_word + NEG * (1.0 - last_word))
    return {"ngram_logits": tf.stack(rows, axis=1)}                          # [B, N, W]

  def ngram_labels(self, features, num_n: int, length) -> tf.Tensor:
    """Google's label distribution [B, N * W] (see the class docstring)."""
    lengths = tf.one_hot(tf.cast(features["label_phrase_len"], tf.int32) - 1, num_n)  # [B, K, N]
    starts = tf.one_hot(tf.cast(features["label_start_idx"], tf.int32), length)      # [B, K, W]
    cells = tf.einsum("bkn,bkw->bnw", lengths, starts)                                # [B, N, W]
    cells = tf.reshape(cells, [tf.shape(cells)[0], -1])                               # [B, N * W]
    labels = cells / (tf.reduce_sum(cells, -1, keepdims=True) + 1e-6)
    labels += self.additive_smoothing_mass / tf.cast(tf.shape(cells)[1], tf.float32)
    return labels / tf.reduce_sum(labels, -1, keepdims=True)

  def compute_losses(self, features, outputs):
    logits = outputs["ngram_logits"]                                        # [B, N, W]
    batch, num_n, length = tf.shape(logits)[0], logits.shape[1], tf.shape(logits)[2]
    flat = tf.reshape(logits, [batch, -1])                                  # [B, N * W]
    labels = self.ngram_labels(features, num_n, length)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels, flat))
    best = tf.argmax(flat, -1, output_type=tf.int32)                        # [B]
    hit = tf.gather(labels, best, batch_dims=1) > 1.5 * self.additive_smoothing_mass / tf.cast(
        tf.shape(flat)[1], tf.float32)
    return {"loss": loss, "top1_in_gold": tf.reduce_mean(tf.cast(hit, tf.float32))}

  def get_config(self):
    config = super().get_config()
    config.update(max_phrase_words=self.max_phrase_words,
                  additive_smoothing_mass=self.additive_smoothing_mass)
    return config
