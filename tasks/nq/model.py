"""Natural Questions heads on the ETC-RealFormer encoder, and their losses.

  answer_type_logits  [B, 5] = Dense(global_output[:, 0])   (CLS: null, yes, no, long, short)
  long_start/end      [B, L] = Dense(long_output)           (softmax over document pieces)
  short_start/end     [B, L] = Dense(long_output)           (softmax over non-html pieces)

Loss = mean of three parts: answer-type cross-entropy over all windows; long-span cross-entropy
(mean of start and end) over the windows holding the long answer; short-span cross-entropy over
the windows holding a short span. Each part is averaged per window, then over the windows it
applies to, so it does not depend on how a batch is split; with gradient accumulation the span
parts of each micro-batch are divided by its share of the whole batch's windows they apply to
(`loss_weights`, LossModel.weight_total), which keeps that true.
"""

import tensorflow as tf

from tasks.common.task_model import TaskModel, softmax_loss, span_loss
from tasks.nq.features import MODEL_FEATURES

NUM_ANSWER_TYPES = 5


class NqModel(TaskModel):
  """EtcModel + answer-type, long-span and short-span heads."""

  model_features = MODEL_FEATURES
  metric_names = ("loss", "answer_type_loss", "long_loss", "short_loss", "answer_type_accuracy",
                  "long_accuracy", "short_accuracy")

  def make_heads(self):
    self.answer_type_head = self.dense(NUM_ANSWER_TYPES, "answer_type")
    self.long_head = self.dense(2, "long_span")
    self.short_head = self.dense(2, "short_span")
    return [self.answer_type_head, self.long_head, self.short_head]

  def call(self, features, training=None):
    out = self.encode(features, training)
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

  def loss_weights(self, features):
    """The long and short losses average over the windows holding that answer:
    {"long": [B], "short": [B]}, 1.0 where the answer's start is known (>= 0)."""
    return {name: tf.cast(tf.cast(features[f"{name}_start"], tf.int32) >= 0, tf.float32)
            for name in ("long", "short")}

  def compute_losses(self, features, outputs):
    """Scalar losses and accuracies of one batch."""
    type_loss, type_acc = softmax_loss(features["answer_type"],                 # [B]
                                       outputs["answer_type_logits"])         # [B, 5]
    parts = {}
    for name, mask in (("long", "doc_mask"), ("short", "short_mask")):
      loss, right, applies = span_loss(
          outputs[f"{name}_start_logits"], outputs[f"{name}_end_logits"], features[mask],
          tf.cast(features[f"{name}_start"], tf.int32), tf.cast(features[f"{name}_end"], tf.int32))
      parts[f"{name}_loss"] = tf.math.divide_no_nan(
          tf.reduce_sum(loss * applies), self.weight_total(features, name, applies))
      parts[f"{name}_accuracy"] = tf.math.divide_no_nan(tf.reduce_sum(right * applies),
                                                        tf.reduce_sum(applies))
    loss = (type_loss + parts["long_loss"] + parts["short_loss"]) / 3.0
    return {"loss": loss, "answer_type_loss": type_loss, "answer_type_accuracy": type_acc,
            **parts}
