"""Attention masks and relative ids (the ETC side inputs) from compact features.

Feature conventions (docs/model_inputs.md, "Side inputs" and "Hard masks"):
  long_breakpoints / global_breakpoints  int [B, L] / [B, G]: 1 on the last token of each example
      packed into the row; tokens after the last breakpoint are padding.
  sentence_ids  int [B, L]: the global token that owns each long token.
  long_paragraph_ids / global_paragraph_ids  int [B, L] / [B, G] (multi-hop tasks, optional):
      the unordered context of each token. Long tokens attend (l2l) only within their own
      context, and g2g pairs in different contexts get the "unordered context" relative id, so
      the order of the contexts (paragraphs) in the row cannot matter. Context 0 is the shared
      one (CLS and question): on the global side it is the context of tokens that belong to no
      paragraph.
  ignore_hard_g2l_mask  int [B, G] (optional): 1 for global tokens exempt from the hard g2l
      mask. An exempt token in context 0 sees every long token of its example; an exempt token
      in paragraph p sees the long tokens of paragraph p.
  l2g_linked_ids  int [B, L] (optional): the global token a long token is linked to, -1 for
      none (WikiHop links each candidate mention to its candidate's global token). A linked
      pair is treated as if the global token owned the long token: it gets the "own sentence"
      relative id in both directions (l2g and g2l), and the hard l2g mask lets it attend (the
      hard g2l mask does not open: exempt the global token if it must see its mentions).
Side inputs are int32 with 1 = may attend:
  l2l [B, L, 2r+1] (window layout), l2g [B, L, G], g2g [B, G, G], g2l [B, G, L]
for both `*_att_mask` and `*_relative_att_ids`.

A padding token (not in any example) may attend only to itself, so every softmax row has at
least one key and the blocked and dense computations agree on every row.
"""

from typing import Dict, Optional

import tensorflow as tf

from etc_realformer.ops import blocking
from etc_realformer.ops import relative

SIDE_INPUT_NAMES = (
    "l2l_att_mask", "g2g_att_mask", "l2g_att_mask", "g2l_att_mask",
    "l2l_relative_att_ids", "g2g_relative_att_ids", "l2g_relative_att_ids",
    "g2l_relative_att_ids",
)


def example_ids_from_breakpoints(breakpoints: tf.Tensor) -> tf.Tensor:
  """[B, N] breakpoints -> [B, N] int32 example ids counted from the END (last example = 1).

  Padding after the last breakpoint gets 0. Counting from the end lets long and global rows
  with the same number of packed examples match ids without knowing where each one starts.
  """
  breakpoints = tf.cast(tf.not_equal(breakpoints, 0), tf.int32)
  return tf.cumsum(breakpoints, axis=-1, reverse=True)


def example_ids_from_token_ids(token_ids: tf.Tensor, pad_id: int = 0) -> tf.Tensor:
  """One example per row: 1 for tokens other than `pad_id`, 0 for padding. [B, N] int32."""
  return tf.cast(tf.not_equal(token_ids, pad_id), tf.int32)


def _self_only(ids_q: tf.Tensor) -> tf.Tensor:
  return tf.equal(ids_q, 0)


def make_side_inputs(long_example_ids: tf.Tensor,
                     global_example_ids: tf.Tensor,
                     sentence_ids: Optional[tf.Tensor],
                     local_radius: int,
                     relative_pos_max_distance: int,
                     use_hard_g2l_mask: bool = False,
                     use_hard_l2g_mask: bool = False,
                     use_relative_ids: bool = True,
                     long_paragraph_ids: Optional[tf.Tensor] = None,
                     global_paragraph_ids: Optional[tf.Tensor] = None,
                     ignore_hard_g2l_mask: Optional[tf.Tensor] = None,
                     l2g_linked_ids: Optional[tf.Tensor] = None) -> Dict[str, tf.Tensor]:
  """Builds the eight side inputs from example ids ([B, L], [B, G]; 0 = padding).

  Args:
    long_example_ids: int [B, L]; tokens attend within the same example id.
    global_example_ids: int [B, G].
    sentence_ids: int [B, L] or None (then every long token belongs to global token 0 for the
      relative ids; hard masks need it).
    local_radius: r, the sliding-window radius.
    relative_pos_max_distance: k, the relative id clipping distance.
    use_hard_g2l_mask: a global token sees only the long tokens it owns.
    use_hard_l2g_mask: a long token sees only its own global token.
    use_relative_ids: whether to build the `*_relative_att_ids` entries.
    long_paragraph_ids: int [B, L] or None (one context).
    global_paragraph_ids: int [B, G] or None (one context).
    ignore_hard_g2l_mask: int [B, G] or None (no global token is exempt).
    l2g_linked_ids: int [B, L] or None (no long token is linked); -1 = not linked.
  Returns:
    dict with the SIDE_INPUT_NAMES (relative ids only when use_relative_ids).
  """
  r, k = local_radius, relative_pos_max_distance
  long_ids = tf.cast(long_example_ids, tf.int32)  # [B, L]
  global_ids = tf.cast(global_example_ids, tf.int32)  # [B, G]
  batch = blocking.static_or_dynamic(long_ids, 0)
  long_len = blocking.static_or_dynamic(long_ids, 1)
  global_len = blocking.static_or_dynamic(global_ids, 1)
  if sentence_ids is None:
    if use_hard_g2l_mask or use_hard_l2g_mask:
      raise ValueError("sentence_ids: required when use_hard_g2l_mask or use_hard_l2g_mask is set.")
    sentence_ids = tf.zeros_like(long_ids)
  sentence_ids = tf.cast(sentence_ids, tf.int32)

  if (long_paragraph_ids is None) != (global_paragraph_ids is None):
    raise ValueError("long_paragraph_ids and global_paragraph_ids: give both or neither.")
  long_para = (tf.zeros_like(long_ids) if long_paragraph_ids is None
               else tf.cast(long_paragraph_ids, tf.int32))  # [B, L]
  global_para = (tf.zeros_like(global_ids) if global_paragraph_ids is None
                 else tf.cast(global_paragraph_ids, tf.int32))  # [B, G]

  long_valid = long_ids > 0  # [B, L]
  global_valid = global_ids > 0  # [B, G]

  # l2l, window layout [B, L, 2r+1].
  framed = blocking.frame_window(long_ids, r, pad_value=-1)  # [B, L, 2r+1]
  same = tf.logical_and(tf.equal(framed, long_ids[:, :, None]), long_valid[:, :, None])
  if long_paragraph_ids is not None:
    framed_para = blocking.frame_window(long_para, r, pad_value=-1)  # [B, L, 2r+1]
    same = tf.logical_and(same, tf.equal(framed_para, long_para[:, :, None]))
  center = tf.one_hot(r, 2 * r + 1, on_value=True, off_value=False, dtype=tf.bool)  # [2r+1]
  l2l_mask = tf.logical_or(same, tf.logical_and(_self_only(long_ids)[:, :, None], center))

  # Pairs between the streams; `owns` [B, G, L]: global g owns long token i.
  g2l_same = tf.logical_and(tf.equal(global_ids[:, :, None], long_ids[:, None, :]),
                            global_valid[:, :, None])  # [B, G, L]
  owns = tf.equal(tf.range(global_len)[None, :, None], sentence_ids[:, None, :])  # [B, G, L]
  if ignore_hard_g2l_mask is not None:
    exempt = tf.not_equal(tf.cast(ignore_hard_g2l_mask, tf.int32), 0)[:, :, None]  # [B, G, 1]
    in_scope = tf.logical_or(tf.equal(global_para, 0)[:, :, None],
                             tf.equal(global_para[:, :, None], long_para[:, None, :]))
    owns_or_exempt = tf.logical_or(owns, tf.logical_and(exempt, in_scope))  # [B, G, L]
  else:
    owns_or_exempt = owns
  g2l_mask = tf.logical_and(g2l_same, owns_or_exempt) if use_hard_g2l_mask else g2l_same
  # Built in its own layout, not transposed from g2l (an [B, G, L] transpose costs more than
  # the comparison; the side inputs are rebuilt at every training step).
  l2g_mask = tf.logical_and(tf.equal(long_ids[:, :, None], global_ids[:, None, :]),
                            global_valid[:, None, :])  # [B, L, G]
  linked = None
  if l2g_linked_ids is not None:
    linked = tf.equal(tf.cast(l2g_linked_ids, tf.int32)[:, :, None],
                      tf.range(global_len)[None, None, :])  # [B, L, G]
  if use_hard_l2g_mask:
    own_or_linked = tf.transpose(owns, [0, 2, 1])  # [B, L, G]
    if linked is not None:
      own_or_linked = tf.logical_or(own_or_linked, linked)
    l2g_mask = tf.logical_and(l2g_mask, own_or_linked)

  g2g_mask = tf.logical_and(tf.equal(global_ids[:, :, None], global_ids[:, None, :]),
                            global_valid[:, :, None])  # [B, G, G]
  eye = tf.eye(global_len, dtype=tf.bool)[None]
  g2g_mask = tf.logical_or(g2g_mask, tf.logical_and(_self_only(global_ids)[:, :, None], eye))

  side = {
      "l2l_att_mask": tf.cast(l2l_mask, tf.int32),
      "g2g_att_mask": tf.cast(g2g_mask, tf.int32),
      "l2g_att_mask": tf.cast(l2g_mask, tf.int32),
      "g2l_att_mask": tf.cast(g2l_mask, tf.int32),
  }
  if use_relative_ids:
    window_ids = relative.window_relative_ids(r, k)  # [2r+1]
    side["l2l_relative_att_ids"] = tf.broadcast_to(window_ids[None, None, :],
                                                   [batch, long_len, 2 * r + 1])
    g2g_ids = relative.full_relative_ids(global_len, global_len, k)  # [G, G]
    g2g_ids = tf.broadcast_to(g2g_ids[None], [batch, global_len, global_len])
    if global_paragraph_ids is not None:
      other_context = tf.not_equal(global_para[:, :, None], global_para[:, None, :])  # [B, G, G]
      g2g_ids = tf.where(other_context, relative.unordered_context_id(k), g2g_ids)
    side["g2g_relative_att_ids"] = g2g_ids
    own_or_linked = owns  # [B, G, L]
    if linked is not None:
      own_or_linked = tf.logical_or(owns, tf.transpose(linked, [0, 2, 1]))
    side.update(relative.stream_relative_ids(own_or_linked, k))
  return side
