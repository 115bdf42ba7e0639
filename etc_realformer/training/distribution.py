"""One training script, four ways to run it: none | horovod | mirrored | multi_worker_mirrored.

`Distribution` hides the differences the trainer cares about:
- where variables are created (`scope()`),
- how the optimizer combines gradients (Horovod wraps it in DistributedOptimizer, which
  averages; tf.distribute sums replica gradients, and the model divides its loss by the number
  of replicas),
- which slice of every global batch this process feeds (`dataset(make)`),
- who writes checkpoints and logs (`is_chief`), and the Keras callbacks Horovod needs.

By default every worker reads the same global batches and keeps its contiguous slice (see
data/tfrecords.py), so a run gives the same updates whatever the number of workers; the "shards"
input mode instead gives each worker its own TFRecord files (each record read once in all). With
gradient accumulation each replica's batch is further cut into micro-batches (see
training/accumulation.py), and Horovod averages the accumulated gradients once per step.
"""

import contextlib
import json
import os
from typing import Callable, List, Optional, Sequence

import tensorflow as tf
import tf_keras

from etc_realformer.ops import dropout as dropout_ops
from etc_realformer.training import accumulation

CHOICES = ("none", "horovod", "mirrored", "multi_worker_mirrored")


class Distribution:
  """Set-up for one of CHOICES; create it once, before any model or dataset."""

  def __init__(self, kind: str = "none", devices: Optional[Sequence[str]] = None):
    """`devices`: the devices of a `mirrored` run (default: every GPU, else the CPU)."""
    kind = (kind or "none").lower()
    if kind not in CHOICES:
      raise ValueError(f"distribution: {kind!r} is not one of {', '.join(CHOICES)}")
    self.kind = kind
    self.hvd = None
    self.strategy = None
    if kind == "horovod":
      try:
        import horovod.tensorflow.keras as hvd  # pylint: disable=g-import-not-at-top
      except ImportError as e:
        raise ImportError("distribution=horovod needs Horovod built against this TensorFlow; "
                          "run `bash .ci/build_horovod.sh` (see docs/distributed_training.md, "
                          "'Installing Horovod')") from e
      hvd.init()
      self.hvd = hvd
      # Every rank seeds TensorFlow alike (same initial weights): the rank keeps their dropout
      # masks apart. tf.distribute replicas differ by their replica id (ops/dropout.py).
      dropout_ops.set_process_index(hvd.rank())
      gpus = tf.config.list_physical_devices("GPU")
      if gpus:  # one GPU per process
        tf.config.set_visible_devices(gpus[hvd.local_rank() % len(gpus)], "GPU")
    elif kind == "mirrored":
      self.strategy = tf.distribute.MirroredStrategy(devices)
    elif kind == "multi_worker_mirrored":
      if "TF_CONFIG" not in os.environ:
        raise ValueError("distribution=multi_worker_mirrored needs the TF_CONFIG environment "
                         "variable (cluster worker addresses and this worker's task index)")
      self.strategy = tf.distribute.MultiWorkerMirroredStrategy()

  # Who am I.
  @property
  def num_workers(self) -> int:
    """Processes that feed data (one input pipeline each)."""
    if self.hvd is not None:
      return self.hvd.size()
    if self.kind == "multi_worker_mirrored":
      return len(json.loads(os.environ["TF_CONFIG"])["cluster"].get("worker", [])) or 1
    return 1

  @property
  def worker_index(self) -> int:
    if self.hvd is not None:
      return self.hvd.rank()
    if self.kind == "multi_worker_mirrored":
      return int(json.loads(os.environ["TF_CONFIG"])["task"]["index"])
    return 0

  @property
  def num_replicas(self) -> int:
    """Model copies that each take a slice of the global batch."""
    if self.hvd is not None:
      return self.hvd.size()
    return self.strategy.num_replicas_in_sync if self.strategy is not None else 1

  @property
  def is_chief(self) -> bool:
    return self.worker_index == 0

  def scope(self):
    return self.strategy.scope() if self.strategy is not None else contextlib.nullcontext()

  # Training pieces.
  def wrap_optimizer(self, optimizer):
    """Horovod: DistributedOptimizer (allreduce-average of gradients). Others: unchanged."""
    if self.hvd is None:
      return optimizer
    excluded = getattr(optimizer, "_exclude_from_weight_decay_names", None)
    # sparse_as_dense: the embedding gradients are IndexedSlices with one row per input token;
    # Horovod would all-gather those (hundreds of MB per table and step at 4096 tokens) instead
    # of all-reducing the dense table gradient.
    wrapped = self.hvd.DistributedOptimizer(optimizer, sparse_as_dense=True)
    # Horovod rebuilds the optimizer from get_config, which drops AdamW's decay exclusions.
    if excluded and not getattr(wrapped, "_exclude_from_weight_decay_names", None):
      wrapped.exclude_from_weight_decay(var_names=list(excluded))
    return wrapped

  def gradient_allreduce(self) -> Optional[accumulation.AllReduce]:
    """Horovod: a function averaging a list of tensors over the ranks, for accumulated
    gradients (reduced once per optimizer step). Others: None (tf.distribute's optimizer
    reduces the gradients it applies)."""
    if self.hvd is None:
      return None
    import horovod.tensorflow as hvd_tf  # pylint: disable=g-import-not-at-top

    def average(tensors):
      return hvd_tf.grouped_allreduce(tensors, op=hvd_tf.Average,
                                      name="accumulated_gradients")
    return average

  def metric_average(self) -> Optional[Callable[[List[tf.Tensor]], List[tf.Tensor]]]:
    """Horovod: a function averaging a list of float32 scalars over the ranks (each step's
    reported losses and accuracies, LossModel.metric_average). Others: None (tf.distribute
    combines the replicas' values itself)."""
    if self.hvd is None or self.hvd.size() == 1:
      return None
    import horovod.tensorflow as hvd_tf  # pylint: disable=g-import-not-at-top

    def average(scalars):
      return hvd_tf.grouped_allreduce(scalars, op=hvd_tf.Average, name="reported_values")
    return average

  def callbacks(self) -> List:
    if self.hvd is None:
      return []
    # Horovod's own MetricAverageCallback reaches for Keras 3's backend; average here instead.
    return [self.hvd.callbacks.BroadcastGlobalVariablesCallback(0), _HorovodMetricAverage()]

  def broadcast_variables(self, variables):
    """Horovod: copy rank 0's values (after a restore, before training) to every rank."""
    if self.hvd is not None and self.hvd.size() > 1:
      import horovod.tensorflow as hvd_tf  # pylint: disable=g-import-not-at-top
      hvd_tf.broadcast_variables(variables, root_rank=0)

  def dataset(self, make: Callable[[int, int], tf.data.Dataset], global_batch_size: int,
              accumulation_steps: int = 1, loss_weights: Optional[Callable] = None):
    """`make(num_slices, slice_index)` -> batches of one slice of each global batch.

    Returns what model.fit takes: a tf.data.Dataset for none/horovod, a distributed dataset
    for tf.distribute (each replica gets its own contiguous slice). With accumulation_steps
    n > 1 each replica's part of a global batch comes as n consecutive micro-batches, carrying
    their shares of the `loss_weights` totals (accumulation.split_batches).
    """
    if self.strategy is None:
      ds = make(self.num_workers, self.worker_index)
      if accumulation_steps > 1:
        ds = accumulation.split_batches(ds, accumulation_steps, loss_weights)
      return ds
    replicas = self.strategy.num_replicas_in_sync

    def fn(context: tf.distribute.InputContext):
      pipelines = context.num_input_pipelines
      per_pipeline = replicas // pipelines
      ds = make(pipelines, context.input_pipeline_id)
      if accumulation_steps > 1:
        # Part k of a slice goes to replica k % per_pipeline at micro-step k // per_pipeline.
        return accumulation.split_batches(ds, per_pipeline * accumulation_steps, loss_weights)
      if per_pipeline == 1:
        return ds
      # Split this pipeline's slice into consecutive per-replica batches (round-robin order).
      return ds.unbatch().batch(global_batch_size // replicas, drop_remainder=True)

    options = tf.distribute.InputOptions(experimental_fetch_to_device=True)
    return self.strategy.distribute_datasets_from_function(fn, options)

  def describe(self) -> str:
    return (f"distribution={self.kind}: {self.num_workers} worker(s), {self.num_replicas} "
            f"replica(s), this is worker {self.worker_index}")


class _HorovodMetricAverage(tf_keras.callbacks.Callback):
  """Replaces each epoch-end log value by its average over the Horovod ranks."""

  def on_epoch_end(self, epoch, logs=None):
    import horovod.tensorflow as hvd_tf  # pylint: disable=g-import-not-at-top
    for name in sorted(logs or {}):
      value = tf.constant(float(logs[name]), tf.float32)
      logs[name] = float(hvd_tf.allreduce(value, op=hvd_tf.Average, name=f"avg_{name}").numpy())
