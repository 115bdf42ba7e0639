"""Optimizers: WarmupLinearDecay, Lamb against NumPy, AdamW against tf_keras's, create_optimizer."""

# The tests read optimizer slots and the weight-decay decision directly.
# pylint: disable=protected-access

import copy
import json

import numpy as np
import pytest

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
import tensorflow as tf  # pylint: disable=g-import-not-at-top
import tf_keras  # pylint: disable=g-import-not-at-top

from etc_realformer.training import optimizers  # pylint: disable=g-import-not-at-top
from etc_realformer.training import schedules  # pylint: disable=g-import-not-at-top

Lamb = optimizers.Lamb
WarmupLinearDecay = schedules.WarmupLinearDecay


# ---------------------------------------------------------------------------
# WarmupLinearDecay
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("step,expected", [
    (0, 0.5),    # peak * 1/4: the first update is not wasted
    (1, 1.0),
    (2, 1.5),
    (3, 2.0),    # last warmup step reaches the peak
    (4, 2.0),    # first decay step is still the peak
    (8, 1.2),    # decay midpoint: 0.4 + 1.6 * 4/8
    (11, 0.6),   # 0.4 + 1.6 * 1/8
    (12, 0.4),   # decay_steps: end value
    (13, 0.4),
    (1000, 0.4),
])
def test_schedule_values(step, expected):
  schedule = WarmupLinearDecay(peak_learning_rate=2.0, warmup_steps=4,
                               decay_steps=12, end_learning_rate=0.4)
  value = schedule(tf.constant(step, tf.int64))
  assert value.dtype == tf.float32
  np.testing.assert_allclose(value.numpy(), expected, rtol=1e-6)


def test_schedule_without_warmup_starts_at_peak():
  schedule = WarmupLinearDecay(1e-3, warmup_steps=0, decay_steps=10)
  np.testing.assert_allclose(
      [schedule(s).numpy() for s in (0, 5, 10, 11)], [1e-3, 5e-4, 0.0, 0.0],
      rtol=1e-6, atol=1e-12)


def test_schedule_config_round_trip():
  schedule = WarmupLinearDecay(3e-4, warmup_steps=100, decay_steps=1000,
                               end_learning_rate=1e-5, name="lr")
  config = schedule.get_config()
  json.dumps(config)  # must be JSON-serializable
  rebuilt = WarmupLinearDecay.from_config(config)
  assert rebuilt.get_config() == config
  # Through the Keras registry, as an optimizer config does it.
  serialized = tf_keras.optimizers.schedules.serialize(schedule)
  restored = tf_keras.optimizers.schedules.deserialize(
      json.loads(json.dumps(serialized)))
  assert isinstance(restored, WarmupLinearDecay)
  for step in (0, 50, 99, 100, 550, 1000, 5000):
    assert restored(step).numpy() == schedule(step).numpy()


@pytest.mark.parametrize("kwargs,argument", [
    (dict(peak_learning_rate=0.0), "peak_learning_rate"),
    (dict(peak_learning_rate=-1.0), "peak_learning_rate"),
    (dict(peak_learning_rate=float("nan")), "peak_learning_rate"),
    (dict(peak_learning_rate="1e-3"), "peak_learning_rate"),
    (dict(warmup_steps=-1), "warmup_steps"),
    (dict(warmup_steps=2.5), "warmup_steps"),
    (dict(warmup_steps=True), "warmup_steps"),
    (dict(decay_steps=0), "decay_steps"),
    (dict(decay_steps=10.0), "decay_steps"),
    (dict(warmup_steps=10, decay_steps=10), "decay_steps"),
    (dict(end_learning_rate=-0.1), "end_learning_rate"),
    (dict(end_learning_rate=2.0), "end_learning_rate"),
])
def test_schedule_rejects_bad_arguments(kwargs, argument):
  args = dict(peak_learning_rate=1.0, warmup_steps=2, decay_steps=10,
              end_learning_rate=0.0)
  args.update(kwargs)
  with pytest.raises(ValueError, match=argument):
    WarmupLinearDecay(**args)


# ---------------------------------------------------------------------------
# Lamb
# ---------------------------------------------------------------------------


def numpy_lamb(w, grads, lrs, beta_1, beta_2, epsilon, weight_decay, excluded):
  """Reference LAMB in float64: returns w, m, v after len(grads) updates."""
  w = np.array(w, np.float64)
  m = np.zeros_like(w)
  v = np.zeros_like(w)
  for t, (g, lr) in enumerate(zip(grads, lrs), start=1):
    g = np.asarray(g, np.float64)
    m = beta_1 * m + (1 - beta_1) * g
    v = beta_2 * v + (1 - beta_2) * g * g
    m_hat = m / (1 - beta_1 ** t)
    v_hat = v / (1 - beta_2 ** t)
    u = m_hat / (np.sqrt(v_hat) + epsilon)
    ratio = 1.0
    if not excluded:
      u = u + weight_decay * w
      w_norm = np.sqrt(np.sum(w * w))
      u_norm = np.sqrt(np.sum(u * u))
      if w_norm > 0 and u_norm > 0:
        ratio = w_norm / u_norm
    w = w - lr * ratio * u
  return w, m, v


HYPER = dict(beta_1=0.8, beta_2=0.95, epsilon=1e-6, weight_decay=0.1)


@pytest.mark.parametrize("use_schedule", [False, True])
def test_lamb_matches_numpy(use_schedule):
  rng = np.random.default_rng(0)
  kernel0 = rng.uniform(0.5, 1.5, (3, 4)) * rng.choice([-1, 1], (3, 4))
  bias0 = rng.uniform(0.5, 1.5, (4,))
  kernel = tf.Variable(kernel0, dtype=tf.float32, name="dense/kernel")
  bias = tf.Variable(bias0, dtype=tf.float32, name="dense/bias")
  if use_schedule:
    learning_rate = WarmupLinearDecay(0.3, warmup_steps=2, decay_steps=6)
    lrs = [0.15, 0.3, 0.3]  # peak*(s+1)/2, then the peak at step 2 = warmup
  else:
    learning_rate = 0.05
    lrs = [0.05] * 3
  opt = Lamb(learning_rate=learning_rate, **HYPER)
  opt.exclude_from_weight_decay(var_names=["bias"])
  kernel_grads = [rng.normal(size=(3, 4)) for _ in range(3)]
  bias_grads = [rng.normal(size=(4,)) for _ in range(3)]
  for kg, bg in zip(kernel_grads, bias_grads):
    opt.apply_gradients([(tf.constant(kg, tf.float32), kernel),
                         (tf.constant(bg, tf.float32), bias)])
  assert int(opt.iterations.numpy()) == 3

  for var, init, grads, excluded in ((kernel, kernel0, kernel_grads, False),
                                     (bias, bias0, bias_grads, True)):
    w, m, v = numpy_lamb(init, grads, lrs, excluded=excluded, **HYPER)
    np.testing.assert_allclose(var.numpy(), w, rtol=1e-6)
    index = opt._index_dict[opt._var_key(var)]
    np.testing.assert_allclose(opt._momentums[index].numpy(), m, rtol=1e-6)
    np.testing.assert_allclose(opt._velocities[index].numpy(), v, rtol=1e-6)
  # The decayed, trust-ratio-scaled kernel differs from plain Adam-style steps.
  w_excluded, _, _ = numpy_lamb(kernel0, kernel_grads, lrs, excluded=True, **HYPER)
  assert not np.allclose(kernel.numpy(), w_excluded, rtol=1e-3)


def test_lamb_trust_ratio_is_one_for_zero_weights():
  var = tf.Variable(tf.zeros([2, 3]), name="kernel")
  grad = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]], np.float32)
  opt = Lamb(learning_rate=0.1, epsilon=1e-6, weight_decay=0.1)
  opt.apply_gradients([(tf.constant(grad), var)])
  # m_hat = g, v_hat = g**2, u = g / (|g| + eps) (+ wd * 0), ratio 1.
  expected = -0.1 * grad / (np.abs(grad) + 1e-6)
  np.testing.assert_allclose(var.numpy(), expected, rtol=1e-6, atol=1e-12)


def test_lamb_zero_update_keeps_weights_and_is_finite():
  var = tf.Variable([[1.0, -2.0], [3.0, 4.0]], name="kernel")
  opt = Lamb(learning_rate=0.1, weight_decay=0.0)
  opt.apply_gradients([(tf.zeros([2, 2]), var)])
  np.testing.assert_array_equal(var.numpy(), [[1.0, -2.0], [3.0, 4.0]])


def test_lamb_sparse_gradient_equals_dense():
  rng = np.random.default_rng(1)
  table0 = rng.normal(size=(5, 3)).astype(np.float32)
  dense_var = tf.Variable(table0, name="embeddings/table")
  sparse_var = tf.Variable(table0, name="embeddings/table")
  dense_opt = Lamb(learning_rate=0.1)
  sparse_opt = Lamb(learning_rate=0.1)
  for _ in range(2):
    values = rng.normal(size=(3, 3)).astype(np.float32)
    indices = np.array([0, 3, 3])  # a duplicated row, as from repeated tokens
    dense_grad = np.zeros((5, 3), np.float32)
    np.add.at(dense_grad, indices, values)
    sparse_grad = tf.IndexedSlices(tf.constant(values), tf.constant(indices),
                                   tf.constant([5, 3]))
    dense_opt.apply_gradients([(tf.constant(dense_grad), dense_var)])
    sparse_opt.apply_gradients([(sparse_grad, sparse_var)])
  np.testing.assert_allclose(sparse_var.numpy(), dense_var.numpy(), rtol=1e-6)
  assert not np.allclose(sparse_var.numpy(), table0)


def test_lamb_sparse_gradient_from_embedding_lookup():
  table = tf.Variable(np.random.normal(size=(6, 2)).astype(np.float32),
                      name="token_embeddings")
  table_before = table.numpy()
  opt = Lamb(learning_rate=0.1)

  @tf.function
  def train_step(ids):
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(tf.square(tf.gather(table, ids)))
    grad = tape.gradient(loss, table)
    opt.apply_gradients([(grad, table)])
    return isinstance(grad, tf.IndexedSlices)

  assert train_step(tf.constant([1, 4, 4]))
  moved = np.any(table.numpy() != table_before, axis=1)
  # All rows move (weight decay + trust ratio), but rows 1 and 4 most.
  change = np.abs(table.numpy() - table_before).sum(axis=1)
  assert moved.all() and change[[1, 4]].min() > change[[0, 2, 3, 5]].max()


@pytest.mark.parametrize("use_schedule", [False, True])
def test_lamb_config_round_trip(use_schedule):
  learning_rate = (WarmupLinearDecay(1e-3, 10, 100, 1e-5) if use_schedule
                   else 2e-3)
  opt = Lamb(learning_rate=learning_rate, beta_1=0.85, beta_2=0.98,
             epsilon=1e-7, weight_decay=0.02, global_clipnorm=1.0,
             name="my_lamb")
  opt.exclude_from_weight_decay(var_names=["bias", "norm"])
  config = opt.get_config()
  json.dumps(config)
  rebuilt = Lamb.from_config(copy.deepcopy(config))
  assert isinstance(rebuilt, Lamb)
  assert rebuilt.get_config() == config
  assert config["exclude_from_weight_decay_names"] == ["bias", "norm"]
  assert config["global_clipnorm"] == 1.0 and config["name"] == "my_lamb"
  if use_schedule:
    assert isinstance(rebuilt._learning_rate, WarmupLinearDecay)
  # A rebuilt optimizer still excludes the same variables.
  bias = tf.Variable([1.0], name="dense/bias")
  assert not rebuilt._use_weight_decay(bias)
  # And through the Keras registry (as model.save / Horovod need).
  restored = tf_keras.optimizers.deserialize(
      json.loads(json.dumps(tf_keras.optimizers.serialize(opt))))
  assert isinstance(restored, Lamb) and restored.get_config() == config


@pytest.mark.parametrize("kwargs,argument", [
    (dict(beta_1=1.0), "beta_1"),
    (dict(beta_2=-0.1), "beta_2"),
    (dict(epsilon=0.0), "epsilon"),
    (dict(weight_decay=-0.01), "weight_decay"),
    (dict(weight_decay=None), "weight_decay"),
])
def test_lamb_rejects_bad_arguments(kwargs, argument):
  with pytest.raises(ValueError, match=argument):
    Lamb(**kwargs)


def _train_steps(opt, variables, grads):
  for grad_list in grads:
    opt.apply_gradients(zip([tf.constant(g) for g in grad_list], variables))


def test_lamb_checkpoint_restore_continues_identically(tmp_path):
  rng = np.random.default_rng(2)
  init = [rng.normal(size=(4, 3)).astype(np.float32),
          rng.normal(size=(3,)).astype(np.float32)]
  grads = [[rng.normal(size=g.shape).astype(np.float32) for g in init]
           for _ in range(4)]
  schedule = WarmupLinearDecay(0.05, warmup_steps=3, decay_steps=10)

  def make():
    variables = [tf.Variable(init[0], name="kernel"),
                 tf.Variable(init[1], name="bias")]
    opt = Lamb(learning_rate=schedule, weight_decay=0.05)
    opt.exclude_from_weight_decay(var_names=["bias"])
    return variables, opt

  # Reference: 4 uninterrupted steps.
  ref_vars, ref_opt = make()
  _train_steps(ref_opt, ref_vars, grads)

  # 2 steps, checkpoint, restore into fresh objects (built after restore), 2 more.
  vars_a, opt_a = make()
  _train_steps(opt_a, vars_a, grads[:2])
  path = tf.train.Checkpoint(variables=vars_a, optimizer=opt_a).save(
      str(tmp_path / "ckpt"))
  vars_b, opt_b = make()
  status = tf.train.Checkpoint(variables=vars_b, optimizer=opt_b).restore(path)
  assert int(opt_b.iterations.numpy()) == 2
  _train_steps(opt_b, vars_b, grads[2:])
  status.assert_consumed()
  for index in range(2):
  
    np.testing.assert_array_equal(opt_b._momentums[index].numpy(),
                                  ref_opt._momentums[index].numpy())
    np.testing.assert_array_equal(opt_b._velocities[index].numpy(),
                                  ref_opt._velocities[index].numpy())
    np.testing.assert_array_equal(vars_b[index].numpy(),
                                  ref_vars[index].numpy())
  assert int(opt_b.iterations.numpy()) == 4


# ---------------------------------------------------------------------------
# create_optimizer
# ---------------------------------------------------------------------------


def _zero_gradient_step(opt):
  """One step with zero gradients; returns {name: (before, after)}."""
  rng = np.random.default_rng(3)
  variables = [
      tf.Variable(rng.normal(size=(3, 2)).astype(np.float32),
                  name="layer_0/dense/kernel"),
      tf.Variable(rng.normal(size=(2,)).astype(np.float32),
                  name="layer_0/dense/bias"),
      tf.Variable(rng.normal(size=(2,)).astype(np.float32),
                  name="encoder/LayerNorm/gamma"),
      tf.Variable(rng.normal(size=(2,)).astype(np.float32),
                  name="layer_0/long_attention_norm/gamma"),
  ]
  before = [v.numpy() for v in variables]
  opt.apply_gradients([(tf.zeros_like(v), v) for v in variables])
  return {v.name.split(":")[0]: (b, v.numpy())
          for v, b in zip(variables, before)}


def _adamw_run(make_optimizer):
  """Six steps of a tf.function on an embedding (sparse gradient), a kernel, a bias and a
  norm scale: the final weights and slots, and the number of nodes of the step's graph."""
  tf_keras.utils.set_random_seed(0)
  variables = [tf.Variable(tf.random.normal([50, 8]), name="emb/embeddings"),
               tf.Variable(tf.random.normal([8, 8]), name="dense/kernel"),
               tf.Variable(tf.zeros([8]), name="dense/bias"),
               tf.Variable(tf.ones([8]), name="x_norm/gamma")]
  emb, kernel, bias, gamma = variables
  opt = make_optimizer(WarmupLinearDecay(0.01, warmup_steps=2, decay_steps=10))
  ids = tf.constant([[1, 2, 3, 2], [4, 4, 5, 9]])

  @tf.function
  def step():
    with tf.GradientTape() as tape:
      out = tf.tanh(tf.gather(emb, ids) @ kernel + bias) * gamma
      loss = tf.reduce_sum(out ** 2)
    opt.apply_gradients(zip(tape.gradient(loss, variables), variables))

  for _ in range(6):
    step()
  slots = [s.numpy() for s in opt._momentums + opt._velocities]
  return [v.numpy() for v in variables] + slots, len(
      step.get_concrete_function().graph.as_graph_def().node)


def test_adamw_equals_tf_keras_adamw_bit_for_bit_with_a_smaller_graph():
  def theirs(schedule):
    opt = tf_keras.optimizers.AdamW(learning_rate=schedule, weight_decay=0.01, epsilon=1e-6,
                                    global_clipnorm=1.0)
    opt.exclude_from_weight_decay(var_names=["_norm/", "bias"])
    return opt

  def ours(schedule):
    return optimizers.create_optimizer("adamw", schedule, weight_decay=0.01,
                                       global_clipnorm=1.0)

  expected, their_nodes = _adamw_run(theirs)
  got, our_nodes = _adamw_run(ours)
  for a, b in zip(expected, got):
    np.testing.assert_array_equal(a, b)
  # The shared scalars: 8 nodes fewer per dense variable here (304 against 272).
  assert our_nodes <= their_nodes - 8 * 3, (our_nodes, their_nodes)


def test_create_adamw_decays_only_kernels():
  opt = optimizers.create_optimizer("AdamW", learning_rate=0.1,
                                    weight_decay=0.2)
  assert isinstance(opt, tf_keras.optimizers.AdamW)
  assert opt.epsilon == 1e-6 and opt.weight_decay == 0.2
  result = _zero_gradient_step(opt)
  before, after = result["layer_0/dense/kernel"]
  np.testing.assert_allclose(after, before - 0.1 * 0.2 * before, rtol=1e-6)
  for name in ("layer_0/dense/bias", "encoder/LayerNorm/gamma",
               "layer_0/long_attention_norm/gamma"):
    before, after = result[name]
    np.testing.assert_array_equal(after, before, err_msg=name)


def test_create_lamb_excludes_bias_and_norms():
  opt = optimizers.create_optimizer(" lamb ", learning_rate=0.1,
                                    weight_decay=0.2, clipnorm=1.0)
  assert isinstance(opt, Lamb) and opt.clipnorm == 1.0
  result = _zero_gradient_step(opt)
  # Zero gradient: u = wd * w and the trust ratio ||w|| / ||u|| = 1 / wd, so
  # the step is lr * w whatever the weight decay.
  before, after = result["layer_0/dense/kernel"]
  np.testing.assert_allclose(after, (1.0 - 0.1) * before, rtol=1e-6)
  for name in ("layer_0/dense/bias", "encoder/LayerNorm/gamma",
               "layer_0/long_attention_norm/gamma"):
    before, after = result[name]
    np.testing.assert_array_equal(after, before, err_msg=name)


def test_create_optimizer_exclusions_are_substrings_of_model_names():
  opt = optimizers.create_optimizer("lamb", 1e-3)
  decayed = {
      name: opt._use_weight_decay(tf.Variable(0.0, name=name))
      for name in ("embeddings/token_embeddings", "embeddings/long_norm/beta",
                   "layer_0/attention/q_kernel", "layer_0/attention/q_bias",
                   "layer_0/global_feed_forward_norm/gamma",
                   "final_long_norm/gamma", "layer_0/feed_forward/inner/kernel",
                   "bert/encoder/layer_0/output/LayerNorm/beta")}
  assert decayed == {
      "embeddings/token_embeddings": True, "embeddings/long_norm/beta": False,
      "layer_0/attention/q_kernel": True, "layer_0/attention/q_bias": False,
      "layer_0/global_feed_forward_norm/gamma": False,
      "final_long_norm/gamma": False, "layer_0/feed_forward/inner/kernel": True,
      "bert/encoder/layer_0/output/LayerNorm/beta": False}
  # Names are matched literally, not as regular expressions.
  opt = optimizers.create_optimizer("adamw", 1e-3,
                                    exclude_from_weight_decay=["a.c"])
  assert opt._use_weight_decay(tf.Variable(0.0, name="abc"))
  assert not opt._use_weight_decay(tf.Variable(0.0, name="x/a.c"))


def test_create_optimizer_accepts_schedule():
  schedule = WarmupLinearDecay(1e-3, 10, 100)
  for name in ("adamw", "lamb"):
    opt = optimizers.create_optimizer(name, schedule)
    assert opt._learning_rate is schedule


def test_global_clipnorm_scales_all_gradients_together():
  # Google's BERT/ETC clipping: gradients [3, 4] and [12] (global norm 13) become 1/13 of
  # themselves with global_clipnorm 1 (per-variable clipping would scale them by 1/5 and 1/12).
  grads = [tf.constant([3.0, 4.0]), tf.constant([12.0])]
  for name in ("adamw", "lamb"):
    opt = optimizers.create_optimizer(name, 1.0, global_clipnorm=1.0)
    clipped = opt._clip_gradients(grads)
    np.testing.assert_allclose(clipped[0].numpy(), [3 / 13, 4 / 13], rtol=1e-6)
    np.testing.assert_allclose(clipped[1].numpy(), [12 / 13], rtol=1e-6)


def test_train_config_clipping_keys():
  from etc_realformer.training.loop import LoopConfig  # pylint: disable=g-import-not-at-top
  with pytest.raises(ValueError, match="clipnorm .*global_clipnorm.*not both"):
    LoopConfig.from_dict({"clipnorm": 1.0, "global_clipnorm": 1.0})
  with pytest.raises(ValueError, match="global_clipnorm must be > 0"):
    LoopConfig.from_dict({"global_clipnorm": 0.0})
  assert LoopConfig.from_dict({"global_clipnorm": 1.0}).global_clipnorm == 1.0


@pytest.mark.parametrize("name", ["adam", "sgd", "", None])
def test_create_optimizer_rejects_unknown_name(name):
  with pytest.raises(ValueError, match=r"adamw.*lamb"):
    optimizers.create_optimizer(name, 1e-3)


# ---------------------------------------------------------------------------
# Keras fit
# ---------------------------------------------------------------------------


def test_lamb_trains_keras_model():
  rng = np.random.default_rng(4)
  x = rng.normal(size=(256, 4)).astype(np.float32)
  y = (x @ np.array([[1.0], [-2.0], [0.5], [3.0]]) + 0.7).astype(np.float32)
  model = tf_keras.Sequential([
      tf_keras.layers.Dense(8, activation="tanh", input_shape=(4,)),
      tf_keras.layers.Dense(1),
  ])
  model.compile(optimizer=Lamb(learning_rate=0.05), loss="mse")
  initial_loss = model.evaluate(x, y, verbose=0)
  history = model.fit(x, y, batch_size=32, epochs=4, verbose=0)
  final_loss = model.evaluate(x, y, verbose=0)
  assert model.optimizer.iterations.numpy() == 4 * 8
  assert np.isfinite(history.history["loss"]).all()
  assert final_loss < 0.5 * initial_loss
