"""Gradient accumulation: n micro-batches per optimizer step give the big-batch update.

Pretraining runs (a 1-layer tiny model, dropout 0, batch 4, 4 steps) go through the real
trainer: with `gradient_accumulation_steps: 2` they end with the weights of a run without
accumulation to 1e-6 (LAMB and AdamW), and so do 2 Horovod ranks with accumulation
(micro-batches of one example). All use cpc_group_size = 1: an example's CPC negatives are then
its own hidden sentences, so CPC does not depend on how a batch is cut and one run without
accumulation is the reference for all of them. A HotpotQA model whose span loss averages over the
span answers (a data-dependent part of the batch) checks LossModel.loss_weights; a linear regression (accumulation_fixtures)
checks resuming, MirroredStrategy (1 and 2 replicas) and loss scaling cheaply.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

import accumulation_fixtures as af
import hotpot_fixtures as hf
import pretrain_fixtures as fx
from etc_realformer.training import accumulation
from etc_realformer.training import loop
from etc_realformer.training import pretraining_run
from etc_realformer.training.distribution import Distribution
from etc_realformer.training.schedules import WarmupLinearDecay
from tasks.hotpotqa import features as hotpot_features
from tasks.hotpotqa.model import HotpotQaModel
from tasks.hotpotqa.text import TextTokenizer

STEPS = 4        # optimizer steps of the pretraining and HotpotQA runs
BATCH = 4        # global batch
EXACT = 1e-6     # max abs weight difference allowed between runs that should be equal


class _Record(tf_keras.callbacks.Callback):
  """Per Keras batch: optimizer step, last applied learning rate and micro-batches waiting;
  the trainable weights at the end."""

  def __init__(self):
    super().__init__()
    self.steps, self.applied_lr, self.waiting, self.weights = [], [], [], {}

  def on_train_batch_end(self, batch, logs=None):
    optimizer = self.model.optimizer
    accumulator = self.model.gradient_accumulation
    self.steps.append(int(optimizer.iterations.numpy()))
    self.applied_lr.append(float(optimizer.learning_rate.numpy()))
    self.waiting.append(0 if accumulator is None else int(accumulator.micro_step.numpy()))

  def on_train_end(self, logs=None):
    self.weights = af.weights(self.model)


def _max_diff(a, b):
  assert set(a) == set(b)
  return max(float(np.max(np.abs(a[name] - b[name]))) for name in a)


# Pretraining.

def _config(data_dir, **train):
  config = fx.tiny_run_config(data_dir, cpc_group_size=1, num_train_steps=STEPS, warmup_steps=2,
                              batch_size=BATCH, **train)
  config["model"]["num_hidden_layers"] = 1
  return config


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
  return fx.make_tiny_data(str(tmp_path_factory.mktemp("accumulation_data")), num_documents=20)


@pytest.fixture(scope="module")
def pretrain(data_dir, tmp_path_factory):
  """(**train settings) -> (metrics, _Record) of a pretraining run, each run once per module."""
  runs = {}

  def run(**train):
    key = tuple(sorted(train.items()))
    if key not in runs:
      record = _Record()
      metrics = pretraining_run.run_pretraining(
          _config(data_dir, **train), str(tmp_path_factory.mktemp("run")), verbose=0,
          extra_callbacks=[record])
      runs[key] = (metrics, record)
    return runs[key]
  return run


@pytest.mark.parametrize("optimizer", ["lamb", "adamw"])
def test_pretraining_accumulated_update_equals_the_big_batch_update(pretrain, optimizer):
  _, big = pretrain(optimizer=optimizer)
  _, accumulated = pretrain(optimizer=optimizer, gradient_accumulation_steps=2)
  assert len(big.steps) == STEPS and big.waiting == [0] * STEPS   # n = 1: a batch per step
  assert _max_diff(accumulated.weights, big.weights) <= EXACT
  _, other = pretrain(optimizer={"lamb": "adamw", "adamw": "lamb"}[optimizer])
  assert _max_diff(other.weights, big.weights) > 1e-3   # the comparison tells runs apart


def test_optimizer_steps_and_learning_rate_count_optimizer_steps(pretrain):
  metrics, record = pretrain(optimizer="lamb", gradient_accumulation_steps=2)
  assert metrics["start_step"] == 0 and metrics["final_step"] == STEPS
  assert record.steps == [0, 1, 1, 2, 2, 3, 3, 4]      # after each of the 2 * STEPS batches
  assert record.waiting == [1, 0] * STEPS
  # Each applied step used the schedule at its optimizer step.
  schedule = WarmupLinearDecay(0.01, 2, STEPS)
  applied = [record.applied_lr[2 * s + 1] for s in range(STEPS)]
  np.testing.assert_allclose(applied, [float(schedule(s)) for s in range(STEPS)], rtol=1e-6)
  assert applied == pytest.approx([0.005, 0.01, 0.01, 0.005])


def test_mixed_float16_with_accumulation_is_close_to_float32(pretrain):
  _, half = pretrain(optimizer="lamb", gradient_accumulation_steps=2,
                     mixed_precision="mixed_float16")
  _, full = pretrain(optimizer="lamb", gradient_accumulation_steps=2)
  assert half.steps[-1] == STEPS
  assert all(np.all(np.isfinite(w)) for w in half.weights.values())
  assert 0 < _max_diff(half.weights, full.weights) < 1e-2
  assert tf_keras.mixed_precision.global_policy().name == "float32"


@pytest.mark.slow
def test_two_horovod_ranks_with_accumulation_match_one_process_without(pretrain, data_dir,
                                                                       tmp_path):
  _, reference = pretrain(optimizer="lamb")
  horovodrun = os.path.join(os.path.dirname(sys.executable), "horovodrun")
  assert os.path.exists(horovodrun), ("horovodrun not found next to the Python executable: "
                                      "run `bash .ci/build_horovod.sh`")
  # Each rank: 2 examples per step, as 2 micro-batches of 1.
  config = _config(data_dir, optimizer="lamb", gradient_accumulation_steps=2)
  spec = fx.write_spec(str(tmp_path / "spec.json"), config, str(tmp_path / "run"),
                       str(tmp_path / "w{rank}.npz"), distribution="horovod")
  result = subprocess.run(
      [horovodrun, "-np", "2", "-H", "localhost:2", "--gloo", sys.executable, fx.WORKER, spec],
      env=fx.worker_env(), capture_output=True, text=True, timeout=900, check=False)
  assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
  ranks = [dict(np.load(str(tmp_path / f"w{r}.npz"))) for r in (0, 1)]
  assert _max_diff(ranks[0], ranks[1]) == 0
  reference = {name.replace("/", "__"): w for name, w in reference.weights.items()}
  assert _max_diff(ranks[0], reference) <= EXACT
  # Rank 0 wrote the checkpoints and the exported encoder.
  assert os.path.exists(tmp_path / "run" / "final" / "encoder.index")


# A task model whose span loss averages over the span examples only.

HOTPOT_CONFIG = hotpot_features.HotpotFeatureConfig(long_seq_len=32, global_seq_len=16)
HOTPOT_ENCODER = dict(vocab_size=200, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                      intermediate_size=32, local_radius=3, relative_pos_max_distance=2,
                      relative_vocab_size=8, hidden_dropout_prob=0.0,
                      attention_probs_dropout_prob=0.0, use_hard_g2l_mask=True,
                      residual_attention="sum")


class SpanMeanModel(HotpotQaModel):
  """Answer-type loss (batch mean) + begin loss averaged over the span answers only: a loss
  whose denominator depends on the data, through LossModel.loss_weights / weight_total."""
  metric_names = ("loss",)

  def loss_weights(self, features):
    return {"span": tf.cast(tf.equal(features["answer_types"], 0), tf.float32)}   # [B]

  def compute_losses(self, features, outputs):
    type_loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        tf.cast(features["answer_types"], tf.int32), outputs["answer_type_logits"]))
    is_span = self.loss_weights(features)["span"]
    per_example = -tf.reduce_sum(
        tf.one_hot(features["answer_begins"], tf.shape(outputs["begin_logits"])[-1])
        * tf.nn.log_softmax(outputs["begin_logits"]), -1)                        # [B]
    span = tf.math.divide_no_nan(tf.reduce_sum(per_example * is_span),
                                 self.weight_total(features, "span", is_span))
    return {"loss": type_loss + span}


def _hotpot_features(tmp_path):
  """8 examples = 2 global batches of 4 whose halves hold different numbers of span answers:
  [span, yes | span, span] and [no, yes | span, no]."""
  tok = TextTokenizer(hf.tokenizer(tmp_path).tokenizer)
  answers = ["Ann", "yes", "1921", "Zoë", "no", "yes", "1930", "no"]
  rows = [hotpot_features.convert_example(hf.example(answer=a), tok, HOTPOT_CONFIG.long_seq_len,
                                          HOTPOT_CONFIG.global_seq_len, is_training=True,
                                          debug=False) for a in answers]
  names = hotpot_features.MODEL_INPUTS + hotpot_features.LABELS
  features = {k: np.stack([r[k] for r in rows]).astype(np.int32) for k in names}
  for k in hotpot_features.SCALAR_LABELS:
    features[k] = features[k][:, 0]                                               # [B]
  assert features["answer_types"].tolist() == [0, 1, 0, 0, 2, 1, 0, 2]
  return features


def test_micro_batch_weight_shares_make_a_masked_mean_loss_exact(tmp_path):
  features = _hotpot_features(tmp_path)
  batch = {k: tf.constant(v[:BATCH]) for k, v in features.items()}
  model = SpanMeanModel(HOTPOT_ENCODER)
  whole = float(model.compute_losses(batch, model(batch))["loss"])
  micro = list(accumulation.split_batches(tf.data.Dataset.from_tensors(batch), 2,
                                          model.loss_weights))
  share = accumulation.WEIGHT_SHARE_PREFIX + "span"
  assert [m[share].numpy().tolist() for m in micro] == [[1.5, 1.5]] * 2   # 3 span examples / 2
  losses = [float(model.compute_losses(m, model(m))["loss"]) for m in micro]
  assert abs(np.mean(losses) - whole) <= 1e-6
  # Each micro-batch dividing by its own count (1 and 2 span examples) would not be exact.
  alone = [float(model.compute_losses({k: v for k, v in m.items() if k != share},
                                      model(m))["loss"]) for m in micro]
  assert abs(np.mean(alone) - whole) > 1e-3


def test_task_model_accumulated_update_equals_the_big_batch_update(tmp_path):
  make = af.in_memory(_hotpot_features(tmp_path), BATCH)

  def train(name, **changes):
    values = dict(batch_size=BATCH, num_train_steps=STEPS, warmup_steps=1, learning_rate=0.01,
                  optimizer="adamw", log_every=1)
    values.update(changes)
    record = _Record()
    loop.run_training_loop(af.build(SpanMeanModel, HOTPOT_ENCODER), make,
                           loop.LoopConfig.from_dict(values), str(tmp_path / name),
                           Distribution("none"), verbose=0, extra_callbacks=[record])
    return record

  big = train("big")
  accumulated = train("accumulated", gradient_accumulation_steps=2)
  assert accumulated.steps[-1] == STEPS and len(accumulated.steps) == 2 * STEPS
  # The span head's bias adds the same number to every position's logit, which the softmax
  # ignores: its exact gradient is 0, and AdamW turns the rounding noise it gets instead
  # (about 1e-9) into steps of about lr * noise / (|noise| + epsilon), different in any two
  # runs that add in a different order. It only wanders at that noise level.
  noise = "answer_span/bias:0"
  for weights in (big.weights, accumulated.weights):
    assert np.max(np.abs(weights.pop(noise))) < 1e-4
  assert _max_diff(accumulated.weights, big.weights) <= EXACT


# The linear regression: resume, tf.distribute, loss scaling.

class _StopAt(tf_keras.callbacks.Callback):
  """Raises _Stopped after Keras batch `batch` (counted from 0), as a crash would end a run."""

  def __init__(self, batch):
    super().__init__()
    self.batch = batch
    self.waiting = None

  def on_train_batch_end(self, batch, logs=None):
    if batch == self.batch:
      self.waiting = int(self.model.gradient_accumulation.micro_step.numpy())
      raise _Stopped()


class _Stopped(Exception):
  pass


def test_resume_in_the_middle_of_an_accumulation_matches_an_uninterrupted_run(tmp_path):
  train = dict(num_train_steps=4, checkpoint_every=1, gradient_accumulation_steps=2)
  uninterrupted = af.weights(af.train_regression(str(tmp_path / "a"), Distribution("none"),
                                                 **train))
  stop = _StopAt(batch=4)   # the first micro-batch of step 3
  with pytest.raises(_Stopped):
    af.train_regression(str(tmp_path / "b"), Distribution("none"), [stop], **train)
  assert stop.waiting == 1
  # Checkpoints only of complete steps.
  assert sorted(f for f in os.listdir(tmp_path / "b" / "checkpoints") if f.endswith(".index")) == [
      "ckpt-1.index", "ckpt-2.index"]
  record = _Record()
  af.train_regression(str(tmp_path / "b"), Distribution("none"), [record], **train)
  assert record.steps == [2, 3, 3, 4]   # resumed at step 2, with a fresh accumulation
  assert _max_diff(record.weights, uninterrupted) <= EXACT


def test_mirrored_strategy_applies_in_a_cross_replica_context(tmp_path):
  big = af.weights(af.train_regression(str(tmp_path / "big"), Distribution("none")))
  record = _Record()
  af.train_regression(str(tmp_path / "mirrored"), Distribution("mirrored"), [record],
                      gradient_accumulation_steps=2)
  assert record.steps == [0, 1, 1, 2]
  assert _max_diff(record.weights, big) <= EXACT


@pytest.mark.slow
def test_mirrored_strategy_on_two_devices_matches_one_process(tmp_path):
  result = subprocess.run(
      [sys.executable, os.path.join(fx.ROOT, "tests", "accumulation_worker.py"), str(tmp_path)],
      env=fx.worker_env(), capture_output=True, text=True, timeout=600, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  single, mirrored = [dict(np.load(str(tmp_path / f"{n}.npz"))) for n in ("single", "mirrored")]
  assert _max_diff(mirrored, single) <= EXACT


class _Watch(tf_keras.callbacks.Callback):
  """The kernel, loss scale and accumulated sums before training and after each batch."""

  def __init__(self):
    super().__init__()
    self.kernels, self.scales, self.sums = [], [], []

  def _look(self):
    self.kernels.append(self.model.dense.kernel.numpy().copy())
    self.scales.append(float(self.model.optimizer.loss_scale.numpy()))
    accumulator = self.model.gradient_accumulation
    self.sums.append(sum(float(np.abs(s.numpy()).sum()) for s in accumulator.sums))

  def on_train_begin(self, logs=None):
    self._look()

  def on_train_batch_end(self, batch, logs=None):
    self._look()


def test_loss_scaling_skips_a_step_with_a_non_finite_micro_batch(tmp_path):
  # The second micro-batch of step 1 overflows float16 once scaled: as without accumulation,
  # the whole step is skipped and the loss scale halves; the sums start again from zero and
  # step 2 is applied. (Under MirroredStrategy: the loss scale optimizer's own cross-replica
  # apply inside the accumulator's.)
  watch = _Watch()
  af.train_regression(str(tmp_path), Distribution("mirrored"), [watch], y_scale=1e4,
                      mixed_precision="mixed_float16", gradient_accumulation_steps=2)
  kernels, scales, sums = watch.kernels, watch.scales, watch.sums
  assert np.array_equal(kernels[1], kernels[0]) and np.array_equal(kernels[2], kernels[0])
  assert scales == [2.0 ** 15] * 2 + [2.0 ** 14] * 3
  assert sums[0] == 0 and 0 < sums[1] < 1e3 and sums[2] == 0 and 0 < sums[3] < 1e3
  assert sums[4] == 0
  assert np.max(np.abs(kernels[4] - kernels[0])) > 1e-3       # step 2 was applied


def test_bad_values_are_refused_with_the_key_named():
  for bad in (0, -2, 1.5, True, "2"):
    with pytest.raises(ValueError, match="gradient_accumulation_steps"):
      loop.LoopConfig.from_dict({"gradient_accumulation_steps": bad})
  with pytest.raises(ValueError, match="gradient_accumulation_steps=3 does not divide"):
    loop.LoopConfig.from_dict({"batch_size": 8, "gradient_accumulation_steps": 3})
  with pytest.raises(ValueError, match="gradient_accumulation_steps"):
    pretraining_run.TrainConfig.from_dict({"per_worker_batch_size": 2,
                                           "gradient_accumulation_steps": 4})

  class FourReplicas:
    kind, num_workers, num_replicas = "mirrored", 1, 4

  # 8 examples over 4 replicas: 2 each, which 4 micro-batches cannot share.
  train = loop.LoopConfig.from_dict({"batch_size": 8, "gradient_accumulation_steps": 4})
  with pytest.raises(ValueError, match="gradient_accumulation_steps=4 does not divide the "
                                       "batch of 2 examples"):
    loop.check_distribution(train, FourReplicas())
  loop.check_distribution(loop.LoopConfig.from_dict({"batch_size": 8,
                                                     "gradient_accumulation_steps": 2}),
                          FourReplicas())
