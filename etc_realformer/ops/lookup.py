"""Per-pair lookups of per-id values as one-hot matrix products.

Relative attention needs, for every (query, key) pair, the value that the query's row of a small
table holds at the pair's id: out[b, h, q, k] = table[b, h, q, ids[b, q, k]]. A gather does this
element by element and its gradient is a scatter-add; on CPUs both are several times slower than
contracting the table with one_hot(ids) in a batched matrix product. The one-hot tensor is as
large as R copies of the ids, so it is not kept for the backward pass: the gradient rebuilds it.

When all ids of a call lie in two neighbouring values (ETC's long-to-global and global-to-long
pairs hold only "other sentence" 2k+1 and "own sentence" 2k+2), the lookup is a select between
those two columns of the table: the same values forward, and as its gradient a per-column sum of
the upstream instead of a product with a rebuilt one-hot tensor (its sums may differ from the
product's in their last bits). The check is one min and one max over the ids; other ids take the
one-hot product.
"""

import tensorflow as tf

from etc_realformer.ops import profiling


def _one_hot_product(table: tf.Tensor, ids: tf.Tensor, num_ids: int) -> tf.Tensor:
  """table [B, heads, Q, num_ids], ids [B, Q, K] -> [B, heads, Q, K] (an id outside
  [0, num_ids) selects 0)."""

  @tf.custom_gradient
  def _select(values):
    def one_hot():
      return tf.one_hot(ids, num_ids, dtype=values.dtype)  # [B, Q, K, num_ids]

    out = tf.einsum("bhqr,bqkr->bhqk", values, one_hot())

    def grad(upstream):  # upstream [B, heads, Q, K]
      # A gradient function runs outside the caller's name scopes (ops/profiling.py).
      with profiling.part("select_by_id_grad"):
        return tf.einsum("bhqk,bqkr->bhqr", upstream, one_hot())

    return out, grad

  return _select(table)


def _select_of_two(pair: tf.Tensor, second: tf.Tensor) -> tf.Tensor:
  """pair [B, heads, Q, 2], second bool [B, Q, K] -> [B, heads, Q, K]: pair[..., 1] where
  `second`, else pair[..., 0]."""

  @tf.custom_gradient
  def _select(values):
    out = tf.where(second[:, tf.newaxis], values[..., 1:], values[..., :1])

    def grad(upstream):  # upstream [B, heads, Q, K]
      with profiling.part("select_by_id_grad"):
        weight = tf.cast(second, upstream.dtype)[:, tf.newaxis]  # [B, 1, Q, K]
        on_second = tf.reduce_sum(upstream * weight, axis=-1)  # [B, heads, Q]
        # The first column's share is the rest of the row's sum: one product of the upstream's
        # size instead of two (and no 1 - weight).
        on_first = tf.reduce_sum(upstream, axis=-1) - on_second
        return tf.stack([on_first, on_second], axis=-1)

    return out, grad

  return _select(pair)


def select_by_id(table: tf.Tensor, ids: tf.Tensor) -> tf.Tensor:
  """table [B, heads, Q, R] (float), ids [B, Q, K] (int) -> [B, heads, Q, K].

  out[b, h, q, k] = table[b, h, q, ids[b, q, k]]; an id outside [0, R) selects 0.
  """
  num_ids = table.shape[-1]
  if num_ids is None:
    raise ValueError("select_by_id needs the id axis (last) of `table` to be static")
  ids = tf.cast(ids, tf.int32)
  low, high = tf.reduce_min(ids), tf.reduce_max(ids)
  # No ids at all give low = int32 max: then `low < num_ids - 1` is false.
  two_columns = tf.logical_and(tf.logical_and(low >= 0, low < num_ids - 1),
                               high - low <= 1)  # scalar bool

  def on_two_columns():
    # A gather, not a slice from `low`: XLA would compile a slice anew for each value of `low`.
    pair = tf.gather(table, tf.stack([low, low + 1]), axis=-1)  # [B, heads, Q, 2]
    return _select_of_two(pair, tf.equal(ids, low + 1))

  return tf.cond(two_columns, on_two_columns, lambda: _one_hot_product(table, ids, num_ids))


def window_ids_if_uniform(window_ids: tf.Tensor):
  """window_ids [B, L, 2r+1] (int) -> (ids [2r+1] int32, uniform): `uniform` (scalar bool) says
  that every query's window holds these same ids (false for no queries at all)."""
  window_ids = tf.cast(window_ids, tf.int32)
  low = tf.reduce_min(window_ids, axis=[0, 1])  # [2r+1]
  high = tf.reduce_max(window_ids, axis=[0, 1])  # [2r+1]
  return high, tf.reduce_all(tf.equal(low, high))


def _skewed_window_product(table: tf.Tensor, window_ids: tf.Tensor) -> tf.Tensor:
  """table [B, heads, nb, b, R], window_ids [2r+1] -> [B, heads, nb, b, 3b] (b = r + 1)."""
  num_ids, b = table.shape[-1], table.shape[-2]
  width = 3 * b + 1
  # Column 0 and the columns after the window select id 0: a row of width 3b + 1 read back with
  # width 3b shifts row q right by q (the skew), so the window lands at columns q + 1 .. q + 2b - 1.
  columns = tf.concat([[0], tf.cast(window_ids, tf.int32),
                       tf.zeros([width - 1 - (2 * b - 1)], tf.int32)], axis=0)  # [3b + 1]
  one_hot = tf.one_hot(columns, num_ids, axis=0, dtype=table.dtype)  # [R, 3b + 1]
  rows = tf.einsum("bhnqr,rc->bhnqc", table, one_hot)  # [B, heads, nb, b, 3b + 1]
  shape = tf.shape(rows)
  flat = tf.reshape(rows, [shape[0], shape[1], shape[2], b * width])
  # tf.slice, not [..., :n]: its gradient is a pad (a strided slice's is a slower generic op).
  flat = tf.slice(flat, [0, 0, 0, 0], [-1, -1, -1, b * 3 * b])
  return tf.reshape(flat, [shape[0], shape[1], shape[2], b, 3 * b])


def select_by_window_id(table: tf.Tensor, blocked_ids: tf.Tensor, window_ids: tf.Tensor,
                        uniform: tf.Tensor) -> tf.Tensor:
  """table [B, heads, nb, b, R] (float; b = r + 1), blocked_ids [B, nb, b, 3b] (int, the
  blocked layout of ops/blocking.py) -> [B, heads, nb, b, 3b]: out = table[.., q, id] per slot.

  window_ids [2r+1] and uniform (scalar bool) are window_ids_if_uniform's. When every query's
  window holds window_ids, a product with their one-hot matrix and a skew; the slots no window
  reaches (closed by the blocked mask) then hold the id-0 value of the query or of the query
  before it instead of the query's own. Otherwise the one-hot product with blocked_ids. An id
  outside [0, R) selects 0.
  """
  num_ids, b = table.shape[-1], table.shape[-2]
  if num_ids is None or b is None:
    raise ValueError("select_by_window_id needs static block length and id axes")

  def by_ids():
    shape = tf.shape(table)
    flat_ids = tf.reshape(blocked_ids, [shape[0], -1, 3 * b])  # [B, Q, 3b]
    selected = _one_hot_product(tf.reshape(table, [shape[0], shape[1], -1, num_ids]), flat_ids,
                                num_ids)  # [B, heads, Q, 3b]
    return tf.reshape(selected, [shape[0], shape[1], shape[2], b, 3 * b])

  return tf.cond(uniform, lambda: _skewed_window_product(table, window_ids), by_ids)
