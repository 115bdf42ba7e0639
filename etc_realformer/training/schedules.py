"""Learning-rate schedules for pretraining."""

import math
import numbers

import tensorflow as tf
import tf_keras


def _check_integer(name, value, minimum):
  """Returns `value` as an int, or raises a ValueError naming `name`."""
  if isinstance(value, bool) or not isinstance(value, numbers.Integral):
    raise ValueError(f"`{name}` must be an integer, got {value!r}.")
  if value < minimum:
    raise ValueError(f"`{name}` must be >= {minimum}, got {value}.")
  return int(value)


def _check_float(name, value):
  """Returns `value` as a finite float, or raises a ValueError naming `name`."""
  if isinstance(value, bool) or not isinstance(value, numbers.Real):
    raise ValueError(f"`{name}` must be a number, got {value!r}.")
  if not math.isfinite(value):
    raise ValueError(f"`{name}` must be finite, got {value}.")
  return float(value)


@tf_keras.saving.register_keras_serializable(package="etc_realformer")
class WarmupLinearDecay(tf_keras.optimizers.schedules.LearningRateSchedule):
  """Linear warmup to a peak learning rate, then linear decay to an end value.

  With `s` the optimizer step (`optimizer.iterations` before the update, so the
  first update has `s = 0`), `W = warmup_steps` and `D = decay_steps`:

    s < W:       lr(s) = peak * (s + 1) / W
    W <= s < D:  lr(s) = end + (peak - end) * (D - s) / (D - W)
    s >= D:      lr(s) = end

  The warmup uses `s + 1` so that the very first update already has a non-zero
  learning rate (`peak / W`) instead of being wasted at 0; the last warmup step
  `s = W - 1` and the first decay step `s = W` both use `peak`. The decay
  reaches `end_learning_rate` at step `D` (the total number of training steps)
  and stays there. With `W = 0` there is no warmup and `lr(0) = peak`.
  """

  def __init__(self, peak_learning_rate, warmup_steps, decay_steps,
               end_learning_rate=0.0, name=None):
    """Creates the schedule.

    Args:
      peak_learning_rate: Learning rate reached at the end of warmup (> 0).
      warmup_steps: Number of warmup steps (integer >= 0).
      decay_steps: Step at which the learning rate reaches
        `end_learning_rate`, i.e. the total number of training steps (integer
        > `warmup_steps`).
      end_learning_rate: Final learning rate, in [0, `peak_learning_rate`].
      name: Optional name for the ops of the schedule.

    Raises:
      ValueError: If an argument is out of range; the message names it.
    """
    super().__init__()
    peak_learning_rate = _check_float("peak_learning_rate", peak_learning_rate)
    if peak_learning_rate <= 0:
      raise ValueError(
          f"`peak_learning_rate` must be > 0, got {peak_learning_rate}.")
    warmup_steps = _check_integer("warmup_steps", warmup_steps, 0)
    decay_steps = _check_integer("decay_steps", decay_steps, 1)
    if decay_steps <= warmup_steps:
      raise ValueError(
          f"`decay_steps` ({decay_steps}) must be > `warmup_steps` "
          f"({warmup_steps}).")
    end_learning_rate = _check_float("end_learning_rate", end_learning_rate)
    if not 0.0 <= end_learning_rate <= peak_learning_rate:
      raise ValueError(
          f"`end_learning_rate` must be in [0, peak_learning_rate="
          f"{peak_learning_rate}], got {end_learning_rate}.")
    if name is not None and not isinstance(name, str):
      raise ValueError(f"`name` must be a string or None, got {name!r}.")
    self.peak_learning_rate = peak_learning_rate
    self.warmup_steps = warmup_steps
    self.decay_steps = decay_steps
    self.end_learning_rate = end_learning_rate
    self.name = name

  def __call__(self, step):
    """Returns the learning rate at `step` as a float32 scalar tensor."""
    with tf.name_scope(self.name or "WarmupLinearDecay"):
      step = tf.maximum(tf.cast(step, tf.float32), 0.0)
      peak = tf.constant(self.peak_learning_rate, tf.float32)
      end = tf.constant(self.end_learning_rate, tf.float32)
      warmup = float(self.warmup_steps)
      decay = float(self.decay_steps)
      if self.warmup_steps > 0:
        warmup_lr = peak * tf.minimum(1.0, (step + 1.0) / warmup)
      else:
        warmup_lr = peak
      # Fraction of the decay still ahead: 1 at step W, 0 from step D on.
      remaining = tf.clip_by_value((decay - step) / (decay - warmup), 0.0, 1.0)
      decay_lr = end + (peak - end) * remaining
      return tf.where(step < warmup, warmup_lr, decay_lr)

  def get_config(self):
    """Returns the constructor arguments as a JSON-serializable dict."""
    return {
        "peak_learning_rate": self.peak_learning_rate,
        "warmup_steps": self.warmup_steps,
        "decay_steps": self.decay_steps,
        "end_learning_rate": self.end_learning_rate,
        "name": self.name,
    }
