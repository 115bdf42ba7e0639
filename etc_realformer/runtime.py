"""A setting of TensorFlow's graph optimizer that `import etc_realformer` makes: sums in order.

Grappler's memory optimizer rewrites an AddN node with more than two inputs, where it expects
the graph's peak memory to be high, into a temporary variable that each input is added to
(AssignAdd) as soon as that input is ready. Backpropagation sums every tensor used in several
places with AddN, so in this package's layers (ETC-base, or the demos' batch of 8 x 2,048
tokens) it rewrites the gradient sums of the keys, values and feed-forward inputs. Which input
is ready first depends on the executor's order, and that order on its run-time cost estimates:
on a busy machine the same step then adds the same terms in another order now and then, and
the weights of two runs of one seeded, deterministic command part in the last bits
(docs/benchmarks.md, "Reproducible runs").

`keep_addn_sums()` switches that pass off (RewriterConfig.memory_optimization = NO_MEM_OPT), so
AddN adds its inputs in their fixed order: a seeded layer step's gradients gave 1 hash in 12
processes, against 3 distinct in 6 with the pass on. Measured on one 2-core CPU
(docs/benchmarks.md), it also saves time and memory: one ETC-base layer's forward + backward
2.60-3.13 -> 2.53-2.67 s, peak 1,848 -> 1,694 MB; the WikiHop demo's layer 0.387-0.423 ->
0.299-0.328 s. On GPUs the same switch also turns off the optimizer's swapping heuristic,
which acts only on graphs that do not fit the device (gradient checkpointing,
docs/gpu_training.md, is this package's way).

TensorFlow has no public switch for this pass, so the setting goes into the eager context's
base ConfigProto, which every function call's options are built from. A context that has
already run functions keeps its earlier options on other threads.
"""

from tensorflow.core.protobuf import config_pb2
from tensorflow.core.protobuf import rewriter_config_pb2
from tensorflow.python.eager import context


def keep_addn_sums() -> None:
  """Switches off Grappler's memory optimizer for this process's functions (idempotent)."""
  ctx = context.context()
  if ctx._config is None:  # pylint: disable=protected-access
    ctx._config = config_pb2.ConfigProto()  # pylint: disable=protected-access
  rewrite = ctx._config.graph_options.rewrite_options  # pylint: disable=protected-access
  rewrite.memory_optimization = rewriter_config_pb2.RewriterConfig.NO_MEM_OPT
  # This thread's cached call options were built from the old config; the next call rebuilds
  # them (other threads build theirs when they first call a function).
  ctx._thread_local_data.function_call_options = None  # pylint: disable=protected-access


def addn_sums_kept() -> bool:
  """Whether this thread's function calls run with the memory optimizer switched off."""
  config = config_pb2.ConfigProto()
  config.ParseFromString(context.context().function_call_options.config_proto_serialized)
  return (config.graph_options.rewrite_options.memory_optimization ==
          rewriter_config_pb2.RewriterConfig.NO_MEM_OPT)
