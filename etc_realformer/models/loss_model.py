"""Shared train/test steps for models whose `compute_losses(features, outputs)` gives scalars.

A subclass sets `self.tracked` (name -> tf_keras.metrics.Mean, "loss" among them) and defines
`compute_losses`. train_step reports each step's own values (the logging callback averages them
over its window) and also feeds the Mean metrics, which Keras reports at the end of an epoch;
test_step accumulates the Mean metrics over the evaluated data.

With gradient accumulation (`enable_gradient_accumulation`, see training/accumulation.py) each
train_step is one micro-batch: its gradients are added up and applied every n-th step. A loss
that averages over a data-dependent part of the batch divides by `weight_total`, which is the
micro-batch's share of the whole batch's total when the data pipeline provides it.

The values a step reports (what the logs and metrics.json show) are means over the replicas:
under tf.distribute each replica reports its value divided by the number of replicas and Keras
sums them; under Horovod `metric_average` (Distribution.metric_average) averages them over the
ranks. On equal per-replica batches of a plain-mean loss, N replicas report what one process
reports on the same global batch.
"""

from typing import Callable, Dict, List, Optional

import tensorflow as tf
import tf_keras

from etc_realformer.autograph import without_autograph
from etc_realformer.training import accumulation


class LossModel(tf_keras.Model):
  """tf_keras.Model with train_step/test_step driven by compute_losses."""

  tracked: dict
  gradient_accumulation: Optional[accumulation.GradientAccumulator] = None
  # Horovod: averages a list of scalars over the ranks (tf.distribute needs none).
  metric_average: Optional[Callable[[List[tf.Tensor]], List[tf.Tensor]]] = None

  @property
  def metrics(self):
    return list(self.tracked.values())

  def compute_losses(self, features, outputs):
    """-> dict of scalar tensors with a "loss" entry; every subclass defines it."""
    raise NotImplementedError(f"{type(self).__name__} must define compute_losses")

  def loss_weights(self, features) -> Dict[str, tf.Tensor]:
    """Per-example weights [B] of the losses averaged over a data-dependent part of the batch,
    by name (the names `compute_losses` passes to `weight_total`); {} when every loss is a
    plain mean over the examples."""
    del features
    return {}

  def weight_total(self, features, name: str, weights: tf.Tensor) -> tf.Tensor:
    """The denominator of a loss averaged with per-example `weights` [B]: their sum, or, for a
    micro-batch of an accumulated step, its share of the whole batch's sum (a feature the data
    pipeline adds, accumulation.split_batches), which keeps the accumulated loss exact."""
    share = features.get(accumulation.WEIGHT_SHARE_PREFIX + name)
    if share is not None:
      return tf.cast(share[0], weights.dtype)     # the same in every row of the micro-batch
    return tf.reduce_sum(weights)

  def enable_gradient_accumulation(self, steps: int, allreduce=None) -> None:
    """Makes each train_step one of `steps` micro-batches of an optimizer step.

    Call it in the distribution scope, after `compile` (the optimizer must exist); `allreduce`
    averages the accumulated gradients over Horovod ranks (Distribution.gradient_allreduce).
    """
    if self.optimizer is None:
      raise ValueError("enable_gradient_accumulation: compile the model first")
    self.gradient_accumulation = accumulation.GradientAccumulator(
        self.trainable_variables, steps, allreduce)

  def _update_metrics(self, values):
    for name, metric in self.tracked.items():
      metric.update_state(values[name])
    return {name: metric.result() for name, metric in self.tracked.items()}

  def _reported(self, values):
    """The step's values as means over the replicas (see the module docstring)."""
    names = sorted(values)
    scalars = [tf.cast(values[name], tf.float32) for name in names]
    if self.metric_average is not None:
      scalars = self.metric_average(scalars)
    replicas = tf.distribute.get_strategy().num_replicas_in_sync
    if replicas > 1:  # Keras sums what the replicas return (its "auto" reduction)
      scalars = [v / float(replicas) for v in scalars]
    return dict(zip(names, scalars))

  @without_autograph
  def train_step(self, data):
    if self.gradient_accumulation is not None:
      return self._accumulating_train_step(data)
    with tf.GradientTape() as tape:
      values = self.compute_losses(data, self(data, training=True))
      # Under tf.distribute the optimizer sums replica gradients; Horovod's optimizer averages.
      replicas = tf.distribute.get_strategy().num_replicas_in_sync
      loss = values["loss"] / tf.cast(replicas, values["loss"].dtype)
    # compute_gradients (not tape.gradient) so a Horovod DistributedOptimizer can allreduce and
    # a LossScaleOptimizer can scale.
    grads_and_vars = self.optimizer.compute_gradients(loss, self.trainable_variables, tape=tape)
    # A head may leave variables unused (WikiHop reads only the global stream, so the last
    # layer's long-stream weights get no gradient); they are left as they are.
    self.optimizer.apply_gradients([(g, v) for g, v in grads_and_vars if g is not None])
    self._update_metrics(values)   # running means: what Keras reports at the end of an epoch
    return self._reported(values)

  def _accumulating_train_step(self, data):
    """One micro-batch: its gradients are added; every n-th call applies their mean."""
    accumulator = self.gradient_accumulation
    with tf.GradientTape() as tape:
      values = self.compute_losses(data, self(data, training=True))
      replicas = tf.distribute.get_strategy().num_replicas_in_sync
      loss = values["loss"] / tf.cast(replicas, values["loss"].dtype)
      loss = accumulator.scale_loss(self.optimizer, loss)
    # Local gradients (no Horovod allreduce per micro-batch: the accumulator reduces once).
    accumulator.add(self.optimizer, tape.gradient(loss, accumulator.variables))
    self._update_metrics(values)
    return self._reported(values)

  @without_autograph
  def test_step(self, data):
    # Running means (per replica inside a step; Keras reads the totals across replicas at the end).
    return self._reported(self._update_metrics(
        self.compute_losses(data, self(data, training=False))))
