"""SeededDropout: Keras dropout that draws its mask from a seed given at call time."""

import tensorflow as tf
import tf_keras

from etc_realformer.autograph import without_autograph
from etc_realformer.ops import dropout as dropout_ops


class SeededDropout(tf_keras.layers.Layer):
  """Dropout with replayable masks (see etc_realformer/ops/dropout.py).

  Call: (inputs, seed=None, salt=None, training=None). With the same `seed` [2] int32 and `salt`
  the mask is the same, also inside a forward pass that tf.recompute_grad runs again. Without a
  seed, each call draws a fresh one (a stand-alone layer behaves as tf_keras Dropout).
  """

  def __init__(self, rate: float, **kwargs):
    super().__init__(**kwargs)
    if not 0.0 <= rate < 1.0:
      raise ValueError(f"dropout rate must be in [0, 1), got {rate!r}")
    self.rate = float(rate)

  @without_autograph
  def call(self, inputs, seed=None, salt=None, training=None):
    if self.rate == 0.0 or training is None or training is False:
      return inputs

    def dropped():
      step_seed = dropout_ops.new_seed() if seed is None else seed
      return dropout_ops.stateless_dropout(inputs, self.rate, step_seed, salt)

    if training is True:
      return dropped()
    return tf.cond(tf.cast(training, tf.bool), dropped, lambda: tf.identity(inputs))

  def get_config(self):
    config = super().get_config()
    config["rate"] = self.rate
    return config
