"""What `train.deterministic` costs, and what it buys: step time and repeatability, side by side.

One training step of the benchmark-style demos' encoder (configs/hotpotqa/tiny.yaml's
model: 2 layers, 64 wide; batch 8 x 2,048 long and 128 global tokens; the gradient of a sum of
squares of both outputs, applied by Adam) is timed in child processes, the two modes
interleaved:
  default        TensorFlow's default threading
  deterministic  training/determinism.py: op determinism and one inter-op thread
Each child also repeats the gradient of one fixed batch and counts the repeats whose gradients
differ from the first in any bit.

  .venv/bin/python benchmarks/determinism.py                 # 3 rounds (~6 min on 2 cores)
  .venv/bin/python benchmarks/determinism.py --rounds 1 --steps 5 --repeats 5   # a quick look
Prints a table and writes JSON (default benchmarks/results/determinism.json). Run it once on
an idle machine and once with another job beside it (`--load`: a busy process on one core):
the repeatability differs under load, the ratio of the times is what to read.
"""

import argparse
import json
import multiprocessing
import os
import platform
import statistics
import sys
import time

import child_runs

MODES = ("default", "deterministic")


def _one(mode, steps, repeats):
  """Measures one mode in this process; prints a JSON line."""
  os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tf_keras  # pylint: disable=g-import-not-at-top

  from etc_realformer import EtcConfig, EtcModel  # pylint: disable=g-import-not-at-top
  from etc_realformer.training import determinism  # pylint: disable=g-import-not-at-top
  from etc_realformer.training import run_config  # pylint: disable=g-import-not-at-top

  if mode == "deterministic":
    determinism.enable()
  tf_keras.utils.set_random_seed(0)
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  config = run_config.load_run_config(os.path.join(root, "configs", "hotpotqa", "tiny.yaml"),
                                      ("features", "train"))["model"]
  model = EtcModel(EtcConfig.from_dict(config))
  rng = np.random.default_rng(0)
  batch, long_len, global_len = 8, 2048, 128
  features = {
      "token_ids": rng.integers(5, config["vocab_size"], (batch, long_len)).astype(np.int32),
      "global_token_ids": np.ones((batch, global_len), np.int32),
      "sentence_ids": np.sort(rng.integers(0, global_len, (batch, long_len)), 1).astype(np.int32),
  }
  model(features)
  optimizer = tf_keras.optimizers.Adam(1e-4)

  @tf.function
  def gradients():
    with tf.GradientTape() as tape:
      out = model(features, training=True)
      loss = (tf.reduce_sum(tf.square(out["long_output"])) +
              tf.reduce_sum(tf.square(out["global_output"])))
    return tape.gradient(loss, model.trainable_variables)

  @tf.function
  def step():
    optimizer.apply_gradients(zip(gradients(), model.trainable_variables))

  def flat(grads):
    return np.concatenate([np.asarray(tf.convert_to_tensor(g)).ravel() for g in grads])

  first = flat(gradients())
  differing = sum(not np.array_equal(flat(gradients()), first) for _ in range(repeats))
  step()  # trace
  times = []
  for _ in range(steps):
    start = time.perf_counter()
    step()
    times.append(time.perf_counter() - start)
  print(json.dumps({"mode": mode, "step_seconds_median": statistics.median(times),
                    "step_seconds": times, "gradient_repeats": repeats,
                    "repeats_differing": int(differing)}))


def _busy(stop):
  while not stop.is_set():
    sum(i * i for i in range(10000))


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--steps", type=int, default=10)
  parser.add_argument("--repeats", type=int, default=20)
  parser.add_argument("--load", action="store_true", help="a busy process on one core beside")
  parser.add_argument("--output", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                       "results", "determinism.json"))
  parser.add_argument("--child", choices=MODES)
  args = parser.parse_args()
  if args.child:
    _one(args.child, args.steps, args.repeats)
    return
  stop = multiprocessing.Event()
  busy = multiprocessing.Process(target=_busy, args=(stop,)) if args.load else None
  if busy:
    busy.start()
  runs = []
  try:
    for round_index in range(args.rounds):
      for mode in MODES:  # interleaved
        result = child_runs.run_child(__file__, ["--child", mode, "--steps", str(args.steps),
                                                 "--repeats", str(args.repeats)],
                                      {"mode": mode}, timeout=1800)
        result["round"] = round_index
        runs.append(result)
        print(json.dumps({k: v for k, v in result.items() if k != "step_seconds"}), flush=True)
  finally:
    if busy:
      stop.set()
      busy.join()
  summary = {}
  for mode in MODES:
    ok = [r for r in runs if r["mode"] == mode and "error" not in r]
    if ok:
      summary[mode] = {
          "step_seconds_median": statistics.median(r["step_seconds_median"] for r in ok),
          "repeats_differing": sum(r["repeats_differing"] for r in ok),
          "gradient_repeats": sum(r["gradient_repeats"] for r in ok)}
  ratio = (summary["deterministic"]["step_seconds_median"] /
           summary["default"]["step_seconds_median"]) if len(summary) == 2 else None
  print(f"\n{'mode':<15}{'step s (median)':>17}{'gradients differing':>22}")
  for mode, row in summary.items():
    print(f"{mode:<15}{row['step_seconds_median']:>17.3f}"
          f"{row['repeats_differing']:>12} of {row['gradient_repeats']:<6}")
  if ratio:
    print(f"deterministic / default step time: {ratio:.2f}")
  os.makedirs(os.path.dirname(args.output), exist_ok=True)
  with open(args.output, "w", encoding="utf-8") as f:
    json.dump({"summary": summary, "ratio_deterministic_to_default": ratio, "runs": runs,
               "load": args.load, "rounds": args.rounds, "machine": platform.machine(),
               "cpus": os.cpu_count(), "python": sys.version.split()[0]}, f, indent=2)


if __name__ == "__main__":
  main()
