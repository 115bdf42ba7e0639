"""Blocking of the long axis and the sliding-window layouts.

Three layouts of long-to-long (l2l) quantities appear in the package:
  window:  [B, L, 2r+1]       slot r + j of token i refers to long token i + j (side-input layout);
  blocked: [B, nb, b, 3b]     b = r + 1; query q of block n sees the keys of blocks n-1, n, n+1,
                              slot c of the 3b refers to long token (n - 1) * b + c;
  dense:   [B, L, L]          column j is long token j (reference path, O(L^2)).
Everything here is a pure function of its arguments: no variables.
"""

import tensorflow as tf

from etc_realformer.ops import lookup
from etc_realformer.ops import softmax


def static_or_dynamic(x: tf.Tensor, axis: int):
  """The size of `axis`: a Python int when known at trace time, else a scalar tensor."""
  size = x.shape[axis]
  return size if size is not None else tf.shape(x)[axis]


def num_blocks(length, block_len: int):
  return (length + block_len - 1) // block_len


def pad_axis(x: tf.Tensor, axis: int, before, after, value=0) -> tf.Tensor:
  """Pads one axis of `x` with `value`."""
  rank = x.shape.rank
  axis = axis % rank
  paddings = [[0, 0]] * rank
  paddings[axis] = [before, after]
  return tf.pad(x, paddings, constant_values=value)


def split_into_blocks(x: tf.Tensor, block_len: int, axis: int = 1, pad_value=0) -> tf.Tensor:
  """[..., L, ...] -> [..., nb, block_len, ...], padding the axis up to nb * block_len."""
  rank = x.shape.rank
  axis = axis % rank
  length = static_or_dynamic(x, axis)
  nb = num_blocks(length, block_len)
  x = pad_axis(x, axis, 0, nb * block_len - length, pad_value)
  shape = tf.unstack(tf.shape(x)) if any(d is None for d in x.shape) else x.shape.as_list()
  new_shape = list(shape[:axis]) + [nb, block_len] + list(shape[axis + 1:])
  return tf.reshape(x, new_shape)


def merge_blocks(x: tf.Tensor, length, axis: int = 1) -> tf.Tensor:
  """Inverse of split_into_blocks: [..., nb, b, ...] -> [..., length, ...]."""
  rank = x.shape.rank
  axis = axis % rank
  shape = tf.unstack(tf.shape(x)) if any(d is None for d in x.shape) else x.shape.as_list()
  merged = list(shape[:axis]) + [shape[axis] * shape[axis + 1]] + list(shape[axis + 2:])
  x = tf.reshape(x, merged)
  begin = [0] * (rank - 1)
  size = [-1] * (rank - 1)
  size[axis] = length
  return tf.slice(x, begin, size)


def concat_neighbor_blocks(blocked: tf.Tensor, block_axis: int = 1) -> tf.Tensor:
  """Gives every block its previous and next block: [.., nb, b, ..] -> [.., nb, 3b, ..].

  The missing neighbours of the first and last blocks are zeros.
  """
  rank = blocked.shape.rank
  block_axis = block_axis % rank
  nb = static_or_dynamic(blocked, block_axis)
  padded = pad_axis(blocked, block_axis, 1, 1)  # [.., nb + 2, b, ..]

  def shifted(start):
    begin = [0] * rank
    begin[block_axis] = start
    size = [-1] * rank
    size[block_axis] = nb
    return tf.slice(padded, begin, size)

  return tf.concat([shifted(0), shifted(1), shifted(2)], axis=block_axis + 1)


def window_to_blocked(window: tf.Tensor, local_radius: int) -> tf.Tensor:
  """Window layout [B, L, 2r+1] -> blocked layout [B, nb, b, 3b] with b = r + 1.

  Query q of a block sees window slot s at 3-block slot q + 1 + s; slots that no window
  slot reaches are filled with zeros (masked). Uses a pad-and-reshape skew, no gather.
  """
  b = local_radius + 1
  width = 2 * local_radius + 1
  blocked = split_into_blocks(window, b, axis=1)  # [B, nb, b, 2r+1]
  # Row q padded to 3b + 1 columns with the window at columns 1..2r+1; read back with a
  # row width of 3b, row q is shifted right by q, so slot s lands at column q + 1 + s.
  padded = pad_axis(blocked, 3, 1, 3 * b - width)  # [B, nb, b, 3b + 1]
  batch = static_or_dynamic(window, 0)
  nb = static_or_dynamic(blocked, 1)
  flat = tf.reshape(padded, [batch, nb, b * (3 * b + 1)])
  flat = flat[:, :, :b * 3 * b]
  return tf.reshape(flat, [batch, nb, b, 3 * b])


def window_to_dense(window: tf.Tensor, fill=0) -> tf.Tensor:
  """Window layout [B, L, 2r+1] -> dense [B, L, L]; keys outside the window get `fill`."""
  batch = static_or_dynamic(window, 0)
  length = static_or_dynamic(window, 1)
  width = window.shape[2]
  radius = (width - 1) // 2
  row = length + 2 * radius + 1
  # Same skew as window_to_blocked: slot s of row i lands at column i + s of a row of width
  # L + 2r, i.e. at long token i + s - r after dropping the first r columns.
  marker = tf.ones_like(window)
  padded = pad_axis(tf.stack([window, marker], axis=-1), 2, 0, length, 0)  # [B, L, row, 2]
  flat = tf.reshape(padded, [batch, length * row, 2])[:, :length * (row - 1)]
  skewed = tf.reshape(flat, [batch, length, row - 1, 2])[:, :, radius:radius + length]
  values, present = skewed[..., 0], skewed[..., 1]
  return tf.where(present > 0, values, tf.cast(fill, window.dtype) * tf.ones_like(values))


def window_key_in_range(length, local_radius: int) -> tf.Tensor:
  """bool [L, 2r+1]: whether window slot r + j of token i refers to a token inside [0, L)."""
  key = tf.range(length)[:, tf.newaxis] + tf.range(-local_radius, local_radius + 1)[tf.newaxis, :]
  return tf.logical_and(key >= 0, key < length)


def frame_window(values: tf.Tensor, local_radius: int, pad_value=0) -> tf.Tensor:
  """[B, L] -> [B, L, 2r+1] with out[b, i, r + j] = values[b, i + j] (pad_value outside)."""
  padded = pad_axis(values, 1, local_radius, local_radius, pad_value)
  return tf.signal.frame(padded, 2 * local_radius + 1, 1, axis=1)


# Keys of the side inputs computed once for all layers (see blocked_side_inputs).
BLOCKED_L2L_BIAS = "blocked_l2l_att_bias"
BLOCKED_L2G_BIAS = "blocked_l2g_att_bias"
G2G_BIAS = "g2g_att_bias"
G2L_BIAS = "g2l_att_bias"
BLOCKED_L2L_IDS = "blocked_l2l_relative_att_ids"
BLOCKED_L2G_IDS = "blocked_l2g_relative_att_ids"
L2L_WINDOW_IDS = "l2l_window_relative_att_ids"
L2L_WINDOW_IDS_UNIFORM = "l2l_window_relative_att_ids_uniform"


def blocked_side_inputs(side_inputs, local_radius: int):
  """The side inputs as the blocked attention reads them, computed once for all layers.

  Returns a copy of `side_inputs` with, for b = local_radius + 1, the masks as additive biases
  (float32, 0 = attend, softmax.MASK_VALUE = masked; ops/softmax.py):
    BLOCKED_L2L_BIAS [B, nb, b, 3b] (window slots outside [0, L) masked), BLOCKED_L2G_BIAS
                     [B, nb, b, G], G2G_BIAS [B, G, G] and G2L_BIAS [B, G, L];
    BLOCKED_L2L_IDS  int32 [B, nb, b, 3b] and BLOCKED_L2G_IDS int32 [B, nb, b, G] when the
                     side inputs carry relative ids; with them L2L_WINDOW_IDS int32 [2r+1] and
                     L2L_WINDOW_IDS_UNIFORM (scalar bool: every query's window holds those ids,
                     so ops/lookup.py's select_by_window_id applies).
  """
  b = local_radius + 1
  out = dict(side_inputs)
  l2l_mask = tf.cast(side_inputs["l2l_att_mask"], tf.int32)  # [B, L, 2r+1]
  long_len = static_or_dynamic(l2l_mask, 1)
  in_range = tf.cast(window_key_in_range(long_len, local_radius), tf.int32)  # [L, 2r+1]
  out[BLOCKED_L2L_BIAS] = softmax.additive_bias(
      window_to_blocked(l2l_mask * in_range[tf.newaxis], local_radius))  # [B, nb, b, 3b]
  out[BLOCKED_L2G_BIAS] = softmax.additive_bias(
      split_into_blocks(tf.cast(side_inputs["l2g_att_mask"], tf.int32), b))  # [B, nb, b, G]
  out[G2G_BIAS] = softmax.additive_bias(side_inputs["g2g_att_mask"])  # [B, G, G]
  out[G2L_BIAS] = softmax.additive_bias(side_inputs["g2l_att_mask"])  # [B, G, L]
  if side_inputs.get("l2l_relative_att_ids") is not None:
    l2l_ids = tf.cast(side_inputs["l2l_relative_att_ids"], tf.int32)  # [B, L, 2r+1]
    out[BLOCKED_L2L_IDS] = window_to_blocked(l2l_ids, local_radius)
    out[L2L_WINDOW_IDS], out[L2L_WINDOW_IDS_UNIFORM] = lookup.window_ids_if_uniform(l2l_ids)
    l2g_ids = tf.cast(side_inputs["l2g_relative_att_ids"], tf.int32)  # [B, L, G]
    # The rows added up to a whole block repeat an id the real rows hold (their outputs are
    # dropped), so the ids keep their range and ops/lookup.py's two-column path applies.
    out[BLOCKED_L2G_IDS] = split_into_blocks(l2g_ids, b, pad_value=l2g_ids[0, 0, 0])
  return out
