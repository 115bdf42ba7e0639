"""HotpotQA heads on the ETC-RealFormer encoder, and their losses.

  answer_type_logits [B, 3]  = Dense(global_output[:, 0])          (CLS: span / yes / no)
  sp_logits          [B, G]  = Dense(global_output)                (sigmoid per SENTENCE token)
  begin/end_logits   [B, L]  = Dense(long_output)                  (softmax over sentence pieces)

Loss = mean of three parts: answer-type cross-entropy; supporting-fact binary cross-entropy
averaged over the SENTENCE tokens of each example; span cross-entropy (mean of begin and end)
over the examples whose answer is a span. Each part is averaged per example then over the batch
(the span part over span examples), so it does not depend on how a batch is split; with
gradient accumulation the span part of each micro-batch is divided by its share of the whole
batch's span examples (`loss_weights`, LossModel.weight_total), which keeps that true.
"""

import tensorflow as tf

from tasks.common.task_model import TaskModel, softmax_loss, span_loss
from tasks.hotpotqa.features import MODEL_FEATURES

NUM_ANSWER_TYPES = 3


class HotpotQaModel(TaskModel):
  """EtcModel + answer-type, supporting-fact and span heads."""

  model_features = MODEL_FEATURES
  metric_names = ("loss", "answer_type_loss", "sp_loss", "span_loss", "answer_type_accuracy",
                  "sp_accuracy", "span_accuracy")

  def make_heads(self):
    self.answer_type_head = self.dense(NUM_ANSWER_TYPES, "answer_type")
    self.sp_head = self.dense(1, "supporting_fact")
    self.span_head = self.dense(2, "span")
    return [self.answer_type_head, self.sp_head, self.span_head]

  def call(self, features, training=None):
    out = self.encode(features, training)
    long_x, global_x = out["long_output"], out["global_output"]      # [B, L, H], [B, G, H]
    span = tf.cast(self.span_head(long_x), tf.float32)                # [B, L, 2]
    return {
        "answer_type_logits": tf.cast(self.answer_type_head(global_x[:, 0]), tf.float32),
        "sp_logits": tf.cast(self.sp_head(global_x)[..., 0], tf.float32),   # [B, G]
        "begin_logits": span[..., 0],                                  # [B, L]
        "end_logits": span[..., 1],
    }

  def loss_weights(self, features):
    """The span loss averages over the span examples: {"span": [B] 1.0 where the answer is a
    span}."""
    return {"span": _is_span(features)}

  def compute_losses(self, features, outputs):
    """Scalar losses and accuracies of one batch."""
    # Answer type.
    types = tf.cast(features["answer_type"], tf.int32)                          # [B]
    type_loss, type_acc = softmax_loss(types, outputs["answer_type_logits"])     # [B, 3]

    # Supporting facts: per example mean over its SENTENCE tokens.
    sp_mask = tf.cast(features["sp_mask"], tf.float32)                         # [B, G]
    sp_labels = tf.cast(features["sp_labels"], tf.float32)
    sp_logits = outputs["sp_logits"]
    bce = tf.nn.sigmoid_cross_entropy_with_logits(labels=sp_labels, logits=sp_logits)
    sp_count = tf.maximum(tf.reduce_sum(sp_mask, 1), 1.0)                      # [B]
    sp_loss = tf.reduce_mean(tf.reduce_sum(bce * sp_mask, 1) / sp_count)
    sp_right = tf.cast(tf.equal(tf.cast(sp_logits > 0, tf.float32), sp_labels), tf.float32)
    sp_acc = tf.math.divide_no_nan(tf.reduce_sum(sp_right * sp_mask), tf.reduce_sum(sp_mask))

    # Span begin/end over sentence pieces, for span answers.
    is_span = _is_span(features)                                                # [B]
    per_example, right, _ = span_loss(outputs["begin_logits"], outputs["end_logits"],
                                      features["span_mask"], features["answer_begin"],
                                      features["answer_end"])                     # [B] each
    span_part = tf.math.divide_no_nan(tf.reduce_sum(per_example * is_span),
                                      self.weight_total(features, "span", is_span))
    span_acc = tf.math.divide_no_nan(tf.reduce_sum(right * is_span), tf.reduce_sum(is_span))

    loss = (type_loss + sp_loss + span_part) / 3.0
    return {"loss": loss, "answer_type_loss": type_loss, "sp_loss": sp_loss,
            "span_loss": span_part, "answer_type_accuracy": type_acc, "sp_accuracy": sp_acc,
            "span_accuracy": span_acc}


def _is_span(features):
  """[B] float: 1 for the examples whose answer is a span (answer type 0)."""
  return tf.cast(tf.equal(tf.cast(features["answer_type"], tf.int32), 0), tf.float32)
