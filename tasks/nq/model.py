"""The NQ model of Google's run_nq_lib.py on Google's features (features.py).

The encoder reads token_ids, global_token_ids and, as Google's input pipeline derives its side
inputs from them, long_breakpoints, global_breakpoints and sentence_ids (no segment ids: long
tokens get segment 1, global tokens 0; no hard-g2l exemptions).

  span logits [B, L, 4] = Dense(long_output)   -> sa_start, sa_end, la_start, la_end
  answer_type_logits [B, 5] = Dense(long_output[:, 0])   (the long [CLS], not a global token)

Loss = (four span cross-entropies over all L positions + the answer-type cross-entropy) / 5,
each a mean over the batch; a window without that answer points at position 0 ([CLS]). A label
outside the range (answer_type -1 of an unannotated example) adds nothing, as Google's one-hot
loss does. The outputs are named decode.OUTPUT_NAMES (long = la, short = sa).
"""

import tensorflow as tf

from etc_realformer.autograph import without_autograph
from tasks.common.task_model import TaskModel
from tasks.nq.decode import SPAN_OUTPUTS
from tasks.nq.features import MODEL_FEATURES

NUM_ANSWER_TYPES = 5
SPANS = SPAN_OUTPUTS   # head column -> (label feature, output name)


def _one_hot_loss(labels, logits):
  """-mean(sum(one_hot(labels) * log_softmax(logits))): a label out of range contributes 0."""
  depth = tf.shape(logits)[-1]
  one_hot = tf.one_hot(tf.cast(labels, tf.int32), depth, dtype=tf.float32)
  return -tf.reduce_mean(tf.reduce_sum(one_hot * tf.nn.log_softmax(logits, axis=-1), axis=-1))


def _accuracy(labels, logits):
  return tf.reduce_mean(tf.cast(
      tf.equal(tf.argmax(logits, -1, output_type=tf.int32), tf.cast(labels, tf.int32)),
      tf.float32))


class NqModel(TaskModel):
  """EtcModel + Google's NQ heads."""

  model_features = MODEL_FEATURES
  metric_names = ("loss", "answer_type_loss", "span_loss", "answer_type_accuracy",
                  "la_start_accuracy", "sa_start_accuracy")

  def make_heads(self):
    self.span_head = self.dense(len(SPANS), "nq_spans")
    self.answer_type_head = self.dense(NUM_ANSWER_TYPES, "answer_type")
    return [self.span_head, self.answer_type_head]

  @without_autograph
  def call(self, features, training=None):
    long_x = self.encode(features, training)["long_output"]                       # [B, L, H]
    spans = tf.cast(self.span_head(long_x), tf.float32)                           # [B, L, 4]
    out = {name: spans[..., k] for k, (_, name) in enumerate(SPANS)}              # [B, L] each
    out["answer_type_logits"] = tf.cast(self.answer_type_head(long_x[:, 0]), tf.float32)
    return out

  def compute_losses(self, features, outputs):
    span_losses = [_one_hot_loss(features[label], outputs[name]) for label, name in SPANS]
    type_loss = _one_hot_loss(features["answer_type"], outputs["answer_type_logits"])
    return {
        "loss": (tf.add_n(span_losses) + type_loss) / 5.0,
        "answer_type_loss": type_loss,
        "span_loss": tf.add_n(span_losses) / 4.0,
        "answer_type_accuracy": _accuracy(features["answer_type"], outputs["answer_type_logits"]),
        "la_start_accuracy": _accuracy(features["la_start"], outputs["long_start_logits"]),
        "sa_start_accuracy": _accuracy(features["sa_start"], outputs["short_start_logits"]),
    }
