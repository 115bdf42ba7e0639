"""Keras callbacks for long runs: periodic checkpoints, and progress as log lines + TensorBoard.

Both count steps with the optimizer's `iterations`, which is saved in the checkpoint, so
after a resume the step numbers continue where the crashed run stopped. With gradient
accumulation a Keras batch is one micro-batch: both act only once a step is complete.
"""

import time

from absl import logging
import tensorflow as tf
import tf_keras


def _step(model) -> int:
  return int(model.optimizer.iterations.numpy())


def _step_complete(model) -> bool:
  """False in the middle of an accumulation (micro-batches of a step still to come)."""
  accumulator = getattr(model, "gradient_accumulation", None)
  return accumulator is None or accumulator.at_step_boundary()


class CheckpointEvery(tf_keras.callbacks.Callback):
  """Saves `manager` every `every` optimizer steps and at the end of training.

  tf.train.CheckpointManager writes the data files first and then atomically replaces the
  `checkpoint` index file, so a crash mid-save leaves the previous checkpoint as the latest.
  Under MultiWorkerMirroredStrategy every worker must take part in a save; non-chief workers
  pass a manager pointing at a scratch directory.
  """

  def __init__(self, manager: tf.train.CheckpointManager, every: int):
    super().__init__()
    self.manager = manager
    self.every = int(every)
    self.last_saved = None

  def _save(self, step):
    if step != self.last_saved:
      path = self.manager.save(checkpoint_number=step)
      self.last_saved = step
      logging.info("step %d: checkpoint %s", step, path)

  def on_train_batch_end(self, batch, logs=None):
    if not _step_complete(self.model):
      return
    step = _step(self.model)
    if self.every and step % self.every == 0:
      self._save(step)

  def on_train_end(self, logs=None):
    self._save(_step(self.model))


class TrainingLog(tf_keras.callbacks.Callback):
  """Every `every` steps: one absl log line and TensorBoard scalars, averaged over the window.

  train_step reports each step's own values; this averages them over the last `every` steps
  (loss, accuracies; over their micro-batches with gradient accumulation) and adds learning
  rate, steps/s and tokens/s. `window` holds the latest averages (the run's final metrics).
  """

  def __init__(self, total_steps: int, every: int, log_dir: str = None,
               tokens_per_step: int = 0, log: bool = True):
    """log: write the absl log lines (the chief); the other workers only keep `window`."""
    super().__init__()
    self.log = log
    self.total_steps = total_steps
    self.every = max(1, int(every))
    self.writer = tf.summary.create_file_writer(log_dir) if log_dir else None
    self.tokens_per_step = tokens_per_step
    self.window = {}
    self._sums, self._count = {}, 0
    self._t0 = self._s0 = None

  def on_train_begin(self, logs=None):
    self._t0, self._s0 = time.perf_counter(), _step(self.model)

  def on_train_batch_end(self, batch, logs=None):
    for name, value in (logs or {}).items():
      self._sums[name] = self._sums.get(name, 0.0) + float(value)
    self._count += 1
    if not _step_complete(self.model):
      return
    step = _step(self.model)
    if step % self.every and step != self.total_steps:
      return
    now = time.perf_counter()
    rate = (step - self._s0) / max(now - self._t0, 1e-9)
    self._t0, self._s0 = now, step
    self.window = {name: total / self._count for name, total in self._sums.items()}
    self.window.update(learning_rate=current_learning_rate(self.model.optimizer),
                       steps_per_second=rate)
    if self.tokens_per_step:
      self.window["tokens_per_second"] = rate * self.tokens_per_step
    self._sums, self._count = {}, 0
    if self.log:
      logging.info("step %d/%d %s", step, self.total_steps,
                   " ".join(f"{k}={v:.4g}" for k, v in sorted(self.window.items())))
    if self.writer is not None:
      with self.writer.as_default(step=step):
        for name, value in self.window.items():
          tf.summary.scalar(name, value)
      self.writer.flush()

  def on_train_end(self, logs=None):
    if self.writer is not None:
      self.writer.close()


def current_learning_rate(optimizer) -> float:
  """The learning rate of the optimizer's next step (its schedule at `iterations`)."""
  optimizer = getattr(optimizer, "inner_optimizer", optimizer)
  # The new Keras optimizers keep the schedule in `_learning_rate`; `learning_rate` is a
  # variable refreshed only when a step is applied.
  lr = getattr(optimizer, "_learning_rate", None)
  if not isinstance(lr, tf_keras.optimizers.schedules.LearningRateSchedule):
    lr = optimizer.learning_rate
  if isinstance(lr, tf_keras.optimizers.schedules.LearningRateSchedule):
    lr = lr(optimizer.iterations)
  return float(tf.convert_to_tensor(lr).numpy())
