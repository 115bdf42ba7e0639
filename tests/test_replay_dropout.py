"""Dropout replays its masks under gradient checkpointing, and stays random elsewhere.

With dropout on, the loss and every gradient of a step are the same for
grad_checkpointing_period 0, 1 and 2 (same seed), with residual attention on and off, in float32
and mixed_float16; a stateful dropout (tf_keras Dropout, the code before the replaying one)
gives gradients that differ by more than 100% there. Masks differ from call to call, from
process to process (Horovod ranks) and from replica to replica (tf.distribute): the last two in
tests/dropout_worker.py, run under horovodrun and on 2 logical CPUs.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from etc_realformer import EtcModel
from etc_realformer.layers.dropout import SeededDropout
from etc_realformer.ops import dropout as dropout_ops
from test_model import features, tiny

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "dropout_worker.py")
DROPOUT = dict(hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)


def loss_and_grads(model, f, seed=5):
  """One forward and backward pass with TF's global seed set to `seed` (the step seed)."""
  tf.random.set_seed(seed)
  with tf.GradientTape() as tape:
    out = model(f, training=True)
    loss = (tf.reduce_sum(tf.cast(out["long_output"], tf.float32) ** 2) +
            tf.reduce_sum(tf.cast(out["global_output"], tf.float32) ** 3))
  grads = tape.gradient(loss, model.trainable_variables)
  return float(loss), [tf.cast(tf.convert_to_tensor(g), tf.float32).numpy() for g in grads]


def same_weights_models(f, periods, layers=4, **changes):
  models = []
  for period in periods:
    model = EtcModel(tiny(grad_checkpointing_period=period, num_hidden_layers=layers, **changes))
    model(f)
    if models:
      model.set_weights(models[0].get_weights())
    models.append(model)
  return models


def worst_relative_difference(grads, reference):
  """max over tensors of max|a - b| / max|b|, with max|b| floored at 1% of the largest gradient
  (some gradients are float noise around zero, e.g. the key biases', which cancel in softmax)."""
  largest = max(float(np.abs(b).max()) for b in reference)
  return max(float(np.abs(a - b).max()) / max(float(np.abs(b).max()), 1e-2 * largest)
             for a, b in zip(grads, reference))


@pytest.mark.parametrize("residual", ["sum", "none"])
@pytest.mark.parametrize("policy", ["float32", "mixed_float16"])
def test_checkpointing_replays_dropout(residual, policy):
  f = features(7)
  tf_keras.mixed_precision.set_global_policy(policy)
  try:
    models = same_weights_models(f, (0, 1, 2), residual_attention=residual, **DROPOUT)
    loss0, grads0 = loss_and_grads(models[0], f)
    tolerance = 1e-5 if policy == "float32" else 1e-3
    for model in models[1:]:
      loss, grads = loss_and_grads(model, f)
      assert loss == pytest.approx(loss0, rel=1e-6)
      worst = worst_relative_difference(grads, grads0)
      assert worst <= tolerance, (model.etc_config.grad_checkpointing_period, worst)
    # The masks are really applied: another step seed gives another loss and other gradients.
    loss_other, grads_other = loss_and_grads(models[0], f, seed=6)
    assert loss_other != pytest.approx(loss0, rel=1e-4)
    assert worst_relative_difference(grads_other, grads0) > 1e-2
  finally:
    tf_keras.mixed_precision.set_global_policy("float32")


def test_checkpointing_replays_dropout_in_a_tf_function():
  f = features(8)
  models = same_weights_models(f, (0, 1), layers=2, **DROPOUT)
  results = []
  for model in models:
    step = tf.function(lambda x, m=model: _loss_grads_graph(m, x))
    tf.random.set_seed(3)
    results.append(step(f))
  (loss0, grads0), (loss1, grads1) = results
  assert float(loss1) == pytest.approx(float(loss0), rel=1e-6)
  assert worst_relative_difference([g.numpy() for g in grads1],
                                   [g.numpy() for g in grads0]) <= 1e-5


def _loss_grads_graph(model, f):
  with tf.GradientTape() as tape:
    out = model(f, training=True)
    loss = tf.reduce_sum(out["long_output"] ** 2) + tf.reduce_sum(out["global_output"] ** 3)
  grads = tape.gradient(loss, model.trainable_variables)
  return loss, [tf.convert_to_tensor(g) for g in grads]


def test_masks_differ_from_call_to_call_and_vanish_at_inference():
  f = features(9)
  model = EtcModel(tiny(**DROPOUT))
  first = model(f, training=True)["long_output"].numpy()
  second = model(f, training=True)["long_output"].numpy()
  assert np.abs(first - second).max() > 1e-3
  np.testing.assert_array_equal(model(f)["long_output"].numpy(),
                                model(f, training=False)["long_output"].numpy())


def test_seeded_dropout_is_a_function_of_seed_and_salt():
  x = tf.ones([4, 256])
  layer = SeededDropout(0.25)
  seed = tf.constant([7, 11], tf.int32)
  a = layer(x, seed=seed, salt=2, training=True).numpy()
  np.testing.assert_array_equal(a, layer(x, seed=seed, salt=2, training=True).numpy())
  assert (a != layer(x, seed=seed, salt=3, training=True).numpy()).any()
  np.testing.assert_allclose(np.unique(a), [0.0, 1.0 / 0.75], rtol=1e-6)
  assert abs((a == 0).mean() - 0.25) < 0.05
  np.testing.assert_array_equal(layer(x, seed=seed, training=False).numpy(), x.numpy())
  # Without a seed each call draws its own mask (a stand-alone layer behaves as Keras Dropout).
  assert (layer(x, training=True).numpy() != layer(x, training=True).numpy()).any()
  with pytest.raises(ValueError, match="rate must be in"):
    SeededDropout(1.0)
  assert SeededDropout.from_config(layer.get_config()).rate == 0.25


def test_process_index_changes_the_masks():
  tf.random.set_seed(4)
  seed0 = dropout_ops.new_seed().numpy()
  dropout_ops.set_process_index(1)
  try:
    tf.random.set_seed(4)
    seed1 = dropout_ops.new_seed().numpy()
  finally:
    dropout_ops.set_process_index(0)
  assert (seed0 != seed1).any()


def _run_worker(args, launcher=()):
  env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="2",
             PYTHONPATH=os.pathsep.join([os.path.dirname(HERE), HERE]))
  result = subprocess.run(list(launcher) + [sys.executable, WORKER] + args, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
  assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
  return result


@pytest.mark.slow
def test_replicas_draw_other_masks_under_mirrored_strategy(tmp_path):
  _run_worker(["mirrored", str(tmp_path)])
  outputs = np.load(str(tmp_path / "mirrored.npz"))
  assert np.abs(outputs["replica0"] - outputs["replica1"]).max() > 1e-3


@pytest.mark.slow
def test_two_horovod_ranks_replay_and_differ(tmp_path):
  horovodrun = os.path.join(os.path.dirname(sys.executable), "horovodrun")
  assert os.path.exists(horovodrun), "horovodrun not found: run `bash .ci/build_horovod.sh`"
  _run_worker(["horovod", str(tmp_path)],
              launcher=(horovodrun, "-np", "2", "-H", "localhost:2", "--gloo"))
  ranks = [np.load(str(tmp_path / f"horovod{r}.npz")) for r in range(2)]
  for rank in ranks:
    # Within a rank: periods 1 and 2 give the gradients of period 0 (the worker's figures).
    assert float(rank["worst"]) <= 1e-5
  # Same weights and inputs on both ranks, other dropout masks.
  assert np.abs(ranks[0]["output"] - ranks[1]["output"]).max() > 1e-3
