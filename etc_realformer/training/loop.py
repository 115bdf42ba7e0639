"""The training loop shared by pretraining and fine-tuning: optimizer, resume, fit, checkpoints.

`run_training_loop` builds the model in the distribution scope, restores the latest checkpoint of
`<output_dir>/checkpoints` (weights, optimizer slots, step), trains with Keras `fit` to
`num_train_steps`, checkpointing every `checkpoint_every` steps (chief only), and returns the
model with the last logging window's metrics. The data pipeline is given `start_step` so it can
skip what was already trained on.

Steps are optimizer steps. With `gradient_accumulation_steps: n` each one is n Keras batches
(micro-batches of each replica's part of the global batch, see training/accumulation.py), so
`fit` runs n batches per remaining step and the callbacks act only when a step is complete.
"""

import dataclasses
import os
import time
from typing import Any, Callable, Dict, Optional, Tuple

from absl import logging
import tensorflow as tf
import tf_keras

from etc_realformer.dataclass_utils import check_known_keys
from etc_realformer.training import accumulation
from etc_realformer.training import callbacks as callbacks_lib
from etc_realformer.training import determinism
from etc_realformer.training.distribution import Distribution
from etc_realformer.training.optimizers import create_optimizer
from etc_realformer.training.schedules import WarmupLinearDecay


@dataclasses.dataclass
class LoopConfig:
  """Settings every training run has (the `train:` section of a config)."""
  batch_size: int = 8               # global batch (all workers) ...
  per_worker_batch_size: int = 0    # ... or per worker: then global = this * workers and the
                                    # learning rate is multiplied by the number of workers
  num_train_steps: int = 1000
  warmup_steps: int = 100
  learning_rate: float = 1e-4       # peak, for the global batch
  end_learning_rate: float = 0.0
  optimizer: str = "lamb"           # lamb | adamw
  weight_decay: float = 0.01
  clipnorm: Optional[float] = None  # clip each variable's gradient to this norm ...
  global_clipnorm: Optional[float] = None  # ... or all of them together (Google's ETC/BERT: 1.0)
  checkpoint_every: int = 100
  keep_checkpoints: int = 3
  log_every: int = 10
  mixed_precision: str = ""         # "" | mixed_float16 | mixed_bfloat16
  jit_compile: bool = False
  shuffle_buffer: int = 1000
  seed: int = 0                     # initial weights, data order, dropout
  deterministic: bool = False       # bit-identical runs on CPU (training/determinism.py)
  gradient_accumulation_steps: int = 1  # n > 1: each optimizer step sums the gradients of n
                                    # micro-batches of (batch per replica) / n examples and
                                    # applies their mean once (less memory, same updates);
                                    # steps, learning rate and checkpoints count optimizer steps

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
    if self.clipnorm is not None and self.global_clipnorm is not None:
      raise ValueError(f"{source}: set clipnorm (per variable) or global_clipnorm (all "
                       "gradients together), not both")
    for name in ("clipnorm", "global_clipnorm"):
      if getattr(self, name) is not None and not getattr(self, name) > 0:
        raise ValueError(f"{source}: {name} must be > 0, got {getattr(self, name)}")
    if not 0 <= self.warmup_steps < self.num_train_steps:
      raise ValueError(f"{source}: warmup_steps must be in [0, num_train_steps), "
                       f"got {self.warmup_steps}")
    if self.mixed_precision not in ("", "mixed_float16", "mixed_bfloat16"):
      raise ValueError(f"{source}: mixed_precision must be '', mixed_float16 or mixed_bfloat16, "
                       f"got {self.mixed_precision!r}")
    # The batch per replica is checked too once the distribution is known (check_distribution).
    accumulation.check_steps(self.gradient_accumulation_steps,
                             self.per_worker_batch_size or self.batch_size, source)
    return self

  def global_batch_size(self, distribution: Distribution) -> int:
    return (self.per_worker_batch_size * distribution.num_workers
            if self.per_worker_batch_size else self.batch_size)


def check_distribution(train: LoopConfig, distribution: Distribution) -> None:
  """Refuses settings the distribution cannot run (call it before any slow set-up)."""
  if train.jit_compile and distribution.kind == "horovod":
    raise ValueError("jit_compile: not available with distribution=horovod (Horovod's XLA ops "
                     "do not build against this TensorFlow); use mirrored or "
                     "multi_worker_mirrored, or jit_compile: false")
  if train.gradient_accumulation_steps != 1:
    accumulation.check_steps(
        train.gradient_accumulation_steps,
        train.global_batch_size(distribution) // max(distribution.num_replicas, 1))


def make_optimizer(train: LoopConfig, distribution: Distribution):
  lr = train.learning_rate
  if train.per_worker_batch_size:
    lr *= distribution.num_workers  # linear scaling with the global batch
  schedule = WarmupLinearDecay(lr, train.warmup_steps, train.num_train_steps,
                               end_learning_rate=train.end_learning_rate)
  optimizer = create_optimizer(train.optimizer, schedule, weight_decay=train.weight_decay,
                               clipnorm=train.clipnorm, global_clipnorm=train.global_clipnorm)
  optimizer = distribution.wrap_optimizer(optimizer)
  if train.mixed_precision == "mixed_float16":
    optimizer = tf_keras.mixed_precision.LossScaleOptimizer(optimizer)
  return optimizer


def run_training_loop(
    build_model: Callable[[], tf_keras.Model],
    make_dataset: Callable[[int, int, int], tf.data.Dataset],
    train: LoopConfig, output_dir: str, distribution: Distribution, verbose: int = 1,
    extra_callbacks=(), tokens_per_step: int = 0,
    initialize: Optional[Callable[[tf_keras.Model], None]] = None,
) -> Tuple[tf_keras.Model, Dict[str, Any]]:
  """Trains (or resumes) to train.num_train_steps.

  Args:
    build_model: returns the (built) model; called inside the distribution scope.
    make_dataset: (num_slices, slice_index, start_step) -> this worker's batches, with the first
      `start_step` global batches skipped.
    train: the loop settings.
    output_dir: checkpoints/ and logs/ go here.
    distribution: how the run is distributed.
    verbose: Keras progress bar setting on the chief.
    extra_callbacks: more Keras callbacks.
    tokens_per_step: for the tokens/s figures (0: not reported).
    initialize: called with the model before training when no checkpoint exists yet (e.g. to
      load pretrained encoder weights); a resumed run restores everything from its checkpoint.
  Returns:
    (model, metrics): the last logging window's averages plus start_step, final_step, seconds.
  """
  check_distribution(train, distribution)
  global_batch = train.global_batch_size(distribution)
  micro_batches = train.gradient_accumulation_steps
  if train.deterministic:
    determinism.enable()
  tf_keras.utils.set_random_seed(train.seed)  # same initial weights on every worker
  if train.mixed_precision:
    tf_keras.mixed_precision.set_global_policy(train.mixed_precision)
  os.makedirs(output_dir, exist_ok=True)
  logging.info("%s; global batch %d", distribution.describe(), global_batch)
  if micro_batches > 1:
    logging.info("gradient accumulation: %d micro-batches of %d examples per replica and step",
                 micro_batches, global_batch // distribution.num_replicas // micro_batches)

  with distribution.scope():
    model = build_model()
    optimizer = make_optimizer(train, distribution)
    optimizer.build(model.trainable_variables)
    model.compile(optimizer=optimizer, jit_compile=train.jit_compile)
    if hasattr(model, "metric_average"):  # a LossModel: log means over the Horovod ranks
      model.metric_average = distribution.metric_average()
    if micro_batches > 1:
      if not hasattr(model, "enable_gradient_accumulation"):
        raise ValueError("gradient_accumulation_steps: needs a LossModel (models/loss_model.py), "
                         f"got {type(model).__name__}")
      # Not part of the checkpoint: the sums are zero whenever a step is complete.
      model.enable_gradient_accumulation(micro_batches, distribution.gradient_allreduce())
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
  elif initialize is not None:
    initialize(model)
  distribution.broadcast_variables(model.variables + list(optimizer.variables))
  start_step = int(optimizer.iterations.numpy())
  remaining = train.num_train_steps - start_step
  if remaining <= 0:
    logging.info("already at step %d of %d: nothing to train", start_step, train.num_train_steps)

  dataset = distribution.dataset(
      lambda num_slices, slice_index: make_dataset(num_slices, slice_index, start_step),
      global_batch, accumulation_steps=micro_batches,
      loss_weights=getattr(model, "loss_weights", None))
  cbs = list(distribution.callbacks())
  if manager is not None:
    cbs.append(callbacks_lib.CheckpointEvery(manager, train.checkpoint_every))
  log_cb = callbacks_lib.TrainingLog(
      train.num_train_steps, train.log_every,
      os.path.join(output_dir, "logs") if distribution.is_chief else None, tokens_per_step,
      log=distribution.is_chief)
  cbs.append(log_cb)  # every worker: its metrics are the same window means as the chief's
  cbs.extend(extra_callbacks)

  history = {}
  t0 = time.perf_counter()
  if remaining > 0:
    history = model.fit(dataset, epochs=1, steps_per_epoch=remaining * micro_batches,
                        callbacks=cbs,
                        verbose=verbose if distribution.is_chief else 0).history
  seconds = time.perf_counter() - t0
  # The last logging window's averages (train_step reports per-step values).
  metrics = dict(log_cb.window) if log_cb.window else {
      name: float(values[-1]) for name, values in history.items()}
  metrics.update(start_step=start_step, final_step=int(optimizer.iterations.numpy()),
                 seconds=seconds, global_batch_size=global_batch)
  if tokens_per_step:
    metrics["tokens_per_second_overall"] = (remaining * tokens_per_step / seconds
                                            if remaining > 0 and seconds > 0 else 0.0)
  if manager is not None and not distribution.is_chief:
    tf.io.gfile.rmtree(manager.directory)
  return model, metrics
