"""Converting training files to TFRecords: examples/s per worker with the old (pure-Python) and
the fast (tensorflow-text) WordPiece tokenizer side by side, whether both write the same
records, peak memory with 1 and 2 worker processes, the projected wall time of the real
training sets on a 16-core host, and (with --profile) where a conversion's time goes.

Inputs: synthetic files in the official formats, generated once into --data_dir.
--data_style is the preset of each task's one generator (`synthetic_data/<task>.py`):
benchmark (the default) writes NQ pages of about 3,000 text words with their html (tables,
lists, navigation boxes; about 3,500 document tokens), HotpotQA items of about 1,000 words,
WikiHop items of about 1,300 words, OpenKP pages of about 800 words; short writes the short
preset (fewer, shorter paragraphs), for a quick look.
NQ is written as 4 gzipped shards, the others as one file each. Vocabulary: a 2,000-piece
WordPiece vocabulary learned from each training file (as the demos). Features:
configs/<task>/tiny.yaml and the real settings (configs/<task>/etc_base.yaml; NQ's: 4096 long /
230 global, stride 2048).

Each (task, features, workers, backend) runs in its own process: `Task.convert_file` into
--shards shards with 1 or 2 worker processes (spawned). NQ's 4 input files go whole to the 4
shards (as NQ's 50 files would); the other inputs are one file, which every shard streams (and
decodes), keeping its own records. Backends (--backends): `python` is
`WordPieceTokenizer(backend="python")`, the pure-Python reference every conversion used before
the fast path; `auto` is the default, tensorflow-text on the text it tokenizes alike. With one
worker the conversion runs in the measuring process with the tokenizer built here, and the
library's one-off set-up (a few seconds, once per process) is done before the clock starts and
reported apart (`setup s`). With 2 workers each worker builds its own tokenizer with the
default backend, so those runs are made with `auto` only, and their time includes each
worker's set-up. Every run hashes the records it wrote (each parsed and serialised again
deterministically: the files' bytes differ from process to process, as protobuf writes the
feature map in an order of its own); all runs of one task and features must give the same.
Figures:
  ex/s         input examples (NQ: pages) over the wall time of the conversion
  steady ex/s  input examples over the time spent in shards (start-up left out): with W
               workers, W x examples / (sum of the shards' seconds); with W = 1 the rate of
               one worker
  ratio        steady ex/s of `auto` over that of `python` (W = 1)
  peak MB      of the measuring process (which converts when W = 1) and of the largest worker
               (ru_maxrss): a conversion holds about parent + W x worker, whatever the input size.
  CPU s/ex     CPU seconds (the measuring process and its workers) per input example.
Projection, with the real settings and the `auto` backend: linear scaling in the workers at the
efficiency measured from 1 to 2 workers, rate(16) = 16 x rate(1) x e with e = rate(2) /
(2 x rate(1)) (at most 1), and a training set takes its examples / rate(16); beside it, the rate
of 16 dedicated cores at the measured CPU seconds per example. The 2-core machine the figures
come from is shared with other jobs, so its 1 -> 2 step understates what 16 dedicated cores do.

--baseline DIR compares with another copy of the repository (e.g. the last commit unpacked by
`git archive HEAD | tar -x -C DIR` before a change): every one-worker run is made from DIR
too (its own benchmarks/conversion.py, importing its own converters), alternately with this
tree, --repeats times each, and all must write the same records. A tree whose
benchmarks/conversion.py is older or missing (before the tensorflow-text tokenizer, e.g.
c202f81, the converters the corpus-scale work started from) gets a copy of this script and
child_runs.py: with a WordPieceTokenizer that takes no `backend`, the copy converts with the
tree's own (pure-Python) tokenizer. --gc adds one-worker runs of
this tree with Python's garbage collector set up as a conversion worker could set it
(`freeze`: gc.freeze() once the tokenizer is built; `freeze+threshold`: also a higher
threshold, GC_THRESHOLD). The "trees" table gives each variant's median steady rate and its
ratio to the baseline's (results: `trees`).

--profile BACKENDS converts each task's input once more with the real settings, one worker and
each given backend under cProfile, and splits the time into cost centres: every function's own
time goes to the part of the converter it belongs to (tokenization, reading and checking
records, JSON decoding, decompression, feature building, TFRecord serialisation), and the time
of library and built-in functions to the parts that called them (TensorFlow and tensorflow-text
called by the tokenizer apart). cProfile adds a cost to every Python call, so the shares lean
towards Python-heavy code; the unprofiled rates are the rows above.

  python benchmarks/conversion.py                      # every task, tiny and real settings
  python benchmarks/conversion.py --configs base --workers 1 --nq_examples 200 \\
      --hotpotqa_examples 400 --wikihop_examples 400 --openkp_examples 400 \\
      --profile python,auto --output benchmarks/results/conversion_backends.json
      # ~4 min on 2 cores shared with two other jobs, after ~30 s making the inputs
  python benchmarks/conversion.py --tasks nq --configs base --workers 1 --nq_examples 32
  python benchmarks/conversion.py --data_style short --backends auto   # short inputs, a quick look
  python benchmarks/conversion.py --configs base --workers 1 --backends auto --nq_examples 200 \\
      --hotpotqa_examples 400 --wikihop_examples 400 --openkp_examples 400 \\
      --baseline BEFORE --repeats 2 --gc default,freeze,freeze+threshold \\
      --output benchmarks/results/conversion_before_after.json
      # before (BEFORE: an unpacked copy of the earlier commit) and after, interleaved
  git archive c202f81 | tar -x -C BEFORE && cp benchmarks/conversion.py \
      benchmarks/child_runs.py BEFORE/benchmarks/
  python benchmarks/conversion.py --configs base --workers 1 --backends auto --baseline BEFORE \
      --repeats 3 --output benchmarks/results/conversion_before_after.json
      # against the converters and pure-Python tokenizer before the corpus-scale work
Prints the tables and writes JSON (default benchmarks/results/conversion.json).
"""

import argparse
import collections
import cProfile
import glob
import hashlib
import json
import os
import platform
import pstats
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
CONFIGS = {task: ("tiny", "etc_base") for task in TASKS}
# The real training sets: examples (pages for OpenKP) and how they are stored.
TRAINING_SETS = {"nq": (307_373, "50 gzipped JSONL shards"),
                 "hotpotqa": (90_447, "one JSON array"),
                 "wikihop": (43_738, "one JSON array"),
                 "openkp": (134_000, "one JSONL file")}
DATA_STYLES = ("benchmark", "short")
# WordPieceTokenizer backends: the pure-Python reference (before the fast path) and the default.
BACKENDS = ("python", "auto")
DEFAULT_BACKEND = "auto"   # what a worker process builds (tasks.common.task.PartFeatures)
# Garbage-collector set-ups a run can convert with (`_set_gc`), and the thresholds of the last.
GC_VARIANTS = ("default", "freeze", "freeze+threshold")
GC_THRESHOLD = (50_000, 20, 20)
PROJECTED_WORKERS = 16
NQ_FILES = 4
VOCAB_SIZE = 2000
# Text tokenized before the clock starts: past `backend="auto"`'s 100,000-character switch, so
# that the library is set up (and checked) before the conversion is timed.
_WARM_UP_TEXT = "Warm up the tokenizer, caf\u00e9 1921. " * 3200
# Profile cost centres, by the file a function is in (the first match wins); library and
# built-in functions take the centres of their callers.
_COST_CENTRES = (
    ("etc_realformer/data/tokenization.py", "tokenization (Python)"),
    ("etc_realformer/data/span_tokenization.py", "tokenization (Python)"),
    ("etc_realformer/data/tfrecords.py", "TFRecord serialisation"),
    ("tasks/common/json_files.py", "reading records (Python)"),
    ("tasks/common/input_parts.py", "reading records (Python)"),
    ("tasks/common/read_report.py", "reading records (Python)"),
    ("/data.py", "reading records (Python)"),
    ("tasks/common/conversion.py", "conversion loop"),
    ("tasks/common/task.py", "conversion loop"),
    ("/tasks/", "feature building"),
)
_STANDARD_LIBRARY_CENTRES = (("/json/", "JSON decoding"), ("/gzip.py", "decompression"),
                             ("/_compression.py", "decompression"))
_TOKENIZATION_LIBRARY = "tokenization (TensorFlow / tensorflow-text)"
_TOP_FUNCTIONS = 12
_PROFILE_ITERATIONS = 100


# --------------------------------------------------------------------------- data


def _write_inputs(directory, args):
  """Synthetic training files ({task: path or glob}), reused while the sizes and style are
  unchanged (new ones drop the vocabularies learned from the old)."""
  from synthetic_data import writer  # pylint: disable=g-import-not-at-top
  info = {"data_style": args.data_style, "nq": args.nq_examples,
          "hotpotqa": args.hotpotqa_examples, "wikihop": args.wikihop_examples,
          "openkp": args.openkp_examples}
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
  for old in glob.glob(os.path.join(directory, "nq", "train-*.jsonl.gz")):
    os.remove(old)
  per_file = args.nq_examples // NQ_FILES
  # pylint: disable=g-import-not-at-top
  from synthetic_data import hotpotqa, nq, openkp, wikihop
  # pylint: enable=g-import-not-at-top
  preset = args.data_style
  for i in range(NQ_FILES):
    writer.write_jsonl(os.path.join(directory, "nq", f"train-{i:02d}.jsonl.gz"),
                       nq.generate_examples(per_file, seed=i, preset=preset), compress=True)
  for task, module in (("hotpotqa", hotpotqa), ("wikihop", wikihop)):
    writer.write_json(paths[task], module.generate_examples(getattr(args, f"{task}_examples"),
                                                            seed=0, preset=preset))
  writer.write_jsonl(paths["openkp"],
                     openkp.generate_examples(args.openkp_examples, seed=0, preset=preset))
  writer.write_json(marker, info)
  return paths


def _input_lengths(paths, tasks):
  """{task: median and mean words per input example} (NQ: text words and html tokens per
  page; HotpotQA: question and paragraphs; WikiHop: query and supports; OpenKP: the text)."""
  import gzip  # pylint: disable=g-import-not-at-top
  import statistics  # pylint: disable=g-import-not-at-top

  def words(texts):
    return sum(len(text.split()) for text in texts)

  out = {}
  for task in tasks:
    if task == "nq":   # one page at a time: the measuring process's peak memory stays as it was
      counts = {"text words": [], "html tokens": []}
      for path in sorted(glob.glob(paths["nq"])):
        with gzip.open(path, "rt", encoding="utf-8") as f:
          for line in filter(str.strip, f):
            html = [t["html_token"] for t in json.loads(line)["document_tokens"]]
            counts["text words"].append(len(html) - sum(html))
            counts["html tokens"].append(sum(html))
    elif task == "openkp":
      with open(paths["openkp"], encoding="utf-8") as f:
        counts = {"words": [len(json.loads(line)["text"].split()) for line in f if line.strip()]}
    else:
      with open(paths[task], encoding="utf-8") as f:
        items = json.load(f)
      counts = {"words": [
          words([item["question"]] + [s for _, sentences in item["context"] for s in sentences])
          if task == "hotpotqa" else words([item["query"]] + item["supports"])
          for item in items]}
    out[task] = {name: {"median": statistics.median(values), "mean": statistics.fmean(values)}
                 for name, values in counts.items()}
  return out


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
  """Converts one input with one setting and tokenizer backend in this process (under cProfile
  when spec["profile"]); returns a dict."""
  import importlib  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import tokenization  # pylint: disable=g-import-not-at-top
  from etc_realformer.data.span_tokenization import OffsetTokenizer  # pylint: disable=g-import-not-at-top
  task = importlib.import_module(f"tasks.{spec['task']}.task").TASK
  config_path = os.path.join(_ROOT, "configs", spec["task"], f"{spec['config']}.yaml")
  feature_config = task.parse_sections(task.load_run_config(config_path))[1]
  # The benchmark's vocabularies are WordPiece: what tokenizer_for_vocab builds, with a backend.
  try:
    wordpiece = tokenization.WordPieceTokenizer(spec["vocab"], lower_case=True,
                                                backend=spec["backend"])
  except TypeError:   # a baseline tree from before the backends: its only tokenizer
    wordpiece = tokenization.WordPieceTokenizer(spec["vocab"], lower_case=True)
  setup_start = time.perf_counter()
  # Sets the library up (backend auto) and traces its functions before the clock starts.
  wordpiece.tokenize([_WARM_UP_TEXT])
  for name in ("tokenize", "tokenize_words", "tokenize_with_word_spans"):
    if hasattr(wordpiece, name):
      getattr(wordpiece, name)(["warm up " * 10, "warm up, Zo\u00eb " * 10, "up"])
  setup_seconds = time.perf_counter() - setup_start
  tokenizer = OffsetTokenizer(wordpiece)
  shutil.rmtree(spec["output"], ignore_errors=True)
  _set_gc(spec.get("gc", "default"))
  before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
  profiler = cProfile.Profile() if spec.get("profile") else None
  cpu_before = _cpu_seconds()
  start = time.perf_counter()
  if profiler:
    profiler.enable()
  info = task.convert_file(spec["input"], spec["output"], tokenizer, spec["vocab"],
                           feature_config, spec["shards"], log=lambda _: None,
                           num_workers=spec["workers"])
  if profiler:
    profiler.disable()
  seconds = time.perf_counter() - start
  cpu_seconds = _cpu_seconds() - cpu_before
  shard_seconds = sum(shard["seconds"] for shard in info["shards"])
  parent = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
  workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
  row = dict(spec, examples=info["records"], written=info["written"], seconds=seconds,
             examples_per_second=info["records"] / seconds,
             steady_examples_per_second=spec["workers"] * info["records"] / shard_seconds,
             shard_seconds=shard_seconds, cpu_seconds=cpu_seconds,
             cpu_seconds_per_example=cpu_seconds / info["records"],
             tokenizer_setup_seconds=setup_seconds, fast_path=getattr(wordpiece, "uses_fast_path", False),
             startup_rss_mb=before / 1024, parent_peak_mb=parent,
             worker_peak_mb=workers if spec["workers"] > 1 else parent,
             skipped=info["skipped"])
  row["records_sha256"], row["file_sha256"] = _records_digest(spec["output"])
  if profiler:
    row["cost_centres"], row["top_functions"] = _breakdown(pstats.Stats(profiler))
  return row


def _set_gc(variant):
  """Python's garbage collector as a conversion worker could set it up before converting
  (GC_VARIANTS): `freeze` moves every object alive then (TensorFlow's, the tokenizer's) out of
  the collector's sight, so that its collections walk only what the conversion creates;
  `freeze+threshold` also collects the youngest generation every GC_THRESHOLD[0] allocations
  instead of every 700."""
  import gc  # pylint: disable=g-import-not-at-top
  if variant == "default":
    return
  gc.collect()
  gc.freeze()
  if variant == "freeze+threshold":
    gc.set_threshold(*GC_THRESHOLD)


def _cpu_seconds():
  """User + system CPU seconds of this process and its finished children (the workers)."""
  own = resource.getrusage(resource.RUSAGE_SELF)
  children = resource.getrusage(resource.RUSAGE_CHILDREN)
  return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _record_files(directory):
  return sorted(glob.glob(os.path.join(directory, "*.tfrecord")))


def _records_digest(directory):
  """SHA-256 of the records of a conversion, file by file, each record parsed and written again
  deterministically (tf.train.Example with its features in name order). The files' own bytes
  are not compared: protobuf writes the feature map in an order that differs from process to
  process (`file_sha256`)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  records, files = hashlib.sha256(), hashlib.sha256()
  for path in _record_files(directory):
    name = os.path.basename(path).encode("utf-8") + b"\0"
    records.update(name)
    files.update(name)
    for record in tf.data.TFRecordDataset(path).as_numpy_iterator():
      files.update(record)
      canonical = tf.train.Example.FromString(record).SerializeToString(deterministic=True)
      records.update(len(canonical).to_bytes(8, "little") + canonical)
  return records.hexdigest(), files.hexdigest()


# --------------------------------------------------------------------------- profile


def _centre_of_file(filename):
  """The cost centre of a function by its file, or None (library and built-in functions)."""
  path = filename.replace(os.sep, "/")
  root = _ROOT.replace(os.sep, "/") + "/"
  if "/site-packages/" in path:
    return None
  if path.startswith(root):
    inside = "/" + path[len(root):]
    if inside.startswith("/benchmarks/"):
      return "other"
    return next((centre for fragment, centre in _COST_CENTRES if fragment in inside), None)
  return next((centre for fragment, centre in _STANDARD_LIBRARY_CENTRES if fragment in path),
              None)


def _is_tensorflow(key):
  """Whether a profiled function is TensorFlow's or tensorflow-text's (Python or C++)."""
  filename, _, name = key
  return "tensorflow" in filename or "tensorflow" in name or "pywrap" in name


def _breakdown(stats):
  """({cost centre: % of the profiled time}, the functions with the most own time) of a
  cProfile run (see the module docstring).

  A library or built-in function takes the centres of its callers, weighted by its time in
  each (cumulative time to pass a centre on, own time for its own share); the callers may be
  library functions themselves, calling each other in cycles, so the shares are found by
  iterating until they settle. Time that reaches no centre is "other".
  """
  table = stats.stats   # function -> (calls, primitive calls, own s, cumulative s, callers)
  fixed = {key: {centre: 1.0} for key, centre in
           ((key, _centre_of_file(key[0])) for key in table) if centre is not None}
  library = [key for key in table if key not in fixed]
  mixes = {key: {} for key in library}

  def mixed(key, weight_index):
    """The callers' centres, weighted by the function's own (2) or cumulative (3) time in them."""
    callers = table[key][4]
    total = sum(edge[weight_index] for edge in callers.values())
    if total <= 0:
      return {"other": 1.0} if weight_index == 3 or not callers else mixed(key, 3)
    result = collections.Counter()
    for caller, edge in callers.items():
      for name, share in (fixed.get(caller) or mixes[caller]).items():
        result[name] += share * edge[weight_index] / total
    if _is_tensorflow(key) and "tokenization (Python)" in result:
      result[_TOKENIZATION_LIBRARY] += result.pop("tokenization (Python)")
    return result

  for _ in range(_PROFILE_ITERATIONS):
    change = 0.0
    for key in library:
      new = mixed(key, 3)
      old = mixes[key]
      change = max([change] + [abs(new.get(n, 0.0) - old.get(n, 0.0)) for n in {*new, *old}])
      mixes[key] = new
    if change < 1e-6:
      break
  centres = collections.Counter()
  total = sum(entry[2] for entry in table.values())
  own_mixes = {}
  for key, entry in table.items():
    own = fixed.get(key) or mixed(key, 2)
    own_mixes[key] = own
    for name, share in own.items():
      centres[name] += entry[2] * share
    centres["other"] += entry[2] * max(0.0, 1.0 - sum(own.values()))
  shares = {name: round(100 * seconds / total, 1) for name, seconds in centres.most_common()
            if seconds > 0}
  top = sorted(table.items(), key=lambda item: -item[1][2])[:_TOP_FUNCTIONS]
  functions = [{"function": _function_name(key), "own_percent": round(100 * entry[2] / total, 1),
                "calls": entry[1],
                "centre": max(own_mixes[key].items(), key=lambda c: c[1])[0]
                          if own_mixes[key] else "other"}
               for key, entry in top]
  return shares, functions


def _function_name(key):
  """file:line(name) with the file relative to the repository, site-packages or the standard
  library (results name no machine paths)."""
  filename, line, name = key
  if filename == "~":
    return name
  path = filename.replace(os.sep, "/")
  root = _ROOT.replace(os.sep, "/") + "/"
  if "site-packages/" in path:
    path = path.split("site-packages/", 1)[1]
  elif path.startswith(root):
    path = path[len(root):]
  elif "/lib/python" in path:
    path = path.split("/lib/python", 1)[1].split("/", 1)[-1]
  return f"{path}:{line}({name})"


# --------------------------------------------------------------------------- report


def _check_records(rows):
  """Marks every row with whether its records equal those of the first run of its task and
  features (`_records_digest`)."""
  first = {}
  for row in rows:
    if "error" not in row:
      reference = first.setdefault((row["task"], row["config"]), row["records_sha256"])
      row["records_identical"] = row["records_sha256"] == reference


def _projection(rows):
  """Per task, with the real settings and the default backend: the measured rates, the
  projected rate of 16 workers (the 1 -> 2 efficiency kept: 16 x rate(1) x rate(2) / (2
  rate(1))) and the hours it takes; also the rate 16 dedicated cores give at the measured CPU
  seconds per example (W = 1)."""
  out = []
  for task in TASKS:
    real = CONFIGS[task][1]
    rates = {r["workers"]: r for r in rows
             if r["task"] == task and r["config"] == real and r["backend"] == DEFAULT_BACKEND
             and "error" not in r}
    if 1 not in rates or 2 not in rates:
      continue
    one, two = rates[1]["steady_examples_per_second"], rates[2]["steady_examples_per_second"]
    efficiency = min(two / (2 * one), 1.0)
    rate = PROJECTED_WORKERS * one * efficiency
    cpu_rate = PROJECTED_WORKERS / rates[1]["cpu_seconds_per_example"]
    examples, stored = TRAINING_SETS[task]
    out.append({"task": task, "config": real, "backend": DEFAULT_BACKEND,
                "training_examples": examples, "stored": stored,
                "rate_1": one, "rate_2": two, "efficiency_1_to_2": efficiency,
                "workers": PROJECTED_WORKERS, "projected_rate": rate,
                "projected_hours": examples / rate / 3600,
                "cpu_seconds_per_example": rates[1]["cpu_seconds_per_example"],
                "cpu_bound_rate": cpu_rate, "cpu_bound_hours": examples / cpu_rate / 3600,
                "projected_memory_gb": (rates[2]["parent_peak_mb"] + PROJECTED_WORKERS
                                        * rates[2]["worker_peak_mb"]) / 1024})
  return out


def _comparison(rows):
  """Per task and features, one worker: the rate with each backend and auto / python."""
  out = []
  by_key = {(r["task"], r["config"], r["backend"]): r for r in rows
            if r["workers"] == 1 and "error" not in r}
  for task, config in dict.fromkeys((r["task"], r["config"]) for r in rows):
    old, new = by_key.get((task, config, "python")), by_key.get((task, config, "auto"))
    if old is None or new is None:
      continue
    out.append({"task": task, "config": config, "examples": new["examples"],
                "python_examples_per_second": old["steady_examples_per_second"],
                "auto_examples_per_second": new["steady_examples_per_second"],
                "ratio": new["steady_examples_per_second"] / old["steady_examples_per_second"],
                "python_cpu_seconds_per_example": old["cpu_seconds_per_example"],
                "auto_cpu_seconds_per_example": new["cpu_seconds_per_example"],
                "records_identical": bool(old.get("records_identical")
                                          and new.get("records_identical"))})
  return out


def _median(values):
  values = sorted(values)
  middle = len(values) // 2
  return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


def _tree_comparison(rows):
  """Per task, features and backend, one worker: the median steady rate and CPU seconds per
  example of every (tree, gc) variant over its repeats, and their ratios to the baseline tree's
  (or, without a baseline, to the current tree's with the default collector; `cpu_ratio` > 1:
  less CPU per example). On a shared machine the CPU time moves less than the wall time."""
  out = []
  groups = collections.defaultdict(lambda: collections.defaultdict(list))
  for r in rows:
    if r["workers"] == 1 and "error" not in r:
      variant = (r.get("tree", "current"), r.get("gc", "default"))
      groups[(r["task"], r["config"], r["backend"])][variant].append(r)
  for (task, config, backend), variants in groups.items():
    if len(variants) < 2:
      continue
    rates = {v: _median([r["steady_examples_per_second"] for r in runs])
             for v, runs in variants.items()}
    cpu = {v: _median([r["cpu_seconds_per_example"] for r in runs]) for v, runs in variants.items()}
    reference = ("baseline", "default") if ("baseline", "default") in rates else (
        "current", "default")
    if reference not in rates:
      continue
    for (tree, gc_variant), rate in rates.items():
      runs = variants[(tree, gc_variant)]
      out.append({"task": task, "config": config, "backend": backend, "tree": tree,
                  "gc": gc_variant, "repeats": len(runs),
                  "examples": runs[0]["examples"],
                  "steady_examples_per_second": rate,
                  "all_steady_examples_per_second": [r["steady_examples_per_second"]
                                                     for r in runs],
                  "cpu_seconds_per_example": cpu[(tree, gc_variant)],
                  "ratio": rate / rates[reference],
                  "cpu_ratio": cpu[reference] / cpu[(tree, gc_variant)],
                  "records_identical": all(r.get("records_identical") for r in runs)})
  return out


def _summary(row):
  """One line about one measurement (or its error)."""
  if "error" in row:
    return row["error"]
  return (f"{row['examples_per_second']:.1f} ex/s ({row['steady_examples_per_second']:.1f} "
          f"steady), peak {row['parent_peak_mb']:.0f} / {row['worker_peak_mb']:.0f} MB")


def _tables(rows, comparison, trees, projection, profiles):
  lines = [f"{'task':9} {'features':9} {'backend':7} {'W':>2} {'examples':>8} {'written':>8} "
           f"{'setup s':>7} {'wall s':>7} {'ex/s':>7} {'steady ex/s':>11} {'CPU s/ex':>8} "
           f"{'parent MB':>9} {'worker MB':>9} records"]
  for r in rows:
    if "error" in r:
      lines.append(f"{r['task']:9} {r['config']:9} {r['backend']:7} {r['workers']:>2} "
                   f"{r['error']}")
      continue
    same = "same" if r.get("records_identical") else "DIFFERENT"
    lines.append(f"{r['task']:9} {r['config']:9} {r['backend']:7} {r['workers']:>2} "
                 f"{r['examples']:>8} {r['written']:>8} {r['tokenizer_setup_seconds']:>7.1f} "
                 f"{r['seconds']:>7.1f} {r['examples_per_second']:>7.1f} "
                 f"{r['steady_examples_per_second']:>11.1f} "
                 f"{r['cpu_seconds_per_example']:>8.4f} {r['parent_peak_mb']:>9.0f} "
                 f"{r['worker_peak_mb']:>9.0f} {same}")
  if comparison:
    lines += ["", "one worker, old (python) and fast (auto) tokenizer:",
              f"{'task':9} {'features':9} {'examples':>8} {'python ex/s':>11} "
              f"{'auto ex/s':>9} {'ratio':>6} records"]
    for c in comparison:
      lines.append(f"{c['task']:9} {c['config']:9} {c['examples']:>8} "
                   f"{c['python_examples_per_second']:>11.1f} "
                   f"{c['auto_examples_per_second']:>9.1f} {c['ratio']:>5.2f}x "
                   f"{'identical' if c['records_identical'] else 'DIFFERENT'}")
  if trees:
    lines += ["", "one worker, each tree and garbage-collector set-up (medians of the repeats; "
                  "ratios to the baseline tree, or to the default collector; CPU ratio: the "
                  "reference's CPU s/ex over this one's):",
              f"{'task':9} {'features':9} {'backend':7} {'tree':8} {'gc':16} {'runs':>4} "
              f"{'steady ex/s':>11} {'ratio':>6} {'CPU s/ex':>8} {'ratio':>6} records"]
    for t in trees:
      lines.append(f"{t['task']:9} {t['config']:9} {t['backend']:7} {t['tree']:8} "
                   f"{t['gc']:16} {t['repeats']:>4} {t['steady_examples_per_second']:>11.1f} "
                   f"{t['ratio']:>5.2f}x {t['cpu_seconds_per_example']:>8.4f} "
                   f"{t['cpu_ratio']:>5.2f}x "
                   f"{'identical' if t['records_identical'] else 'DIFFERENT'}")
  if projection:
    lines += ["", f"projected on {PROJECTED_WORKERS} cores, real settings, backend "
                  f"{DEFAULT_BACKEND} (linear in the workers at the measured 1 -> 2 "
                  "efficiency; and at the CPU seconds per example):",
              f"{'task':9} {'features':9} {'examples':>9} {'ex/s W=1':>9} {'W=2':>7} "
              f"{'effic.':>6} {'W=16':>7} {'hours':>6} {'CPU s/ex':>8} {'hours':>6} "
              f"{'memory GB':>9}"]
    for p in projection:
      lines.append(f"{p['task']:9} {p['config']:9} {p['training_examples']:>9} "
                   f"{p['rate_1']:>9.1f} {p['rate_2']:>7.1f} {p['efficiency_1_to_2']:>6.2f} "
                   f"{p['projected_rate']:>7.1f} {p['projected_hours']:>6.2f} "
                   f"{p['cpu_seconds_per_example']:>8.3f} {p['cpu_bound_hours']:>6.2f} "
                   f"{p['projected_memory_gb']:>9.1f}")
  for p in profiles:
    if "error" in p:
      lines += ["", f"profile {p['task']} {p['config']} {p['backend']}: {p['error']}"]
      continue
    lines += ["", f"profile {p['task']} {p['config']} backend {p['backend']}: {p['examples']} "
                  f"examples in {p['seconds']:.1f}s under cProfile "
                  f"({p['examples_per_second']:.1f} ex/s)"]
    lines += [f"  {share:5.1f}%  {name}" for name, share in p["cost_centres"].items()]
    lines.append("  own time of the top functions:")
    lines += [f"  {f['own_percent']:5.1f}%  {f['function']}  [{f['centre']}]"
              for f in p["top_functions"][:8]]
  return "\n".join(lines)


def main():
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--tasks", default=",".join(TASKS))
  parser.add_argument("--configs", default="tiny,base",
                      help="tiny and/or base (the real settings: configs/<task>/etc_base.yaml)")
  parser.add_argument("--workers", default="1,2")
  parser.add_argument("--backends", default=",".join(BACKENDS),
                      help="WordPieceTokenizer backends to compare with one worker: python "
                           "(the old pure-Python tokenizer) and/or auto (the fast path)")
  parser.add_argument("--profile", default="",
                      help="backends to profile each task's real-settings conversion with "
                           "(one worker, cProfile), e.g. auto; empty: no profile")
  parser.add_argument("--data_style", default="benchmark", choices=DATA_STYLES,
                      help="the generators' preset: benchmark (realistic lengths) or short")
  parser.add_argument("--shards", type=int, default=4)
  parser.add_argument("--nq_examples", type=int, default=192)
  parser.add_argument("--hotpotqa_examples", type=int, default=1200)
  parser.add_argument("--wikihop_examples", type=int, default=1200)
  parser.add_argument("--openkp_examples", type=int, default=1200)
  parser.add_argument("--data_dir", default=os.path.join(_ROOT, "runs", "conversion_benchmark"))
  parser.add_argument("--timeout", type=int, default=1800, help="seconds per configuration")
  parser.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "results",
                                                       "conversion.json"))
  parser.add_argument("--baseline", default="",
                      help="a copy of the repository to compare with (e.g. unpacked from `git "
                           "archive`): every one-worker run is made from it too, alternately "
                           "with this tree, and must write the same records")
  parser.add_argument("--repeats", type=int, default=1,
                      help="one-worker runs of every tree and gc set-up, interleaved")
  parser.add_argument("--gc", default="default",
                      help="garbage-collector set-ups to convert with in this tree, of "
                           f"{', '.join(GC_VARIANTS)} (see _set_gc); one worker")
  parser.add_argument("--child", help=argparse.SUPPRESS)
  args = parser.parse_args()

  if args.child:
    print(json.dumps(_one(json.loads(args.child))))
    return
  backends = [b for b in args.backends.split(",") if b]
  profile_backends = [b for b in args.profile.split(",") if b]
  for backend in backends + profile_backends:
    if backend not in BACKENDS:
      parser.error(f"backend {backend!r}: expected one of {', '.join(BACKENDS)}")
  gc_variants = [v for v in args.gc.split(",") if v]
  for variant in gc_variants:
    if variant not in GC_VARIANTS:
      parser.error(f"--gc {variant!r}: expected some of {', '.join(GC_VARIANTS)}")
  if args.baseline and not os.path.isfile(os.path.join(args.baseline, "benchmarks",
                                                       "conversion.py")):
    parser.error(f"--baseline {args.baseline}: no benchmarks/conversion.py in it")

  os.makedirs(args.data_dir, exist_ok=True)
  start = time.perf_counter()
  inputs = _write_inputs(args.data_dir, args)
  tasks = args.tasks.split(",")
  vocabs = {task: _learn_vocab(task, inputs[task], args.data_dir) for task in tasks}
  lengths = _input_lengths(inputs, tasks)
  print(f"inputs and vocabularies ready in {time.perf_counter() - start:.0f}s; words per "
        "example: " + "; ".join(f"{task} " + ", ".join(
            f"{name} median {value['median']:.0f}" for name, value in figures.items())
                                for task, figures in lengths.items()), flush=True)

  def spec(task, config, workers, backend, profile=False, tree="current", gc_variant="default",
           repeat=0):
    """One run's settings, with an output folder of its own (the records are compared)."""
    name = (f"{task}_{config}_{backend}_w{workers}" + ("_profile" if profile else "")
            + ("" if tree == "current" else f"_{tree}")
            + ("" if gc_variant == "default" else "_gc_" + gc_variant.replace("+", "_")))
    return {"task": task, "config": config, "workers": workers, "backend": backend,
            "profile": profile, "shards": args.shards, "input": inputs[task],
            "vocab": vocabs[task], "output": os.path.join(args.data_dir, "out", name),
            "tree": tree, "gc": gc_variant, "repeat": repeat}

  plan = []
  for task in tasks:
    for kind in args.configs.split(","):
      config = CONFIGS[task][0 if kind == "tiny" else 1]
      for workers in (int(w) for w in args.workers.split(",")):
        # Worker processes build the default tokenizer: other backends run with one worker.
        for backend in (backends if workers == 1 else
                        [b for b in backends if b == DEFAULT_BACKEND]):
          if workers != 1:
            plan.append(spec(task, config, workers, backend))
            continue
          variants = ([("baseline", "default")] if args.baseline else []) + [
              ("current", v) for v in gc_variants]
          for repeat in range(args.repeats):   # interleaved: the load changes over time
            plan += [spec(task, config, workers, backend, tree=tree, gc_variant=v,
                          repeat=repeat) for tree, v in variants]
  plan += [spec(task, CONFIGS[task][1], 1, backend, profile=True)
           for task in tasks for backend in profile_backends]
  rows, profiles = [], []
  for i, one in enumerate(plan):
    print(f"[{i + 1}/{len(plan)}] {one['task']} {one['config']} backend={one['backend']} "
          f"workers={one['workers']}{' (profiled)' if one['profile'] else ''} tree={one['tree']}"
          f" gc={one['gc']} ...", flush=True)
    script = (os.path.join(args.baseline, "benchmarks", "conversion.py")
              if one["tree"] == "baseline" else __file__)
    row = child_runs.run_child(script, ["--child", json.dumps(one)], one, args.timeout)
    (profiles if one["profile"] else rows).append(row)
    print("    " + _summary(row), flush=True)
  _check_records(rows + profiles)
  current = [r for r in rows if r.get("tree", "current") == "current" and r.get("gc", "default")
             == "default" and r.get("repeat", 0) == 0]
  comparison, projection = _comparison(current), _projection(current)
  trees = _tree_comparison(rows)
  print()
  print(_tables(rows, comparison, trees, projection, profiles))
  result = {"benchmark": "conversion", "data_style": args.data_style,
            "nq_input_files": NQ_FILES, "shards": args.shards, "vocab_size": VOCAB_SIZE,
            "input_lengths": lengths, "backends": backends,
            "projection_assumption": "linear in the workers at the 1 -> 2 efficiency: rate(16) = "
                                     "16 * rate(1) * min(1, rate(2) / (2 * rate(1))), steady "
                                     "rates with the real settings; cpu_bound: 16 / CPU seconds "
                                     "per example at W = 1",
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                        "load_average": os.getloadavg()},
            "rows": [_relative_paths(row) for row in rows], "comparison": comparison,
            "baseline": bool(args.baseline), "repeats": args.repeats,
            "gc_variants": gc_variants, "gc_threshold": list(GC_THRESHOLD), "trees": trees,
            "projection": projection, "profiles": [_relative_paths(p) for p in profiles]}
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
