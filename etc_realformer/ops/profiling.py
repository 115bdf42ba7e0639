"""Name scopes that mark the parts of the attention in op profiles (benchmarks/layer_profile.py).

Off unless a profile turns them on (`profiling.SCOPES = True` before the model is built and
traced): TensorFlow's graph rewrites order some sums by node name, so scoping the ops changes
the last bits of the gradients in a tf.function, and with them the figures of the deterministic
demos (measured: 40 of 98 gradient tensors of a 2-layer block differed in their last bits).
"""

import contextlib

import tensorflow as tf

SCOPES = False


def part(name: str):
  """tf.name_scope(name) when SCOPES is on, else a context that changes nothing."""
  return tf.name_scope(name) if SCOPES else contextlib.nullcontext()
