"""Per-pair lookups of per-id values as one-hot matrix products.

Relative attention needs, for every (query, key) pair, the value that the query's row of a small
table holds at the pair's id: out[b, h, q, k] = table[b, h, q, ids[b, q, k]]. A gather does this
element by element and its gradient is a scatter-add; on CPUs both are several times slower than
contracting the table with one_hot(ids) in a batched matrix product. The one-hot tensor is as
large as R copies of the ids, so it is not kept for the backward pass: the gradient rebuilds it.
"""

import tensorflow as tf

from etc_realformer.ops import profiling


def select_by_id(table: tf.Tensor, ids: tf.Tensor) -> tf.Tensor:
  """table [B, heads, Q, R] (float), ids [B, Q, K] (int) -> [B, heads, Q, K].

  out[b, h, q, k] = table[b, h, q, ids[b, q, k]]; an id outside [0, R) selects 0.
  """
  num_ids = table.shape[-1]
  if num_ids is None:
    raise ValueError("select_by_id needs the id axis (last) of `table` to be static")
  ids = tf.cast(ids, tf.int32)

  @tf.custom_gradient
  def _select(values):
    def one_hot():
      return tf.one_hot(ids, num_ids, dtype=values.dtype)  # [B, Q, K, R]

    out = tf.einsum("bhqr,bqkr->bhqk", values, one_hot())

    def grad(upstream):  # upstream [B, heads, Q, K]
      # A gradient function runs outside the caller's name scopes (ops/profiling.py).
      with profiling.part("select_by_id_grad"):
        return tf.einsum("bhqk,bqkr->bhqr", upstream, one_hot())

    return out, grad

  return _select(table)
