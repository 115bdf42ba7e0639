"""Shared set-up for the gradient accumulation tests: a linear regression LossModel, cheap to
train through the real training loop, whose loss has a part averaged over a data-dependent
subset of the batch (like HotpotQA's span loss); in-memory global batches."""

import numpy as np
import tensorflow as tf
import tf_keras

from etc_realformer.models.loss_model import LossModel
from etc_realformer.training import loop


class Regression(LossModel):
  """y = x w + b. Loss: the mean squared error over all examples plus the mean over the
  examples with weight 1 (`loss_weights`), whose count varies between micro-batches."""

  def __init__(self, **kwargs):
    super().__init__(**kwargs)
    self.dense = tf_keras.layers.Dense(1, name="dense")
    self.tracked = {"loss": tf_keras.metrics.Mean("loss")}

  def build(self, input_shape=None):
    self.dense.build([None, 3])
    self.built = True

  def call(self, features, training=None):
    return tf.cast(self.dense(features["x"])[:, 0], tf.float32)          # [B]

  def loss_weights(self, features):
    return {"selected": features["selected"]}

  def compute_losses(self, features, outputs):
    squared = tf.square(outputs - features["y"])                           # [B]
    selected = features["selected"]                                        # [B]
    total = self.weight_total(features, "selected", selected)
    return {"loss": tf.reduce_mean(squared)
                    + tf.math.divide_no_nan(tf.reduce_sum(squared * selected), total)}


def build(model_class, *args):
  """build_model for run_training_loop: the model, built."""

  def make():
    model = model_class(*args)
    model.build()
    return model
  return make


def in_memory(features, global_batch):
  """A run_training_loop make_dataset over in-memory features: global batches in order,
  repeated, the first start_step skipped, this slice kept (as tfrecords.make_dataset does)."""

  def make(num_slices, slice_index, start_step):
    per_slice = global_batch // num_slices
    ds = tf.data.Dataset.from_tensor_slices(features).repeat()
    ds = ds.batch(global_batch, drop_remainder=True).skip(start_step)
    return ds.map(lambda batch: {k: v[slice_index * per_slice:(slice_index + 1) * per_slice]
                                 for k, v in batch.items()})
  return make


def regression_data(y_scale=None):
  """8 examples = 2 global batches of 4. Selected: [1 0 | 1 1] and [0 0 | 0 1] by halves, so
  micro-batches (and replicas) hold different numbers. Values are about 0.1, so scaled float16
  gradients stay finite; `y_scale` multiplies the targets of examples 2..3 (the second half of
  the first batch)."""
  rng = np.random.default_rng(0)
  x = 0.1 * rng.normal(size=(8, 3)).astype(np.float32)
  y = 0.1 * rng.normal(size=(8,)).astype(np.float32)
  if y_scale is not None:
    y[2:4] *= y_scale
  selected = np.array([1, 0, 1, 1, 0, 0, 0, 1], np.float32)
  return {"x": x, "y": y, "selected": selected}


def train_regression(output_dir, distribution, callbacks=(), y_scale=None, **train):
  """Trains Regression through run_training_loop (batch 4, 2 steps of AdamW by default) and
  puts the mixed-precision policy back; -> the trained model."""
  values = dict(batch_size=4, num_train_steps=2, warmup_steps=0, learning_rate=0.1,
                optimizer="adamw", log_every=1)
  values.update(train)
  previous_policy = tf_keras.mixed_precision.global_policy()
  try:
    model, _ = loop.run_training_loop(
        build(Regression), in_memory(regression_data(y_scale), 4),
        loop.LoopConfig.from_dict(values), output_dir, distribution, verbose=0,
        extra_callbacks=list(callbacks))
  finally:
    tf_keras.mixed_precision.set_global_policy(previous_policy)
  return model


def weights(model):
  return {v.name: v.numpy() for v in model.trainable_variables}
