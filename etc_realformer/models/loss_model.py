"""Shared train/test steps for models whose `compute_losses(features, outputs)` gives scalars.

A subclass sets `self.tracked` (name -> tf_keras.metrics.Mean, "loss" among them) and defines
`compute_losses`. train_step reports each step's own values (the logging callback averages them
over its window) and also feeds the Mean metrics, which Keras reports at the end of an epoch;
test_step accumulates the Mean metrics over the evaluated data.
"""

import tensorflow as tf
import tf_keras


class LossModel(tf_keras.Model):
  """tf_keras.Model with train_step/test_step driven by compute_losses."""

  tracked: dict

  @property
  def metrics(self):
    return list(self.tracked.values())

  def compute_losses(self, features, outputs):
    """-> dict of scalar tensors with a "loss" entry; every subclass defines it."""
    raise NotImplementedError(f"{type(self).__name__} must define compute_losses")

  def _update_metrics(self, values):
    for name, metric in self.tracked.items():
      metric.update_state(values[name])
    return {name: metric.result() for name, metric in self.tracked.items()}

  def train_step(self, data):
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
    return values

  def test_step(self, data):
    return self._update_metrics(self.compute_losses(data, self(data, training=False)))
