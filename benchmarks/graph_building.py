"""How long a fresh process takes to build (trace) and first run an encoder's training step, with
and without autograph's rewriting of the package's code (etc_realformer/autograph.py).

Every sample is a fresh process, because autograph converts a function once per process: the
cost falls on every command a user starts and on each Horovod rank. The two modes alternate,
so the machine's drift falls on both. Per mode:
  trace_seconds        building the tf.function graph of one training step (forward, gradient,
                       Adam update) of EtcModel (configs/models/tiny.yaml, residual sum, batch 2
                       x 512 long + 64 global tokens)
  first_step_seconds   its first run (TensorFlow optimises the graph there)
  step_seconds         the median of the next 5 steps (the graph is the same: no difference
                       expected)
  converted            autograph on: the layers' `call` and the train/test steps as they were
                       before `without_autograph` (the undecorated functions)

  .venv/bin/python benchmarks/graph_building.py          # ~2 min on 2 cores
Prints a table and writes JSON (default benchmarks/results/graph_building.json).
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time

import child_runs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEYS = ("trace_seconds", "first_step_seconds", "step_seconds")


def _restore_autograph():
  """Puts the undecorated methods back, so tf.function converts them as it did before."""
  from etc_realformer import layers  # pylint: disable=g-import-not-at-top
  from etc_realformer.layers import dropout  # pylint: disable=g-import-not-at-top
  from etc_realformer.models import encoder, loss_model  # pylint: disable=g-import-not-at-top
  classes = [layers.EtcEmbeddings, layers.GlobalLocalAttention, layers.FeedForward,
             layers.TransformerBlock, layers.MlmHead, layers.CpcHead, dropout.SeededDropout,
             encoder.EtcModel, loss_model.LossModel]
  restored = 0
  for cls in classes:
    for name in ("call", "train_step", "test_step"):
      method = cls.__dict__.get(name)
      if method is not None and hasattr(method, "__wrapped__"):
        setattr(cls, name, method.__wrapped__)
        restored += 1
  return restored


def child(mode: str) -> dict:
  sys.path.insert(0, ROOT)
  started = time.perf_counter()
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tf_keras  # pylint: disable=g-import-not-at-top
  from etc_realformer import EtcModel  # pylint: disable=g-import-not-at-top
  from etc_realformer.config import EtcConfig  # pylint: disable=g-import-not-at-top
  imported = time.perf_counter() - started
  restored = _restore_autograph() if mode == "on" else 0
  config = EtcConfig.from_file(os.path.join(ROOT, "configs", "models", "tiny.yaml"))
  config = EtcConfig.from_dict(dict(config.to_dict(), residual_attention="sum"))
  rng = np.random.default_rng(0)
  batch, long_len, global_len = 2, 512, 64
  features = {
      "token_ids": tf.constant(rng.integers(5, config.vocab_size, (batch, long_len)), tf.int32),
      "global_token_ids": tf.ones([batch, global_len], tf.int32),
      "sentence_ids": tf.constant(np.minimum(np.arange(long_len)[None] // 16, global_len - 1)
                                  .repeat(batch, 0), tf.int32)}
  model = EtcModel(config)
  model.build()
  optimizer = tf_keras.optimizers.Adam(1e-3)

  def step(inputs):
    with tf.GradientTape() as tape:
      out = model(inputs, training=True)
      loss = tf.reduce_mean(out["long_output"] ** 2) + tf.reduce_mean(out["global_output"] ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

  start = time.perf_counter()
  concrete = tf.function(step).get_concrete_function(features)
  trace = time.perf_counter() - start
  start = time.perf_counter()
  concrete(features).numpy()
  first = time.perf_counter() - start
  steps = []
  for _ in range(5):
    start = time.perf_counter()
    concrete(features).numpy()
    steps.append(time.perf_counter() - start)
  return dict(mode=mode, converted=restored, import_seconds=round(imported, 3),
              trace_seconds=round(trace, 3), first_step_seconds=round(first, 3),
              step_seconds=round(statistics.median(steps), 4),
              graph_nodes=len(concrete.graph.as_graph_def().node))


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--repeats", type=int, default=5, help="processes per mode")
  parser.add_argument("--output", default=os.path.join(ROOT, "benchmarks", "results",
                                                       "graph_building.json"))
  parser.add_argument("--child", choices=("on", "off"), help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.child:
    print(json.dumps(child(args.child)))
    return
  runs = {"on": [], "off": []}
  for repeat in range(args.repeats):
    for mode in ("on", "off"):
      result = child_runs.run_child(__file__, ["--child", mode], {"mode": mode}, timeout=600)
      if "error" in result:
        raise SystemExit(f"autograph {mode}: {result['error']}")
      runs[mode].append(result)
      print(f"  repeat {repeat + 1}/{args.repeats}, autograph {mode}: "
            f"trace {result['trace_seconds']:.2f} s", flush=True)
  medians = {mode: {key: statistics.median(r[key] for r in rows) for key in KEYS}
             for mode, rows in runs.items()}
  print(f"\n| autograph | {' | '.join(KEYS)} | graph nodes |\n|---|---|---|---|---|")
  for mode in ("on", "off"):
    print(f"| {mode} | " + " | ".join(f"{medians[mode][k]:.3f}" for k in KEYS) +
          f" | {runs[mode][0]['graph_nodes']} |")
  ratios = {k: round(medians["off"][k] / medians["on"][k], 3) for k in KEYS}
  print("off / on: " + ", ".join(f"{k} {v}" for k, v in ratios.items()))
  os.makedirs(os.path.dirname(args.output), exist_ok=True)
  with open(args.output, "w") as f:
    json.dump(dict(machine=platform.processor() or platform.machine(), cpus=os.cpu_count(),
                   repeats=args.repeats, medians=medians, off_over_on=ratios, runs=runs), f,
              indent=2)
  print(f"written to {args.output}")


if __name__ == "__main__":
  main()
