"""The WikiHop head on the ETC-RealFormer encoder, and its loss.

  candidate_logits [B, G] = Dense(global_output), -10000 outside the candidate tokens

The answer is the softmax over candidate tokens only; loss = its cross-entropy with the answer's
candidate index, averaged over the batch; accuracy = argmax == answer.
"""

import tensorflow as tf

from tasks.common.task_model import NEG, TaskModel, softmax_loss
from tasks.wikihop.features import MODEL_FEATURES


class WikiHopModel(TaskModel):
  """EtcModel + one logit per global token, softmax over the candidate tokens."""

  model_features = MODEL_FEATURES
  metric_names = ("loss", "accuracy")

  def make_heads(self):
    self.candidate_head = self.dense(1, "candidate")
    return [self.candidate_head]

  def call(self, features, training=None):
    global_x = self.encode(features, training)["global_output"]              # [B, G, H]
    logits = tf.cast(self.candidate_head(global_x)[..., 0], tf.float32)     # [B, G]
    mask = tf.cast(features["candidate_mask"], tf.bool)                     # [B, G]
    return {"candidate_logits": tf.where(mask, logits, NEG)}

  def compute_losses(self, features, outputs):
    loss, accuracy = softmax_loss(features["label"], outputs["candidate_logits"])  # [B], [B, G]
    return {"loss": loss, "accuracy": accuracy}
