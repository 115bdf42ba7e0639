"""TensorFlow's CPU allocator, default against BFC: step time, peak memory and repeatability.

TensorFlow's default CPU allocator takes every tensor from the C library's malloc, which maps
large blocks (above 32 MB always) fresh from the kernel and returns them when freed, so the
next step's score-sized tensors fault their pages in again. Setting TensorFlow's own switch
TF_CPU_ALLOCATOR_USE_BFC=true pools that memory instead. This script measures what that buys
and what it costs, each configuration in its own child process, the two allocators
interleaved (round 1 default, BFC; round 2 default, BFC; ...):

  seconds   median forward + backward of one TransformerBlock (attention_scaling.block_step:
            ETC-base at 4,096 long and 256 global tokens, or the WikiHop demo's tiny layer at
            its batch of 8 x 2,048), next to the float32 matmul rate of the same process
  peak MB   the child's peak resident memory
  hash      the gradients' hash of that seeded step with one intra-op and one inter-op thread
            and op determinism (training/determinism.py): the setting in which this project's
            runs repeat bit for bit (the demos' `train.deterministic`)

  .venv/bin/python benchmarks/cpu_allocator.py            # ~6 min on 2 cores
  .venv/bin/python benchmarks/cpu_allocator.py --widths wikihop_demo --rounds 4
Prints a table and writes JSON (default benchmarks/results/cpu_allocator.json).
"""

import argparse
import collections
import hashlib
import json
import os
import platform
import resource
import statistics
import sys
import time

import child_runs

ALLOCATORS = ("default", "bfc")


def one(widths: str, repeats: int) -> dict:
  """Times and hashes one configuration in this process (the allocator comes from the env)."""
  import tf_keras  # pylint: disable=g-import-not-at-top
  import attention_scaling  # pylint: disable=g-import-not-at-top
  import layer_profile  # pylint: disable=g-import-not-at-top
  from etc_realformer.training import determinism  # pylint: disable=g-import-not-at-top
  determinism.enable()
  tf_keras.utils.set_random_seed(0)
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  long_len = 4096 if widths == "base" else 2048
  step = tf.function(attention_scaling.block_step("blocked", long_len, 256, "sum", widths)[0])
  grads = step()  # trace and warm up
  digest = hashlib.sha1(b"".join(g.numpy().tobytes() for g in grads)).hexdigest()[:12]
  times = []
  for _ in range(repeats):
    start = time.perf_counter()
    tf.nest.map_structure(lambda t: t.numpy(), step())
    times.append(time.perf_counter() - start)
  return {"seconds": statistics.median(times), "times": times,
          "matmul_flops_per_s": layer_profile.matmul_rate(repeats), "hash": digest,
          "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main():
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--widths", default="base", choices=("base", "wikihop_demo"))
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--repeats", type=int, default=5)
  parser.add_argument("--threads", type=int, default=1, help="intra-op threads per child")
  parser.add_argument("--timeout", type=int, default=1200)
  parser.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "results",
                                                       "cpu_allocator.json"))
  parser.add_argument("--child", help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.child:
    print(json.dumps(one(args.child, args.repeats)))
    return

  rows = []
  for round_index in range(args.rounds):
    for allocator in ALLOCATORS:
      os.environ.update(TF_CPU_ALLOCATOR_USE_BFC="true" if allocator == "bfc" else "false",
                        TF_NUM_INTRAOP_THREADS=str(args.threads), TF_NUM_INTEROP_THREADS="1")
      spec = {"allocator": allocator, "round": round_index, "widths": args.widths}
      row = dict(spec, **child_runs.run_child(__file__, ["--child", args.widths, "--repeats",
                                                         str(args.repeats)], spec, args.timeout))
      rows.append(row)
      print(f"round {round_index + 1} {allocator:8} " + (row.get("error") or
            f"{row['seconds']:.3f} s, matmul {row['matmul_flops_per_s'] / 1e9:.1f} GFLOP/s, "
            f"peak {row['peak_rss_mb']:.0f} MB, gradients {row['hash']}"), flush=True)
  summary = {}
  print(f"\n{'allocator':10} {'median s':>9} {'matmul GFLOP/s':>15} {'peak MB':>8}  "
        "distinct gradient hashes (processes)")
  for allocator in ALLOCATORS:
    ok = [r for r in rows if r["allocator"] == allocator and "error" not in r]
    if not ok:
      continue
    hashes = collections.Counter(r["hash"] for r in ok)
    summary[allocator] = {"seconds": statistics.median(r["seconds"] for r in ok),
                          "matmul_flops_per_s": statistics.median(
                              r["matmul_flops_per_s"] for r in ok),
                          "peak_rss_mb": max(r["peak_rss_mb"] for r in ok),
                          "hashes": dict(hashes)}
    s = summary[allocator]
    print(f"{allocator:10} {s['seconds']:9.3f} {s['matmul_flops_per_s'] / 1e9:15.1f} "
          f"{s['peak_rss_mb']:8.0f}  {len(hashes)} ({dict(hashes)})")
  if len(summary) == 2:
    ratio = summary["bfc"]["seconds"] / summary["default"]["seconds"]
    print(f"\nBFC / default step time: {ratio:.3f}")
    summary["bfc_over_default_seconds"] = ratio
  from etc_realformer.io_utils import atomic_write_json  # pylint: disable=g-import-not-at-top
  atomic_write_json(args.output, {
      "benchmark": "cpu_allocator", "widths": args.widths, "threads": args.threads,
      "rounds": args.rounds, "repeats": args.repeats, "summary": summary, "rows": rows,
      "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                  "python": sys.version.split()[0]}}, sort_keys=False)
  print(f"wrote {args.output}")


if __name__ == "__main__":
  main()
