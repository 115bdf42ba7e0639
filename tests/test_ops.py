"""Pure tensor functions on hand-made tensors."""

import numpy as np
import pytest
import tensorflow as tf

import numpy_reference as ref
from etc_realformer import ops


def test_relative_ids_by_hand():
  # k = 2: 0 same; 1, 2 to the right (clipped at 2); 3, 4 to the left (clipped at 4).
  np.testing.assert_array_equal(ops.window_relative_ids(3, 2), [4, 4, 3, 0, 1, 2, 2])
  np.testing.assert_array_equal(
      ops.full_relative_ids(3, 4, 2),
      [[0, 1, 2, 2],
       [3, 0, 1, 2],
       [4, 3, 0, 1]])
  assert (ops.other_sentence_id(12), ops.own_sentence_id(12), ops.unordered_context_id(12)) == (
      25, 26, 27)


def test_blocking_round_trip_and_neighbours():
  x = tf.reshape(tf.range(2 * 7), [2, 7])  # [B, L]
  blocked = ops.split_into_blocks(x, 3)  # [2, 3, 3], padded with zeros
  np.testing.assert_array_equal(blocked[0], [[0, 1, 2], [3, 4, 5], [6, 0, 0]])
  np.testing.assert_array_equal(ops.merge_blocks(blocked, 7), x)
  three = ops.concat_neighbor_blocks(blocked)  # [2, 3, 9]
  np.testing.assert_array_equal(three[0, 0], [0, 0, 0, 0, 1, 2, 3, 4, 5])
  np.testing.assert_array_equal(three[0, 2], [3, 4, 5, 6, 0, 0, 0, 0, 0])


@pytest.mark.parametrize("radius,length", [(1, 5), (2, 7), (3, 12), (4, 3)])
def test_window_to_blocked_matches_explicit_loops(radius, length):
  rng = np.random.default_rng(radius)
  window = rng.integers(1, 100, (2, length, 2 * radius + 1)).astype(np.int32)
  b = radius + 1
  got = ops.window_to_blocked(tf.constant(window), radius).numpy()
  nb = -(-length // b)
  assert got.shape == (2, nb, b, 3 * b)
  expected = np.zeros_like(got)
  for n in range(nb):
    for q in range(b):
      i = n * b + q
      if i >= length:
        continue
      for s in range(2 * radius + 1):
        expected[:, n, q, q + 1 + s] = window[:, i, s]  # key i + s - r sits at slot q + 1 + s
  np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("radius,length", [(1, 5), (3, 6), (5, 4)])
def test_window_to_dense_matches_reference(radius, length):
  rng = np.random.default_rng(length)
  window = rng.integers(1, 100, (2, length, 2 * radius + 1)).astype(np.int32)
  np.testing.assert_array_equal(ops.window_to_dense(tf.constant(window)),
                                ref.window_to_dense(window))


def test_side_inputs_from_breakpoints_by_hand():
  # One row: long tokens 0-2 are example A, 3-4 example B, 5 padding.
  # Global tokens 0 (A), 1 (B), 2 padding. Sentence ids: A's tokens -> 0, B's -> 1.
  long_bp = tf.constant([[0, 0, 1, 0, 1, 0]])
  global_bp = tf.constant([[1, 1, 0]])
  np.testing.assert_array_equal(ops.example_ids_from_breakpoints(long_bp), [[2, 2, 2, 1, 1, 0]])
  sentence_ids = tf.constant([[0, 0, 0, 1, 1, 0]])
  side = ops.make_side_inputs(ops.example_ids_from_breakpoints(long_bp),
                              ops.example_ids_from_breakpoints(global_bp), sentence_ids,
                              local_radius=1, relative_pos_max_distance=2,
                              use_hard_g2l_mask=True)
  # l2l window slots (-1, 0, +1); the padding token 5 sees only itself.
  np.testing.assert_array_equal(side["l2l_att_mask"][0], [
      [0, 1, 1], [1, 1, 1], [1, 1, 0], [0, 1, 1], [1, 1, 0], [0, 1, 0]])
  np.testing.assert_array_equal(side["l2g_att_mask"][0], [
      [1, 0, 0], [1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 0]])
  # Hard g2l: a global token sees only the long tokens it owns.
  np.testing.assert_array_equal(side["g2l_att_mask"][0], [
      [1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 0], [0, 0, 0, 0, 0, 0]])
  np.testing.assert_array_equal(side["g2g_att_mask"][0], [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
  # k = 2: own sentence id 6, other sentence id 5.
  np.testing.assert_array_equal(side["l2g_relative_att_ids"][0, :, 0], [6, 6, 6, 5, 5, 6])
  np.testing.assert_array_equal(side["l2l_relative_att_ids"][0, 0], [3, 0, 1])
  np.testing.assert_array_equal(side["g2g_relative_att_ids"][0], [[0, 1, 2], [3, 0, 1],
                                                                  [4, 3, 0]])


def test_hard_l2g_and_missing_sentence_ids():
  ids = tf.constant([[1, 1, 1, 1]])
  side = ops.make_side_inputs(ids, tf.constant([[1, 1]]), tf.constant([[0, 0, 1, 1]]), 1, 2,
                              use_hard_l2g_mask=True)
  np.testing.assert_array_equal(side["l2g_att_mask"][0], [[1, 0], [1, 0], [0, 1], [0, 1]])
  np.testing.assert_array_equal(side["g2l_att_mask"][0], [[1, 1, 1, 1], [1, 1, 1, 1]])
  with pytest.raises(ValueError, match="sentence_ids"):
    ops.make_side_inputs(ids, tf.constant([[1, 1]]), None, 1, 2, use_hard_g2l_mask=True)


def test_l2g_linking_by_hand():
  # Long 0-3 owned by global 0 (sentence), long 4-5 by global 1; long 2 is linked to global 2
  # (a candidate token), long 5 to global 0. k = 2: other sentence 5, own sentence 6.
  ids = tf.ones([1, 6], tf.int32)
  linked = tf.constant([[-1, -1, 2, -1, -1, 0]])
  side = ops.make_side_inputs(ids, tf.ones([1, 3], tf.int32), tf.constant([[0, 0, 0, 0, 1, 1]]),
                              1, 2, use_hard_l2g_mask=True, l2g_linked_ids=linked)
  np.testing.assert_array_equal(side["l2g_relative_att_ids"][0], [
      [6, 5, 5], [6, 5, 5], [6, 5, 6], [6, 5, 5], [5, 6, 5], [6, 6, 5]])
  np.testing.assert_array_equal(side["l2g_att_mask"][0], [
      [1, 0, 0], [1, 0, 0], [1, 0, 1], [1, 0, 0], [0, 1, 0], [1, 1, 0]])
  # The link works both ways for the relative ids; the hard g2l mask does not open.
  np.testing.assert_array_equal(side["g2l_relative_att_ids"][0], [
      [6, 6, 6, 6, 5, 6], [5, 5, 5, 5, 6, 6], [5, 5, 6, 5, 5, 5]])
  hard = ops.make_side_inputs(ids, tf.ones([1, 3], tf.int32), tf.constant([[0, 0, 0, 0, 1, 1]]),
                              1, 2, use_hard_g2l_mask=True, l2g_linked_ids=linked)
  np.testing.assert_array_equal(hard["g2l_att_mask"][0], [
      [1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0]])


def test_paragraph_contexts_and_hard_g2l_exemption_by_hand():
  # Long: 0-1 question (context 0), 2-3 paragraph 1, 4-5 paragraph 2.
  # Global: 0 CLS (ctx 0, exempt), 1 PARAGRAPH p1 (exempt), 2 SENTENCE p1 (owns 2-3),
  #         3 PARAGRAPH p2 (exempt), 4 SENTENCE p2 (owns 4-5).
  long_ids = tf.ones([1, 6], tf.int32)
  global_ids = tf.ones([1, 5], tf.int32)
  side = ops.make_side_inputs(
      long_ids, global_ids, tf.constant([[0, 0, 2, 2, 4, 4]]), local_radius=1,
      relative_pos_max_distance=2, use_hard_g2l_mask=True,
      long_paragraph_ids=tf.constant([[0, 0, 1, 1, 2, 2]]),
      global_paragraph_ids=tf.constant([[0, 1, 1, 2, 2]]),
      ignore_hard_g2l_mask=tf.constant([[1, 1, 0, 1, 0]]))
  # l2l never crosses a context boundary.
  np.testing.assert_array_equal(side["l2l_att_mask"][0], [
      [0, 1, 1], [1, 1, 0], [0, 1, 1], [1, 1, 0], [0, 1, 1], [1, 1, 0]])
  # CLS sees everything, a PARAGRAPH token its paragraph, a SENTENCE token its own pieces.
  np.testing.assert_array_equal(side["g2l_att_mask"][0], [
      [1, 1, 1, 1, 1, 1], [0, 0, 1, 1, 0, 0], [0, 0, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1],
      [0, 0, 0, 0, 1, 1]])
  # g2g across contexts: the unordered id 2k+3 = 7; inside a context: relative positions.
  np.testing.assert_array_equal(side["g2g_relative_att_ids"][0], [
      [0, 7, 7, 7, 7], [7, 0, 1, 7, 7], [7, 3, 0, 7, 7], [7, 7, 7, 0, 1], [7, 7, 7, 3, 0]])
  with pytest.raises(ValueError, match="both or neither"):
    ops.make_side_inputs(long_ids, global_ids, None, 1, 2,
                         long_paragraph_ids=tf.zeros([1, 6], tf.int32))


def test_select_by_id_matches_gather_with_gradients():
  rng = np.random.default_rng(3)
  table = tf.constant(rng.normal(size=(2, 3, 5, 4)), tf.float32)  # [B, h, Q, R]
  ids = tf.constant(rng.integers(0, 4, size=(2, 5, 6)), tf.int32)  # [B, Q, K]
  upstream = tf.constant(rng.normal(size=(2, 3, 5, 6)), tf.float32)
  with tf.GradientTape(persistent=True) as tape:
    tape.watch(table)
    got = ops.select_by_id(table, ids)
    expected = tf.gather(table, tf.broadcast_to(ids[:, None], [2, 3, 5, 6]), axis=3,
                         batch_dims=3)
    got_loss = tf.reduce_sum(got * upstream)
    expected_loss = tf.reduce_sum(expected * upstream)
  np.testing.assert_allclose(got, expected, rtol=1e-6)
  np.testing.assert_allclose(tape.gradient(got_loss, table), tape.gradient(expected_loss, table),
                             rtol=1e-5, atol=1e-6)
  # By hand: one entry, and an id outside [0, R) selects 0.
  assert float(got[1, 2, 3, 4]) == pytest.approx(float(table[1, 2, 3, int(ids[1, 3, 4])]))
  out_of_range = ops.select_by_id(table, tf.fill([2, 5, 6], 7))
  assert float(tf.reduce_max(tf.abs(out_of_range))) == 0.0


def test_blocked_side_inputs_match_the_per_layer_conversion():
  long_ids = tf.constant([[1] * 9 + [0] * 2], tf.int32)
  global_ids = tf.constant([[1, 1, 0]], tf.int32)
  sentence_ids = tf.constant([[0] * 5 + [1] * 4 + [0] * 2], tf.int32)
  side = ops.make_side_inputs(long_ids, global_ids, sentence_ids, 2, 3)
  blocked = ops.blocked_side_inputs(side, 2)
  b = 3
  in_range = tf.cast(ops.window_key_in_range(11, 2), tf.int32)[None]
  expected_mask = np.concatenate(
      [ops.window_to_blocked(side["l2l_att_mask"] * in_range, 2).numpy(),
       ops.split_into_blocks(side["l2g_att_mask"], b).numpy()], axis=-1)
  np.testing.assert_array_equal(blocked["blocked_long_att_mask"], expected_mask)  # [1,4,3,12]
  assert blocked["blocked_long_att_mask"].shape == (1, 4, 3, 3 * b + 3)
  np.testing.assert_array_equal(blocked["blocked_l2l_relative_att_ids"],
                                ops.window_to_blocked(side["l2l_relative_att_ids"], 2))
  np.testing.assert_array_equal(blocked["blocked_l2g_relative_att_ids"],
                                ops.split_into_blocks(side["l2g_relative_att_ids"], b))
  # Query 0 (block 0, row 0) sees long tokens 0..2 at slots 3..5 and no token before 0.
  row = blocked["blocked_long_att_mask"].numpy()[0, 0, 0]
  assert row[:3].tolist() == [0, 0, 0] and row[3:6].tolist() == [1, 1, 1]
  assert row[6:9].tolist() == [0, 0, 0]
  for name in ops.SIDE_INPUT_NAMES:  # the original entries are kept
    assert blocked[name] is side[name]
