"""RealFormer residual attention: a 3-layer stack against the NumPy reference."""

import numpy as np
import pytest

import numpy_reference as ref
from etc_realformer.layers import GlobalLocalAttention
from etc_realformer.layers.global_local_attention import joined
from helpers import random_side_inputs, rel_err

HIDDEN, HEADS, RADIUS, MAX_DIST = 16, 2, 2, 3


def stack(residual, implementation, paths=("global", "local"), memory=0):
  layers = []
  for i in range(3):
    layer = GlobalLocalAttention(HIDDEN, HEADS, RADIUS, relative_vocab_size=2 * MAX_DIST + 4,
                                 share_qkv_projections=False, residual_attention=residual,
                                 residual_paths=paths, layer_index=i, num_persistent_memory=memory,
                                 initializer_range=0.4, implementation=implementation)
    layer.build(None)
    layers.append(layer)
  return layers


def run_stack(layers, long_x, global_x, side):
  long_s = global_s = None
  for layer in layers:
    out = layer(long_x, global_x, side, long_scores=long_s, global_scores=global_s)
    long_x, global_x = out["long_output"], out["global_output"]
    long_s, global_s = out["long_scores"], out["global_scores"]
  # The streams travel as the parts the softmax reads; the reference gives them joined.
  return long_x, global_x, joined(long_s), joined(global_s)


def run_reference(layers, long_x, global_x, side, residual):
  long_s = global_s = None
  for i, layer in enumerate(layers):
    long_x, global_x, long_s, global_s = ref.etc_attention_reference(
        long_x, global_x, side, layer.reference_weights(), local_radius=RADIUS,
        prev_long=long_s, prev_global=global_s, residual=residual, layer_index=i)
  return long_x, global_x, long_s, global_s


def data(seed):
  rng = np.random.default_rng(seed)
  long_x = rng.normal(size=(2, 17, HIDDEN)).astype(np.float32)
  global_x = rng.normal(size=(2, 4, HIDDEN)).astype(np.float32)
  return long_x, global_x, random_side_inputs(rng, 2, 17, 4, RADIUS, MAX_DIST)


@pytest.mark.parametrize("residual", ["sum", "mean", "none"])
@pytest.mark.parametrize("implementation", ["blocked", "dense"])
@pytest.mark.parametrize("memory", [0, 2])
def test_three_layer_stack_matches_reference(residual, implementation, memory):
  long_x, global_x, side = data(1)
  layers = stack(residual, implementation, memory=memory)
  got = run_stack(layers, long_x, global_x, side)
  expected = run_reference(layers, long_x, global_x, side, residual)
  assert rel_err(got[0], expected[0]) <= 1e-5
  assert rel_err(got[1], expected[1]) <= 1e-5
  if residual == "none":
    assert got[2] is None and got[3] is None
  else:
    assert rel_err(got[3], expected[3]) <= 1e-5  # global stream, same layout
    if implementation == "dense":
      assert rel_err(got[2], expected[2]) <= 1e-5
    else:
      # Blocked layout [B, h, nb, b, 3b + G + M]: compare the in-window slots with the dense
      # reference stream [B, h, L, L + G + M].
      b = RADIUS + 1
      long_len = long_x.shape[1]
      blocked = np.asarray(got[2])
      for q in range(long_len):
        n, i = divmod(q, b)
        for j in range(max(0, q - RADIUS), min(long_len, q + RADIUS + 1)):
          np.testing.assert_allclose(blocked[:, :, n, i, j - (n - 1) * b],
                                     expected[2][:, :, q, j], rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(blocked[:, :, n, i, 3 * b:], expected[2][:, :, q, long_len:],
                                   rtol=1e-4, atol=1e-4)


def test_residual_changes_the_result():
  long_x, global_x, side = data(2)
  plain = run_stack(stack("none", "blocked"), long_x, global_x, side)
  layers = stack("sum", "blocked")
  for a, b in zip(layers, stack("none", "blocked")):
    b.set_weights(a.get_weights())
  summed = run_stack(layers, long_x, global_x, side)
  assert rel_err(summed[0], plain[0]) > 1e-3


def test_global_path_only_changes_only_the_global_stream():
  long_x, global_x, side = data(3)
  rng = np.random.default_rng(5)
  prev_global = rng.normal(size=(2, HEADS, 4, 4 + 17)).astype(np.float32)
  prev_long = rng.normal(size=(2, HEADS, 6, 3, 9 + 4)).astype(np.float32)
  only_global = GlobalLocalAttention(HIDDEN, HEADS, RADIUS, relative_vocab_size=10,
                                     residual_attention="sum", residual_paths=("global",),
                                     layer_index=1, initializer_range=0.4)
  plain = GlobalLocalAttention(HIDDEN, HEADS, RADIUS, relative_vocab_size=10,
                               residual_attention="none", layer_index=1, initializer_range=0.4)
  only_global.build(None)
  plain.build(None)
  plain.set_weights(only_global.get_weights())
  a = only_global(long_x, global_x, side, long_scores=prev_long, global_scores=prev_global)
  b = plain(long_x, global_x, side, long_scores=prev_long, global_scores=prev_global)
  assert a["long_scores"] is None and a["global_scores"] is not None
  np.testing.assert_array_equal(a["long_output"], b["long_output"])  # long stream untouched
  assert rel_err(a["global_output"], b["global_output"]) > 1e-3  # global stream changed
  # "none" ignores any scores passed in: identical to calling without them.
  c = plain(long_x, global_x, side)
  np.testing.assert_array_equal(b["long_output"], c["long_output"])
  np.testing.assert_array_equal(b["global_output"], c["global_output"])
