"""Pure tensor functions on hand-made tensors."""

import numpy as np
import pytest
import tensorflow as tf

import numpy_reference as ref
from etc_realformer import ops
from etc_realformer.ops import lookup
from etc_realformer.ops import relative
from etc_realformer.ops import softmax as softmax_ops


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
  # g2l [B, G, L] from an own-or-linked tensor, and l2g [B, L, G] its transpose (k = 2).
  stream = relative.stream_relative_ids(tf.constant([[[True, False, False], [False, True, True]]]),
                                        2)
  np.testing.assert_array_equal(stream["g2l_relative_att_ids"], [[[6, 5, 5], [5, 6, 6]]])
  np.testing.assert_array_equal(stream["l2g_relative_att_ids"], [[[6, 5], [5, 6], [5, 6]]])
  assert {t.dtype for t in stream.values()} == {tf.int32}


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


def _select_by_hand(table, ids, upstream):
  """NumPy: out[b, h, q, k] = table[b, h, q, ids[b, q, k]] (0 outside [0, R)), and the gradient
  of sum(out * upstream) w.r.t. the table."""
  batch, heads, queries, num_ids = table.shape
  out = np.zeros(upstream.shape, np.float64)
  grad = np.zeros(table.shape, np.float64)
  for b, q, k in np.ndindex(ids.shape):
    i = ids[b, q, k]
    if 0 <= i < num_ids:
      out[b, :, q, k] = table[b, :, q, i]
      grad[b, :, q, i] += upstream[b, :, q, k]
  return out, grad


# R = 4. Ids in two neighbouring values take the two-column path (ETC's long-to-global and
# global-to-long pairs); any other ids the product over all R columns.
ID_CASES = {
    "random": lambda rng, shape: rng.integers(0, 4, size=shape),
    "two_neighbours": lambda rng, shape: rng.integers(1, 3, size=shape),
    "lowest_two": lambda rng, shape: rng.integers(0, 2, size=shape),
    "highest_two": lambda rng, shape: rng.integers(2, 4, size=shape),
    "one_value": lambda rng, shape: np.full(shape, 3),
    "two_apart": lambda rng, shape: 2 * rng.integers(0, 2, size=shape),
    "with_out_of_range": lambda rng, shape: rng.integers(3, 5, size=shape),
    "below_range": lambda rng, shape: rng.integers(-1, 1, size=shape),
}


@pytest.mark.parametrize("case", sorted(ID_CASES))
@pytest.mark.parametrize("graph", [False, True])
def test_select_by_id_matches_a_loop_with_gradients(case, graph):
  rng = np.random.default_rng(3)
  table = rng.normal(size=(2, 3, 5, 4)).astype(np.float32)  # [B, h, Q, R]
  ids = ID_CASES[case](rng, (2, 5, 6)).astype(np.int32)  # [B, Q, K]
  upstream = rng.normal(size=(2, 3, 5, 6)).astype(np.float32)

  def run(t, i):
    with tf.GradientTape() as tape:
      tape.watch(t)
      out = ops.select_by_id(t, i)
      loss = tf.reduce_sum(out * upstream)
    return out, tape.gradient(loss, t)

  if graph:
    run = tf.function(run)
  got, got_grad = run(tf.constant(table), tf.constant(ids))
  expected, expected_grad = _select_by_hand(table, ids, upstream)
  # Forward: the selected values exactly (every other column is multiplied by an exact 0).
  np.testing.assert_array_equal(got.numpy(), expected.astype(np.float32))
  np.testing.assert_allclose(got_grad, expected_grad, rtol=1e-5, atol=1e-5)


def test_select_by_id_two_column_path_under_mixed_precision():
  rng = np.random.default_rng(4)
  table = tf.constant(rng.normal(size=(1, 2, 3, 6)), tf.float16)
  ids = tf.constant(rng.integers(4, 6, size=(1, 3, 7)), tf.int32)
  got = ops.select_by_id(table, ids)
  assert got.dtype == tf.float16
  expected, _ = _select_by_hand(table.numpy(), ids.numpy(), np.zeros([1, 2, 3, 7]))
  np.testing.assert_array_equal(got.numpy(), expected.astype(np.float16))


def _blocked_window_case(radius, length, rng, uniform=True):
  """A table [1, 2, nb, b, R] and blocked l2l ids (ETC's window ids, or with one token's window
  changed), the window ids' summary, and which blocked slots are real pairs [nb, b, 3b]."""
  b, num_ids = radius + 1, 2 * radius + 2
  window = ops.window_relative_ids(radius, radius).numpy()  # [2r+1]
  ids = np.tile(window, [1, length, 1]).astype(np.int32)  # [1, L, 2r+1]
  if not uniform:
    ids[0, length // 2, 0] = num_ids - 1
  blocked_ids = ops.window_to_blocked(tf.constant(ids), radius)  # [1, nb, b, 3b]
  nb = blocked_ids.shape[1]
  table = rng.normal(size=(1, 2, nb, b, num_ids)).astype(np.float32)
  query = np.arange(nb * b).reshape(nb, b, 1)
  column = np.arange(3 * b)[None, None, :]
  key = query - (query % b) - b + column  # [nb, b, 3b]: the long token each slot refers to
  real = (query < length) & (np.abs(key - query) <= radius) & (key >= 0) & (key < length)
  return table, blocked_ids, lookup.window_ids_if_uniform(ids), real


@pytest.mark.parametrize("radius,length", [(1, 5), (2, 7), (3, 12), (4, 9)])
def test_select_by_window_id_matches_select_by_id_on_every_real_pair(radius, length):
  rng = np.random.default_rng(radius)
  table, blocked_ids, (window_ids, uniform), real = _blocked_window_case(radius, length, rng)
  assert bool(uniform)
  np.testing.assert_array_equal(window_ids, ops.window_relative_ids(radius, radius))
  b = radius + 1
  # The upstream of the slots that are no real pair is 0, as a masked softmax makes it.
  upstream = rng.normal(size=table.shape[:-1] + (3 * b,)).astype(np.float32) * real

  def run(select):
    t = tf.constant(table)
    with tf.GradientTape() as tape:
      tape.watch(t)
      out = select(t)
      loss = tf.reduce_sum(out * upstream)
    return out.numpy(), tape.gradient(loss, t).numpy()

  got, got_grad = run(lambda t: lookup.select_by_window_id(t, blocked_ids, window_ids, uniform))
  expected, expected_grad = run(lambda t: tf.reshape(ops.select_by_id(
      tf.reshape(t, [1, 2, -1, t.shape[-1]]), tf.reshape(blocked_ids, [1, -1, 3 * b])), got.shape))
  np.testing.assert_array_equal(got[:, :, real], expected[:, :, real])
  np.testing.assert_allclose(got_grad, expected_grad, rtol=1e-6, atol=1e-6)


def test_select_by_window_id_falls_back_to_the_ids_when_a_window_differs():
  rng = np.random.default_rng(7)
  table, blocked_ids, (window_ids, uniform), _ = _blocked_window_case(2, 8, rng, uniform=False)
  assert not bool(uniform)
  got = lookup.select_by_window_id(tf.constant(table), blocked_ids, window_ids, uniform)
  expected, _ = _select_by_hand(table.reshape(1, 2, -1, table.shape[-1]),
                                blocked_ids.numpy().reshape(1, -1, 9),
                                np.zeros([1, 2, table.shape[2] * 3, 9]))
  np.testing.assert_array_equal(got.numpy().reshape(expected.shape), expected)
  # No queries at all: not uniform, so nothing is read from an empty window.
  assert not bool(lookup.window_ids_if_uniform(tf.zeros([1, 0, 5], tf.int32))[1])


def test_select_by_id_with_no_keys():
  # No ids at all: the min and max of nothing must not pick the two-column path.
  assert ops.select_by_id(tf.ones([1, 2, 3, 4]), tf.zeros([1, 3, 0], tf.int32)).shape == (
      1, 2, 3, 0)


def test_blocked_side_inputs_match_the_per_layer_conversion():
  long_ids = tf.constant([[1] * 9 + [0] * 2], tf.int32)
  global_ids = tf.constant([[1, 1, 0]], tf.int32)
  sentence_ids = tf.constant([[0] * 5 + [1] * 4 + [0] * 2], tf.int32)
  side = ops.make_side_inputs(long_ids, global_ids, sentence_ids, 2, 3)
  blocked = ops.blocked_side_inputs(side, 2)
  b = 3
  in_range = tf.cast(ops.window_key_in_range(11, 2), tf.int32)[None]
  # The masks as additive biases: 0 = attend, -10000 = closed.
  expected_l2l = ops.window_to_blocked(side["l2l_att_mask"] * in_range, 2).numpy()  # [1, 4, 3, 9]
  expected_l2g = ops.split_into_blocks(side["l2g_att_mask"], b).numpy()  # [1, 4, 3, 3]
  for key, mask in (("blocked_l2l_att_bias", expected_l2l), ("blocked_l2g_att_bias", expected_l2g),
                    ("g2g_att_bias", side["g2g_att_mask"]), ("g2l_att_bias", side["g2l_att_mask"])):
    assert blocked[key].dtype == tf.float32
    np.testing.assert_array_equal(blocked[key], np.where(np.asarray(mask) == 1, 0.0, -10000.0))
  assert blocked["blocked_l2l_att_bias"].shape == (1, 4, 3, 3 * b)
  np.testing.assert_array_equal(blocked["blocked_l2l_relative_att_ids"],
                                ops.window_to_blocked(side["l2l_relative_att_ids"], 2))
  # Every token's window holds the same ids, so the layers take select_by_window_id.
  assert bool(blocked["l2l_window_relative_att_ids_uniform"])
  np.testing.assert_array_equal(blocked["l2l_window_relative_att_ids"],
                                ops.window_relative_ids(2, 3))
  # Long-to-global ids: the 11 real rows as they are; the row that pads the last block repeats an
  # id of the real rows, so the ids keep their two values (ops/lookup.py's two-column path).
  l2g_ids = blocked["blocked_l2g_relative_att_ids"].numpy().reshape([1, 12, 3])
  np.testing.assert_array_equal(l2g_ids[:, :11], side["l2g_relative_att_ids"])
  assert set(np.unique(l2g_ids)) == set(np.unique(side["l2g_relative_att_ids"])) == {7, 8}
  # Query 0 (block 0, row 0) sees long tokens 0..2 at slots 3..5 and no token before 0.
  row = blocked["blocked_l2l_att_bias"].numpy()[0, 0, 0]
  assert row[:3].tolist() == [-10000] * 3 and row[3:6].tolist() == [0, 0, 0]
  assert row[6:9].tolist() == [-10000] * 3
  for name in ops.SIDE_INPUT_NAMES:  # the original entries are kept
    assert blocked[name] is side[name]


@pytest.mark.parametrize("sizes", [(5, 3), (7, 4, 2)])
def test_joint_softmax_is_the_softmax_of_the_joined_parts_with_its_gradient(sizes):
  # Parts [2, 3, K_i] as the attention passes them, with the mask's -10000 added to one key of
  # one row and to every key of another (a row of a padding query without its own slot).
  rng = np.random.default_rng(4)
  parts = [tf.constant(rng.normal(size=(2, 3, k)) * 3, tf.float32) for k in sizes]
  parts[0] = tf.tensor_scatter_nd_add(parts[0], [[0, 1, 0]], [-10000.0])
  parts = [tf.tensor_scatter_nd_add(p, [[1, 2, j] for j in range(p.shape[-1])],
                                    [-10000.0] * p.shape[-1]) for p in parts]
  weights = [tf.constant(rng.normal(size=p.shape), tf.float32) for p in parts]
  # Only the first two parts reach the loss: the third's upstream gradient is None.
  used = min(len(parts), 2)

  def loss_of(probs):
    return sum(tf.reduce_sum(w * p) for w, p in list(zip(weights, probs))[:used])

  with tf.GradientTape(persistent=True) as tape:
    tape.watch(parts)
    got = softmax_ops.joint_softmax(parts)
    expected = tf.split(tf.nn.softmax(tf.concat(parts, -1)), list(sizes), axis=-1)
    got_loss, expected_loss = loss_of(got), loss_of(expected)
  for g, e in zip(got, expected):
    np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7)
  for g, e in zip(tape.gradient(got_loss, parts), tape.gradient(expected_loss, parts)):
    np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-7)
  # Rows sum to 1 over all parts together, also the fully masked one; a masked key of an open
  # row gets nothing.
  total = sum(tf.reduce_sum(g, -1) for g in got)
  np.testing.assert_allclose(total, np.ones([2, 3]), rtol=1e-6)
  assert float(got[0][0, 1, 0]) == 0.0
  # float16 parts are computed in float32 and come back as float16 (batch entry 0: in the
  # fully masked row float16 keeps too few digits of -10000 + x to compare).
  half = softmax_ops.joint_softmax([tf.cast(p, tf.float16) for p in parts])
  assert {h.dtype for h in half} == {tf.float16}
  for h, e in zip(half, expected):
    np.testing.assert_allclose(tf.cast(h[0], tf.float32), e[0], atol=2e-3)
