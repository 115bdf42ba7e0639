"""HotpotQA heads on the ETC-RealFormer encoder, and their losses.

  answer_type_logits [B, 3]  = Dense(global_output[:, 0])          (CLS: span / yes / no)
  sp_logits          [B, G]  = Dense(global_output)                (sigmoid per SENTENCE token)
  begin/end_logits   [B, L]  = Dense(long_output)                  (softmax over sentence pieces)

Loss = mean of three parts: answer-type cross-entropy; supporting-fact binary cross-entropy
averaged over the SENTENCE tokens of each example; span cross-entropy (mean of begin and end)
over the examples whose answer is a span. Each part is averaged per example then over the batch
(the span part over span examples), so it does not depend on how a batch is split.
"""

from typing import Any, Dict, Union

import tensorflow as tf
import tf_keras

from etc_realformer.config import EtcConfig
from tasks.common.task_model import TaskModel
from tasks.hotpotqa.features import MODEL_FEATURES

_NEG = -10000.0
NUM_ANSWER_TYPES = 3


class HotpotQaModel(TaskModel):
  """EtcModel + answer-type, supporting-fact and span heads.

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
    self.sp_head = tf_keras.layers.Dense(1, kernel_initializer=init(), name="supporting_fact")
    self.span_head = tf_keras.layers.Dense(2, kernel_initializer=init(), name="span")
    self.heads = [self.answer_type_head, self.sp_head, self.span_head]
    self.tracked = {name: tf_keras.metrics.Mean(name) for name in (
        "loss", "answer_type_loss", "sp_loss", "span_loss", "answer_type_accuracy",
        "sp_accuracy", "span_accuracy")}

  def call(self, features, training=None):
    inputs = {name: features[name] for name in MODEL_FEATURES if name in features}
    out = self.encoder(inputs, training=training)
    long_x, global_x = out["long_output"], out["global_output"]      # [B, L, H], [B, G, H]
    span = tf.cast(self.span_head(long_x), tf.float32)                # [B, L, 2]
    return {
        "answer_type_logits": tf.cast(self.answer_type_head(global_x[:, 0]), tf.float32),
        "sp_logits": tf.cast(self.sp_head(global_x)[..., 0], tf.float32),   # [B, G]
        "begin_logits": span[..., 0],                                  # [B, L]
        "end_logits": span[..., 1],
    }

  def compute_losses(self, features, outputs):
    """Scalar losses and accuracies of one batch."""
    # Answer type.
    types = tf.cast(features["answer_type"], tf.int32)                          # [B]
    type_logits = outputs["answer_type_logits"]
    type_loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(types, type_logits))
    type_acc = tf.reduce_mean(tf.cast(
        tf.equal(tf.argmax(type_logits, -1, output_type=tf.int32), types), tf.float32))

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
    span_mask = tf.cast(features["span_mask"], tf.bool)                         # [B, L]
    is_span = tf.cast(tf.equal(types, 0), tf.float32)                           # [B]
    span_losses, span_right = [], []
    for key, target in (("begin_logits", "answer_begin"), ("end_logits", "answer_end")):
      logits = tf.where(span_mask, outputs[key], _NEG)                           # [B, L]
      labels = tf.maximum(tf.cast(features[target], tf.int32), 0)                # [B]
      span_losses.append(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
      span_right.append(tf.cast(tf.equal(tf.argmax(logits, -1, output_type=tf.int32), labels),
                                tf.float32))
    per_example = (span_losses[0] + span_losses[1]) / 2.0                          # [B]
    num_span = tf.reduce_sum(is_span)
    span_loss = tf.math.divide_no_nan(tf.reduce_sum(per_example * is_span), num_span)
    span_acc = tf.math.divide_no_nan(
        tf.reduce_sum(span_right[0] * span_right[1] * is_span), num_span)

    loss = (type_loss + sp_loss + span_loss) / 3.0
    return {"loss": loss, "answer_type_loss": type_loss, "sp_loss": sp_loss,
            "span_loss": span_loss, "answer_type_accuracy": type_acc, "sp_accuracy": sp_acc,
            "span_accuracy": span_acc}
