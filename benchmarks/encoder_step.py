"""End-to-end training step and inference of ETC-base, against the machine's matmul rate.

Shapes: configs/models/base.yaml (12 layers, hidden 768, 12 heads, feed-forward 3072, radius 84,
relative vocab 32, RealFormer residual attention), L = 4096 long and G = 256 global tokens
(one per 16 long tokens), batch 1, float32.
  train   one Keras training step of the pretraining model (MLM + CPC, LAMB, dropout 0.1): the
          compiled train function that `fit` calls, fed from a tf.data iterator as `fit` feeds
          it; 600 masked pieces and 8 CPC sentences of 32 pieces.
  infer   the encoder's forward pass (training=False) in a tf.function.
  matmul  the measured matrix-multiply rate of this machine: float32 [4096, 768] x [768, 3072]
          (the feed-forward shape) and [2048, 2048] x [2048, 2048]; the better is "peak".
Each configuration runs in its own process, so its peak resident memory (ru_maxrss) is its own;
"activation MB" is that peak minus the resident memory once the weights and the batch exist.
FLOPs are counted analytically (etc_realformer.flops: projections, blocked attention with its
wasted slots, relative lookups, feed-forward, MLM head, the CPC sentences' encoder pass); the
achieved FLOP/s is that count over the measured time, and "share of peak" divides it by the
matmul rate measured in the same run.

  python benchmarks/encoder_step.py                 # train + infer, graph and XLA (~10 min)
  python benchmarks/encoder_step.py --modes infer --long_len 2048 --no_jit   # a quick look
Prints a table and writes JSON (default benchmarks/results/encoder_step.json).
"""

import argparse
import json
import os
import platform
import resource
import time

import child_runs

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NUM_PREDICTIONS, NUM_CPC, CPC_LEN = 600, 8, 32


def _base_config(overrides):
  import yaml  # pylint: disable=g-import-not-at-top
  from etc_realformer.config import EtcConfig  # pylint: disable=g-import-not-at-top
  with open(os.path.join(_ROOT, "configs", "models", "base.yaml")) as f:
    values = yaml.safe_load(f)
  values.update(overrides)
  return EtcConfig.from_dict(values)


def _matmul_rate(repeats):
  """Best float32 matmul rate (FLOP/s) over two shapes, median of `repeats` timings each."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  rates = {}
  for m, k, n in ((4096, 768, 3072), (2048, 2048, 2048)):
    a = tf.random.normal([m, k])
    b = tf.random.normal([k, n])
    fn = tf.function(lambda x, y: tf.matmul(x, y))
    fn(a, b).numpy()
    times = []
    for _ in range(max(repeats, 5)):
      start = time.perf_counter()
      fn(a, b).numpy()
      times.append(time.perf_counter() - start)
    rates[f"{m}x{k}x{n}"] = 2.0 * m * k * n / float(np.median(times))
  return rates


def _features(config, long_len, global_len, batch, rng):
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  positions = np.sort(rng.choice(long_len, size=(batch, NUM_PREDICTIONS), replace=True), axis=1)
  return {
      "token_ids": tf.constant(rng.integers(5, config.vocab_size, (batch, long_len)), tf.int32),
      "global_token_ids": tf.ones([batch, global_len], tf.int32),
      "sentence_ids": tf.constant(
          np.minimum(np.arange(long_len)[None] // 16, global_len - 1).repeat(batch, 0),
          tf.int32),
      "masked_lm_positions": tf.constant(positions, tf.int32),
      "masked_lm_ids": tf.constant(rng.integers(5, config.vocab_size,
                                                (batch, NUM_PREDICTIONS)), tf.int32),
      "masked_lm_weights": tf.ones([batch, NUM_PREDICTIONS], tf.float32),
      "cpc_global_positions": tf.constant(
          np.tile(np.arange(NUM_CPC) * (global_len // NUM_CPC), (batch, 1)), tf.int32),
      "cpc_sentence_token_ids": tf.constant(
          rng.integers(5, config.vocab_size, (batch, NUM_CPC, CPC_LEN)), tf.int32),
      "cpc_weights": tf.ones([batch, NUM_CPC], tf.float32),
  }


def _flop_count(config, mode, long_len, global_len, batch):
  from etc_realformer import flops  # pylint: disable=g-import-not-at-top
  main = flops.encoder_flops(config, long_len, global_len, batch)
  if mode == "infer":
    return main["forward"], main
  cpc = flops.encoder_flops(config, NUM_CPC * CPC_LEN, NUM_CPC, batch)  # the packed CPC row
  head = flops.mlm_head_flops(config, NUM_PREDICTIONS, batch)
  return 3 * (main["forward"] + cpc["forward"] + head), main


def _one(mode, long_len, global_len, batch, jit, repeats):
  """Measures one configuration in this process; returns a dict."""
  # The package first, in the matmul child too: its runtime settings (tf-keras, the pooling CPU
  # allocator) then hold for the products the model's rate is compared with. Without it the
  # matmul child ran on TensorFlow's default allocator and measured 15-16% less (137-139
  # against 164 GFLOP/s), which overstated the model's share.
  import etc_realformer  # pylint: disable=g-import-not-at-top,unused-import
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  if mode == "matmul":
    rates = _matmul_rate(repeats)
    return {"mode": "matmul", "rates": rates, "peak_flops": max(rates.values())}

  from etc_realformer import EtcModel  # pylint: disable=g-import-not-at-top
  from etc_realformer.models.pretraining import EtcPretrainingModel  # pylint: disable=g-import-not-at-top
  from etc_realformer.training.optimizers import create_optimizer  # pylint: disable=g-import-not-at-top

  rng = np.random.default_rng(0)
  if mode == "train":
    config = _base_config({})
    features = _features(config, long_len, global_len, batch, rng)
    model = EtcPretrainingModel(config, name="pretraining")
    model.build()
    model.compile(optimizer=create_optimizer("lamb", 1e-4), jit_compile=jit)
    # The compiled train function `fit` calls once per step, fed like `fit` feeds it.
    batches = iter(tf.data.Dataset.from_tensors(features).repeat())
    train_function = model.make_train_function()

    def run():
      return {k: float(v) for k, v in train_function(batches).items()}
  else:
    config = _base_config({"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0})
    features = _features(config, long_len, global_len, batch, rng)
    features = {k: features[k] for k in ("token_ids", "global_token_ids", "sentence_ids")}
    model = EtcModel(config)
    model.build()
    forward = tf.function(lambda f: model(f, training=False)["long_output"], jit_compile=jit)

    def run():
      return forward(features).numpy()

  baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
  start = time.perf_counter()
  run()  # trace / compile / warm up
  first = time.perf_counter() - start
  times = []
  for _ in range(repeats):
    start = time.perf_counter()
    run()
    times.append(time.perf_counter() - start)
  peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
  seconds = float(np.median(times))
  count, parts = _flop_count(config, mode, long_len, global_len, batch)
  return {"mode": mode, "jit": jit, "long_len": long_len, "global_len": global_len,
          "batch": batch, "seconds": seconds, "times": times, "first_call_seconds": first,
          "tokens_per_second": batch * long_len / seconds, "flops": count,
          "flops_per_second": count / seconds, "blocked_waste": parts["blocked_waste"],
          "peak_rss_mb": peak / 1024, "warm_rss_mb": baseline / 1024,
          "activation_mb": max(peak - baseline, 0) / 1024}


def _run_child(spec, repeats, timeout):
  return child_runs.run_child(__file__, ["--child", json.dumps(spec), "--repeats", str(repeats)],
                              spec, timeout)


def _table(rows, peak):
  lines = [f"{'mode':6} {'jit':4} {'L':>6} {'G':>5} {'B':>2} {'step s':>8} {'tokens/s':>9} "
           f"{'GFLOP':>8} {'GFLOP/s':>8} {'of peak':>8} {'peak MB':>8} {'act. MB':>8}"]
  for r in rows:
    if r["mode"] == "matmul":
      continue
    if "error" in r:
      lines.append(f"{r['mode']:6} {str(r['jit']):4} {r['long_len']:>6} {r['error']}")
      continue
    share = f"{r['flops_per_second'] / peak:8.1%}" if peak else f"{'-':>8}"
    lines.append(f"{r['mode']:6} {str(r['jit']):4} {r['long_len']:>6} {r['global_len']:>5} "
                 f"{r['batch']:>2} {r['seconds']:>8.3f} {r['tokens_per_second']:>9.0f} "
                 f"{r['flops'] / 1e9:>8.0f} {r['flops_per_second'] / 1e9:>8.1f} {share} "
                 f"{r['peak_rss_mb']:>8.0f} {r['activation_mb']:>8.0f}")
  return "\n".join(lines)


def main():
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--modes", default="train,infer")
  parser.add_argument("--long_len", type=int, default=4096)
  parser.add_argument("--global_len", type=int, default=256)
  parser.add_argument("--batch_size", type=int, default=1)
  parser.add_argument("--repeats", type=int, default=3)
  parser.add_argument("--no_jit", action="store_true", help="skip the XLA runs")
  parser.add_argument("--timeout", type=int, default=1800, help="seconds per configuration")
  parser.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "results",
                                                       "encoder_step.json"))
  parser.add_argument("--child", help=argparse.SUPPRESS)
  args = parser.parse_args()

  if args.child:
    spec = json.loads(args.child)
    print(json.dumps(_one(spec["mode"], spec.get("long_len", 0), spec.get("global_len", 0),
                          spec.get("batch", 1), spec.get("jit", False), args.repeats)))
    return

  plan = [{"mode": "matmul"}]
  for mode in args.modes.split(","):
    for jit in ([False] if args.no_jit else [False, True]):
      plan.append({"mode": mode, "jit": jit, "long_len": args.long_len,
                   "global_len": args.global_len, "batch": args.batch_size})
  plan.append({"mode": "matmul"})  # again at the end: the machine may have changed pace
  rows = []
  for i, spec in enumerate(plan):
    print(f"[{i + 1}/{len(plan)}] {spec} ...", flush=True)
    rows.append(_run_child(spec, args.repeats, args.timeout))
    row = rows[-1]
    if "error" in row:
      print(f"    {row['error']}", flush=True)
    elif row["mode"] == "matmul":
      print("    " + ", ".join(f"{k}: {v / 1e9:.1f} GFLOP/s" for k, v in row["rates"].items()),
            flush=True)
    else:
      print(f"    {row['seconds']:.3f} s/step, {row['tokens_per_second']:.0f} tokens/s, "
            f"peak {row['peak_rss_mb']:.0f} MB", flush=True)
  peaks = [r["peak_flops"] for r in rows if r["mode"] == "matmul" and "error" not in r]
  peak = max(peaks) if peaks else None
  for r in rows:
    if r["mode"] != "matmul" and "error" not in r and peak:
      r["share_of_peak"] = r["flops_per_second"] / peak
  print()
  if peak:
    print(f"measured matmul peak: {peak / 1e9:.1f} GFLOP/s (float32)")
  print(_table(rows, peak))
  result = {"benchmark": "encoder_step", "config": "configs/models/base.yaml",
            "long_len": args.long_len, "global_len": args.global_len,
            "batch_size": args.batch_size, "repeats": args.repeats, "matmul_peak_flops": peak,
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform()}, "rows": rows}
  from etc_realformer.io_utils import atomic_write_json  # pylint: disable=g-import-not-at-top
  atomic_write_json(args.output, result, sort_keys=False)
  print(f"\nwrote {args.output}")


if __name__ == "__main__":
  main()
