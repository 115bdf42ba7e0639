"""Dropout whose mask is a pure function of a seed, so a recomputed forward pass replays it.

Under gradient checkpointing (`grad_checkpointing_period`, tf.recompute_grad) the forward pass
of each checkpointed segment runs a second time on the backward pass. A stateful dropout would
draw new masks there and the gradients would belong to another network than the one whose loss
was computed. Here every dropout draws its mask from a seed with TensorFlow's stateless random
ops instead:

  step seed   = new_seed(): drawn once per forward pass from TF's global random generator
                (random from step to step), folded with the process index and the replica id
                (random from replica to replica);
  site seed   = fold_in(step seed, salt, ...): a fixed path of small integers per dropout site
                (embeddings 0, layer i: i + 1; then the site inside the layer).

The step seed is a tensor computed outside the checkpointed segments and captured by them, so the
recomputation sees the same value and draws the same masks. Official ETC does the same with its
recomputing dropout; the masks differ from it (other seeds), the distribution is the same.
"""

from typing import Optional

import tensorflow as tf

_process_index = 0


def set_process_index(index: int) -> None:
  """Tells new_seed which process this is (Horovod rank): every rank then draws other masks even
  though all of them seed TensorFlow alike (the same initial weights). tf.distribute replicas are
  told apart by their replica id and need no call."""
  global _process_index
  _process_index = int(index)


def fold_in(seed: tf.Tensor, *data) -> tf.Tensor:
  """A new [2] int32 seed from `seed` and each integer in `data`, in order."""
  for value in data:
    seed = tf.random.experimental.stateless_fold_in(seed, tf.cast(value, tf.int32))
  return seed


def replica_id() -> tf.Tensor:
  """The replica id in the current tf.distribute replica context (0 outside one)."""
  context = tf.distribute.get_replica_context()
  if context is None:  # cross-replica context: not a per-replica forward pass
    return tf.constant(0, tf.int32)
  return tf.cast(context.replica_id_in_sync_group, tf.int32)


def new_seed() -> tf.Tensor:
  """A fresh step seed [2] int32: random per call, per process and per replica."""
  seed = tf.random.uniform([2], minval=tf.int32.min, maxval=tf.int32.max, dtype=tf.int32)
  return fold_in(seed, _process_index, replica_id())


def stateless_dropout(x: tf.Tensor, rate: float, seed: tf.Tensor,
                      salt: Optional[int] = None) -> tf.Tensor:
  """Inverted dropout of `x` with the mask given by `seed` (folded with `salt` when given)."""
  if salt is not None:
    seed = fold_in(seed, salt)
  return tf.nn.experimental.stateless_dropout(x, rate=rate, seed=seed)
