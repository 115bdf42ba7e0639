"""Replaying dropout under gradient checkpointing: gradient exactness and step-time cost.

Two dropouts, side by side in one process:
  replay    this package's SeededDropout: masks from stateless random ops and a per-step seed,
            so tf.recompute_grad's second forward pass draws the same masks (ops/dropout.py);
  stateful  what the encoder used before: a stateful random mask per call (tf.nn.dropout, as
            tf_keras Dropout), which draws new masks in the recomputed forward pass.

Part 1, gradients: a small EtcModel (4 layers, hidden 64, dropout 0.1, residual attention on and
off), same weights and TF seed, one forward and backward pass for grad_checkpointing_period
0, 1, 2; the table gives the worst relative gradient difference against period 0 (per tensor
max|g - g0| / max|g0|, the denominator floored at 1% of the largest gradient) and whether the
loss is the same.

Part 2, step time: configs/models/base.yaml shapes (hidden 768, 12 heads, radius 84) with
--layers layers (default 2: 12 do not fit the time on a 2-core machine), L = --long_len (4096)
and G = L/16, batch 1, grad_checkpointing_period 1, dropout 0.1; the compiled forward+backward
step of each dropout, timed alternately (--repeats each), median seconds. The ratio is what
replaying costs.

  python benchmarks/dropout_replay.py                     # ~10 min on 2 CPU cores
  python benchmarks/dropout_replay.py --long_len 1024 --repeats 3   # a quick look
Prints two tables and writes JSON (default benchmarks/results/dropout_replay.json).
"""

import argparse
import contextlib
import os
import platform
import statistics
import sys
import time

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, _ROOT)

import etc_realformer  # pylint: disable=g-import-not-at-top,unused-import  (Keras 2 first)
import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

from etc_realformer import EtcConfig, EtcModel  # pylint: disable=g-import-not-at-top
from etc_realformer.ops import dropout as dropout_ops  # pylint: disable=g-import-not-at-top

VARIANTS = ("replay", "stateful")


@contextlib.contextmanager
def dropout_variant(name):
  """Within the block, models traced use the named dropout (the encoder's default: replay)."""
  original = dropout_ops.stateless_dropout
  if name == "stateful":
    dropout_ops.stateless_dropout = lambda x, rate, seed, salt=None: tf.nn.dropout(x, rate)
  try:
    yield
  finally:
    dropout_ops.stateless_dropout = original


def features(vocab_size, long_len, global_len, batch, seed=0):
  """A packed document: sentences of long_len / global_len pieces, one global token each."""
  rng = np.random.default_rng(seed)
  per = long_len // global_len
  return {
      "token_ids": rng.integers(5, vocab_size, (batch, long_len)).astype(np.int32),
      "global_token_ids": np.ones((batch, global_len), np.int32),
      "sentence_ids": np.broadcast_to(np.arange(long_len) // per,
                                      (batch, long_len)).astype(np.int32).copy(),
  }


def loss_fn(model, f):
  out = model(f, training=True)
  return (tf.reduce_sum(tf.cast(out["long_output"], tf.float32) ** 2) +
          tf.reduce_sum(tf.cast(out["global_output"], tf.float32) ** 3))


def loss_and_grads(model, f, seed):
  tf.random.set_seed(seed)
  with tf.GradientTape() as tape:
    loss = loss_fn(model, f)
  grads = tape.gradient(loss, model.trainable_variables)
  return float(loss), [tf.convert_to_tensor(g).numpy() for g in grads]


def worst_relative_difference(grads, reference):
  largest = max(float(np.abs(b).max()) for b in reference)
  return max(float(np.abs(a - b).max()) / max(float(np.abs(b).max()), 1e-2 * largest)
             for a, b in zip(grads, reference))


def gradient_table():
  rows = []
  f = features(60, 64, 8, 2)
  for residual in ("sum", "none"):
    for variant in VARIANTS:
      with dropout_variant(variant):
        models = []
        for period in (0, 1, 2):
          config = EtcConfig(vocab_size=60, hidden_size=64, num_hidden_layers=4,
                             num_attention_heads=2, intermediate_size=128, local_radius=3,
                             relative_pos_max_distance=2, relative_vocab_size=8,
                             hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
                             residual_attention=residual, grad_checkpointing_period=period,
                             initializer_range=0.2)
          model = EtcModel(config)
          model(f)
          if models:
            model.set_weights(models[0].get_weights())
          models.append(model)
        loss0, grads0 = loss_and_grads(models[0], f, seed=5)
        for period, model in zip((1, 2), models[1:]):
          loss, grads = loss_and_grads(model, f, seed=5)
          rows.append({"residual_attention": residual, "dropout": variant, "period": period,
                       "same_loss": bool(abs(loss - loss0) <= 1e-6 * abs(loss0)),
                       "worst_relative_gradient_difference":
                           worst_relative_difference(grads, grads0)})
  return rows


def step_times(layers, long_len, repeats):
  import yaml  # pylint: disable=g-import-not-at-top
  with open(os.path.join(_ROOT, "configs", "models", "base.yaml")) as fh:
    values = yaml.safe_load(fh)
  values.update(num_hidden_layers=layers, grad_checkpointing_period=1, hidden_dropout_prob=0.1,
                attention_probs_dropout_prob=0.1)
  config = EtcConfig.from_dict(values)
  f = {k: tf.constant(v) for k, v in
       features(config.vocab_size, long_len, long_len // 16, 1).items()}
  steps = {}
  for variant in VARIANTS:
    with dropout_variant(variant):
      model = EtcModel(config)
      model(f)

      @tf.function
      def step(x, model=model):
        with tf.GradientTape() as tape:
          loss = loss_fn(model, x)
        grads = tape.gradient(loss, model.trainable_variables)
        return loss, tf.add_n([tf.reduce_sum(tf.convert_to_tensor(g)) for g in grads])

      step(f)  # trace (under this variant) and warm up
      steps[variant] = step
  times = {v: [] for v in VARIANTS}
  for i in range(repeats):
    for variant in VARIANTS:
      start = time.perf_counter()
      steps[variant](f)[1].numpy()
      times[variant].append(time.perf_counter() - start)
      print(f"  [{i + 1}/{repeats}] {variant}: {times[variant][-1]:.2f} s", flush=True)
  medians = {v: statistics.median(t) for v, t in times.items()}
  return {"layers": layers, "long_len": long_len, "global_len": long_len // 16,
          "hidden_size": config.hidden_size, "local_radius": config.local_radius,
          "grad_checkpointing_period": 1, "repeats": repeats, "seconds": times,
          "median_seconds": medians, "replay_over_stateful": medians["replay"] /
          medians["stateful"]}


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--layers", type=int, default=2)
  parser.add_argument("--long_len", type=int, default=4096)
  parser.add_argument("--repeats", type=int, default=5)
  parser.add_argument("--output", default=os.path.join(_ROOT, "benchmarks", "results",
                                                       "dropout_replay.json"))
  args = parser.parse_args()

  print("gradients against grad_checkpointing_period 0 (same weights and seed, dropout 0.1)")
  rows = gradient_table()
  print("| residual | dropout | period | same loss | worst relative gradient difference |")
  print("|---|---|---|---|---|")
  for r in rows:
    print(f"| {r['residual_attention']} | {r['dropout']} | {r['period']} | {r['same_loss']} | "
          f"{r['worst_relative_gradient_difference']:.2g} |")

  print(f"\nstep time, {args.layers} base layer(s), L={args.long_len}, checkpointing period 1")
  timing = step_times(args.layers, args.long_len, args.repeats)
  print("| dropout | median s/step |")
  print("|---|---|")
  for variant in VARIANTS:
    print(f"| {variant} | {timing['median_seconds'][variant]:.3f} |")
  print(f"replay / stateful: {timing['replay_over_stateful']:.3f}")

  from etc_realformer.io_utils import atomic_write_json  # pylint: disable=g-import-not-at-top
  atomic_write_json(args.output, {
      "machine": {"processor": platform.processor() or platform.machine(),
                  "cpus": os.cpu_count(), "tensorflow": tf.__version__},
      "gradients": rows, "step_time": timing}, sort_keys=False)
  print(f"\nwrote {os.path.relpath(args.output, _ROOT)}")


if __name__ == "__main__":
  main()
