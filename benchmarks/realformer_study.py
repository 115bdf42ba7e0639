r"""RealFormer side by side: plain ETC (residual_attention none) vs RealFormer (sum), over seeds.

One command builds everything and resumes where it stopped (every finished piece is skipped on a
rerun):

  python benchmarks/realformer_study.py --work_dir runs/realformer_study \
      [--layers 4] [--steps 1000] [--batch_size 16] [--seeds 0,1,2] [--high_lr 0.01] \
      [--ft_steps 300] [--ft_train 800] [--ft_dev 100] [--ft_long_len 1024] [--jobs 2]
  python benchmarks/realformer_study.py --work_dir runs/realformer_study --report_only
  python benchmarks/realformer_study.py --work_dir runs/realformer_smoke --smoke  # a quick check

Stages:
  1. Text: the Wikipedia excerpt pretrained/build_tiny_english.sh uses (the gensim wheel's test
     dump, fetched with `pip download`; the script's constants are read from the shell script),
     or --dump. prepare_wikipedia -> one text file, split by document into a training part and
     a held-out part (every 10th document). A 2000-piece vocabulary learned on the training part.
     Pretraining data of both parts at the build script's settings (512 long / 48 global
     tokens, 80 predictions, 4 CPC sentences of 32 pieces); dupe_factor 5 (training), 1 (held out).
  2. Pretraining with configs/pretraining/tiny_english.yaml, one subprocess per run
     (`python -m etc_realformer.pretrain`, which resumes from its checkpoints): residual_attention
     none and sum, each with every seed of --seeds at the config's learning rate, plus the first
     seed at --high_lr. Only the sizes (--layers, --steps, --batch_size, --warmup) and the
     logging interval change; everything else is as the config ships.
  3. Held-out MLM and CPC accuracy of the run's last checkpoint (the pretraining model's own
     metrics through model.evaluate, as benchmarks/pretraining.py does), on all held-out
     examples in file order; the logged training losses, and the divergence rule: a run
     DIVERGED when a logged loss is not finite, its last logged MLM loss is not below its
     first, or it ends more than 0.25 nats above its lowest (learned, then lost it); and a
     run FAILED TO LEARN when its held-out MLM loss is not below the unigram entropy of the
     held-out targets (what predicting each piece by its frequency reaches). Both count as
     diverged in the report.
  4. Attention statistics (python -m etc_realformer.analyze on 16 held-out examples): mean
     entropy of long and global queries per layer, adjacent-layer JS per layer pair.
  5. Fine-tuning from each run's final/ encoder on the HotpotQA and WikiHop demos (synthetic
     benchmark-style data with held-out template families, the same data and fine-tuning seed
     for every run), one subprocess per (run, task): the model and baselines on dev,
     dev_unseen, dev_unseen_templates and test_unseen_templates.
  6. Report: <work_dir>/results.json (per run), --output (the aggregate), a markdown table on
     stdout and figures in --figures_dir.

Every subprocess runs with TF_NUM_INTRAOP_THREADS=1 TF_NUM_INTEROP_THREADS=1; --jobs of them
run at once (each run's stages 2-5 are one job). The end prints wall and CPU seconds per stage
(per step where it has steps; results.json "timings").

Cost, measured on 2 cores with the defaults (docs/realformer.md has the results): 69 minutes
wall, 2.1 CPU hours. The text 76 s CPU (learn_vocab 51 s); 8 pretraining runs of 1,000 steps
(4 layers, batch 16 x 512 tokens) 4,023 s, 0.50 s a step; held-out evaluation and analysis
146 s; 16 fine-tunings of 300 steps 3,308 s (HotpotQA 0.64 s, WikiHop 0.73 s a step, data,
prediction and scoring included). --smoke takes about 4 CPU minutes.
"""

import argparse
import concurrent.futures
import glob
import json
import math
import os
import re
import subprocess
import sys
import threading
import time
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD_SCRIPT = os.path.join(REPO, "pretrained", "build_tiny_english.sh")
PRETRAIN_CONFIG = os.path.join(REPO, "configs", "pretraining", "tiny_english.yaml")
VARIANTS = ("none", "sum")          # model.residual_attention
TASKS = ("hotpotqa", "wikihop")
SPLITS = ("dev", "dev_unseen", "dev_unseen_templates", "test_unseen_templates")
# The tasks' headline_keys (tasks/<task>/task.py); the child checks them against the task.
FT_METRICS = {"hotpotqa": ("f1", "sp_f1", "joint_f1"), "wikihop": ("accuracy",)}
FT_GLOBAL_LEN = {"hotpotqa": 96, "wikihop": 160}  # question / candidate pieces + sentences
# The build script's data settings (pretrained/build_tiny_english.sh, step 3/4).
DATA_FLAGS = ("--long_seq_len=512", "--global_seq_len=48", "--max_predictions_per_seq=80",
              "--max_cpc_per_seq=4", "--cpc_sentence_len=32")
VOCAB_SIZE = 2000
TRAIN_DUPE, HELDOUT_DUPE = 5, 1
HELDOUT_EVERY = 10                  # every 10th document is held out
ANALYSIS_EXAMPLES = 16
LOSS_KEYS = ("loss", "mlm_loss", "cpc_loss")
COLLAPSE_NATS = 0.25                # divergence(): how far above its best a run may end
# Per layer (entropy) and per adjacent layer pair (JS), from analysis.json.
ATTENTION_KEYS = ("entropy_long", "entropy_global", "js_long", "js_global")
_LOG_LINE = re.compile(r"step (\d+)/(\d+) (.*)$")
_PRINT_LOCK = threading.Lock()


def _say(message):
  with _PRINT_LOCK:
    print(message, flush=True)


def _write_json(path, payload):
  """Writes JSON atomically (temporary file, then rename)."""
  os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
  tmp = f"{path}.tmp{os.getpid()}.{threading.get_ident()}"
  with open(tmp, "w", encoding="utf-8") as f:
    json.dump(payload, f, indent=2, sort_keys=False, allow_nan=True)
  os.replace(tmp, path)
  return path


def _read_json(path, default=None):
  if not os.path.exists(path):
    return default
  with open(path, encoding="utf-8") as f:
    return json.load(f)


# --------------------------------------------------------------------------- pure parts
def build_script_constants(path=BUILD_SCRIPT):
  """GENSIM_VERSION and EXCERPT as pretrained/build_tiny_english.sh sets them."""
  with open(path, encoding="utf-8") as f:
    text = f.read()
  out = {}
  for name in ("GENSIM_VERSION", "EXCERPT"):
    match = re.search(rf"^{name}=(\S+)\s*$", text, re.MULTILINE)
    if not match:
      raise ValueError(f"{path}: no {name}= line")
    out[name] = match.group(1).strip("\"'")
  return out


def split_documents(text):
  """prepare_wikipedia's output (one sentence a line, a blank line between articles) ->
  the documents, each its sentence lines joined by newlines."""
  blocks = re.split(r"\n[ \t]*\n", text.strip("\n"))
  return [block.strip("\n") for block in blocks if block.strip()]


def heldout_split(documents, every=HELDOUT_EVERY):
  """-> (training, held_out): documents every-1, 2*every-1, ... (the 10th, 20th, ...) held out."""
  training = [d for i, d in enumerate(documents) if (i + 1) % every]
  held_out = [d for i, d in enumerate(documents) if not (i + 1) % every]
  return training, held_out


def join_documents(documents):
  """The inverse of split_documents: the file prepare_wikipedia would write."""
  return "\n\n".join(documents) + "\n"


def parse_training_log(text):
  """The pretraining run's `step N/T key=value ...` log lines -> [{step, key: value}] by step.

  A resumed run logs the steps after its last checkpoint again: the latest line of a step wins.
  """
  by_step = {}
  for line in text.splitlines():
    match = _LOG_LINE.search(line)
    if not match:
      continue
    values = {}
    for item in match.group(3).split():
      key, sep, value = item.partition("=")
      if not sep:
        continue
      try:
        values[key] = float(value)
      except ValueError:
        continue
    if "loss" in values or "mlm_loss" in values:
      by_step[int(match.group(1))] = dict(values, step=int(match.group(1)))
  return [by_step[s] for s in sorted(by_step)]


def divergence(log):
  """The divergence rule on logged windows [{loss, mlm_loss, ...}] -> (diverged, reason).

  Diverged: a logged loss (loss, mlm_loss, cpc_loss) is not finite, the last logged MLM loss
  is not below the first logged one (so one logged point, or none, counts as diverged), or it
  ends more than COLLAPSE_NATS above the lowest one logged (the run learned, then lost it: at
  too high a rate the MLM loss climbs back to the plateau of predicting the most frequent
  pieces, which is still below the first window's loss).
  """
  if not log:
    return True, "no logged loss"
  for entry in log:
    for key in LOSS_KEYS:
      if key in entry and not math.isfinite(entry[key]):
        return True, f"{key} {entry[key]} at step {entry.get('step')}"
  mlm = [e["mlm_loss"] for e in log if "mlm_loss" in e]
  if not mlm:
    return True, "no logged mlm_loss"
  if not mlm[-1] < mlm[0]:
    return True, f"last mlm_loss {mlm[-1]:.4g} not below the first {mlm[0]:.4g}"
  if mlm[-1] > min(mlm) + COLLAPSE_NATS:
    return True, (f"last mlm_loss {mlm[-1]:.4g} more than {COLLAPSE_NATS} above the lowest "
                  f"{min(mlm):.4g}")
  return False, ""


def context_learning(heldout):
  """The second half of the rule, on a run's held-out evaluation -> (failed, reason): a run
  whose held-out MLM loss is not below the targets' own unigram entropy learned nothing from the
  context (a model that predicts every piece by its frequency gets that far)."""
  loss, entropy = heldout.get("mlm_loss"), heldout.get("target_unigram_entropy")
  if loss is None or entropy is None or loss < entropy:
    return False, ""
  return True, (f"held-out mlm_loss {loss:.4g} not below the targets' unigram entropy "
                f"{entropy:.4g}: nothing learned from the context")


def mean_std(values):
  """-> {mean, std (sample, ddof 1; 0 for one value), min, max, n} of the finite values, or
  None when there are none."""
  finite = [float(v) for v in values if v is not None and math.isfinite(v)]
  if not finite:
    return None
  n = len(finite)
  mean = sum(finite) / n
  std = math.sqrt(sum((v - mean) ** 2 for v in finite) / (n - 1)) if n > 1 else 0.0
  return {"mean": mean, "std": std, "min": min(finite), "max": max(finite), "n": n}


def compare(stats_a, stats_b):
  """b - a of two mean_std results, next to the larger of the two spreads (std over seeds).

  -> {difference, spread, within_seed_spread}; None when either side is missing.
  """
  if not stats_a or not stats_b:
    return None
  difference = stats_b["mean"] - stats_a["mean"]
  spread = max(stats_a["std"], stats_b["std"])
  return {"difference": difference, "spread": spread,
          "within_seed_spread": abs(difference) <= spread}


def run_name(variant, learning_rate, seed):
  return f"{variant}_lr{learning_rate:g}_seed{seed}"


def flat_metrics(result):
  """One run's result -> {metric name: number} (what the aggregate averages over seeds)."""
  out = {}
  heldout = result.get("heldout") or {}
  out["heldout_mlm_accuracy"] = heldout.get("mlm_accuracy")
  out["heldout_cpc_accuracy"] = heldout.get("cpc_accuracy")
  out["last_train_loss"] = result.get("last_train_loss")
  out["last_train_mlm_loss"] = result.get("last_train_mlm_loss")
  attention = result.get("attention") or {}
  for key in ATTENTION_KEYS:
    values = [v for v in attention.get(key) or [] if v is not None]
    out[f"{key}_mean"] = sum(values) / len(values) if values else None
  for task, finetune in (result.get("finetune") or {}).items():
    for split, scores in (finetune.get("splits") or {}).items():
      for key, value in (scores.get("model") or {}).items():
        out[f"{task}.{split}.{key}"] = value
      for key, value in (scores.get("baseline") or {}).items():
        out[f"{task}.{split}.baseline.{key}"] = value
  return out


def aggregate(results, default_lr, high_lr):
  """Per-run results -> groups {variant@lr: {runs, diverged, metrics: {name: mean_std},
  per_layer}} and the comparison sum - none at the default rate, metric by metric."""
  groups = {}
  for r in results:
    label = f"{r['variant']}@{r['learning_rate']:g}"
    group = groups.setdefault(label, {"variant": r["variant"], "learning_rate": r["learning_rate"],
                                      "runs": [], "diverged": 0, "values": {}, "layers": {}})
    group["runs"].append(r["name"])
    group["diverged"] += bool(r.get("diverged"))
    for name, value in flat_metrics(r).items():
      group["values"].setdefault(name, []).append(value)
    for key in ATTENTION_KEYS:
      values = (r.get("attention") or {}).get(key)
      if values:
        group["layers"].setdefault(key, []).append(values)
  for group in groups.values():
    group["metrics"] = {name: mean_std(values) for name, values in group.pop("values").items()}
    per_layer = {}
    for key, rows in group.pop("layers").items():
      depth = min(len(row) for row in rows) if rows else 0
      per_layer[key] = [mean_std([row[i] for row in rows]) for i in range(depth)]
    group["per_layer"] = per_layer
  none, summed = groups.get(f"none@{default_lr:g}"), groups.get(f"sum@{default_lr:g}")
  comparison = {}
  if none and summed:
    for name in sorted(set(none["metrics"]) | set(summed["metrics"])):
      comparison[name] = compare(none["metrics"].get(name), summed["metrics"].get(name))
  high = {}
  hn, hs = groups.get(f"none@{high_lr:g}"), groups.get(f"sum@{high_lr:g}")
  if hn and hs:
    for name in sorted(set(hn["metrics"]) | set(hs["metrics"])):
      a, b = hn["metrics"].get(name), hs["metrics"].get(name)
      high[name] = None if not a or not b else {"difference": b["mean"] - a["mean"]}
  return {"groups": groups, "comparison_sum_minus_none": comparison,
          "high_lr_sum_minus_none": high}


def metric_order(names):
  """Report order: pretraining, attention, then fine-tuning (task, split, metric), no baselines."""
  head = ["heldout_mlm_accuracy", "heldout_cpc_accuracy", "last_train_loss",
          "last_train_mlm_loss", "entropy_long_mean", "entropy_global_mean", "js_long_mean",
          "js_global_mean"]
  tail = [f"{t}.{s}.{m}" for t in TASKS for s in SPLITS for m in FT_METRICS[t]]
  return [n for n in head + tail if n in names]


def _fmt_stats(stats):
  if not stats:
    return "-"
  if stats["n"] == 1:
    return f"{stats['mean']:.4f}"
  return f"{stats['mean']:.4f} ± {stats['std']:.4f} ({stats['min']:.4f}–{stats['max']:.4f})"


def markdown_report(summary, default_lr, high_lr):
  """The tables printed at the end: default rate (sum vs none over seeds), then the high rate."""
  groups = summary["groups"]
  none, summed = groups.get(f"none@{default_lr:g}"), groups.get(f"sum@{default_lr:g}")
  names = set()
  for g in groups.values():
    names |= {n for n, s in g["metrics"].items() if s}
  lines = [f"### Learning rate {default_lr:g}: mean ± std (min–max) over seeds",
           "", "| metric | none | sum | sum − none | larger std | verdict | baseline |",
           "|---|---|---|---|---|---|---|"]
  for name in metric_order(names):
    a = (none or {}).get("metrics", {}).get(name)
    b = (summed or {}).get("metrics", {}).get(name)
    c = summary["comparison_sum_minus_none"].get(name)
    base = None
    for g in (none, summed):
      base = base or (g or {}).get("metrics", {}).get(name.rsplit(".", 1)[0] + ".baseline."
                                                     + name.rsplit(".", 1)[-1])
    verdict = "-" if not c else ("within seed spread" if c["within_seed_spread"] else
                                 "outside seed spread")
    lines.append(f"| {name} | {_fmt_stats(a)} | {_fmt_stats(b)} | "
                 f"{'-' if not c else format(c['difference'], '+.4f')} | "
                 f"{'-' if not c else format(c['spread'], '.4f')} | {verdict} | "
                 f"{'-' if not base else format(base['mean'], '.4f')} |")
  diverged = ", ".join(f"{label} {g['diverged']}/{len(g['runs'])}"
                       for label, g in sorted(groups.items()))
  lines += ["", f"Diverged runs: {diverged or '-'}"]
  high = [(label, g) for label, g in sorted(groups.items())
          if abs(g["learning_rate"] - high_lr) < 1e-12 and abs(high_lr - default_lr) > 1e-12]
  if high:
    lines += ["", f"### Learning rate {high_lr:g} (one seed each): one row per run", "",
              "| run | diverged | " + " | ".join(metric_order(names)) + " |",
              "|---|---|" + "---|" * len(metric_order(names))]
    for label, g in high:
      cells = [_fmt_stats(g["metrics"].get(n)) for n in metric_order(names)]
      lines.append(f"| {', '.join(g['runs'])} | {g['diverged']}/{len(g['runs'])} | "
                   + " | ".join(cells) + " |")
  return "\n".join(lines)


# --------------------------------------------------------------------------- subprocesses
def child_env():
  """The environment of every subprocess: one TensorFlow thread of each kind."""
  path = os.environ.get("PYTHONPATH", "")
  return dict(os.environ, TF_NUM_INTRAOP_THREADS="1", TF_NUM_INTEROP_THREADS="1",
              OMP_NUM_THREADS="1", TF_CPP_MIN_LOG_LEVEL="2", TF_USE_LEGACY_KERAS="1",
              PYTHONPATH=REPO + (os.pathsep + path if path else ""))


def run_logged(cmd, log_path, label):
  """Runs `cmd` in REPO with child_env(), appending its output to log_path.

  -> {returncode, wall_seconds, cpu_seconds}: the CPU time (user + system) of this child and
  the processes it waited for, from os.wait4 (so concurrent children do not mix).
  """
  os.makedirs(os.path.dirname(log_path), exist_ok=True)
  start = time.perf_counter()
  with open(log_path, "a", encoding="utf-8") as log:
    log.write(f"\n==== {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(cmd)}\n")
    log.flush()
    proc = subprocess.Popen(cmd, cwd=REPO, env=child_env(), stdout=log,
                            stderr=subprocess.STDOUT)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
  wall = time.perf_counter() - start
  cpu = usage.ru_utime + usage.ru_stime
  _say(f"  {label}: exit {proc.returncode}, {wall:.0f} s wall, {cpu:.0f} s CPU")
  return {"returncode": proc.returncode, "wall_seconds": wall, "cpu_seconds": cpu}


def _tail(path, lines=4):
  with open(path, encoding="utf-8", errors="replace") as f:
    return " | ".join(f.read().strip().splitlines()[-lines:])


def _child_eval(spec):
  """Held-out MLM / CPC accuracy of a run's last checkpoint (training=False, file order)."""
  from etc_realformer.data import tfrecords  # pylint: disable=g-import-not-at-top
  from pretraining import restore_for_evaluation  # pylint: disable=g-import-not-at-top  (benchmarks/)

  run_dir = spec["run_dir"]
  model, latest = restore_for_evaluation(
      run_dir, _read_json(os.path.join(run_dir, "run_config.json")))
  data_config, _ = tfrecords.read_data_config(spec["heldout_data"])
  files = tfrecords.expand_files(os.path.join(spec["heldout_data"], "*.tfrecord"))
  batch = spec["batch_size"]
  # All held-out records in file order, the last batch possibly smaller (make_dataset drops it).
  dataset = tfrecords.record_dataset(files).batch(batch).map(
      lambda serialized: tfrecords.parse_batch(serialized, data_config))
  count = tfrecords.count_records(files)
  start = time.perf_counter()
  metrics = model.evaluate(dataset, verbose=0, return_dict=True)
  seconds = time.perf_counter() - start
  # What a model that ignores the context can do: the entropy of the held-out MLM targets'
  # own piece frequencies, and the share of the most frequent piece.
  counts = {}
  for features in dataset:
    ids = features["masked_lm_ids"].numpy()[features["masked_lm_weights"].numpy() > 0]
    for piece in ids.tolist():
      counts[piece] = counts.get(piece, 0) + 1
  total = sum(counts.values())
  unigram_entropy = -sum(c / total * math.log(c / total) for c in counts.values())
  return {"checkpoint": os.path.basename(latest), "num_examples": count, "batch_size": batch,
          "last_batch_size": count % batch or batch, "seconds": seconds,
          "targets": total, "target_unigram_entropy": unigram_entropy,
          "most_frequent_target_share": max(counts.values()) / total,
          **{k: float(v) for k, v in metrics.items()}}


def _child_finetune(spec):
  """TASK.run_demo from a pretraining run's final/ encoder; the demo data shared by all runs."""
  import fcntl  # pylint: disable=g-import-not-at-top
  import importlib  # pylint: disable=g-import-not-at-top

  from absl import logging  # pylint: disable=g-import-not-at-top
  logging.set_verbosity(logging.INFO)  # the log then shows "encoder initialised from ..."
  task = importlib.import_module(f"tasks.{spec['task']}.task").TASK
  if tuple(task.headline_keys) != FT_METRICS[spec["task"]]:
    raise ValueError(f"{spec['task']}: headline_keys {task.headline_keys} != "
                     f"{FT_METRICS[spec['task']]} (update FT_METRICS)")
  shared, output_dir = spec["shared_data"], spec["output_dir"]
  os.makedirs(shared, exist_ok=True)
  with open(os.path.join(shared, ".lock"), "w", encoding="utf-8") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)  # one generator at a time; the others then reuse it
    task.make_demo_data(shared, spec["num_train"], spec["num_dev"], spec["data_seed"],
                        spec["data_style"])
  os.makedirs(output_dir, exist_ok=True)
  link = os.path.join(output_dir, "data")
  if not os.path.lexists(link):
    os.symlink(shared, link)
  summary = task.run_demo(spec["config"], output_dir, num_train=spec["num_train"],
                          num_dev=spec["num_dev"], seed=spec["data_seed"],
                          overrides=spec["overrides"], verbose=0, data_style=spec["data_style"])
  return {"splits": list(summary.get("splits", {}))}


def run_child(kind, spec, log_path, label):
  """Runs this script's --child <kind> on `spec` in a subprocess; -> (result, timing)."""
  spec_path = os.path.splitext(log_path)[0] + "_spec.json"
  _write_json(spec_path, dict(spec, kind=kind))
  out_path = os.path.splitext(log_path)[0] + "_result.json"
  if os.path.exists(out_path):
    os.remove(out_path)
  timing = run_logged([sys.executable, os.path.abspath(__file__), "--child", spec_path,
                       "--child_output", out_path], log_path, label)
  if timing["returncode"] != 0 or not os.path.exists(out_path):
    raise RuntimeError(f"{label} failed (exit {timing['returncode']}): {_tail(log_path)}")
  return _read_json(out_path), timing


# --------------------------------------------------------------------------- stage 1: text
def prepare_text(args, work_dir):
  """Stage 1 -> {train_data, heldout_data, vocab, counts}; each step skipped when done."""
  key = "text" + (f"_{os.path.basename(args.dump).split('.')[0]}" if args.dump else "") + (
      f"_words{args.max_words}" if args.max_words else "")
  text_dir = os.path.join(work_dir, key)
  os.makedirs(text_dir, exist_ok=True)
  log = os.path.join(text_dir, "text.log")
  timings = _read_json(os.path.join(text_dir, "timings.json"), {})

  def step(name, cmd, done):
    if os.path.exists(done):
      return
    _say(f"text: {name} ...")
    timing = run_logged(cmd, log, f"text: {name}")
    if timing["returncode"] != 0 or not os.path.exists(done):
      raise RuntimeError(f"text: {name} failed: {_tail(log)}")
    timings[name] = timing
    _write_json(os.path.join(text_dir, "timings.json"), timings)

  dump = os.path.abspath(args.dump) if args.dump else os.path.join(text_dir,
                                                                    "enwiki-excerpt.xml.bz2")
  if not args.dump and not os.path.exists(dump):
    constants = build_script_constants()
    wheel_dir = os.path.join(text_dir, "wheel")
    wheels = glob.glob(os.path.join(wheel_dir, "gensim-*.whl"))
    if not wheels:  # as the build script: the wheel only, no install, nothing else
      _say(f"text: fetching the gensim {constants['GENSIM_VERSION']} wheel for its excerpt")
      timing = run_logged([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                           "--only-binary=:all:", f"gensim=={constants['GENSIM_VERSION']}",
                           "-d", wheel_dir], log, "text: pip download")
      timings["pip_download"] = timing
      wheels = glob.glob(os.path.join(wheel_dir, "gensim-*.whl"))
    if not wheels:
      raise RuntimeError(f"pip download of gensim=={constants['GENSIM_VERSION']} gave no "
                         f"wheel: {_tail(log)}")
    with zipfile.ZipFile(wheels[0]) as z, open(dump + ".tmp", "wb") as out:
      out.write(z.read(constants["EXCERPT"]))  # the member the build script extracts
    os.replace(dump + ".tmp", dump)
    _say(f"text: {dump}: {os.path.getsize(dump)} bytes from {os.path.basename(wheels[0])}")
  wiki = os.path.join(text_dir, "wiki.txt")
  step("prepare_wikipedia", [sys.executable, "-m", "etc_realformer.prepare_wikipedia",
                             f"--input={dump}", f"--output={wiki}"]
       + ([f"--max_words={args.max_words}"] if args.max_words else []), wiki)
  train_txt, heldout_txt = (os.path.join(text_dir, "train.txt"),
                            os.path.join(text_dir, "heldout.txt"))
  if not os.path.exists(heldout_txt):
    with open(wiki, encoding="utf-8") as f:
      documents = split_documents(f.read())
    training, held_out = heldout_split(documents)
    if not held_out or not training:
      raise RuntimeError(f"{wiki}: {len(documents)} documents, too few to hold every "
                         f"{HELDOUT_EVERY}th out")
    for path, part in ((train_txt, training), (heldout_txt, held_out)):
      with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(join_documents(part))
      os.replace(path + ".tmp", path)
    timings["split"] = {"documents": len(documents), "training": len(training),
                        "held_out": len(held_out)}
    _write_json(os.path.join(text_dir, "timings.json"), timings)
  vocab = os.path.join(text_dir, "vocab.txt")
  step("learn_vocab", [sys.executable, "-m", "etc_realformer.learn_vocab",
                       f"--input={train_txt}", f"--output={vocab}",
                       f"--vocab_size={VOCAB_SIZE}"], vocab)
  data = {}
  for part, source, dupe in (("train", train_txt, TRAIN_DUPE),
                             ("heldout", heldout_txt, HELDOUT_DUPE)):
    out = os.path.join(text_dir, f"data_{part}")
    step(f"create_pretraining_data ({part})",
         [sys.executable, "-m", "etc_realformer.create_pretraining_data", f"--input={source}",
          f"--vocab_file={vocab}", f"--output_dir={out}", *DATA_FLAGS, f"--dupe_factor={dupe}"],
         os.path.join(out, "data_config.json"))
    data[part] = out
  return {"dir": text_dir, "train_data": data["train"], "heldout_data": data["heldout"],
          "vocab": vocab, "timings": timings}


# --------------------------------------------------------------------------- stages 2-5
def analysis_summary(path):
  """analysis.json -> per-layer mean entropy (long, global) and adjacent-layer JS per pair."""
  payload = _read_json(path)
  entry = payload["models"][payload["labels"][0]]
  return {"entropy_long": [l["long"]["mean_entropy"] for l in entry["layers"]],
          "entropy_global": [l["global"]["mean_entropy"] for l in entry["layers"]],
          "js_long": [p["long"]["js_divergence"] for p in entry["adjacent_layers"]],
          "js_global": [p["global"]["js_divergence"] for p in entry["adjacent_layers"]],
          "num_examples": entry["num_examples"]}


def finetune_summary(path):
  """demo_summary.json -> {splits: {split: {model: {metric}, baseline: {metric}}}, timings}."""
  summary = _read_json(path)
  task = os.path.basename(os.path.dirname(path))
  keys = FT_METRICS[task]
  out = {"splits": {}, "timings_seconds": summary.get("timings_seconds"),
         "baseline_names": summary.get("baseline_names")}
  for split, scores in {"dev": summary, **summary.get("splits", {})}.items():
    baseline = scores["baseline_metrics"]
    names = scores.get("baseline_names") or []
    if len(names) > 1:  # several baselines: the best of them on each metric
      baseline = {k: max(baseline[n][k] for n in names) for k in keys}
    out["splits"][split] = {"model": {k: scores["dev_metrics"][k] for k in keys},
                            "baseline": {k: baseline[k] for k in keys}}
  return out


def process_run(run, settings, text):
  """Stages 2-5 of one pretraining run (each skipped when its output exists) -> its result."""
  run_dir = run["run_dir"]
  os.makedirs(run_dir, exist_ok=True)
  state_path = os.path.join(run_dir, "study_stages.json")
  stages = _read_json(state_path, {})
  result = dict(run)

  def record(name, timing, **extra):
    stages[name] = dict(timing, **extra)
    _write_json(state_path, stages)

  # 2. Pretraining (the CLI resumes from its checkpoints; final/metrics.json is written last).
  final_metrics = os.path.join(run_dir, "final", "metrics.json")
  log_path = os.path.join(run_dir, "pretrain.log")
  if not os.path.exists(final_metrics):
    cmd = [sys.executable, "-m", "etc_realformer.pretrain", f"--config={PRETRAIN_CONFIG}",
           f"--train_data={text['train_data']}", f"--output_dir={run_dir}", "--verbose=0"]
    for item in run["overrides"]:
      cmd += ["--set", item]
    _say(f"{run['name']}: pretraining ...")
    timing = run_logged(cmd, log_path, f"{run['name']}: pretraining")
    if timing["returncode"] != 0 or not os.path.exists(final_metrics):
      raise RuntimeError(f"{run['name']}: pretraining failed: {_tail(log_path)}")
    record("pretrain", timing, steps=settings["steps"])
  with open(log_path, encoding="utf-8", errors="replace") as f:
    log = parse_training_log(f.read())
  result["training_log"] = log
  result["diverged"], result["divergence_reason"] = divergence(log)
  result["last_train_loss"] = log[-1].get("loss") if log else None
  result["last_train_mlm_loss"] = log[-1].get("mlm_loss") if log else None
  result["final_metrics"] = _read_json(final_metrics)

  # 3. Held-out pretraining quality.
  eval_path = os.path.join(run_dir, "heldout_eval.json")
  if not os.path.exists(eval_path):
    _say(f"{run['name']}: held-out evaluation ...")
    metrics, timing = run_child("eval", {"run_dir": run_dir,
                                         "heldout_data": text["heldout_data"],
                                         "batch_size": settings["batch_size"]},
                                os.path.join(run_dir, "study_logs", "eval.log"),
                                f"{run['name']}: held-out evaluation")
    _write_json(eval_path, metrics)
    record("heldout_eval", timing)
  result["heldout"] = _read_json(eval_path)
  if not result["diverged"]:
    result["diverged"], result["divergence_reason"] = context_learning(result["heldout"])

  # 4. Attention statistics.
  analysis_json = os.path.join(run_dir, "analysis", "analysis.json")
  if not os.path.exists(analysis_json):
    _say(f"{run['name']}: attention analysis ...")
    alog = os.path.join(run_dir, "study_logs", "analyze.log")
    timing = run_logged([sys.executable, "-m", "etc_realformer.analyze",
                         f"--checkpoint={run_dir}", f"--data={text['heldout_data']}",
                         f"--output_dir={os.path.join(run_dir, 'analysis')}",
                         f"--num_examples={ANALYSIS_EXAMPLES}"], alog,
                        f"{run['name']}: analysis")
    if timing["returncode"] != 0 or not os.path.exists(analysis_json):
      raise RuntimeError(f"{run['name']}: analysis failed: {_tail(alog)}")
    record("analysis", timing)
  result["attention"] = analysis_summary(analysis_json)

  # 5. Fine-tuning on each task.
  result["finetune"] = {}
  for task in TASKS:
    out_dir = os.path.join(run_dir, settings["ft_key"], task)
    summary_path = os.path.join(out_dir, "demo_summary.json")
    if not os.path.exists(summary_path):
      _say(f"{run['name']}: fine-tuning {task} ...")
      ft_steps = settings["ft_steps"]
      overrides = [f"train.init_checkpoint={os.path.join(run_dir, 'final')}",
                   "train.vocab_file=",  # the init checkpoint's: <run>/final/vocab.txt
                   f"model.num_hidden_layers={settings['layers']}",
                   f"model.residual_attention={run['variant']}",
                   f"train.num_train_steps={ft_steps}",
                   f"train.warmup_steps={ft_steps // 10}",
                   f"features.long_seq_len={settings['ft_long_len']}",
                   f"features.global_seq_len={FT_GLOBAL_LEN[task]}"]
      spec = {"task": task, "config": os.path.join(REPO, "configs", task, "tiny.yaml"),
              "output_dir": out_dir, "overrides": overrides,
              "shared_data": os.path.join(settings["work_dir"], "finetune_data",
                                          f"{task}_{settings['ft_data_key']}"),
              "num_train": settings["ft_train"], "num_dev": settings["ft_dev"],
              "data_seed": 0, "data_style": "benchmark"}
      _, timing = run_child("finetune", spec,
                            os.path.join(run_dir, "study_logs", f"finetune_{task}.log"),
                            f"{run['name']}: fine-tuning {task}")
      record(f"finetune_{task}", timing, steps=ft_steps)
    result["finetune"][task] = finetune_summary(summary_path)
  result["stages"] = stages
  return result


def plan_runs(args, work_dir, default_lr):
  """The pretraining runs: every variant x seed at the config's rate, the first seed at
  --high_lr."""
  seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
  size_key = f"layers{args.layers}_steps{args.steps}_batch{args.batch_size}_warmup{args.warmup}"
  runs = []
  rates = [(lr, seeds if lr == default_lr else seeds[:1])
           for lr in dict.fromkeys([default_lr, args.high_lr])]
  for lr, lr_seeds in rates:
    for seed in lr_seeds:
      for variant in VARIANTS:
        name = run_name(variant, lr, seed)
        runs.append({
            "name": name, "variant": variant, "learning_rate": lr, "seed": seed,
            "high_lr": lr != default_lr,
            "run_dir": os.path.join(work_dir, "runs", size_key, name),
            "overrides": [f"model.residual_attention={variant}",
                          f"model.num_hidden_layers={args.layers}",
                          f"train.seed={seed}", f"train.learning_rate={lr}",
                          f"train.num_train_steps={args.steps}",
                          f"train.warmup_steps={args.warmup}",
                          f"train.batch_size={args.batch_size}",
                          f"train.log_every={args.log_every}"]})
  return runs


def config_learning_rate():
  """train.learning_rate of configs/pretraining/tiny_english.yaml (read without TensorFlow)."""
  import yaml  # pylint: disable=g-import-not-at-top
  with open(PRETRAIN_CONFIG, encoding="utf-8") as f:
    return float(yaml.safe_load(f)["train"]["learning_rate"])


# --------------------------------------------------------------------------- figures
def make_figures(results, summary, figures_dir, default_lr):
  """(a) training MLM loss curves, (b) fine-tuning metrics per split, (c) attention per layer."""
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  import matplotlib.ticker  # pylint: disable=g-import-not-at-top,unused-import

  os.makedirs(figures_dir, exist_ok=True)
  colors = {"none": "tab:blue", "sum": "tab:red"}
  written = []

  # (a) Loss curves.
  fig, ax = plt.subplots(figsize=(7, 4.5))
  for r in results:
    log = [e for e in r.get("training_log") or [] if "mlm_loss" in e]
    if log:
      ax.plot([e["step"] for e in log], [e["mlm_loss"] for e in log], color=colors[r["variant"]],
              linestyle="--" if r["high_lr"] else "-", alpha=0.8,
              label=f"{r['variant']} lr {r['learning_rate']:g}")
  handles, labels = ax.get_legend_handles_labels()
  unique = dict(zip(labels, handles))
  ax.legend(unique.values(), unique.keys())
  ax.set_xlabel("step")
  ax.set_ylabel("training MLM loss (logged window mean)")
  ax.set_title("Pretraining: none (blue) vs sum (red); dashed: high learning rate")
  fig.tight_layout()
  written.append(os.path.join(figures_dir, "loss_curves.png"))
  fig.savefig(written[-1], dpi=100)
  plt.close(fig)

  # (b) Fine-tuning metrics, one panel per (metric, split).
  groups = [(label, g) for label, g in summary["groups"].items()]
  groups.sort(key=lambda item: (item[1]["learning_rate"] != default_lr, item[1]["variant"]))
  by_name = {r["name"]: r for r in results}
  for task in TASKS:
    keys = FT_METRICS[task]
    fig, axes = plt.subplots(len(keys), len(SPLITS), figsize=(3.2 * len(SPLITS), 2.8 * len(keys)),
                             squeeze=False)
    for row, key in enumerate(keys):
      for col, split in enumerate(SPLITS):
        ax = axes[row][col]
        baselines = []
        for x, (label, g) in enumerate(groups):
          values = []
          for name in g["runs"]:
            scores = ((by_name[name].get("finetune") or {}).get(task, {}).get("splits", {})
                      .get(split))
            if scores:
              values.append(scores["model"][key])
              baselines.append(scores["baseline"][key])
          if values:
            ax.scatter([x] * len(values), values, color=colors[g["variant"]], alpha=0.6,
                       marker="o" if g["learning_rate"] == default_lr else "^")
            ax.hlines(sum(values) / len(values), x - 0.3, x + 0.3, color="black")
        if baselines:
          ax.axhline(sum(baselines) / len(baselines), color="gray", linestyle=":",
                     label="baseline")
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([label for label, _ in groups], rotation=30, fontsize=7)
        ax.set_title(f"{split}: {key}", fontsize=8)
        if row == 0 and col == 0 and baselines:
          ax.legend(fontsize=7)
    fig.suptitle(f"{task}: fine-tuned from each pretraining run (points: seeds, bar: mean, "
                 "dotted: baseline)", fontsize=9)
    fig.tight_layout()
    written.append(os.path.join(figures_dir, f"finetune_{task}.png"))
    fig.savefig(written[-1], dpi=100)
    plt.close(fig)

  # (c) Attention: entropy per layer, JS per layer pair, mean over seeds with the seed spread.
  fig, axes = plt.subplots(1, 4, figsize=(14, 3.5))
  panels = (("entropy_long", "entropy, long queries (nats)", "layer"),
            ("entropy_global", "entropy, global queries (nats)", "layer"),
            ("js_long", "adjacent-layer JS, long", "layer pair (l, l+1)"),
            ("js_global", "adjacent-layer JS, global", "layer pair (l, l+1)"))
  for ax, (key, title, xlabel) in zip(axes, panels):
    for label, g in groups:
      stats = [s for s in g["per_layer"].get(key, []) if s]
      if stats:
        ax.errorbar(range(len(stats)), [s["mean"] for s in stats],
                    yerr=[s["std"] for s in stats], color=colors[g["variant"]], capsize=3,
                    marker="o",
                    linestyle="--" if g["learning_rate"] != default_lr else "-", label=label)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(xlabel)
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
  axes[0].legend(fontsize=7)
  fig.tight_layout()
  written.append(os.path.join(figures_dir, "attention.png"))
  fig.savefig(written[-1], dpi=100)
  plt.close(fig)
  return written


# --------------------------------------------------------------------------- main
def report(work_dir, output, figures_dir):
  """Aggregates results.json: the JSON aggregate, the markdown tables, the figures."""
  payload = _read_json(os.path.join(work_dir, "results.json"))
  if payload is None:
    raise FileNotFoundError(f"{work_dir}/results.json: no results yet (run without "
                            "--report_only first)")
  results = [r for r in payload["runs"] if "error" not in r]
  settings = payload["settings"]
  summary = aggregate(results, settings["default_learning_rate"], settings["high_lr"])
  table = markdown_report(summary, settings["default_learning_rate"], settings["high_lr"])
  print(table)
  errors = [f"{r['name']}: {r['error']}" for r in payload["runs"] if "error" in r]
  if errors:
    print("\nFailed runs:\n" + "\n".join(errors))
  figures = make_figures(results, summary, figures_dir, settings["default_learning_rate"])
  aggregate_json = {"benchmark": "realformer_study", "settings": settings, "summary": summary,
                    "table": table, "errors": errors, "figures": figures,
                    "timings": payload.get("timings")}
  _write_json(output, portable_paths(aggregate_json, work_dir))
  print(f"\nwrote {output}\nfigures: {', '.join(figures)}")


def portable_paths(payload, work_dir):
  """`payload` with the paths under the repository written relative to it and those under
  work_dir as "<work_dir>/...": the aggregate JSON names no machine's folders."""
  text = json.dumps(payload)
  for root, name in ((work_dir, "<work_dir>"), (REPO, ".")):
    text = text.replace(json.dumps(os.path.join(root, ""))[1:-1], f"{name}/")
    text = text.replace(json.dumps(root)[1:-1], name)
  return json.loads(text)


def timing_table(results, text):
  """Per-stage wall and CPU seconds (per step where a stage has steps)."""
  rows = {}
  for r in results:
    for name, t in (r.get("stages") or {}).items():
      row = rows.setdefault(name, {"runs": 0, "wall_seconds": 0.0, "cpu_seconds": 0.0,
                                   "steps": 0})
      row["runs"] += 1
      row["wall_seconds"] += t["wall_seconds"]
      row["cpu_seconds"] += t["cpu_seconds"]
      row["steps"] += t.get("steps", 0)
  for row in rows.values():
    if row["steps"]:
      row["cpu_seconds_per_step"] = row["cpu_seconds"] / row["steps"]
      row["wall_seconds_per_step"] = row["wall_seconds"] / row["steps"]
  return {"text": text.get("timings", {}), "stages": rows}


def main():
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--work_dir", default="runs/realformer_study")
  parser.add_argument("--dump", default="", help="a pages-articles*.xml[.bz2] instead of the "
                      "gensim excerpt")
  parser.add_argument("--max_words", type=int, default=0,
                      help="prepare_wikipedia --max_words (0: the whole dump)")
  parser.add_argument("--seeds", default="0,1,2")
  parser.add_argument("--high_lr", type=float, default=0.01,
                      help="the extra rate, first seed only (one variant should struggle)")
  parser.add_argument("--layers", type=int, default=4)
  parser.add_argument("--steps", type=int, default=1000)
  parser.add_argument("--batch_size", type=int, default=16)
  parser.add_argument("--warmup", type=int, default=-1, help="warmup steps; -1: 10%% of steps")
  parser.add_argument("--log_every", type=int, default=0,
                      help="pretraining log window in steps; 0: steps / 30 (at least 1)")
  parser.add_argument("--ft_steps", type=int, default=300)
  parser.add_argument("--ft_train", type=int, default=800)
  parser.add_argument("--ft_dev", type=int, default=100)
  parser.add_argument("--ft_long_len", type=int, default=1024)
  parser.add_argument("--jobs", type=int, default=2, help="subprocesses at once")
  parser.add_argument("--smoke", action="store_true", help="everything tiny: a quick check")
  parser.add_argument("--report_only", action="store_true",
                      help="re-aggregate <work_dir>/results.json, run nothing")
  parser.add_argument("--output", default=os.path.join(REPO, "benchmarks", "results",
                                                       "realformer_study.json"))
  parser.add_argument("--figures_dir", default="", help="default <work_dir>/figures")
  parser.add_argument("--child", help=argparse.SUPPRESS)
  parser.add_argument("--child_output", help=argparse.SUPPRESS)
  args = parser.parse_args()

  if args.child:
    spec = _read_json(args.child)
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import etc_realformer  # pylint: disable=g-import-not-at-top,unused-import
    out = (_child_eval if spec["kind"] == "eval" else _child_finetune)(spec)
    _write_json(args.child_output, out)
    return

  if args.smoke:
    args.layers, args.steps, args.batch_size, args.seeds = 2, 6, 4, "0"
    args.ft_steps, args.ft_train, args.ft_dev, args.ft_long_len = 4, 16, 8, 256
    args.max_words = args.max_words or 120000  # about 20 articles: 2 held out
  if args.warmup < 0:
    args.warmup = args.steps // 10
  args.log_every = args.log_every or max(1, args.steps // 30)
  work_dir = os.path.abspath(args.work_dir)
  figures_dir = os.path.abspath(args.figures_dir or os.path.join(work_dir, "figures"))
  if args.report_only:
    report(work_dir, args.output, figures_dir)
    return

  default_lr = config_learning_rate()
  os.makedirs(work_dir, exist_ok=True)
  started = time.perf_counter()
  text = prepare_text(args, work_dir)
  runs = plan_runs(args, work_dir, default_lr)
  settings = {
      "work_dir": work_dir, "config": os.path.relpath(PRETRAIN_CONFIG, REPO),
      "default_learning_rate": default_lr, "high_lr": args.high_lr, "seeds": args.seeds,
      "layers": args.layers, "steps": args.steps, "batch_size": args.batch_size,
      "warmup": args.warmup, "log_every": args.log_every, "ft_steps": args.ft_steps,
      "ft_train": args.ft_train, "ft_dev": args.ft_dev, "ft_long_len": args.ft_long_len,
      "ft_global_len": FT_GLOBAL_LEN, "ft_data_style": "benchmark", "ft_data_seed": 0,
      "jobs": args.jobs, "smoke": args.smoke, "dump": args.dump or "gensim excerpt",
      "max_words": args.max_words, "heldout_every": HELDOUT_EVERY, "vocab_size": VOCAB_SIZE,
      "data_flags": list(DATA_FLAGS), "dupe_factor": {"train": TRAIN_DUPE,
                                                      "heldout": HELDOUT_DUPE},
      "analysis_examples": ANALYSIS_EXAMPLES,
      "ft_key": f"finetune_steps{args.ft_steps}_n{args.ft_train}-{args.ft_dev}"
                f"_long{args.ft_long_len}",
      "ft_data_key": f"n{args.ft_train}-{args.ft_dev}_seed0"}
  _say(f"{len(runs)} pretraining runs, {args.jobs} at a time: "
       f"{', '.join(r['name'] for r in runs)}")

  def one(run):
    try:
      return process_run(run, settings, text)
    except Exception as e:  # pylint: disable=broad-except
      _say(f"{run['name']}: FAILED: {e}")
      return dict(run, error=str(e))

  with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
    results = list(pool.map(one, runs))
  ok = [r for r in results if "error" not in r]
  timings = timing_table(ok, text)
  timings["total_wall_seconds_this_invocation"] = time.perf_counter() - started
  _write_json(os.path.join(work_dir, "results.json"),
              {"settings": settings, "text": {k: text[k] for k in ("train_data", "heldout_data",
                                                                   "vocab")},
               "timings": timings, "runs": results})
  print("\nTimings (wall / CPU seconds; per step where the stage has steps):")
  print(json.dumps(timings, indent=2))
  print()
  report(work_dir, args.output, figures_dir)


if __name__ == "__main__":
  main()
