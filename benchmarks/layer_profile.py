"""Where one ETC-base layer's time goes: an op profile of forward + backward, by op kind and by
part of the attention, next to the machine's matmul rate measured in the same run.

One TransformerBlock at ETC-base widths (hidden 768, 12 heads, feed-forward 3072, radius 84,
relative vocabulary 32; --widths wikihop_demo: the WikiHop demo's tiny layer, hidden 64, 2
heads, batch 8) on L long and G global tokens (default 4,096 and 256), batch 1,
float32, dropout 0, residual attention "none" and "sum" (previous-layer scores fed in as a
middle layer sees them): attention_scaling.py's step, each in its own process. Per
configuration:
  seconds     median wall time of a forward + backward step (tf.function), unprofiled
  share       the step's analytic FLOPs (etc_realformer/flops.py, 3x the forward pass) per
              second, as a share of the float32 matmul rate measured in the same process
  ops         TensorFlow's profiler over --profile_steps steps: time per op kind (MatMul,
              Einsum, Mul, ...) and per part, from the name scopes of the attention layer
              (projections, blocking, l2l/l2g/g2g/g2l scores and contexts, relative, softmax
              with the residual sum and masks, output projections; etc_realformer/ops/
              profiling.py, switched on here only) and of the block (feed forward, layer
              norms); gradient ops count with the part they differentiate.
Op times are the profiler's (with its overhead), so they are given as shares of the profiled
op time; the unprofiled step time is the figure to compare.

--paired N: what the residual sum costs, as a ratio taken side by side. One more child builds
both steps (none and sum) and times them alternately N times (none, sum, none, sum, ...), so
the machine's drifting pace falls on both alike; it reports each step's median, and the median,
quartiles and geometric mean of the N ratios sum / none (a slow outlier moves the mean, not the
median).

  .venv/bin/python benchmarks/layer_profile.py                  # ~3 min on 2 cores
  .venv/bin/python benchmarks/layer_profile.py --long_len 2048 --residual none
  .venv/bin/python benchmarks/layer_profile.py --paired 15        # + sum / none, ~6 min
  .venv/bin/python benchmarks/layer_profile.py --widths wikihop_demo --long_len 2048 \
      --output benchmarks/results/layer_profile_wikihop_demo.json   # the WikiHop demo's layer
Prints the tables and writes JSON (default benchmarks/results/layer_profile.json).
"""

import argparse
import collections
import glob
import json
import os
import platform
import tempfile
import time

import attention_scaling
import child_runs
from attention_scaling import WIDTHS

# Name scopes -> part, most specific first (a gradient op's name holds its forward op's scopes).
PARTS = ("l2l_scores", "l2g_scores", "l2l_context", "l2g_context", "g2g_scores", "g2l_scores",
         "g2g_context", "g2l_context", "relative", "softmax", "blocking", "projections",
         "output_projections", "norm", "feed_forward")
CALL_OPS = {"PartitionedCall", "StatefulPartitionedCall", "While", "If", "StatelessIf",
            "StatelessWhile"}


# Scopes of ops that run outside the layer's scopes (the relative lookups' gradient function).
ALIASES = {"select_by_id_grad": "relative"}


def part_of(node_name: str) -> str:
  scopes = node_name.split("/")
  for alias, part in ALIASES.items():
    if any(scope.startswith(alias) for scope in scopes):   # also "<alias>_1", ...
      return part
  for part in PARTS:
    if any(part in scope for scope in scopes):
      return part
  return "other"


def matmul_rate(repeats: int) -> float:
  """float32 FLOP/s of the feed-forward's own product, [4096, 768] x [768, 3072], median."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  a, b = tf.random.normal([4096, 768]), tf.random.normal([768, 3072])
  fn = tf.function(tf.matmul)
  fn(a, b).numpy()
  times = []
  for _ in range(repeats):
    start = time.perf_counter()
    fn(a, b).numpy()
    times.append(time.perf_counter() - start)
  return 2.0 * 4096 * 768 * 3072 / float(np.median(times))


def op_times(trace_dir: str) -> dict:
  """{op kind: picoseconds}, {part: picoseconds} of the TensorFlow op events in a trace."""
  from tensorflow.tsl.profiler.protobuf import xplane_pb2  # pylint: disable=g-import-not-at-top
  path = sorted(glob.glob(os.path.join(trace_dir, "**", "*.xplane.pb"), recursive=True))[-1]
  space = xplane_pb2.XSpace()
  with open(path, "rb") as f:
    space.ParseFromString(f.read())
  kinds, parts = collections.Counter(), collections.Counter()
  for plane in space.planes:
    for line in plane.lines:
      if not line.name.startswith("tf_Compute"):
        continue
      # Op events are named "<node name>:<op kind>"; executor events ("ExecutorState::...")
      # and allocations are not ops. An op's own kernels may appear as events inside it: only
      # the outermost op event counts, with all its time.
      events = []
      for event in line.events:
        name = plane.event_metadata[event.metadata_id].name
        if ":" in name and "::" not in name and name.rsplit(":", 1)[1] not in CALL_OPS:
          events.append((event.offset_ps, event.offset_ps + event.duration_ps, name))
      open_until = -1
      for start, end, name in sorted(events):
        if start < open_until:
          continue
        open_until = end
        node, kind = name.rsplit(":", 1)
        kinds[kind.replace("_Mkl", "").replace("NativeFused", "Fused")] += end - start
        parts[part_of(node)] += end - start
  return {"kinds": dict(kinds), "parts": dict(parts)}


def one(long_len, global_len, residual, repeats, profile_steps, widths="base"):
  """Measures one configuration in this process; returns a dict."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  from etc_realformer.config import EtcConfig  # pylint: disable=g-import-not-at-top
  from etc_realformer.flops import layer_forward_flops  # pylint: disable=g-import-not-at-top

  from etc_realformer.ops import profiling  # pylint: disable=g-import-not-at-top
  profiling.SCOPES = True   # name the attention's parts (off by default: it moves last bits)
  step = tf.function(attention_scaling.block_step("blocked", long_len, global_len, residual,
                                                  widths)[0])

  run = lambda: tf.nest.map_structure(lambda t: t.numpy(), step())  # pylint: disable=unnecessary-lambda-assignment
  run()  # trace and warm up
  rate = matmul_rate(repeats)
  times = []
  for _ in range(repeats):   # interleaved with the matmul rate: the machine's pace drifts
    start = time.perf_counter()
    run()
    times.append(time.perf_counter() - start)
  rate = max(rate, matmul_rate(repeats))
  with tempfile.TemporaryDirectory() as trace_dir:
    tf.profiler.experimental.start(trace_dir)
    for _ in range(profile_steps):
      run()
    tf.profiler.experimental.stop()
    profile = op_times(trace_dir)
  w = WIDTHS[widths]
  config = EtcConfig(hidden_size=w["hidden"], num_attention_heads=w["heads"],
                     intermediate_size=w["ff"], local_radius=w["radius"],
                     relative_pos_max_distance=w["rel_distance"],
                     relative_vocab_size=w["rel_vocab"], num_hidden_layers=1)
  forward = {k: v for k, v in layer_forward_flops(config, long_len, global_len).items()
             if k != "useful_l2l"}
  flops = 3.0 * w["batch"] * sum(forward.values())
  seconds = float(np.median(times))
  return {"widths": widths, "long_len": long_len, "global_len": global_len, "residual": residual,
          "seconds": seconds, "times": times, "matmul_flops_per_s": rate,
          "step_flops": flops, "share_of_matmul_rate": flops / seconds / rate,
          "profile_steps": profile_steps, **profile}


def paired(long_len, global_len, rounds, widths="base"):
  """Times the "none" and "sum" steps alternately in this process; returns a dict."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  runs = {}
  for residual in ("none", "sum"):
    step = tf.function(attention_scaling.block_step("blocked", long_len, global_len, residual,
                                                    widths)[0])
    runs[residual] = lambda step=step: tf.nest.map_structure(lambda t: t.numpy(), step())
    runs[residual]()  # trace and warm up
  times = {"none": [], "sum": []}
  for _ in range(rounds):
    for residual, run in runs.items():
      start = time.perf_counter()
      run()
      times[residual].append(time.perf_counter() - start)
  ratios = [s / n for n, s in zip(times["none"], times["sum"])]
  return {"widths": widths, "long_len": long_len, "global_len": global_len, "rounds": rounds,
          "times": times, "none_seconds": float(np.median(times["none"])),
          "sum_seconds": float(np.median(times["sum"])),
          "sum_over_none": float(np.median(ratios)),
          "sum_over_none_quartiles": [float(q) for q in np.percentile(ratios, [25, 75])],
          "sum_over_none_geomean": float(np.exp(np.mean(np.log(ratios))))}


def table(title, counts, limit=14):
  total = sum(counts.values()) or 1
  lines = [f"{title:22} {'share':>7}"]
  for name, ps in sorted(counts.items(), key=lambda kv: -kv[1])[:limit]:
    lines.append(f"{name:22} {100 * ps / total:6.1f}%")
  return "\n".join(lines)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--long_len", type=int, default=4096)
  parser.add_argument("--global_len", type=int, default=256)
  parser.add_argument("--residual", default="none,sum")
  parser.add_argument("--widths", default="base", choices=sorted(WIDTHS),
                      help="ETC-base's layer, or the WikiHop demo's tiny one at its batch of 8")
  parser.add_argument("--repeats", type=int, default=5)
  parser.add_argument("--profile_steps", type=int, default=3)
  parser.add_argument("--paired", type=int, default=0,
                      help="also time none and sum alternately in one process, this many rounds")
  parser.add_argument("--timeout", type=int, default=1200)
  parser.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "results",
                                                       "layer_profile.json"))
  parser.add_argument("--child", help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.child == "paired":
    print(json.dumps(paired(args.long_len, args.global_len, args.paired, args.widths)))
    return
  if args.child:
    print(json.dumps(one(args.long_len, args.global_len, args.child, args.repeats,
                         args.profile_steps, args.widths)))
    return
  rows = []
  for residual in [r for r in args.residual.split(",") if r]:   # "": the paired timing only
    row = child_runs.run_child(
        __file__, ["--child", residual, "--long_len", str(args.long_len), "--global_len",
                   str(args.global_len), "--repeats", str(args.repeats), "--profile_steps",
                   str(args.profile_steps), "--widths", args.widths], {"residual": residual},
        args.timeout)
    rows.append(row)
    if "error" in row:
      print(f"residual {residual}: {row['error']}")
      continue
    print(f"\nresidual {residual}: L {row['long_len']}, G {row['global_len']}: "
          f"{row['seconds']:.3f} s forward + backward, {row['step_flops'] / 1e9:.0f} GFLOP, "
          f"{row['step_flops'] / row['seconds'] / 1e9:.0f} GFLOP/s = "
          f"{100 * row['share_of_matmul_rate']:.0f}% of the matmul rate "
          f"({row['matmul_flops_per_s'] / 1e9:.0f} GFLOP/s)")
    print(table("op kind", row["kinds"]))
    print(table("part", row["parts"], limit=len(PARTS) + 1))
  pair = None
  if args.paired:
    pair = child_runs.run_child(
        __file__, ["--child", "paired", "--paired", str(args.paired), "--long_len",
                   str(args.long_len), "--global_len", str(args.global_len), "--widths",
                   args.widths], {"paired": args.paired}, args.timeout)
    if "error" in pair:
      print(f"paired: {pair['error']}")
    else:
      low, high = pair["sum_over_none_quartiles"]
      print(f"\npaired, {args.paired} alternate rounds in one process: none "
            f"{pair['none_seconds']:.3f} s, sum {pair['sum_seconds']:.3f} s; sum / none "
            f"{pair['sum_over_none']:.3f} (quartiles {low:.3f}-{high:.3f}, geometric mean "
            f"{pair['sum_over_none_geomean']:.3f})")
  os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
  with open(args.output, "w") as f:
    json.dump({"machine": platform.processor() or platform.machine(),
               "cpu_count": os.cpu_count(), "rows": rows, "paired": pair}, f, indent=1)
  print(f"\nwritten {args.output}")


if __name__ == "__main__":
  main()
