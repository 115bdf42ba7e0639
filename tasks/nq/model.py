"""Natural Questions heads on the ETC-RealFormer encoder, and their losses.

  answer_type_logits  [B, 5] = Dense(global_output[:, 0])   (CLS: null, yes, no, long, short)
  long_start/end      [B, L] = Dense(long_output)           (softmax over document pieces)
  short_start/end     [B, L] = Dense(long_output)           (softmax over non-html pieces)

Loss = mean of three parts: answer-type cross-entropy over all windows; long-span cross-entropy
(mean of start and end) over the windows holding the long answer; short-span cross-entropy over
the windows holding a short span. Each part is averaged per window, then over the windows it
applies to, so it does not depend on how a batch is split.
"""

from typing import Any, Dict, Union

import tensorflow as tf
import tf_keras

from etc_realformer.config import EtcConfig
from tasks.common.task_model import TaskModel
from tasks.nq.features import MODEL_FEATURES

_NEG = -10000.0
NUM_ANSWER_TYPES = 5


def span_loss(start_logits, end_logits, mask, start, end):
  """Per-window span cross-entropy and exact-match, with `mask` [B, L] the allowed positions.

  -> (loss [B], right [B] float, applies [B] float: 1 where start >= 0).
  """
  mask = tf.cast(mask, tf.bool)
  applies = tf.cast(start >= 0, tf.float32)                                     # [B]
  losses, right = [], []
  for logits, target in ((start_logits, start), (end_logits, end)):
    logits = tf.where(mask, logits, _NEG)                                       # [B, L]
    target = tf.maximum(tf.cast(target, tf.int32), 0)
    losses.append(tf.nn.sparse_softmax_cross_entropy_with_logits(target, logits))
    right.append(tf.cast(tf.equal(tf.argmax(logits, -1, output_type=tf.int32), target),
                         tf.float32))
  return (losses[0] + losses[1]) / 2.0, right[0] * right[1], applies


class NqModel(TaskModel):
  """EtcModel + answer-type, long-span and short-span heads.

  Args:
    config: EtcConfig (or its dict) of the encoder.
    implementation: "blocked" or "dense" (see EtcModel).
  """

  def __init__(self, config: Union[EtcConfig, Dict[str, Any]], implementation: str = "blocked",
               **kwargs):
    super().__init__(config, implementation, **kwargs)
    init = self.initializer
    self.answer_type_head = tf_keras.layers.Dense(NUM_ANSWER_TYPES, kernel_initializer=init(),
                                                  name="answer_type")
    self.long_head = tf_keras.layers.Dense(2, kernel_initializer=init(), name="long_span")
    self.short_head = tf_keras.layers.Dense(2, kernel_initializer=init(), name="short_span")
    self.heads = [self.answer_type_head, self.long_head, self.short_head]
    self.tracked = {name: tf_keras.metrics.Mean(name) for name in (
        "loss", "answer_type_loss", "long_loss", "short_loss", "answer_type_accuracy",
        "long_accuracy", "short_accuracy")}

  def call(self, features, training=None):
    inputs = {name: features[name] for name in MODEL_FEATURES if name in features}
    out = self.encoder(inputs, training=training)
    long_x, global_x = out["long_output"], out["global_output"]      # [B, L, H], [B, G, H]
    long_span = tf.cast(self.long_head(long_x), tf.float32)           # [B, L, 2]
    short_span = tf.cast(self.short_head(long_x), tf.float32)         # [B, L, 2]
    return {
        "answer_type_logits": tf.cast(self.answer_type_head(global_x[:, 0]), tf.float32),
        "long_start_logits": long_span[..., 0],
        "long_end_logits": long_span[..., 1],
        "short_start_logits": short_span[..., 0],
        "short_end_logits": short_span[..., 1],
    }

  def compute_losses(self, features, outputs):
    """Scalar losses and accuracies of one batch."""
    types = tf.cast(features["answer_type"], tf.int32)                          # [B]
    type_logits = outputs["answer_type_logits"]
    type_loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(types, type_logits))
    type_acc = tf.reduce_mean(tf.cast(
        tf.equal(tf.argmax(type_logits, -1, output_type=tf.int32), types), tf.float32))
    parts = {}
    for name, mask in (("long", "doc_mask"), ("short", "short_mask")):
      loss, right, applies = span_loss(
          outputs[f"{name}_start_logits"], outputs[f"{name}_end_logits"], features[mask],
          tf.cast(features[f"{name}_start"], tf.int32), tf.cast(features[f"{name}_end"], tf.int32))
      count = tf.reduce_sum(applies)
      parts[f"{name}_loss"] = tf.math.divide_no_nan(tf.reduce_sum(loss * applies), count)
      parts[f"{name}_accuracy"] = tf.math.divide_no_nan(tf.reduce_sum(right * applies), count)
    loss = (type_loss + parts["long_loss"] + parts["short_loss"]) / 3.0
    return {"loss": loss, "answer_type_loss": type_loss, "answer_type_accuracy": type_acc,
            **parts}
