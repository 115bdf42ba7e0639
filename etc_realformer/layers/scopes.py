"""Building sublayers eagerly with the variable names their first call would give them."""

import tensorflow as tf


def build_in_scope(layer, shape):
  """Builds `layer` under its own name scope (as its first call would), once."""
  if not layer.built:
    with tf.name_scope(layer.name):
      layer.build(shape)
