"""Pretraining run: config -> model, optimizer, data, resume, Keras fit, final checkpoint.

`run_pretraining(run_config, output_dir, distribution)` is what `python -m
etc_realformer.pretrain` calls; tests and benchmarks call it directly.

Output directory:
  run_config.json           the resolved model + training config
  checkpoints/ckpt-<step>.*  tf.train.Checkpoint(model, optimizer), every `checkpoint_every` steps
  logs/                     TensorBoard scalars
  final/encoder-*           the encoder alone (tf.train.Checkpoint(encoder=...)) + etc_config.json
  final/metrics.json        last training metrics, steps, tokens/s
"""

import dataclasses
import json
import os
import time
from typing import Any, Dict, Optional

from absl import logging
import tensorflow as tf
import tf_keras

from etc_realformer.config import EtcConfig
from etc_realformer.dataclass_utils import check_known_keys
from etc_realformer.io_utils import atomic_write_json
from etc_realformer.data import tfrecords
from etc_realformer.models.pretraining import EtcPretrainingModel
from etc_realformer.training import callbacks as callbacks_lib
from etc_realformer.training.distribution import Distribution
from etc_realformer.training.optimizers import create_optimizer
from etc_realformer.training.schedules import WarmupLinearDecay


@dataclasses.dataclass
class TrainConfig:
  """Training settings (the `train:` section of a pretraining config)."""
  train_data: str = ""              # directory with shards + data_config.json
  batch_size: int = 8               # global batch (all workers) ...
  per_worker_batch_size: int = 0    # ... or per worker: then global = this * workers and the
                                    # learning rate is multiplied by the number of workers
  num_train_steps: int = 1000
  warmup_steps: int = 100
  learning_rate: float = 1e-4       # peak, for the global batch
  end_learning_rate: float = 0.0
  optimizer: str = "lamb"           # lamb | adamw
  weight_decay: float = 0.01
  clipnorm: Optional[float] = None
  mlm_loss_weight: float = 0.8
  cpc_loss_weight: float = 0.2
  cpc_group_size: int = 0
  checkpoint_every: int = 100
  keep_checkpoints: int = 3
  log_every: int = 10
  mixed_precision: str = ""         # "" | mixed_float16 | mixed_bfloat16
  jit_compile: bool = False
  shuffle_buffer: int = 1000
  seed: int = 0

  @classmethod
  def from_dict(cls, values: Dict[str, Any], source: str = "train config"):
    check_known_keys(cls, values, source, "train")
    config = cls(**values)
    config.validate(source)
    return config

  def validate(self, source="train config"):
    for name in ("num_train_steps", "checkpoint_every", "keep_checkpoints", "log_every"):
      if int(getattr(self, name)) < 1:
        raise ValueError(f"{source}: {name} must be >= 1, got {getattr(self, name)}")
    if self.batch_size < 1 and self.per_worker_batch_size < 1:
      raise ValueError(f"{source}: batch_size or per_worker_batch_size must be >= 1")
    if not 0 <= self.warmup_steps < self.num_train_steps:
      raise ValueError(f"{source}: warmup_steps must be in [0, num_train_steps), "
                       f"got {self.warmup_steps}")
    if self.mixed_precision not in ("", "mixed_float16", "mixed_bfloat16"):
      raise ValueError(f"{source}: mixed_precision must be '', mixed_float16 or mixed_bfloat16, "
                       f"got {self.mixed_precision!r}")
    return self


def load_run_config(path: str) -> Dict[str, Any]:
  """A pretraining config file (YAML or JSON) -> {model, train, data} dicts.

  Keys: `model` (a model config path, relative to this file or the working directory, or an
  inline mapping), `model_overrides` (fields replaced in it), `train` (TrainConfig fields) and
  `data` (PretrainingDataConfig fields, used when the embedded corpus is converted).
  """
  import yaml  # pylint: disable=g-import-not-at-top
  with open(path) as f:
    raw = yaml.safe_load(f) if path.endswith((".yaml", ".yml")) else json.load(f)
  if not isinstance(raw, dict) or "model" not in raw:
    raise ValueError(f"{path}: expected a mapping with a 'model' entry (and 'train')")
  extra = sorted(set(raw) - {"model", "model_overrides", "train", "data"})
  if extra:
    raise ValueError(f"{path}: unknown top-level key(s) {extra}; expected model, "
                     "model_overrides, train, data")
  model = raw["model"]
  if isinstance(model, str):
    candidates = [os.path.join(os.path.dirname(path), model), model]
    found = next((c for c in candidates if os.path.exists(c)), None)
    if found is None:
      raise FileNotFoundError(f"{path}: model config {model!r} not found")
    model = EtcConfig.from_file(found).to_dict()
  model = dict(model)
  model.update(raw.get("model_overrides") or {})
  model = EtcConfig.from_dict(model, source=f"{path} (model)").to_dict()
  return {"model": model, "train": dict(raw.get("train") or {}),
          "data": dict(raw.get("data") or {})}


def _optimizer(train: TrainConfig, distribution: Distribution):
  lr = train.learning_rate
  if train.per_worker_batch_size:
    lr *= distribution.num_workers  # linear scaling with the global batch
  schedule = WarmupLinearDecay(lr, train.warmup_steps, train.num_train_steps,
                               end_learning_rate=train.end_learning_rate)
  optimizer = create_optimizer(train.optimizer, schedule, weight_decay=train.weight_decay,
                               clipnorm=train.clipnorm)
  optimizer = distribution.wrap_optimizer(optimizer)
  if train.mixed_precision == "mixed_float16":
    optimizer = tf_keras.mixed_precision.LossScaleOptimizer(optimizer)
  return optimizer


def run_pretraining(run_config: Dict[str, Any], output_dir: str,
                    distribution: Optional[Distribution] = None, verbose: int = 1,
                    extra_callbacks=()) -> Dict[str, Any]:
  """Trains (or resumes) to train.num_train_steps; returns the final metrics dict.

  The Keras mixed-precision policy is set from train.mixed_precision for the run and put back
  afterwards.
  """
  previous_policy = tf_keras.mixed_precision.global_policy()
  try:
    return _run(run_config, output_dir, distribution, verbose, extra_callbacks)
  finally:
    tf_keras.mixed_precision.set_global_policy(previous_policy)


def _run(run_config, output_dir, distribution, verbose, extra_callbacks):
  distribution = distribution or Distribution("none")
  model_config = EtcConfig.from_dict(dict(run_config["model"]))
  train = TrainConfig.from_dict(dict(run_config.get("train") or {}))
  if train.jit_compile and distribution.kind == "horovod":
    raise ValueError("jit_compile: not available with distribution=horovod (Horovod's XLA ops "
                     "do not build against this TensorFlow); use mirrored or "
                     "multi_worker_mirrored, or jit_compile: false")
  if not train.train_data:
    raise ValueError("train_data: no pretraining data directory given (make one with "
                     "`python -m etc_realformer.create_pretraining_data`)")
  data_config, data_vocab = tfrecords.read_data_config(train.train_data)
  if data_vocab > model_config.vocab_size:
    raise ValueError(f"{train.train_data}: data uses a vocabulary of {data_vocab} ids but the "
                     f"model's vocab_size is {model_config.vocab_size}")
  files = tfrecords.expand_files(os.path.join(train.train_data, "*.tfrecord"))
  global_batch = (train.per_worker_batch_size * distribution.num_workers
                  if train.per_worker_batch_size else train.batch_size)

  tf_keras.utils.set_random_seed(train.seed)  # same initial weights on every worker
  if train.mixed_precision:
    tf_keras.mixed_precision.set_global_policy(train.mixed_precision)
  os.makedirs(output_dir, exist_ok=True)
  if distribution.is_chief:
    resolved = {"model": model_config.to_dict(), "train": dataclasses.asdict(train),
                "data": dataclasses.asdict(data_config), "distribution": distribution.kind,
                "num_workers": distribution.num_workers, "global_batch_size": global_batch}
    atomic_write_json(os.path.join(output_dir, "run_config.json"), resolved)
  logging.info("%s; global batch %d", distribution.describe(), global_batch)

  with distribution.scope():
    model = EtcPretrainingModel(model_config, mlm_loss_weight=train.mlm_loss_weight,
                                cpc_loss_weight=train.cpc_loss_weight,
                                cpc_group_size=train.cpc_group_size, name="pretraining")
    model.build()
    optimizer = _optimizer(train, distribution)
    optimizer.build(model.trainable_variables)
    model.compile(optimizer=optimizer, jit_compile=train.jit_compile)
    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer)

  ckpt_dir = os.path.join(output_dir, "checkpoints")
  is_saver = distribution.is_chief or distribution.kind == "multi_worker_mirrored"
  manager = None
  if is_saver:
    directory = ckpt_dir if distribution.is_chief else os.path.join(
        ckpt_dir, f".worker-{distribution.worker_index}")
    manager = tf.train.CheckpointManager(checkpoint, directory, max_to_keep=train.keep_checkpoints)
  latest = tf.train.latest_checkpoint(ckpt_dir)
  if latest:
    checkpoint.restore(latest).assert_existing_objects_matched()
    logging.info("resumed from %s", latest)
  distribution.broadcast_variables(model.variables + list(optimizer.variables))
  start_step = int(optimizer.iterations.numpy())
  remaining = train.num_train_steps - start_step
  if remaining <= 0:
    logging.info("already at step %d of %d: nothing to train", start_step, train.num_train_steps)

  def make(num_slices, slice_index):
    return tfrecords.make_dataset(files, data_config, global_batch, num_slices, slice_index,
                                  shuffle_buffer=train.shuffle_buffer, seed=train.seed,
                                  skip_batches=start_step)

  dataset = distribution.dataset(make, global_batch)
  tokens_per_step = global_batch * data_config.long_seq_len
  cbs = list(distribution.callbacks())
  if manager is not None:
    cbs.append(callbacks_lib.CheckpointEvery(manager, train.checkpoint_every))
  log_cb = callbacks_lib.TrainingLog(
      train.num_train_steps, train.log_every,
      os.path.join(output_dir, "logs") if distribution.is_chief else None, tokens_per_step)
  if distribution.is_chief:
    cbs.append(log_cb)
  cbs.extend(extra_callbacks)

  history = {}
  t0 = time.perf_counter()
  if remaining > 0:
    history = model.fit(dataset, epochs=1, steps_per_epoch=remaining, callbacks=cbs,
                        verbose=verbose if distribution.is_chief else 0).history
  seconds = time.perf_counter() - t0
  # The last logging window's averages (train_step reports per-step values).
  metrics = dict(log_cb.window) if log_cb.window else {
      name: float(values[-1]) for name, values in history.items()}
  metrics.update(start_step=start_step, final_step=int(optimizer.iterations.numpy()),
                 seconds=seconds, global_batch_size=global_batch,
                 tokens_per_second_overall=(remaining * tokens_per_step / seconds) if remaining > 0
                 and seconds > 0 else 0.0)
  if distribution.is_chief:
    export_encoder(model, os.path.join(output_dir, "final"))
    atomic_write_json(os.path.join(output_dir, "final", "metrics.json"), metrics)
  if manager is not None and not distribution.is_chief:
    tf.io.gfile.rmtree(manager.directory)
  return metrics


def export_encoder(model: EtcPretrainingModel, directory: str) -> str:
  """Writes the encoder weights (tf.train.Checkpoint(encoder=...)) and its etc_config.json."""
  os.makedirs(directory, exist_ok=True)
  atomic_write_json(os.path.join(directory, "etc_config.json"), model.encoder.etc_config.to_dict())
  return tf.train.Checkpoint(encoder=model.encoder).write(os.path.join(directory, "encoder"))

