"""The WikiHop head on the ETC-RealFormer encoder, and its loss.

  candidate_logits [B, G] = Dense(global_output), -10000 outside the candidate tokens

The answer is the softmax over candidate tokens only; loss = its cross-entropy with the answer's
candidate index, averaged over the batch; accuracy = argmax == answer.
"""

from typing import Any, Dict, Union

import tensorflow as tf
import tf_keras

from etc_realformer.config import EtcConfig
from tasks.common.task_model import TaskModel
from tasks.wikihop.features import MODEL_FEATURES

NEG = -10000.0


class WikiHopModel(TaskModel):
  """EtcModel + one logit per global token, softmax over the candidate tokens.

  Args:
    config: EtcConfig (or its dict) of the encoder.
    implementation: "blocked" or "dense" (see EtcModel).
  """

  def __init__(self, config: Union[EtcConfig, Dict[str, Any]], implementation: str = "blocked",
               **kwargs):
    super().__init__(config, implementation, **kwargs)
    self.candidate_head = tf_keras.layers.Dense(1, kernel_initializer=self.initializer(),
                                                name="candidate")
    self.heads = [self.candidate_head]
    self.tracked = {name: tf_keras.metrics.Mean(name) for name in ("loss", "accuracy")}

  def call(self, features, training=None):
    inputs = {name: features[name] for name in MODEL_FEATURES if name in features}
    global_x = self.encoder(inputs, training=training)["global_output"]     # [B, G, H]
    logits = tf.cast(self.candidate_head(global_x)[..., 0], tf.float32)     # [B, G]
    mask = tf.cast(features["candidate_mask"], tf.bool)                     # [B, G]
    return {"candidate_logits": tf.where(mask, logits, NEG)}

  def compute_losses(self, features, outputs):
    labels = tf.cast(features["label"], tf.int32)                           # [B]
    logits = outputs["candidate_logits"]
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
    accuracy = tf.reduce_mean(tf.cast(
        tf.equal(tf.argmax(logits, -1, output_type=tf.int32), labels), tf.float32))
    return {"loss": loss, "accuracy": accuracy}
