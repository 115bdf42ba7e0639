"""Converting a task's training file to TFRecord shards once, in parallel, resumable.

A task hands `convert_once` a fingerprint (input files with sizes and times, vocab, feature
config) and `produce(part, report, counts, log)`, which streams the feature dicts of one part of
the input (tasks.common.input_parts) and counts what it read in `report` and `counts`. The input
is cut into `num_shards` parts and part k becomes `<prefix>-0000k-of-000NN.tfrecord`:

  - each shard is written under a temporary name and renamed when complete, then a done file
    beside it (`<shard>.done.json`) records the fingerprint's digest and the shard's counts;
  - `num_workers` processes (spawned: TensorFlow is not fork-safe) each take the next shard still
    to do; one worker converts in this process;
  - the manifest `features.json` merges the done files: the fingerprint (with num_shards),
    records written in all and per shard, the reader's records, examples, skips and repairs by
    reason with the first messages, and the task's counts.

A call with the same fingerprint reuses the manifest. A conversion that stopped part-way (killed,
or a worker failed) keeps, on the next call, every shard whose done file matches and converts
the others. Stale files (another fingerprint or number of shards) are removed first. The
records of a shard depend only on the input and num_shards, so any number of workers gives the
same records. One conversion at a time may write a directory.

Duplicate ids. Every copy of an id goes to one part, where the reader's duplicate check handles it
as within one file (NQ, HotpotQA, WikiHop skip later copies and count them; OpenKP keeps the last
record of a url and counts the replacement). Copies in different input files reach different
parts when whole files are parts (NQ with at least as many files as shards), so each done file
also keeps the ids its reader took, by input file (`ids`), and `merge` compares the shards: an
id in more than one shard stops the conversion with a ValueError naming the first ids, their
shards and input files, and how many there are. No task keeps two records of an id, and the
shards are already written: going on would train on both copies, or drop one that no count
shows. The shards stay done (a new call fails the same way at once); fix the input, or convert
with one shard (or, for several files, more shards than files: every part then reads every
file and routes records by id, so the copies meet).
"""

import collections
from concurrent import futures
import dataclasses
import glob
import hashlib
import json
import multiprocessing
import os
import sys
import time
from typing import Callable, Dict, Iterable, Iterator, List, Optional

import numpy as np

from etc_realformer.data import tfrecords
from etc_realformer.io_utils import atomic_write_json
from tasks.common.input_parts import Part
from tasks.common.read_report import MAX_MESSAGES, ReadReport

FEATURES_FILE = "features.json"
DONE_SUFFIX = ".done.json"
PROGRESS_SECONDS = 60.0
MAX_NAMED_IDS = 10

Log = Callable[[str], None]
Produce = Callable[[Part, ReadReport, collections.Counter, Log],
                   Iterable[Dict[str, np.ndarray]]]


def fingerprint(input_files: List[str], vocab_file: str, config) -> dict:
  """What a conversion depends on: the input files (with size and time), vocab, feature config."""
  return {"input": [os.path.abspath(f) for f in input_files],
          "input_sizes": [os.stat(f).st_size for f in input_files],
          "input_mtimes": [os.stat(f).st_mtime for f in input_files],
          "vocab_file": os.path.abspath(vocab_file), "feature_config": dataclasses.asdict(config)}


def digest(stamp: dict) -> str:
  """A short hash of a fingerprint, kept in every done file."""
  return hashlib.sha256(json.dumps(stamp, sort_keys=True).encode("utf-8")).hexdigest()[:16]


@dataclasses.dataclass(frozen=True)
class ShardJob:
  """One shard to convert; a worker process receives it pickled (so `produce` must pickle)."""
  produce: Produce
  path: str           # the shard's TFRecord file
  part: Part
  source: str         # the input, for messages
  digest: str


def convert_once(directory: str, prefix: str, stamp: dict, produce: Produce, source: str,
                 log: Log, num_shards: int = 1, num_workers: int = 1) -> dict:
  """Writes the records of every part of the input, or reuses an identical conversion.

  Returns the content of features.json (see the module docstring). Raises ValueError when no
  record at all could be made.
  """
  for name, value in (("num_shards", num_shards), ("num_workers", num_workers)):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
      raise ValueError(f"{name}: must be a positive integer, got {value!r}")
  stamp = json.loads(json.dumps(dict(stamp, num_shards=num_shards)))
  paths = tfrecords.shard_paths(os.path.join(directory, prefix), num_shards)
  info_path = os.path.join(directory, FEATURES_FILE)
  info = _reusable(info_path, stamp, paths)
  if info is not None:
    log(f"{directory}: reusing {info['written']} converted record(s)")
    return info
  key = digest(stamp)
  os.makedirs(directory, exist_ok=True)
  _remove_stale(directory, prefix, paths, key)
  info = merge(_convert_shards(paths, key, produce, source, num_workers, log), stamp)
  _log_summary(info, source, log)
  if not info["written"]:
    raise ValueError(f"{source}: no training record could be made.\n"
                     f"{_report(info, source).summary()}")
  atomic_write_json(info_path, info)
  return info


def _convert_shards(paths: List[str], key: str, produce: Produce, source: str,
                    num_workers: int, log: Log) -> List[dict]:
  """The done records of every shard (in order), converting the shards not done yet."""
  done = {k: shard for k, shard in enumerate(read_done(p, key) for p in paths) if shard}
  jobs = [ShardJob(produce, path, Part(k, len(paths)), source, key)
          for k, path in enumerate(paths) if k not in done]
  if done:
    log(f"{os.path.dirname(paths[0])}: {len(done)} of {len(paths)} shard(s) already "
        f"converted; converting the other {len(jobs)}")
  start = time.perf_counter()
  for shard in run_jobs(jobs, num_workers, log):
    done[shard["shard"]] = shard
    _log_shard(shard, len(done), len(paths), time.perf_counter() - start, log)
  return [done[k] for k in range(len(paths))]


def _reusable(info_path: str, stamp: dict, paths: List[str]) -> Optional[dict]:
  """The manifest when it has this fingerprint and every shard is there."""
  try:
    with open(info_path) as f:
      info = json.load(f)
  except (OSError, ValueError):
    return None
  if info.get("fingerprint") != stamp or not all(os.path.exists(p) for p in paths):
    return None
  return info


def _remove_stale(directory: str, prefix: str, paths: List[str], key: str) -> None:
  """Removes the manifest, temporary files, shards of another layout and shards whose done
  file does not match `key` (a half-written or outdated conversion)."""
  if os.path.exists(os.path.join(directory, FEATURES_FILE)):
    os.remove(os.path.join(directory, FEATURES_FILE))
  current = set(paths)
  for path in glob.glob(os.path.join(directory, f"{prefix}-*")):
    shard = path[:-len(DONE_SUFFIX)] if path.endswith(DONE_SUFFIX) else path
    if path.endswith(".tmp") or shard not in current:
      os.remove(path)
  for path in paths:
    if read_done(path, key) is None:
      for stale in (path, path + DONE_SUFFIX):
        if os.path.exists(stale):
          os.remove(stale)


def read_done(path: str, key: str) -> Optional[dict]:
  """A shard's done file when it matches the fingerprint digest and the shard exists (and has
  the ids: a done file written before they were kept means converting the shard again)."""
  try:
    with open(path + DONE_SUFFIX) as f:
      shard = json.load(f)
  except (OSError, ValueError):
    return None
  usable = shard.get("digest") == key and "ids" in shard and os.path.exists(path)
  return shard if usable else None


def run_jobs(jobs: List[ShardJob], num_workers: int, log: Log) -> Iterator[dict]:
  """Converts the shards, yielding each one's done record as it completes: in this process for
  one worker (or one job), else in a pool of spawned processes. A worker that fails, or dies
  (e.g. killed for memory), stops the conversion with its error; finished shards stay done."""
  if num_workers == 1 or len(jobs) <= 1:
    for job in jobs:
      yield convert_shard(job, log)
    return
  context = multiprocessing.get_context("spawn")
  with futures.ProcessPoolExecutor(min(num_workers, len(jobs)), mp_context=context) as pool:
    pending = [pool.submit(convert_shard, job) for job in jobs]
    try:
      for done in futures.as_completed(pending):
        yield done.result()
    finally:
      for future in pending:
        future.cancel()


def convert_shard(job: ShardJob, log: Optional[Log] = None) -> dict:
  """Converts one shard in this process: its TFRecord file (atomic), then its done file.

  Returns the done file's content: the shard, the digest, records written, the reader's counts
  and first messages, the task's counts, the seconds it took and the ids the reader took
  ({input file: [id, ...]}, for the check across shards).
  """
  log = log or _log_to_stderr
  start = time.perf_counter()
  report, counts = ReadReport(path=job.source), collections.Counter()
  name = os.path.basename(job.path)
  features = _with_progress(job.produce(job.part, report, counts, log), name, report, log)
  written = tfrecords.write_shard(features, job.path)
  shard = {"shard": job.part.index, "file": name, "digest": job.digest, "written": written,
           "records": report.records, "examples": report.examples,
           "skipped": dict(report.skipped), "repaired": dict(report.repaired),
           "messages": report.messages, "counts": dict(counts),
           "seconds": round(time.perf_counter() - start, 3), "ids": report.ids}
  atomic_write_json(job.path + DONE_SUFFIX, shard)
  return shard


def _with_progress(features: Iterable, name: str, report: ReadReport, log: Log,
                   every_seconds: float = PROGRESS_SECONDS) -> Iterator:
  """Passes the features on, logging the shard's progress every `every_seconds`."""
  start = last = time.perf_counter()
  for count, feature in enumerate(features, start=1):
    yield feature
    now = time.perf_counter()
    if now - last >= every_seconds:
      last = now
      log(f"{name}: {count} record(s) from {report.records} input record(s) "
          f"({report.records / (now - start):.1f} input records/s)")


def _log_to_stderr(message: str) -> None:
  """The log of a worker process (its stderr is the parent's)."""
  print(message, file=sys.stderr, flush=True)


def merge(shards: List[dict], stamp: dict) -> dict:
  """The manifest of a conversion from the done records of its shards (in shard order);
  ValueError when an id is in more than one shard (see the module docstring)."""
  _check_ids_in_one_shard(shards)
  counts, skipped, repaired = (collections.Counter() for _ in range(3))
  messages = []
  for shard in shards:
    counts.update(shard["counts"])
    skipped.update(shard["skipped"])
    repaired.update(shard["repaired"])
    messages.extend(shard["messages"][:MAX_MESSAGES - len(messages)])
  return {"fingerprint": stamp, "written": sum(s["written"] for s in shards),
          "records": sum(s["records"] for s in shards),
          "examples": sum(s["examples"] for s in shards), "counts": dict(counts),
          "skipped": dict(skipped), "repaired": dict(repaired), "messages": messages,
          "shards": [{key: s[key] for key in ("file", "written", "records", "examples",
                                               "seconds")} for s in shards]}


def repeated_ids(shards: List[dict]) -> List[str]:
  """The ids (as JSON text: 7 and "7" differ, as for the readers) that more than one shard's
  done record holds, in the order they are met."""
  first_shard, repeated = {}, {}
  for k, shard in enumerate(shards):
    for ids in shard["ids"].values():
      for value in ids:
        key = json.dumps(value)
        if first_shard.setdefault(key, k) != k:
          repeated[key] = None
  return list(repeated)


def _check_ids_in_one_shard(shards: List[dict]) -> None:
  """ValueError naming the first ids that are in several shards with their shard and input
  files."""
  repeated = repeated_ids(shards)
  if not repeated:
    return
  places = {key: [] for key in repeated[:MAX_NAMED_IDS]}
  for shard in shards:
    for file, ids in shard["ids"].items():
      for key in map(json.dumps, ids):
        if key in places:
          places[key].append(f"{shard['file']} (from {file})")
  named = "\n".join(f"  id {key}: {', '.join(where)}" for key, where in places.items())
  raise ValueError(
      f"{len(repeated)} example id(s) occur in more than one conversion shard (the first "
      f"{len(places)} below): copies of an id in different input files went to different "
      "shards. Within one file the reader keeps one record per id and counts the other "
      "copies; the shards are already written, so the conversion stops instead of keeping both "
      f"copies or dropping one uncounted.\n{named}\nRemove the repeated records from the "
      "input, or convert with num_shards=1 (or more shards than input files: every shard then "
      "reads every file and routes records by id, so the copies meet in one shard).")


def _report(info: dict, source: str) -> ReadReport:
  """The merged reader counts of a manifest as a ReadReport (for its summary)."""
  return ReadReport(path=source, records=info["records"], examples=info["examples"],
                    skipped=collections.Counter(info["skipped"]),
                    repaired=collections.Counter(info["repaired"]),
                    messages=list(info["messages"]))


def _log_shard(shard: dict, done: int, total: int, seconds: float, log: Log) -> None:
  log(f"{shard['file']}: {shard['written']} record(s) from {shard['records']} input record(s) "
      f"in {shard['seconds']:.1f}s ({shard['records'] / max(shard['seconds'], 1e-9):.1f}/s); "
      f"{done} of {total} shard(s) done after {seconds:.0f}s")


def _log_summary(info: dict, source: str, log: Log) -> None:
  log(_report(info, source).summary())
  if info["counts"]:
    log("conversion: " + ", ".join(f"{k} {v}" for k, v in sorted(info["counts"].items())))


def record_files(directory: str, prefix: str) -> List[str]:
  return tfrecords.expand_files(os.path.join(directory, f"{prefix}-*.tfrecord"))
