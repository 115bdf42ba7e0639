"""Converting training files to TFRecords: examples/s and peak memory with 1 and 2 worker
processes, and the projected wall time of the real training sets on a 16-core host.

Inputs: synthetic files in the official formats (`synthetic_data`), generated once into
--data_dir: NQ pages of about 3,000 words (`page_words`: NQ-sized pages; the default demo pages
have about 400) in 4 gzipped shards, HotpotQA questions (ten paragraphs each), WikiHop items and
OpenKP pages. Vocabulary: a 2,000-piece WordPiece vocabulary learned from each training file (as
the demos). Features: configs/<task>/tiny.yaml and the real settings (configs/nq/base.yaml: 4096
long / 256 global, stride 2048; configs/hotpotqa/etc_base.yaml; configs/wikihop/base.yaml;
configs/openkp/base.yaml).

Each (task, features, workers) runs in its own process: `Task.convert_file` into --shards shards
with 1 or 2 worker processes (spawned; one worker converts in the measuring process). NQ's 4
input files go whole to the 4 shards (as NQ's 50 files would); the other inputs are one file,
which every shard streams, keeping its own records. Figures:
  ex/s         input examples over the wall time of the conversion (worker start-up included)
  steady ex/s  input examples over the time spent in shards (start-up left out): with W
               workers, W x examples / (sum of the shards' seconds)
  peak MB      of the measuring process (which converts when W = 1) and of the largest worker
               (ru_maxrss): a conversion holds about parent + W x worker, whatever the input size.
  CPU s/ex     CPU seconds (the measuring process and its workers) per input example.
Projection, with the real settings: linear scaling in the workers at the efficiency measured
from 1 to 2 workers, rate(16) = 16 x rate(1) x e with e = rate(2) / (2 x rate(1)) (at most 1),
and a training set takes its examples / rate(16); beside it, the rate of 16 dedicated cores at
the measured CPU seconds per example. The 2-core machine the figures come from is shared with
other jobs, so its 1 -> 2 step understates what 16 dedicated cores do, and the synthetic pages
are simpler than real ones (fewer html tokens, a small vocabulary).

  python benchmarks/conversion.py                      # ~3 min on 2 idle cores
  python benchmarks/conversion.py --tasks nq --configs base --nq_examples 32   # a quick look
Prints two tables and writes JSON (default benchmarks/results/conversion.json).
"""

import argparse
import json
import os
import platform
import resource
import shutil
import sys
import time

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, _ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import child_runs  # pylint: disable=g-import-not-at-top,wrong-import-position

TASKS = ("nq", "hotpotqa", "wikihop", "openkp")
# task -> (tiny config, the real settings' config), under configs/<task>/
CONFIGS = {"nq": ("tiny", "base"), "hotpotqa": ("tiny", "etc_base"),
           "wikihop": ("tiny", "base"), "openkp": ("tiny", "base")}
# The real training sets: examples (pages for OpenKP) and how they are stored.
TRAINING_SETS = {"nq": (307_373, "50 gzipped JSONL shards"),
                 "hotpotqa": (90_447, "one JSON array"),
                 "wikihop": (43_738, "one JSON array"),
                 "openkp": (134_000, "one JSONL file")}
PROJECTED_WORKERS = 16
NQ_FILES = 4
VOCAB_SIZE = 2000


# --------------------------------------------------------------------------- data


def _write_inputs(directory, args):
  """Synthetic training files ({task: path or glob}), reused while the sizes are unchanged
  (new ones drop the vocabularies learned from the old)."""
  from synthetic_data import hotpotqa, nq, openkp, wikihop, writer  # pylint: disable=g-import-not-at-top
  info = {"nq": [args.nq_examples, args.nq_page_words], "hotpotqa": args.hotpotqa_examples,
          "wikihop": args.wikihop_examples, "openkp": args.openkp_examples}
  paths = {"nq": os.path.join(directory, "nq", "train-*.jsonl.gz"),
           "hotpotqa": os.path.join(directory, "hotpotqa.json"),
           "wikihop": os.path.join(directory, "wikihop.json"),
           "openkp": os.path.join(directory, "openkp.jsonl")}
  marker = os.path.join(directory, "inputs.json")
  if os.path.exists(marker):
    with open(marker) as f:
      if json.load(f) == info:
        return paths
  for task in TASKS:   # vocabularies learned from other inputs
    if os.path.exists(os.path.join(directory, f"{task}_vocab.txt")):
      os.remove(os.path.join(directory, f"{task}_vocab.txt"))
  per_file = args.nq_examples // NQ_FILES
  for i in range(NQ_FILES):
    nq.write_jsonl_gz(nq.generate_examples(per_file, seed=i, page_words=args.nq_page_words),
                      os.path.join(directory, "nq", f"train-{i:02d}.jsonl.gz"))
  hotpotqa.write_dataset(paths["hotpotqa"], args.hotpotqa_examples, seed=0)
  writer.write_json(paths["wikihop"], wikihop.generate_examples(args.wikihop_examples, seed=0))
  writer.write_jsonl(paths["openkp"], openkp.generate_pages(args.openkp_examples, seed=0))
  writer.write_json(marker, info)
  return paths


def _learn_vocab(task_name, train_path, directory):
  """A WordPiece vocabulary learned from the training texts (as the demos), reused."""
  import importlib  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import vocab_learner  # pylint: disable=g-import-not-at-top
  path = os.path.join(directory, f"{task_name}_vocab.txt")
  if not os.path.exists(path):
    task = importlib.import_module(f"tasks.{task_name}.task").TASK
    vocab_learner.write_vocab(vocab_learner.learn_wordpiece_vocab(
        list(task.training_texts(train_path)), vocab_size=VOCAB_SIZE), path)
  return path


# --------------------------------------------------------------------------- child process


def _one(spec):
  """Converts one input with one setting in this process; returns a dict."""
  import importlib  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import tokenization  # pylint: disable=g-import-not-at-top
  from etc_realformer.data.span_tokenization import OffsetTokenizer  # pylint: disable=g-import-not-at-top
  task = importlib.import_module(f"tasks.{spec['task']}.task").TASK
  config_path = os.path.join(_ROOT, "configs", spec["task"], f"{spec['config']}.yaml")
  feature_config = task.parse_sections(task.load_run_config(config_path))[1]
  tokenizer = OffsetTokenizer(tokenization.tokenizer_for_vocab(spec["vocab"]))
  shutil.rmtree(spec["output"], ignore_errors=True)
  before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
  cpu_before = _cpu_seconds()
  start = time.perf_counter()
  info = task.convert_file(spec["input"], spec["output"], tokenizer, spec["vocab"],
                           feature_config, spec["shards"], log=lambda _: None,
                           num_workers=spec["workers"])
  seconds = time.perf_counter() - start
  cpu_seconds = _cpu_seconds() - cpu_before
  shard_seconds = sum(shard["seconds"] for shard in info["shards"])
  parent = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
  workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
  return dict(spec, examples=info["records"], written=info["written"], seconds=seconds,
              examples_per_second=info["records"] / seconds,
              steady_examples_per_second=spec["workers"] * info["records"] / shard_seconds,
              shard_seconds=shard_seconds, cpu_seconds=cpu_seconds,
              cpu_seconds_per_example=cpu_seconds / info["records"],
              startup_rss_mb=before / 1024, parent_peak_mb=parent,
              worker_peak_mb=workers if spec["workers"] > 1 else parent,
              skipped=info["skipped"])


def _cpu_seconds():
  """User + system CPU seconds of this process and its finished children (the workers)."""
  own = resource.getrusage(resource.RUSAGE_SELF)
  children = resource.getrusage(resource.RUSAGE_CHILDREN)
  return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


# --------------------------------------------------------------------------- report


def _projection(rows):
  """Per task, with the real settings: the measured rates, the projected rate of 16 workers
  (the 1 -> 2 efficiency kept: 16 x rate(1) x rate(2) / (2 rate(1))) and the hours it takes;
  also the rate 16 dedicated cores give at the measured CPU seconds per example (W = 1, which
  includes the worker start-up's share)."""
  out = []
  for task in TASKS:
    real = CONFIGS[task][1]
    rates = {r["workers"]: r for r in rows
             if r["task"] == task and r["config"] == real and "error" not in r}
    if 1 not in rates or 2 not in rates:
      continue
    one, two = rates[1]["steady_examples_per_second"], rates[2]["steady_examples_per_second"]
    efficiency = min(two / (2 * one), 1.0)
    rate = PROJECTED_WORKERS * one * efficiency
    cpu_rate = PROJECTED_WORKERS / rates[1]["cpu_seconds_per_example"]
    examples, stored = TRAINING_SETS[task]
    out.append({"task": task, "config": real, "training_examples": examples, "stored": stored,
                "rate_1": one, "rate_2": two, "efficiency_1_to_2": efficiency,
                "workers": PROJECTED_WORKERS, "projected_rate": rate,
                "projected_hours": examples / rate / 3600,
                "cpu_seconds_per_example": rates[1]["cpu_seconds_per_example"],
                "cpu_bound_rate": cpu_rate, "cpu_bound_hours": examples / cpu_rate / 3600,
                "projected_memory_gb": (rates[2]["parent_peak_mb"] + PROJECTED_WORKERS
                                        * rates[2]["worker_peak_mb"]) / 1024})
  return out


def _summary(row):
  """One line about one measurement (or its error)."""
  if "error" in row:
    return row["error"]
  return (f"{row['examples_per_second']:.1f} ex/s ({row['steady_examples_per_second']:.1f} "
          f"steady), peak {row['parent_peak_mb']:.0f} / {row['worker_peak_mb']:.0f} MB")


def _tables(rows, projection):
  lines = [f"{'task':9} {'features':9} {'W':>2} {'examples':>8} {'written':>8} {'wall s':>7} "
           f"{'ex/s':>7} {'steady ex/s':>11} {'parent MB':>9} {'worker MB':>9}"]
  for r in rows:
    if "error" in r:
      lines.append(f"{r['task']:9} {r['config']:9} {r['workers']:>2} {r['error']}")
      continue
    lines.append(f"{r['task']:9} {r['config']:9} {r['workers']:>2} {r['examples']:>8} "
                 f"{r['written']:>8} {r['seconds']:>7.1f} {r['examples_per_second']:>7.1f} "
                 f"{r['steady_examples_per_second']:>11.1f} {r['parent_peak_mb']:>9.0f} "
                 f"{r['worker_peak_mb']:>9.0f}")
  lines += ["", f"projected on {PROJECTED_WORKERS} cores, real settings (linear in the workers "
                "at the measured 1 -> 2 efficiency; and at the CPU seconds per example):",
            f"{'task':9} {'features':9} {'examples':>9} {'ex/s W=1':>9} {'W=2':>7} "
            f"{'effic.':>6} {'W=16':>7} {'hours':>6} {'CPU s/ex':>8} {'hours':>6} "
            f"{'memory GB':>9}"]
  for p in projection:
    lines.append(f"{p['task']:9} {p['config']:9} {p['training_examples']:>9} "
                 f"{p['rate_1']:>9.1f} {p['rate_2']:>7.1f} {p['efficiency_1_to_2']:>6.2f} "
                 f"{p['projected_rate']:>7.1f} {p['projected_hours']:>6.2f} "
                 f"{p['cpu_seconds_per_example']:>8.3f} {p['cpu_bound_hours']:>6.2f} "
                 f"{p['projected_memory_gb']:>9.1f}")
  return "\n".join(lines)


def main():
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--tasks", default=",".join(TASKS))
  parser.add_argument("--configs", default="tiny,base",
                      help="tiny and/or base (the real settings: configs/nq/base.yaml, ...)")
  parser.add_argument("--workers", default="1,2")
  parser.add_argument("--shards", type=int, default=4)
  parser.add_argument("--nq_examples", type=int, default=192)
  parser.add_argument("--nq_page_words", type=int, default=3000)
  parser.add_argument("--hotpotqa_examples", type=int, default=3600)
  parser.add_argument("--wikihop_examples", type=int, default=3600)
  parser.add_argument("--openkp_examples", type=int, default=2400)
  parser.add_argument("--data_dir", default=os.path.join(_ROOT, "runs", "conversion_benchmark"))
  parser.add_argument("--timeout", type=int, default=1800, help="seconds per configuration")
  parser.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "results",
                                                       "conversion.json"))
  parser.add_argument("--child", help=argparse.SUPPRESS)
  args = parser.parse_args()

  if args.child:
    print(json.dumps(_one(json.loads(args.child))))
    return

  os.makedirs(args.data_dir, exist_ok=True)
  start = time.perf_counter()
  inputs = _write_inputs(args.data_dir, args)
  tasks = args.tasks.split(",")
  vocabs = {task: _learn_vocab(task, inputs[task], args.data_dir) for task in tasks}
  print(f"inputs and vocabularies ready in {time.perf_counter() - start:.0f}s", flush=True)
  plan = []
  for task in tasks:
    for kind in args.configs.split(","):
      config = CONFIGS[task][0 if kind == "tiny" else 1]
      for workers in (int(w) for w in args.workers.split(",")):
        plan.append({"task": task, "config": config, "workers": workers,
                     "shards": args.shards, "input": inputs[task], "vocab": vocabs[task],
                     "output": os.path.join(args.data_dir, "out", f"{task}_{config}")})
  rows = []
  for i, spec in enumerate(plan):
    print(f"[{i + 1}/{len(plan)}] {spec['task']} {spec['config']} workers={spec['workers']} ...",
          flush=True)
    rows.append(child_runs.run_child(__file__, ["--child", json.dumps(spec)], spec,
                                     args.timeout))
    print("    " + _summary(rows[-1]), flush=True)
  projection = _projection(rows)
  print()
  print(_tables(rows, projection))
  result = {"benchmark": "conversion", "nq_page_words": args.nq_page_words,
            "nq_input_files": NQ_FILES, "shards": args.shards, "vocab_size": VOCAB_SIZE,
            "projection_assumption": "linear in the workers at the 1 -> 2 efficiency: rate(16) = "
                                     "16 * rate(1) * min(1, rate(2) / (2 * rate(1))), steady "
                                     "rates with the real settings; cpu_bound: 16 / CPU seconds "
                                     "per example at W = 1",
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                        "load_average": os.getloadavg()},
            "rows": [_relative_paths(row) for row in rows], "projection": projection}
  from etc_realformer.io_utils import atomic_write_json  # pylint: disable=g-import-not-at-top
  atomic_write_json(args.output, result, sort_keys=False)
  print(f"\nwrote {args.output}")


def _relative_paths(row: dict) -> dict:
  """The row with its file paths relative to the repository (results name no machine paths)."""
  return {key: (os.path.relpath(value, _ROOT) if key in ("input", "vocab", "output") and
                isinstance(value, str) and os.path.isabs(value) else value)
          for key, value in row.items()}


if __name__ == "__main__":
  main()
