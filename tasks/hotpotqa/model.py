"""The HotpotQA model: Google's feature names in, Google's heads and loss.

Encoder inputs are derived from Google's eight inference features the way its model derives its
attention (multihop side inputs, non-flat sequence); on real tokens they give exactly Google's
eight side inputs (tests/test_hotpotqa_layout.py), and padding tokens attend only to themselves
here (to other padding in Google's). Google's long_paragraph_ids / global_paragraph_ids mean
something else than the encoder's features of the same names, so the records are never passed
to the encoder as they are. Heads and loss are those of run_finetuning_lib.build_model ("span"
answers); option `span_loss_in_sentences` (not Google's) runs the begin and end softmaxes over
the title and sentence pieces only. Every input, head and loss term:
docs/official_layouts/hotpotqa.md, "Model".
"""

from typing import Any, Dict, Union

import tensorflow as tf

from etc_realformer.config import EtcConfig
from etc_realformer.autograph import without_autograph
from tasks.common.task_model import NEG, TaskModel
from tasks.hotpotqa import features as features_lib

NUM_ANSWER_TYPES = 3


def encoder_features(features):
  """Google's inference features -> the encoder's features (all int32)."""
  as_int = lambda name: tf.cast(features[name], tf.int32)  # pylint: disable=unnecessary-lambda-assignment
  sentence, paragraph = as_int("long_sentence_ids"), as_int("long_paragraph_ids")    # [B, L]
  global_ids = as_int("global_token_ids")                                             # [B, G]
  global_context = tf.cumsum(as_int("global_paragraph_breakpoints"), axis=1,
                             exclusive=True)                                          # [B, G]

  def context_of(index):   # [B, L] global positions (-1 = none) -> their contexts
    return tf.gather(global_context, tf.maximum(index, 0), batch_dims=1)

  long_context = tf.where(paragraph >= 0, context_of(paragraph),
                          tf.where(sentence >= 0, context_of(sentence), 0))          # [B, L]
  batch, global_len = tf.shape(global_ids)[0], tf.shape(global_ids)[1]
  slots = tf.where(paragraph >= 0, paragraph + tf.range(batch)[:, None] * global_len,
                   batch * global_len)                         # [B, L] flat global index
  named = tf.math.unsorted_segment_max(tf.ones_like(paragraph), slots,
                                       batch * global_len + 1)[:batch * global_len]
  named = tf.reshape(tf.maximum(named, 0), [batch, global_len])  # [B, G] PARAGRAPH tokens
  first = tf.one_hot(0, global_len, dtype=tf.int32)[None]       # [1, G] the global [CLS]
  return {"token_ids": as_int("long_token_ids"), "segment_ids": as_int("long_token_type_ids"),
          "global_token_ids": global_ids, "global_segment_ids": as_int("global_token_type_ids"),
          "sentence_ids": sentence, "long_paragraph_ids": long_context,
          "global_paragraph_ids": global_context,
          "ignore_hard_g2l_mask": tf.maximum(named, first), "l2g_linked_ids": paragraph}


class HotpotQaModel(TaskModel):
  """EtcModel + Google's supporting-fact, answer-type and span heads, on Google's features."""

  model_features = features_lib.MODEL_INPUTS
  metric_names = ("loss", "sp_loss", "answer_type_loss", "begin_loss", "end_loss",
                  "answer_type_accuracy", "sp_accuracy")

  def __init__(self, config: Union[EtcConfig, Dict[str, Any]], implementation: str = "blocked",
               span_loss_in_sentences: bool = False, **kwargs):
    super().__init__(config, implementation, **kwargs)
    self.span_loss_in_sentences = span_loss_in_sentences

  def get_config(self):
    return {**super().get_config(), "span_loss_in_sentences": self.span_loss_in_sentences}

  def make_heads(self):
    self.sp_head = self.dense(1, "supporting_facts")
    self.answer_type_head = self.dense(NUM_ANSWER_TYPES, "answer_type")
    self.span_head = self.dense(2, "answer_span")
    return [self.sp_head, self.answer_type_head, self.span_head]

  @without_autograph
  def call(self, features, training=None):
    out = self.encoder(encoder_features(features), training=training)
    long_x, global_x = out["long_output"], out["global_output"]      # [B, L, H], [B, G, H]
    span = tf.cast(self.span_head(long_x), tf.float32)                # [B, L, 2]
    return {
        "answer_type_logits": tf.cast(self.answer_type_head(global_x[:, 0]), tf.float32),
        "sp_logits": tf.cast(self.sp_head(global_x)[..., 0], tf.float32),   # [B, G]
        "begin_logits": span[..., 0],                                  # [B, L]
        "end_logits": span[..., 1],
    }

  @staticmethod
  def span_positions(features):
    """[B, L] bool: the title and sentence pieces (typed title or sentence and inside a
    paragraph: the long [CLS] has the sentence type but no paragraph)."""
    types = tf.cast(features["long_token_type_ids"], tf.int32)
    in_paragraph = tf.cast(features["long_paragraph_ids"], tf.int32) >= 0
    return ((types == features_lib.SENTENCE_TYPE) | (types == features_lib.TITLE_TYPE)) & in_paragraph

  def compute_losses(self, features, outputs):
    labels = tf.cast(features["supporting_facts"], tf.float32)               # [B, G]
    sp_logits = outputs["sp_logits"]
    sp_loss = tf.reduce_mean(tf.reduce_sum(
        tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=sp_logits), axis=-1))

    def softmax_loss(target, logits, allowed=None):
      # One-hot targets as Google's: a position outside [0, depth) contributes 0 (a yes/no
      # answer may carry a text span past the long input). `allowed` [B, depth] bool: the
      # positions the softmax runs over; a target elsewhere contributes 0 too.
      depth = tf.shape(logits)[-1]
      one_hot = tf.one_hot(tf.cast(target, tf.int32), depth, dtype=logits.dtype)   # [B, depth]
      if allowed is not None:
        logits = tf.where(allowed, logits, NEG)
        one_hot *= tf.cast(allowed, one_hot.dtype)
      return -tf.reduce_mean(tf.reduce_sum(one_hot * tf.nn.log_softmax(logits), axis=-1))

    span_positions = self.span_positions(features) if self.span_loss_in_sentences else None
    types = tf.cast(features["answer_types"], tf.int32)                       # [B]
    type_loss = softmax_loss(types, outputs["answer_type_logits"])
    begin_loss = softmax_loss(features["answer_begins"], outputs["begin_logits"], span_positions)
    end_loss = softmax_loss(features["answer_ends"], outputs["end_logits"], span_positions)
    type_right = tf.equal(tf.argmax(outputs["answer_type_logits"], -1, output_type=tf.int32),
                          types)
    sp_right = tf.equal(tf.cast(sp_logits > 0, tf.float32), labels)
    return {"loss": (sp_loss + type_loss + begin_loss + end_loss) / 4.0, "sp_loss": sp_loss,
            "answer_type_loss": type_loss, "begin_loss": begin_loss, "end_loss": end_loss,
            "answer_type_accuracy": tf.reduce_mean(tf.cast(type_right, tf.float32)),
            "sp_accuracy": tf.reduce_mean(tf.cast(sp_right, tf.float32))}
