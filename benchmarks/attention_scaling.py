"""Forward+backward time and peak memory of ONE encoder layer as the long input grows.

Compares, side by side in one run (hidden 768, 12 heads, feed-forward 3072, radius 84,
G = L / 16 or a fixed --global_len, batch 1, dropout 0, float32):
  blocked   the ETC-RealFormer TransformerBlock, blocked long-to-long attention
  dense     the same block on its dense O(L^2) reference path
  full      a standard full-attention Transformer layer over the L + G tokens
with residual attention off ("none") and on ("sum", previous-layer scores fed in as a middle
layer would see them). Each measurement runs in its own process so the peak resident memory
(ru_maxrss) belongs to that configuration alone; "activation MB" is the peak minus the
process's resident memory once weights and inputs exist, before the first step.

  python benchmarks/attention_scaling.py                      # the full table (~15 min on 2 cores)
  python benchmarks/attention_scaling.py --lengths 1024,2048  # a quick look
Prints a table and writes JSON (default benchmarks/results/attention_scaling.json).
"""

import argparse
import json
import os
import platform
import resource
import time

import child_runs


HIDDEN, HEADS, FF, RADIUS = 768, 12, 3072, 84
# Layer widths block_step builds: ETC-base's, and the WikiHop demo's tiny model at its batch
# (configs/wikihop/tiny.yaml).
WIDTHS = {
    "base": dict(batch=1, hidden=HIDDEN, heads=HEADS, ff=FF, radius=RADIUS, rel_distance=12,
                 rel_vocab=32),
    "wikihop_demo": dict(batch=8, hidden=64, heads=2, ff=128, radius=8, rel_distance=4,
                         rel_vocab=12),
}


def block_step(impl, length, global_len, residual, widths="base"):
  """One TransformerBlock (dropout 0) of WIDTHS[widths] on random inputs: (step, block), where
  step() returns the gradients of a squared-output loss (forward + backward). With residual
  attention the previous layer's scores are random tensors of the carried shapes."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  from etc_realformer import ops  # pylint: disable=g-import-not-at-top
  from etc_realformer.layers import TransformerBlock  # pylint: disable=g-import-not-at-top

  w = WIDTHS[widths]
  batch, heads = w["batch"], w["heads"]
  rng = np.random.default_rng(0)
  long_x = tf.constant(rng.normal(size=(batch, length, w["hidden"])), tf.float32)
  global_x = tf.constant(rng.normal(size=(batch, global_len, w["hidden"])), tf.float32)
  sentence_ids = tf.tile(tf.minimum(tf.range(length)[None] // 16, global_len - 1), [batch, 1])
  side = ops.make_side_inputs(tf.ones([batch, length], tf.int32),
                              tf.ones([batch, global_len], tf.int32), sentence_ids, w["radius"],
                              w["rel_distance"])
  block = TransformerBlock(w["hidden"], heads, w["radius"], w["ff"],
                           relative_vocab_size=w["rel_vocab"], hidden_dropout_prob=0.0,
                           attention_probs_dropout_prob=0.0, residual_attention=residual,
                           layer_index=1, implementation=impl)
  block.build(None)
  prev = [None, None]
  if residual != "none":  # the streams in parts, as the previous layer hands them on
    b = w["radius"] + 1
    nb = -(-length // b)
    first = ([batch, heads, nb, b, 3 * b] if impl == "blocked" else
             [batch, heads, length, length])
    prev = [(tf.random.normal(first), tf.random.normal(first[:-1] + [global_len])),
            (tf.random.normal([batch, heads, global_len, global_len]),
             tf.random.normal([batch, heads, global_len, length]))]

  def step():
    with tf.GradientTape() as tape:
      out = block(long_x, global_x, side, long_scores=prev[0], global_scores=prev[1],
                  training=True)
      loss = tf.reduce_sum(out["long_output"] ** 2) + tf.reduce_sum(out["global_output"] ** 2)
    return tape.gradient(loss, block.trainable_variables)

  return step, block


def _one(impl, length, residual, repeats, jit, fixed_global_len=0):
  """Measures one configuration in this process; returns a dict."""
  # The package first, for every implementation (the full-attention baseline too): its runtime
  # settings (tf-keras, the pooling CPU allocator) are read when TensorFlow's runtime starts, at
  # the first op below.
  import etc_realformer  # pylint: disable=g-import-not-at-top,unused-import
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tf_keras  # pylint: disable=g-import-not-at-top

  global_len = fixed_global_len or max(1, length // 16)
  rng = np.random.default_rng(0)
  long_x = tf.constant(rng.normal(size=(1, length, HIDDEN)), tf.float32)
  global_x = tf.constant(rng.normal(size=(1, global_len, HIDDEN)), tf.float32)

  if impl == "full":
    tokens = tf.concat([long_x, global_x], axis=1)  # [1, L + G, H]
    mha = tf_keras.layers.MultiHeadAttention(HEADS, HIDDEN // HEADS)
    norm1 = tf_keras.layers.LayerNormalization()
    norm2 = tf_keras.layers.LayerNormalization()
    inner = tf_keras.layers.Dense(FF, activation="gelu")
    outer = tf_keras.layers.Dense(HIDDEN)

    def forward(x):
      x = norm1(x + mha(x, x))
      return norm2(x + outer(inner(x)))

    forward(tokens)
    variables = (mha.trainable_variables + norm1.trainable_variables +
                 norm2.trainable_variables + inner.trainable_variables +
                 outer.trainable_variables)

    def step():
      with tf.GradientTape() as tape:
        loss = tf.reduce_sum(forward(tokens) ** 2)
      return tape.gradient(loss, variables)
  else:
    step = block_step(impl, length, global_len, residual)[0]

  step_fn = tf.function(step, jit_compile=jit)
  # Resident memory with weights and inputs in place, before any step runs.
  baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
  tf.nest.map_structure(lambda t: t.numpy(), step_fn())  # trace / compile / warm up
  times = []
  for _ in range(repeats):
    start = time.perf_counter()
    tf.nest.map_structure(lambda t: t.numpy(), step_fn())
    times.append(time.perf_counter() - start)
  peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
  return {"impl": impl, "length": length, "global_len": global_len, "residual": residual,
          "seconds": float(np.median(times)), "times": times, "peak_rss_mb": peak / 1024,
          "activation_mb": (peak - baseline) / 1024 if peak > baseline else 0.0,
          "warm_rss_mb": baseline / 1024}


def _run_child(impl, length, residual, repeats, jit, timeout, global_len=0):
  args = ["--child", f"{impl},{length},{residual}", "--repeats", str(repeats),
          "--global_len", str(global_len)] + (["--jit"] if jit else [])
  return child_runs.run_child(__file__, args,
                              {"impl": impl, "length": length, "residual": residual}, timeout)


def _table(rows):
  lines = [f"{'impl':8} {'residual':8} {'L':>6} {'G':>5} {'fwd+bwd s':>10} {'peak MB':>9} "
           f"{'act. MB':>9}"]
  for r in rows:
    if "error" in r:
      lines.append(f"{r['impl']:8} {r['residual']:8} {r['length']:>6} {'':>5} {r['error']}")
      continue
    lines.append(f"{r['impl']:8} {r['residual']:8} {r['length']:>6} {r['global_len']:>5} "
                 f"{r['seconds']:>10.3f} {r['peak_rss_mb']:>9.0f} {r['activation_mb']:>9.0f}")
  return "\n".join(lines)


def _summary(rows):
  def seconds(impl, length, residual="none"):
    for r in rows:
      if (r["impl"], r["length"], r["residual"]) == (impl, length, residual) and "error" not in r:
        return r["seconds"]
    return None

  def ratio(a, b):
    return round(a / b, 3) if a and b else None

  summary = {"blocked_time_ratio_2L_over_L": {}, "blocked_speedup_over_full": {},
             "blocked_speedup_over_dense": {}, "residual_overhead": {}}
  lengths = sorted({r["length"] for r in rows})
  for length in lengths:
    summary["blocked_time_ratio_2L_over_L"][str(length)] = ratio(
        seconds("blocked", 2 * length), seconds("blocked", length))
    summary["blocked_speedup_over_full"][str(length)] = ratio(
        seconds("full", length), seconds("blocked", length))
    summary["blocked_speedup_over_dense"][str(length)] = ratio(
        seconds("dense", length), seconds("blocked", length))
    on, off = seconds("blocked", length, "sum"), seconds("blocked", length)
    summary["residual_overhead"][str(length)] = round(on / off - 1, 3) if on and off else None
  return summary


def main():
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--lengths", default="1024,2048,4096,8192,16384")
  parser.add_argument("--max_dense_len", type=int, default=4096,
                      help="longest L for the O(L^2) dense reference (memory)")
  parser.add_argument("--max_full_len", type=int, default=8192,
                      help="longest L for full attention (memory)")
  parser.add_argument("--repeats", type=int, default=3)
  parser.add_argument("--jit", action="store_true", help="compile the step with XLA")
  parser.add_argument("--global_len", type=int, default=0,
                      help="fixed number of global tokens (default 0: G = L / 16, which makes "
                           "the global attention grow as L^2 / 16)")
  parser.add_argument("--timeout", type=int, default=900, help="seconds per configuration")
  parser.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "results",
                                                       "attention_scaling.json"))
  parser.add_argument("--child", help=argparse.SUPPRESS)
  args = parser.parse_args()

  if args.child:
    impl, length, residual = args.child.split(",")
    print(json.dumps(_one(impl, int(length), residual, args.repeats, args.jit,
                          args.global_len)))
    return

  lengths = [int(x) for x in args.lengths.split(",")]
  plan = []
  for length in lengths:
    plan += [("blocked", length, "none"), ("blocked", length, "sum")]
    if length <= args.max_dense_len:
      plan += [("dense", length, "none"), ("dense", length, "sum")]
    if length <= args.max_full_len:
      plan.append(("full", length, "none"))
  rows = []
  for i, (impl, length, residual) in enumerate(plan):
    print(f"[{i + 1}/{len(plan)}] {impl} L={length} residual={residual} ...", flush=True)
    rows.append(_run_child(impl, length, residual, args.repeats, args.jit, args.timeout,
                           args.global_len))
    if "error" not in rows[-1]:
      print(f"    {rows[-1]['seconds']:.3f} s, peak {rows[-1]['peak_rss_mb']:.0f} MB", flush=True)
    else:
      print(f"    {rows[-1]['error']}", flush=True)
  print()
  print(_table(rows))
  summary = _summary(rows)
  print()
  print(json.dumps(summary, indent=2))
  result = {"benchmark": "attention_scaling", "global_len": args.global_len or "L/16",
            "hidden": HIDDEN, "heads": HEADS,
            "intermediate": FF, "radius": RADIUS, "jit": args.jit, "repeats": args.repeats,
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
            "rows": rows, "summary": summary}
  from etc_realformer.io_utils import atomic_write_json  # pylint: disable=g-import-not-at-top
  atomic_write_json(args.output, result, sort_keys=False)
  print(f"\nwrote {args.output}")


if __name__ == "__main__":
  main()
