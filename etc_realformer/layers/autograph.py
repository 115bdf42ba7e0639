"""Methods that tf.function runs as written, without autograph's source rewriting.

Inside a tf.function, autograph parses and rewrites the source of every Python function a
converted function calls (layers' `call`, the train and test steps, and everything under
them) so that `if` and `for` on tensors become graph control flow. The package's layers, models
and steps never branch on a tensor in Python (they use tf.cond where they must), so the rewrite
builds the very same graph (checked: the same nodes, the same bits) and only costs time: in a
freshly started process, tracing the tiny encoder's training step takes 9.8 s with the rewrite
and 4.8 s without (benchmarks/graph_building.py).
"""

import inspect

import tensorflow as tf


def without_autograph(method):
  """`method`, run as plain Python inside a tf.function, as is everything it calls.

  The wrapper keeps the method's signature: Keras reads a layer's `call` arguments (`training`,
  `mask`) from it.
  """
  wrapper = tf.autograph.experimental.do_not_convert(method)
  wrapper.__signature__ = inspect.signature(method)
  return wrapper
