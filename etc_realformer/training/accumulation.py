"""Gradient accumulation: one optimizer step from several micro-batches.

With `train.gradient_accumulation_steps: n`, the global batch is still `batch_size` examples per
optimizer step; each replica's share of it is fed to `model.fit` as n consecutive micro-batches
(`split_batches`), and `GradientAccumulator` sums their gradients in non-trainable variables and
applies the mean once, on the n-th. So the optimizer's `iterations` (and with it the
learning-rate schedule, checkpoint numbers and log steps) count optimizer steps, while Keras runs
n batches per step.

What is exact. The applied gradient is the mean of the n micro-batch gradients, which is the
gradient of the whole batch's loss when that loss is a mean over the batch of per-example
values: the micro-batches have equal sizes. Pretraining (MLM and CPC are averaged per example,
then over the batch), WikiHop and OpenKP losses are such means. A loss averaged over a
data-dependent part of the batch (HotpotQA's span loss over the span examples, NQ's long and
short losses over the windows holding an answer) is not: each micro-batch would divide by its
own count. A model names the per-example weights of such losses in `loss_weights(features)`;
`split_batches` gives every micro-batch its share of the whole batch's total weight
(total / number of parts, as the `WEIGHT_SHARE_PREFIX` features) and `LossModel.weight_total`
divides by that share, which makes these losses exact too. Losses that compare the examples of
a batch with each other see one micro-batch: CPC's in-batch negatives come from the micro-batch,
as they come from the worker's slice in data-parallel training (`cpc_group_size` equal to the
micro-batch size gives the same negatives to a run without accumulation).

Checkpoints. The accumulators are never saved. Nothing is applied before the n-th micro-batch,
so in the middle of an accumulation the weights and optimizer state are those of the last
optimizer step; the checkpoint callbacks save right after a step is applied. A run stopped in
the middle of an accumulation resumes from its last checkpoint, skips `iterations` global
batches and starts the accumulation again from its first micro-batch: it ends with the same
weights as an uninterrupted run.

Distribution. The sums are replica-local (SyncOnRead variables under tf.distribute, plain ones
otherwise), so gradients cross replicas once per optimizer step: tf.distribute's optimizer
all-reduces the applied mean, and under Horovod `allreduce` averages it over the ranks (the
DistributedOptimizer's own per-batch allreduce is not used). The conditional apply runs in a
cross-replica context, as LossScaleOptimizer's does, because a `tf.cond` in a replica context
cannot contain the merge_call of `apply_gradients`. With a LossScaleOptimizer each micro-batch's
loss is scaled and its gradients unscaled before they are added; a non-finite micro-batch makes
the sum non-finite, and the LossScaleOptimizer then skips that step and lowers the scale, as it
does without accumulation.
"""

from typing import Callable, Dict, List, Optional, Sequence

import tensorflow as tf
import tf_keras

from etc_realformer.autograph import without_autograph

# Feature-name prefix of a micro-batch's share of a batch's loss-weight total.
WEIGHT_SHARE_PREFIX = "loss_weight_share/"

AllReduce = Callable[[List[tf.Tensor]], List[tf.Tensor]]


def check_steps(steps, per_replica_batch: Optional[int] = None,
                source: str = "train config") -> int:
  """Returns `steps` as an int, or raises a ValueError naming gradient_accumulation_steps.

  Args:
    steps: the configured number of micro-batches per optimizer step.
    per_replica_batch: examples each replica sees per optimizer step (None: not checked); it
      must split into `steps` equal micro-batches.
    source: names the config in the message.
  """
  if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
    raise ValueError(f"{source}: gradient_accumulation_steps must be an integer >= 1, "
                     f"got {steps!r}")
  if per_replica_batch is not None and per_replica_batch % steps:
    raise ValueError(f"{source}: gradient_accumulation_steps={steps} does not divide the batch "
                     f"of {per_replica_batch} examples each replica sees per step; choose a "
                     "divisor of it (or change batch_size)")
  return steps


def _cut(x: tf.Tensor, parts: int) -> tf.Tensor:
  """[b, ...] -> [parts, b / parts, ...], keeping the static shape where it is known."""
  batch = x.shape[0]
  if batch is not None and batch % parts:
    raise ValueError(f"a batch of {batch} examples does not split into {parts} equal "
                     "micro-batches (gradient_accumulation_steps)")
  micro = batch // parts if batch is not None else -1
  inner = [d if d is not None else tf.shape(x)[i + 1] for i, d in enumerate(x.shape[1:])]
  return tf.reshape(x, [parts, micro] + inner)


def split_batches(dataset: tf.data.Dataset, parts: int,
                  loss_weights: Optional[Callable[[Dict[str, tf.Tensor]], Dict[str, tf.Tensor]]]
                  = None) -> tf.data.Dataset:
  """Each element (a dict of [b, ...] tensors) -> `parts` consecutive elements [b / parts, ...].

  Part j holds examples [j * b / parts, (j + 1) * b / parts) of the element. With
  `loss_weights` (features -> {name: [b] per-example weights}), every part also gets the
  feature WEIGHT_SHARE_PREFIX + name: [b / parts], each entry sum(weights) / parts, the part's
  share of the element's total weight (see LossModel.weight_total).
  """

  def add_shares(features):
    features = dict(features)
    size = tf.shape(tf.nest.flatten(features)[0])[0]
    for name, weights in loss_weights(features).items():
      share = tf.reduce_sum(tf.cast(weights, tf.float32)) / parts                 # scalar
      features[WEIGHT_SHARE_PREFIX + name] = tf.fill([size], share)              # [b]
    return features

  def cut(features):
    return tf.data.Dataset.from_tensor_slices(
        tf.nest.map_structure(lambda x: _cut(x, parts), features))   # [parts, b / parts, ...]

  if loss_weights is not None:
    dataset = dataset.map(without_autograph(add_shares))
  return dataset.flat_map(without_autograph(cut)).prefetch(2)


class GradientAccumulator:
  """Sums the gradients of `steps` micro-batches and applies their mean as one optimizer step.

  Create it in the distribution scope (LossModel.enable_gradient_accumulation does), after the
  optimizer. It is a plain Python object on purpose: its variables are not model variables
  (Horovod's broadcast and exports do not see them) and are not checkpointed (see the module
  docstring).

  Args:
    variables: the trainable variables, in the order their gradients will be given.
    steps: micro-batches per optimizer step (>= 2).
    allreduce: averages a list of tensors over the workers (Horovod); None under tf.distribute
      (the optimizer reduces) and on one process.
  """

  def __init__(self, variables: Sequence[tf.Variable], steps: int,
               allreduce: Optional[AllReduce] = None):
    self.steps = check_steps(steps)
    self.variables = list(variables)
    self.allreduce = allreduce
    local = dict(trainable=False, synchronization=tf.VariableSynchronization.ON_READ)
    self.sums = [tf.Variable(tf.zeros(v.shape, v.dtype), name=_sum_name(v),
                             aggregation=tf.VariableAggregation.SUM, **local)
                 for v in self.variables]
    # Micro-batches added since the last optimizer step, 0 .. steps - 1 between batches.
    self.micro_step = tf.Variable(0, dtype=tf.int64, name="accumulated_micro_batches",
                                  aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA, **local)

  def at_step_boundary(self) -> bool:
    """True when no micro-batch is waiting (the last batch completed an optimizer step)."""
    return int(self.micro_step.numpy()) == 0

  def scale_loss(self, optimizer, loss: tf.Tensor) -> tf.Tensor:
    """The loss to differentiate: scaled by a LossScaleOptimizer's loss scale (inside the tape)."""
    if isinstance(optimizer, tf_keras.mixed_precision.LossScaleOptimizer):
      return optimizer.get_scaled_loss(loss)
    return loss

  def add(self, optimizer, grads: Sequence[Optional[tf.Tensor]]) -> None:
    """Adds one micro-batch's gradients (of `scale_loss`'s loss; None for an unused variable)
    and, on the `steps`-th micro-batch, applies the mean with `optimizer`."""
    if len(grads) != len(self.variables):
      raise ValueError(f"{len(grads)} gradients for {len(self.variables)} accumulated variables")
    if isinstance(optimizer, tf_keras.mixed_precision.LossScaleOptimizer):
      grads = optimizer.get_unscaled_gradients(grads)
    used = [i for i, g in enumerate(grads) if g is not None]
    for i in used:
      # Sparse gradients (embedding lookups) are summed densely.
      self.sums[i].assign_add(tf.convert_to_tensor(grads[i]))
    self.micro_step.assign_add(1)
    count = self.micro_step.read_value()
    apply_now = tf.equal(count, self.steps)
    self._maybe_apply(optimizer, apply_now, used)
    self.micro_step.assign(tf.where(apply_now, tf.zeros_like(count), count))

  def _apply(self, optimizer, used: List[int]) -> None:
    """In a replica context: applies the mean of the sums of `used` and zeroes them."""
    grads = [self.sums[i].read_value() / self.steps for i in used]
    if self.allreduce is not None:
      grads = self.allreduce(grads)
    optimizer.apply_gradients(zip(grads, [self.variables[i] for i in used]))
    for i in used:
      self.sums[i].assign(tf.zeros_like(self.sums[i]))

  def _maybe_apply(self, optimizer, apply_now: tf.Tensor, used: List[int]) -> None:
    """Runs `_apply` when `apply_now` (the same on every replica)."""
    if tf.__internal__.distribute.strategy_supports_no_merge_call():
      tf.cond(apply_now, lambda: self._apply(optimizer, used), lambda: None)
      return

    def cross_replica(distribution, apply_now):
      apply_now = distribution.experimental_local_results(apply_now)[0]
      tf.cond(apply_now,
              lambda: distribution.extended.call_for_each_replica(
                  lambda: self._apply(optimizer, used)),
              lambda: None)

    tf.distribute.get_replica_context().merge_call(cross_replica, args=(apply_now,))


def _sum_name(variable: tf.Variable) -> str:
  return "accumulated/" + variable.name.split(":")[0]
