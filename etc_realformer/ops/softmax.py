"""One softmax over keys that arrive in parts, without joining the parts.

Each attention query of ETC scores two kinds of keys (local window and global tokens for a long
query; global and long tokens for a global query; plus persistent-memory keys), each from its
own product. One softmax runs over all of them. Joining the score parts into one tensor, and
splitting the probabilities again for the two context products, copies the largest tensors of
the layer four times (the concatenation, the split and their gradients). Along the last axis
those copies move rows of a few dozen floats each, and they took about as long as the softmax
itself (`benchmarks/layer_profile.py`; docs/benchmarks.md).

`joint_softmax` computes the same function on the parts as they are: the row maximum and the
row sum of exponentials are taken over all parts together, each part is exponentiated and
scaled by the one shared reciprocal. The result equals `tf.nn.softmax` of the joined tensor up
to float rounding (the row sums add in another order). Its gradient is written out (the
softmax gradient p * (dp - sum(dp * p)) with the sum over all parts) so that the backward pass
is as short as the forward one.
"""

from typing import Sequence

import tensorflow as tf

# What a masked key's score gets added (official ETC's value): its probability underflows to 0.
MASK_VALUE = -10000.0


def additive_bias(mask: tf.Tensor) -> tf.Tensor:
  """float32 0 where `mask` (bool or int, 1 = attend) allows a key, MASK_VALUE where not."""
  return (1.0 - tf.cast(mask, tf.float32)) * MASK_VALUE


def joint_softmax(parts: Sequence[tf.Tensor]) -> list:
  """Softmax along the last axis of concat(parts, -1), returned as parts of the same sizes.

  parts: tensors of one dtype that agree on every axis but the last (e.g. [B, heads, nb, b, 3b]
  and [B, heads, nb, b, G]). Reduced-precision inputs (float16, bfloat16) are computed in
  float32 (a sum of hundreds of float16 exponentials loses digits) and returned in their own
  dtype.
  """
  parts = list(parts)
  dtype = parts[0].dtype
  if dtype in (tf.float16, tf.bfloat16):
    return [tf.cast(p, dtype) for p in joint_softmax([tf.cast(p, tf.float32) for p in parts])]
  return list(_joint_softmax(*parts))


@tf.custom_gradient
def _joint_softmax(*parts):
  row_max = tf.reduce_max(parts[0], axis=-1, keepdims=True)  # [..., 1]
  for part in parts[1:]:
    row_max = tf.maximum(row_max, tf.reduce_max(part, axis=-1, keepdims=True))
  exps = [tf.exp(part - row_max) for part in parts]
  total = tf.add_n([tf.reduce_sum(e, axis=-1, keepdims=True) for e in exps])  # [..., 1]
  inverse = 1.0 / total
  probs = [e * inverse for e in exps]

  def grad(*upstream):
    # d loss / d x = p * (dp - sum over all keys of dp * p), the sum shared by the parts.
    upstream = [tf.zeros_like(p) if dp is None else dp for dp, p in zip(upstream, probs)]
    dot = tf.add_n([tf.reduce_sum(dp * p, axis=-1, keepdims=True)
                    for dp, p in zip(upstream, probs)])  # [..., 1]
    return [p * (dp - dot) for dp, p in zip(upstream, probs)]

  return probs, grad
