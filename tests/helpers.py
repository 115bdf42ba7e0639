"""Shared test helpers: random ETC inputs, relative error, and the generic layer checks."""

import tempfile

import numpy as np
import tensorflow as tf
import tf_keras

from etc_realformer import ops


def rel_err(actual, expected):
  """max |actual - expected| / max |expected| (0 when both are zero)."""
  actual = np.asarray(tf.convert_to_tensor(actual), np.float64)
  expected = np.asarray(tf.convert_to_tensor(expected), np.float64)
  scale = np.abs(expected).max()
  return float(np.abs(actual - expected).max() / scale) if scale else float(
      np.abs(actual).max())


def random_side_inputs(rng, batch, long_len, global_len, radius, max_distance, random_masks=True,
                       hard=False, random_ids=True):
  """Side inputs from random packing (padding, several examples per row) and sentence ids.

  With random_masks, every mask also gets random holes (keeping each query's self key or at
  least one key) so the test does not depend on the structure of the derived masks. With
  random_ids, every relative id is random; without, they are the derived ones (the same window
  of ids for every long query: ops/lookup.py's select_by_window_id).
  """
  long_bp = np.zeros((batch, long_len), np.int32)
  global_bp = np.zeros((batch, global_len), np.int32)
  for b in range(batch):
    n_long = rng.integers(max(1, long_len // 2), long_len + 1)  # trailing padding
    n_global = rng.integers(1, global_len + 1)
    n_ex = rng.integers(1, min(3, n_global, n_long) + 1)  # examples packed into the row
    for n, bp in ((n_long, long_bp), (n_global, global_bp)):
      for c in np.sort(rng.choice(np.arange(1, n), n_ex - 1, replace=False)):
        bp[b, c - 1] = 1
      bp[b, n - 1] = 1
  sentence_ids = np.sort(rng.integers(0, global_len, (batch, long_len)), axis=1).astype(np.int32)
  side = ops.make_side_inputs(ops.example_ids_from_breakpoints(long_bp),
                              ops.example_ids_from_breakpoints(global_bp), sentence_ids, radius,
                              max_distance, use_hard_g2l_mask=hard, use_hard_l2g_mask=hard)
  side = {k: v.numpy() for k, v in side.items()}
  if random_masks:
    for name in ("l2l_att_mask", "l2g_att_mask", "g2g_att_mask", "g2l_att_mask"):
      holes = rng.random(side[name].shape) < 0.2
      side[name] = np.where(holes, 0, side[name]).astype(np.int32)
    side["l2l_att_mask"][:, :, radius] = 1  # each long query keeps its own key
    idx = np.arange(global_len)
    side["g2g_att_mask"][:, idx, idx] = 1  # each global query keeps its own key
  for name in list(side) if random_ids else []:
    if name.endswith("relative_att_ids"):
      # Random ids (not only the structured ones) exercise the gathers fully.
      side[name] = rng.integers(0, 2 * max_distance + 4, side[name].shape).astype(np.int32)
  return side


def check_layer_basics(layer_factory, call, make_inputs, tmp_path=None, half_dtype=tf.float16,
                       no_gradient=()):
  """keras-hub style checks for any layer/model built by `layer_factory()`.

  `call(layer, inputs, training)` returns a tensor (or nested structure) to compare. Checks:
  get_config/from_config round trip (same config, same outputs with copied weights); eager ==
  tf.function; one SGD step changes the weights and lowers a simple loss; runs under
  mixed_float16 with `half_dtype` outputs close to float32 ones (half_dtype=tf.float32 for
  models that cast their outputs back: these must then differ from the float32 ones).
  `no_gradient` names exactly the trainable variables that `call`'s outputs cannot depend on
  (e.g. the last encoder layer's long side when only the global outputs are read).
  """
  inputs = make_inputs()
  layer = layer_factory()
  out = tf.nest.flatten(call(layer, inputs, False))
  # Round trip.
  clone = layer.__class__.from_config(layer.get_config())
  call(clone, inputs, False)
  assert clone.get_config() == layer.get_config()
  clone.set_weights(layer.get_weights())
  for a, b in zip(out, tf.nest.flatten(call(clone, inputs, False))):
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
  # Eager vs tf.function.
  graph = tf.function(lambda x: call(layer, x, False))
  for a, b in zip(out, tf.nest.flatten(graph(inputs))):
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
  # One training step lowers a loss.
  opt = tf_keras.optimizers.SGD(0.05)
  target = [tf.random.normal(tf.shape(o)) for o in out]

  def loss_fn():
    got = tf.nest.flatten(call(layer, inputs, True))
    return tf.add_n([tf.reduce_mean((g - t) ** 2) for g, t in zip(got, target)])

  before = float(loss_fn())
  with tf.GradientTape() as tape:
    loss = loss_fn()
  grads = tape.gradient(loss, layer.trainable_variables)
  if no_gradient:
    missing = {v.name for g, v in zip(grads, layer.trainable_variables) if g is None}
    assert missing == set(no_gradient), f"no gradient for {sorted(missing)}"
    grads, variables = zip(*[(g, v) for g, v in zip(grads, layer.trainable_variables)
                             if g is not None])
  else:
    assert all(g is not None for g in grads), "a trainable variable got no gradient"
    variables = layer.trainable_variables
  opt.apply_gradients(zip(grads, variables))
  assert float(loss_fn()) < before
  # Mixed precision.
  tf_keras.mixed_precision.set_global_policy("mixed_float16")
  try:
    half = layer_factory()
    call(half, inputs, False)
    half.set_weights(layer.get_weights())
    ref = tf.nest.flatten(call(layer, inputs, False))
    errors = []
    for a, b in zip(tf.nest.flatten(call(half, inputs, False)), ref):
      assert a.dtype == half_dtype
      assert np.all(np.isfinite(a.numpy()))
      errors.append(rel_err(a, b))
      assert errors[-1] < 2e-2
    if half_dtype != tf.float16:  # outputs cast back to float32: float16 must still show
      assert max(errors) > 0, "the mixed_float16 outputs equal the float32 ones"
  finally:
    tf_keras.mixed_precision.set_global_policy("float32")
  return layer


def saved_model_round_trip(model, inputs, call):
  """Saves `model` as a SavedModel, loads it, and returns (original, loaded) outputs."""
  expected = call(model, inputs)
  with tempfile.TemporaryDirectory() as d:
    model.save(d)
    loaded = tf_keras.models.load_model(d)
    got = call(loaded, inputs)
  return expected, got
