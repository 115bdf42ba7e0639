"""Functions that TensorFlow runs as written, without autograph's source rewriting.

Inside a tf.function, and in a tf.data transformation, autograph parses and rewrites the source
of every Python function it is given and of everything that function calls (layers' `call`, the
train and test steps, the input pipeline's parse and batch functions) so that `if` and `for` on
tensors become graph control flow. The package never branches on a tensor in Python (it uses
tf.cond and tf.while_loop where it must), so the rewrite builds the very same graph (checked:
the same nodes, the same bits) and only costs time: in a freshly started process, tracing the
tiny encoder's training step takes 9.8 s with the rewrite and 4.8 s without
(benchmarks/graph_building.py); building a task's input pipeline 0.3 s with it and 0.1 s
without. Functions given to `tf.function` directly say `autograph=False` instead.
"""

import inspect

import tensorflow as tf


def without_autograph(fn):
  """`fn` (a function or a method), run as plain Python by tf.function and tf.data, as is
  everything it calls.

  The wrapper keeps the signature: Keras reads a layer's `call` arguments (`training`, `mask`)
  from it.
  """
  wrapper = tf.autograph.experimental.do_not_convert(fn)
  wrapper.__signature__ = inspect.signature(fn)
  return wrapper
