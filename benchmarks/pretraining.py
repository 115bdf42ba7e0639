"""Pretraining speed and quality: Post-LN vs RealFormer (sum, mean) vs Pre-LN, same data.

Every configuration pretrains the same small ETC-RealFormer (4 layers, hidden 256, 4 heads,
feed-forward 1024, radius 84, dropout 0, the embedded 1085-piece vocabulary) with MLM + CPC on
the same generated corpus, with the same seed, batches and optimizer (LAMB, linear warmup over
10% of the steps, then linear decay), at L = 2048 long tokens and G = 256 global tokens (one per
sentence), batch 4:
  post_ln          residual_attention none, Post-LN (the ETC baseline)
  realformer_sum   residual_attention sum,  Post-LN
  realformer_mean  residual_attention mean, Post-LN
  pre_ln           residual_attention none, Pre-LN (use_pre_activation_order)
Reported per configuration: steady-state tokens/s (the first steps, which include tracing, are
left out), MLM loss and accuracy and CPC accuracy averaged over the last steps, MLM accuracy on a
held-out set (documents generated with another seed, never trained on), and peak resident
memory. The RealFormer paper's ordering on held-out MLM is RealFormer > Post-LN > Pre-LN.

The data is generated and converted once (in --work_dir, default a temporary directory) and
shared by all configurations; each configuration trains in its own process so its peak memory
(ru_maxrss) is its own.

  python benchmarks/pretraining.py                    # the full comparison (hours on 2 cores)
  python benchmarks/pretraining.py --steps 12 --long_len 256 --batch_size 2 \\
      --train_documents 100 --output /tmp/pretraining_check.json   # a quick check
Prints a table and writes JSON (default benchmarks/results/pretraining.json).
"""

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time


# name -> (residual_attention, use_pre_activation_order)
CONFIGS = {
    "post_ln": ("none", False),
    "realformer_sum": ("sum", False),
    "realformer_mean": ("mean", False),
    "pre_ln": ("none", True),
}
BASELINE = "post_ln"
CPC_SENTENCE_LEN = 32


def _peak_rss_gb():
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2  # KB on Linux


def restore_for_evaluation(run_dir, run_config):
  """A freshly built pretraining model (heads included) holding the last checkpoint of the
  pretraining run in `run_dir`, compiled for `evaluate` -> (model, checkpoint path)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  from etc_realformer import EtcConfig  # pylint: disable=g-import-not-at-top
  from etc_realformer.models import EtcPretrainingModel  # pylint: disable=g-import-not-at-top

  train = run_config["train"]
  model = EtcPretrainingModel(EtcConfig.from_dict(dict(run_config["model"])),
                              mlm_loss_weight=train.get("mlm_loss_weight", 0.8),
                              cpc_loss_weight=train.get("cpc_loss_weight", 0.2),
                              cpc_group_size=train.get("cpc_group_size", 0), name="pretraining")
  model.build()
  latest = tf.train.latest_checkpoint(os.path.join(run_dir, "checkpoints"))
  if not latest:
    raise FileNotFoundError(f"{run_dir}/checkpoints: no checkpoint")
  tf.train.Checkpoint(model=model).restore(latest).expect_partial() \
      .assert_existing_objects_matched()
  model.compile()
  return model, latest


# --------------------------------------------------------------------------- child process
def _child(spec):
  """Trains one configuration, evaluates it on the held-out data; returns a dict."""
  os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tf_keras  # pylint: disable=g-import-not-at-top

  from etc_realformer.data import tfrecords  # pylint: disable=g-import-not-at-top
  from etc_realformer.training import pretraining_run  # pylint: disable=g-import-not-at-top

  run_config = spec["run_config"]
  train = run_config["train"]
  steps = train["num_train_steps"]
  skip = spec["skip_steps"]
  last = spec["average_last"]

  class StepRecorder(tf_keras.callbacks.Callback):
    """Keeps every step's start time and metrics; prints a progress line now and then."""

    def __init__(self):
      super().__init__()
      self.starts, self.values = [], []
      self._mark = 0  # index of the step start the next progress line times from

    def on_train_batch_begin(self, batch, logs=None):
      self.starts.append(time.perf_counter())

    def on_train_batch_end(self, batch, logs=None):
      self.values.append({k: float(v) for k, v in (logs or {}).items()})
      step = len(self.values)
      if step % spec["progress_every"] == 0 or step == steps:
        v = self.values[-1]
        now = len(self.starts) - 1
        seconds = (self.starts[now] - self.starts[self._mark]) / max(1, now - self._mark)
        self._mark = now
        print(f"    step {step}/{steps}  loss {v.get('loss', 0):.3f}  "
              f"mlm_acc {v.get('mlm_accuracy', 0):.3f}  cpc_acc {v.get('cpc_accuracy', 0):.3f}  "
              f"{seconds:.2f} s/step", flush=True)

  recorder = StepRecorder()
  start = time.perf_counter()
  metrics = pretraining_run.run_pretraining(run_config, spec["run_dir"], verbose=0,
                                            extra_callbacks=[recorder])
  train_seconds = time.perf_counter() - start
  train_peak = _peak_rss_gb()

  # Steady state: from the start of step skip+1 to the start of the last step, so neither the
  # first (tracing) steps nor the final checkpoint save are timed.
  starts = recorder.starts
  timed = len(starts) - 1 - skip
  if timed >= 1:
    seconds_per_step = (starts[-1] - starts[skip]) / timed
  else:  # too few steps: all of them, tracing included
    seconds_per_step = metrics["seconds"] / max(1, len(starts))
    timed = 0
  tokens_per_step = train["batch_size"] * spec["long_len"]
  tail = recorder.values[-last:]

  def mean_of(name):
    return float(np.mean([v[name] for v in tail])) if tail else None

  # Held-out evaluation: the run's final checkpoint in a freshly built model.
  model, _ = restore_for_evaluation(spec["run_dir"], run_config)
  data_config, _ = tfrecords.read_data_config(spec["heldout_data"])
  files = tfrecords.expand_files(os.path.join(spec["heldout_data"], "*.tfrecord"))
  dataset = tfrecords.make_dataset(files, data_config, train["batch_size"], repeat=False)
  if spec["eval_batches"]:
    dataset = dataset.take(spec["eval_batches"])
  eval_batches = sum(1 for _ in dataset)
  if not eval_batches:
    raise ValueError(f"held-out data has fewer than {train['batch_size']} examples")
  start = time.perf_counter()
  heldout = model.evaluate(dataset, verbose=0, return_dict=True)
  eval_seconds = time.perf_counter() - start

  return {
      "config": spec["name"],
      "residual_attention": run_config["model"]["residual_attention"],
      "use_pre_activation_order": run_config["model"]["use_pre_activation_order"],
      "tokens_per_second": tokens_per_step / seconds_per_step,
      "seconds_per_step": seconds_per_step,
      "timed_steps": timed,
      "train_seconds": train_seconds,
      "train_mlm_loss": mean_of("mlm_loss"),
      "train_mlm_accuracy": mean_of("mlm_accuracy"),
      "train_cpc_loss": mean_of("cpc_loss"),
      "train_cpc_accuracy": mean_of("cpc_accuracy"),
      "train_loss": mean_of("loss"),
      "averaged_steps": len(tail),
      "heldout_mlm_loss": float(heldout["mlm_loss"]),
      "heldout_mlm_accuracy": float(heldout["mlm_accuracy"]),
      "heldout_cpc_accuracy": float(heldout["cpc_accuracy"]),
      "heldout_loss": float(heldout["loss"]),
      "heldout_batches": eval_batches,
      "eval_seconds": eval_seconds,
      "peak_rss_gb": train_peak,
      "peak_rss_gb_with_eval": _peak_rss_gb(),
      "log_window": {k: v for k, v in metrics.items() if isinstance(v, (int, float))},
      "curve": {name: [round(v.get(name, float("nan")), 4) for v in recorder.values]
                for name in ("loss", "mlm_loss", "mlm_accuracy", "cpc_accuracy")},
      "tensorflow": tf.__version__,
  }


def _run_child(spec, timeout):
  """Runs one configuration in a fresh process, streaming its progress lines."""
  os.makedirs(spec["run_dir"], exist_ok=True)
  spec_path = os.path.join(spec["run_dir"], "spec.json")
  with open(spec_path, "w", encoding="utf-8") as f:
    json.dump(spec, f)
  stderr_path = os.path.join(spec["run_dir"], "stderr.log")
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TF_USE_LEGACY_KERAS="1")
  cmd = [sys.executable, os.path.abspath(__file__), "--child", spec_path]
  result, timed_out = None, []
  with open(stderr_path, "w", encoding="utf-8") as stderr:
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env)

    def kill():
      timed_out.append(True)
      proc.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
      for line in proc.stdout:
        if line.startswith("{"):
          result = json.loads(line)
        elif line.startswith("    "):
          print(line.rstrip(), flush=True)
      proc.wait()
    finally:
      timer.cancel()
  if result is not None:
    return result
  if timed_out:
    return {"config": spec["name"], "error": f"timeout {timeout}s"}
  with open(stderr_path, encoding="utf-8") as f:
    tail = f.read().strip().splitlines()[-3:]
  return {"config": spec["name"], "error": f"exit {proc.returncode}: {' | '.join(tail)}"}


# --------------------------------------------------------------------------- parent process
def _make_data(work_dir, name, num_documents, seed, data_config):
  """Generates a corpus and converts it to shards once; reused when already there."""
  from etc_realformer.data import pretraining_data  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import synthetic_corpus  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import tokenization  # pylint: disable=g-import-not-at-top

  key = (f"{name}_docs{num_documents}_seed{seed}_L{data_config.long_seq_len}"
         f"_G{data_config.global_seq_len}_P{data_config.max_predictions_per_seq}")
  data_dir = os.path.join(work_dir, "data", key)
  if os.path.exists(os.path.join(data_dir, "data_config.json")):
    print(f"  {name} data: reusing {data_dir}", flush=True)
    with open(os.path.join(data_dir, "data_config.json"), encoding="utf-8") as f:
      return data_dir, json.load(f).get("conversion", {})
  corpus = synthetic_corpus.write_corpus(os.path.join(work_dir, "corpus", f"{key}.txt"),
                                         num_documents=num_documents, seed=seed)
  tokenizer = tokenization.WordPieceTokenizer(pretraining_data.EMBEDDED_VOCAB)
  summary = pretraining_data.convert_corpus([corpus], data_dir, tokenizer, data_config,
                                            num_shards=1, seed=seed, log=lambda message: None)
  print(f"  {name} data: {num_documents} documents (seed {seed}) -> {summary['written']} "
        f"examples in {summary['seconds']:.0f} s", flush=True)
  return data_dir, summary


def _table(rows):
  base = next((r for r in rows if r["config"] == BASELINE and "error" not in r), None)
  lines = [f"{'config':16} {'tokens/s':>9} {'s/step':>7} {'rel.':>6} {'MLM loss':>9} "
           f"{'MLM acc':>8} {'held-out':>9} {'CPC acc':>8} {'peak GB':>8}"]
  for r in rows:
    if "error" in r:
      lines.append(f"{r['config']:16} {r['error']}")
      continue
    rel = f"{r['tokens_per_second'] / base['tokens_per_second']:.2f}" if base else "-"
    lines.append(f"{r['config']:16} {r['tokens_per_second']:>9.0f} {r['seconds_per_step']:>7.2f} "
                 f"{rel:>6} {r['train_mlm_loss']:>9.3f} {r['train_mlm_accuracy']:>8.3f} "
                 f"{r['heldout_mlm_accuracy']:>9.3f} {r['train_cpc_accuracy']:>8.3f} "
                 f"{r['peak_rss_gb']:>8.2f}")
  lines.append("(MLM loss / acc and CPC acc: training, mean of the last steps; held-out: MLM "
               "accuracy on the held-out set; rel.: tokens/s relative to post_ln)")
  return "\n".join(lines)


def _summary(rows):
  ok = {r["config"]: r for r in rows if "error" not in r}
  summary = {"relative_speed": {}, "heldout_mlm_accuracy_ranking": sorted(
      ok, key=lambda name: -ok[name]["heldout_mlm_accuracy"])}
  if BASELINE in ok:
    for name, r in ok.items():
      summary["relative_speed"][name] = round(
          r["tokens_per_second"] / ok[BASELINE]["tokens_per_second"], 3)
  realformer = [ok[n]["heldout_mlm_accuracy"] for n in ("realformer_sum", "realformer_mean")
                if n in ok]
  if realformer and BASELINE in ok and "pre_ln" in ok:
    summary["paper_ordering_realformer_gt_post_ln_gt_pre_ln"] = bool(
        max(realformer) > ok[BASELINE]["heldout_mlm_accuracy"] > ok["pre_ln"][
            "heldout_mlm_accuracy"])
  return summary


def main():
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--configs", default=",".join(CONFIGS),
                      help=f"comma list from {', '.join(CONFIGS)}")
  parser.add_argument("--steps", type=int, default=200, help="training steps per configuration")
  parser.add_argument("--long_len", type=int, default=2048, help="long input length L")
  parser.add_argument("--global_len", type=int, default=0,
                      help="global input length G (one token per sentence); 0 = L / 8")
  parser.add_argument("--max_predictions", type=int, default=0,
                      help="MLM targets per example; 0 = L * 5 / 32 (320 at L = 2048)")
  parser.add_argument("--batch_size", type=int, default=4)
  parser.add_argument("--learning_rate", type=float, default=2e-3, help="peak learning rate")
  parser.add_argument("--warmup_fraction", type=float, default=0.1)
  parser.add_argument("--num_layers", type=int, default=4)
  parser.add_argument("--hidden_size", type=int, default=256)
  parser.add_argument("--num_heads", type=int, default=4)
  parser.add_argument("--intermediate_size", type=int, default=1024)
  parser.add_argument("--local_radius", type=int, default=84)
  parser.add_argument("--train_documents", type=int, default=3000)
  parser.add_argument("--heldout_documents", type=int, default=300)
  parser.add_argument("--train_seed", type=int, default=0, help="corpus and masking seed")
  parser.add_argument("--heldout_seed", type=int, default=1)
  parser.add_argument("--seed", type=int, default=0, help="initialisation and shuffling seed")
  parser.add_argument("--eval_batches", type=int, default=0,
                      help="held-out batches to evaluate; 0 = all")
  parser.add_argument("--skip_steps", type=int, default=10,
                      help="first steps left out of the speed (tracing, warm-up)")
  parser.add_argument("--average_last", type=int, default=20,
                      help="training metrics are averaged over this many final steps")
  parser.add_argument("--timeout", type=int, default=6 * 3600, help="seconds per configuration")
  parser.add_argument("--work_dir", default="",
                      help="data and runs (kept); default a temporary directory, removed")
  parser.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "results",
                                                       "pretraining.json"))
  parser.add_argument("--child", help=argparse.SUPPRESS)
  args = parser.parse_args()

  if args.child:
    with open(args.child, encoding="utf-8") as f:
      print(json.dumps(_child(json.load(f))), flush=True)
    return

  names = [n for n in args.configs.split(",") if n]
  unknown = [n for n in names if n not in CONFIGS]
  if unknown:
    parser.error(f"--configs: unknown {unknown}; known: {list(CONFIGS)}")
  if args.steps < 2:
    parser.error("--steps: must be >= 2")
  global_len = args.global_len or max(1, args.long_len // 8)
  max_predictions = args.max_predictions or max(1, args.long_len * 5 // 32)
  warmup = int(args.warmup_fraction * args.steps)
  # Leave the first steps out of the speed, but keep at least half of a short run timed.
  skip = max(1, min(args.skip_steps, args.steps // 2))
  max_cpc = max(2, global_len // 10)  # about 10% of the sentences of a full row are hidden

  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
  from etc_realformer import EtcConfig  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import pretraining_data  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import pretraining_examples  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import tokenization  # pylint: disable=g-import-not-at-top

  vocab_size = tokenization.WordPieceTokenizer(pretraining_data.EMBEDDED_VOCAB).vocab_size
  model_vocab = -(-vocab_size // 8) * 8  # 1085 pieces -> 1088
  data_config = pretraining_examples.PretrainingDataConfig(
      long_seq_len=args.long_len, global_seq_len=global_len,
      max_predictions_per_seq=max_predictions, max_cpc_per_seq=max_cpc,
      cpc_sentence_len=CPC_SENTENCE_LEN)

  temporary = not args.work_dir
  work_dir = tempfile.mkdtemp(prefix="pretraining-bench-") if temporary else args.work_dir
  os.makedirs(work_dir, exist_ok=True)
  rows = []
  try:
    print("data ...", flush=True)
    train_data, train_summary = _make_data(work_dir, "train", args.train_documents,
                                           args.train_seed, data_config)
    heldout_data, heldout_summary = _make_data(work_dir, "heldout", args.heldout_documents,
                                               args.heldout_seed, data_config)
    train = {"train_data": train_data, "batch_size": args.batch_size,
             "num_train_steps": args.steps, "warmup_steps": warmup,
             "learning_rate": args.learning_rate, "optimizer": "lamb",
             "checkpoint_every": args.steps, "keep_checkpoints": 1,
             "log_every": args.average_last, "seed": args.seed}
    for i, name in enumerate(names):
      residual, pre_ln = CONFIGS[name]
      model = EtcConfig(
          vocab_size=model_vocab, hidden_size=args.hidden_size,
          num_hidden_layers=args.num_layers, num_attention_heads=args.num_heads,
          intermediate_size=args.intermediate_size, local_radius=args.local_radius,
          relative_pos_max_distance=12, relative_vocab_size=32, hidden_dropout_prob=0.0,
          attention_probs_dropout_prob=0.0, residual_attention=residual,
          use_pre_activation_order=pre_ln).to_dict()
      run_dir = os.path.join(work_dir, "runs", name)
      if os.path.isdir(run_dir):
        shutil.rmtree(run_dir)  # never resume an earlier run
      spec = {"name": name, "run_config": {"model": model, "train": train},
              "run_dir": run_dir, "heldout_data": heldout_data, "long_len": args.long_len,
              "skip_steps": skip, "average_last": args.average_last,
              "eval_batches": args.eval_batches,
              "progress_every": max(1, min(args.average_last, args.steps // 10 or 1))}
      print(f"[{i + 1}/{len(names)}] {name}: residual_attention={residual} "
            f"{'Pre-LN' if pre_ln else 'Post-LN'} ...", flush=True)
      start = time.perf_counter()
      rows.append(_run_child(spec, args.timeout))
      took = time.perf_counter() - start
      r = rows[-1]
      if "error" in r:
        print(f"    {r['error']} ({took:.0f} s)", flush=True)
      else:
        print(f"    done in {took:.0f} s: {r['tokens_per_second']:.0f} tokens/s, train MLM acc "
              f"{r['train_mlm_accuracy']:.3f}, held-out MLM acc "
              f"{r['heldout_mlm_accuracy']:.3f}, peak {r['peak_rss_gb']:.2f} GB", flush=True)
  finally:
    if temporary:
      shutil.rmtree(work_dir, ignore_errors=True)

  print()
  print(_table(rows))
  summary = _summary(rows)
  print()
  print(json.dumps(summary, indent=2))
  result = {
      "benchmark": "pretraining",
      "settings": {
          "configs": {n: {"residual_attention": CONFIGS[n][0],
                          "use_pre_activation_order": CONFIGS[n][1]} for n in names},
          "steps": args.steps, "warmup_steps": warmup, "learning_rate": args.learning_rate,
          "optimizer": "lamb", "schedule": "linear warmup, linear decay to 0",
          "batch_size": args.batch_size, "long_len": args.long_len, "global_len": global_len,
          "max_predictions_per_seq": max_predictions, "max_cpc_per_seq": max_cpc,
          "cpc_sentence_len": CPC_SENTENCE_LEN, "num_layers": args.num_layers,
          "hidden_size": args.hidden_size, "num_heads": args.num_heads,
          "intermediate_size": args.intermediate_size, "local_radius": args.local_radius,
          "relative_pos_max_distance": 12, "relative_vocab_size": 32, "dropout": 0.0,
          "vocab_size": model_vocab, "tokenizer_vocab_size": vocab_size, "seed": args.seed,
          "train_documents": args.train_documents, "train_seed": args.train_seed,
          "heldout_documents": args.heldout_documents, "heldout_seed": args.heldout_seed,
          "train_examples": train_summary.get("written"),
          "heldout_examples": heldout_summary.get("written"),
          "eval_batches": args.eval_batches, "speed_skips_first_steps": skip,
          "metrics_averaged_over_last_steps": args.average_last},
      "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                  "python": platform.python_version(),
                  "tensorflow": next((r["tensorflow"] for r in rows if "tensorflow" in r), None)},
      "rows": rows, "summary": summary}
  from etc_realformer.io_utils import atomic_write_json  # pylint: disable=g-import-not-at-top
  atomic_write_json(args.output, result, sort_keys=False)
  print(f"\nwrote {args.output}")


if __name__ == "__main__":
  main()
