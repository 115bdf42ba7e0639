"""Relative position ids (docs/model_inputs.md, "Relative position ids").

With max distance k, the id of key position p_k seen from query position p_q is
  0                      if p_k == p_q
  min(p_k - p_q, k)      if the key is to the right (ids 1..k)
  k + min(p_q - p_k, k)  if the key is to the left  (ids k+1..2k)
Ids 2k+1 / 2k+2 mark l2g and g2l pairs in another / the own sentence; 2k+3 marks g2g pairs
in different unordered contexts (multi-hop tasks).
"""

import tensorflow as tf


def other_sentence_id(max_distance: int) -> int:
  return 2 * max_distance + 1


def own_sentence_id(max_distance: int) -> int:
  return 2 * max_distance + 2


def unordered_context_id(max_distance: int) -> int:
  return 2 * max_distance + 3


def relative_ids_from_distance(distance: tf.Tensor, max_distance: int) -> tf.Tensor:
  """Maps signed distances (key minus query position) to relative ids; any shape, int32."""
  distance = tf.cast(distance, tf.int32)
  right = tf.minimum(distance, max_distance)
  left = max_distance + tf.minimum(-distance, max_distance)
  return tf.where(distance > 0, right, tf.where(distance < 0, left, tf.zeros_like(distance)))


def full_relative_ids(query_len, key_len, max_distance: int) -> tf.Tensor:
  """Relative ids of every (query, key) pair of two position ranges starting at 0.

  Returns int32 [query_len, key_len].
  """
  distance = tf.range(key_len)[tf.newaxis, :] - tf.range(query_len)[:, tf.newaxis]
  return relative_ids_from_distance(distance, max_distance)


def window_relative_ids(local_radius: int, max_distance: int) -> tf.Tensor:
  """Relative ids of the sliding-window slots: slot r + j refers to the key at distance j.

  Returns int32 [2r+1].
  """
  distance = tf.range(-local_radius, local_radius + 1)
  return relative_ids_from_distance(distance, max_distance)


def stream_relative_ids(own_or_linked: tf.Tensor, max_distance: int):
  """own_or_linked bool [B, G, L] -> {"g2l_relative_att_ids": [B, G, L], "l2g_relative_att_ids":
  [B, L, G]} (int32): the own-sentence id where true, else the other-sentence id. The l2g ids
  come from the transposed bool tensor, a quarter of the bytes of transposed int32 ids."""
  own, other = own_sentence_id(max_distance), other_sentence_id(max_distance)
  return {
      "g2l_relative_att_ids": tf.cast(tf.where(own_or_linked, own, other), tf.int32),
      "l2g_relative_att_ids": tf.cast(
          tf.where(tf.transpose(own_or_linked, [0, 2, 1]), own, other), tf.int32),
  }
