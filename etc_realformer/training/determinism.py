"""Bit-identical runs on CPU: `train.deterministic: true`.

A seeded run (weights, data order and dropout all follow `train.seed`) can still end with other
weights when TensorFlow's CPU scheduling changes from run to run. Measured on the tiny
benchmark-style encoder (2 layers, 64 wide, batch 8 x 2,048 long tokens): the forward pass is
bitwise the same on every repeat, but the gradients of one fixed batch differ between repeats
of the same step in 6 to 22 of 25-30 repeats on a busy machine, starting at the top layer's
long feed-forward and reaching about 90% of the weights. One intra-op thread, oneDNN switched
off, or TensorFlow's op determinism alone do not change that; running one op at a time (one
inter-op thread) does: 0 of 30 repeats differ. Over hundreds of steps such last-bit
differences grow into different models (the same HotpotQA demo once gave held-out answer F1
0.224 and 0.091 in two runs).

`enable()` therefore sets TensorFlow's op determinism (ops without a deterministic kernel then
raise instead of running) and one inter-op thread. The thread count can only be set before
TensorFlow's runtime starts (the first op of the process); the command-line tools call
`enable()` as soon as they have read the config, and a process that started TensorFlow earlier
must have TF_NUM_INTEROP_THREADS=1 in its environment. What it costs in speed:
benchmarks/determinism.py (docs/benchmarks.md). GPUs: docs/gpu_training.md.

The repeat holds for one intra-op thread count (TF_NUM_INTRAOP_THREADS, by default the
machine's cores): ops split their sums by it, so one and two threads give different last bits,
and after training different figures within the seed spread (docs/long_documents.md, "Seeds").
Only one intra-op thread repeats bit for bit every time (`repeats_bit_for_bit`): with two, the
README's HotpotQA demo (1,000 steps) run three times from scratch on one 2-core machine agreed
to every logged digit through step 600, then drifted (dev answer F1 0.418, 0.428, 0.425), while
shorter runs (100 steps, three at once on 2 cores) repeated exactly. Hashing every weight after
each step found where (four runs equal through step 460, two parting at about step 462) and
why: Grappler's memory optimizer had turned the gradient sums of tensors used in several places
into additions in the executor's order. `import etc_realformer` switches that pass off
(etc_realformer/runtime.py); a layer step's gradients then repeat across processes (1 hash in
12 against 3 in 6 before), and two 2-thread runs of that demo at once stayed equal in every
weight through all 1,000 steps (docs/benchmarks.md, "Reproducible runs"). `repeats_bit_for_bit`
still answers yes only for one thread: that pair is one machine's evidence, not a guarantee.
"""

import os

from absl import logging
import tensorflow as tf

ENV = "TF_NUM_INTEROP_THREADS"


def enable() -> None:
  """Op determinism and one inter-op thread for this process (idempotent).

  Raises:
    ValueError: TensorFlow's runtime already started with more than one inter-op thread.
  """
  tf.config.experimental.enable_op_determinism()
  try:
    tf.config.threading.set_inter_op_parallelism_threads(1)
  except RuntimeError:  # the runtime has started: the setting must have come from the env
    if os.environ.get(ENV) != "1":
      raise ValueError(
          "train.deterministic: TensorFlow already started with several inter-op threads, so "
          f"runs would not repeat bit for bit; set {ENV}=1 in the environment before starting "
          "Python, or call etc_realformer.training.determinism.enable() before any TensorFlow "
          "op runs") from None
  logging.info("deterministic: op determinism on, one inter-op thread")


def repeats_bit_for_bit() -> bool:
  """Whether a deterministic run in this process repeats bit for bit: one intra-op thread
  (TF_NUM_INTRAOP_THREADS=1, or a one-core machine); see the module docstring."""
  # 0: not set through tf.config; then the environment's value, else the machine's cores.
  threads = (tf.config.threading.get_intra_op_parallelism_threads() or
             int(os.environ.get("TF_NUM_INTRAOP_THREADS") or 0) or os.cpu_count() or 1)
  return threads == 1
