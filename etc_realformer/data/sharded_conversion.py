"""Converting an input to TFRecord shards once, in parallel, resumable (any kind of input).

A conversion hands `convert_once` a fingerprint (what its records depend on: input files with
sizes and times, vocabulary, settings) and a `work`: called as `work(index, count, log)` in the
process that converts shard `index` of `count`, it returns a `ShardRun` that streams the records
of that part of the input and, once they are all written, the counts to keep. The input is cut
into `num_shards` parts and part k becomes `<prefix>-0000k-of-000NN.tfrecord`:

  - each shard is written under a temporary name and renamed when complete, then a done file
    beside it (`<shard>.done.json`) records the fingerprint's digest, the records written, the
    seconds it took and the work's counts;
  - `num_workers` processes (spawned: TensorFlow is not fork-safe) each take the next shard still
    to do; one worker converts in this process;
  - the manifest (a JSON file named by the conversion) is what the conversion's `finish` makes
    of the done records, with the fingerprint (and num_shards) under "fingerprint"; it is
    written last.

A call with the same fingerprint reuses the manifest. A conversion that stopped part-way (killed,
or a worker failed) keeps, on the next call, every shard whose done file matches and converts
the others. Stale files (another fingerprint or number of shards) are removed first. When the
records of a shard depend only on the input and num_shards, any number of workers gives the
same records. One conversion at a time may write a directory.

The task conversions (tasks.common.conversion) and the pretraining data
(etc_realformer.data.pretraining_data) are built on this.
"""

import contextlib
from concurrent import futures
import dataclasses
import gc
import glob
import hashlib
import json
import multiprocessing
import os
import sys
import time
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from etc_realformer.data import tfrecords
from etc_realformer.io_utils import atomic_write_json

DONE_SUFFIX = ".done.json"
PROGRESS_SECONDS = 60.0

Log = Callable[[str], None]


@dataclasses.dataclass
class ShardRun:
  """One shard's conversion as the work starts it.

  Attributes:
    records: the records (feature dicts) of the shard, streamed into its file.
    counts: called once `records` is exhausted: the counts the done file keeps (JSON values;
      "shard", "file", "digest", "written" and "seconds" are added).
    progress: (records written so far, seconds since the start) -> a progress line (logged
      after the shard's file name).
    every_seconds: seconds between progress lines.
  """
  records: Iterable[Dict[str, Any]]
  counts: Callable[[], dict]
  progress: Callable[[int, float], str]
  every_seconds: float = PROGRESS_SECONDS


Work = Callable[[int, int, Log], ShardRun]


@dataclasses.dataclass(frozen=True)
class ShardJob:
  """One shard to convert; a worker process receives it pickled (so `work` must pickle)."""
  work: Work
  path: str           # the shard's TFRecord file
  index: int          # part `index` of `count` of the input
  count: int
  digest: str


def file_fingerprint(input_files: Sequence[str]) -> dict:
  """The input files of a conversion with their sizes and modification times."""
  return {"input": [os.path.abspath(f) for f in input_files],
          "input_sizes": [os.stat(f).st_size for f in input_files],
          "input_mtimes": [os.stat(f).st_mtime for f in input_files]}


def file_digest(path: str) -> str:
  """The SHA-256 of a file's content (e.g. a vocabulary, whose content matters, not its path)."""
  sha = hashlib.sha256()
  with open(path, "rb") as f:
    for block in iter(lambda: f.read(1 << 20), b""):
      sha.update(block)
  return sha.hexdigest()


def digest(stamp: dict) -> str:
  """A short hash of a fingerprint, kept in every done file."""
  return hashlib.sha256(json.dumps(stamp, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def check_counts(num_shards: int, num_workers: int) -> None:
  for name, value in (("num_shards", num_shards), ("num_workers", num_workers)):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
      raise ValueError(f"{name}: must be a positive integer, got {value!r}")


def full_stamp(stamp: dict, num_shards: int) -> dict:
  """The fingerprint as the manifest keeps it: with num_shards, in its JSON form."""
  return json.loads(json.dumps(dict(stamp, num_shards=num_shards)))


def convert_once(directory: str, prefix: str, stamp: dict, work: Work, log: Log, *,
                 manifest: str, finish: Callable[[List[dict], dict], dict],
                 describe_shard: Callable[[dict], str], num_shards: int = 1,
                 num_workers: int = 1, done_keys: Sequence[str] = ()) -> Tuple[dict, bool]:
  """Writes the records of every part of the input, or reuses an identical conversion.

  Args:
    directory: where the shards, their done files and the manifest go.
    prefix: the shards' file name prefix.
    stamp: the fingerprint (num_shards is added).
    work: makes the records of a part (see the module docstring); pickled for a worker process.
    log: progress and summary lines.
    manifest: the manifest's file name in `directory`.
    finish: (done records in shard order, fingerprint) -> the manifest's content, which must
      keep the fingerprint under "fingerprint"; it may raise (e.g. nothing written), and then
      no manifest is written while the done shards stay.
    describe_shard: a done record -> the line logged when its shard is done.
    num_shards, num_workers: parts of the input (and shards), and processes converting them.
    done_keys: keys a done file must hold to be reused (an older layout is converted again).

  Returns:
    (the manifest's content, whether an identical conversion was reused).
  """
  check_counts(num_shards, num_workers)
  stamp = full_stamp(stamp, num_shards)
  paths = tfrecords.shard_paths(os.path.join(directory, prefix), num_shards)
  manifest_path = os.path.join(directory, manifest)
  info = reusable(manifest_path, stamp, paths)
  if info is not None:
    return info, True
  key = digest(stamp)
  os.makedirs(directory, exist_ok=True)
  remove_stale(directory, prefix, paths, key, manifest, done_keys)
  shards = convert_shards(paths, key, work, num_workers, log, describe_shard, done_keys)
  info = finish(shards, stamp)
  atomic_write_json(manifest_path, info)
  return info, False


def convert_shards(paths: List[str], key: str, work: Work, num_workers: int, log: Log,
                   describe_shard: Callable[[dict], str],
                   done_keys: Sequence[str] = ()) -> List[dict]:
  """The done records of every shard (in order), converting the shards not done yet."""
  done = {k: shard for k, shard in enumerate(read_done(p, key, done_keys) for p in paths)
          if shard}
  jobs = [ShardJob(work, path, k, len(paths), key)
          for k, path in enumerate(paths) if k not in done]
  if done:
    log(f"{os.path.dirname(paths[0])}: {len(done)} of {len(paths)} shard(s) already "
        f"converted; converting the other {len(jobs)}")
  start = time.perf_counter()
  for shard in run_jobs(jobs, num_workers, log):
    done[shard["shard"]] = shard
    log(f"{describe_shard(shard)}; {len(done)} of {len(paths)} shard(s) done after "
        f"{time.perf_counter() - start:.0f}s")
  return [done[k] for k in range(len(paths))]


def reusable(manifest_path: str, stamp: dict, paths: List[str]) -> Optional[dict]:
  """The manifest when it has this fingerprint (`full_stamp`) and every shard is there."""
  try:
    with open(manifest_path) as f:
      info = json.load(f)
  except (OSError, ValueError):
    return None
  if (not isinstance(info, dict) or info.get("fingerprint") != stamp
      or not all(os.path.exists(p) for p in paths)):
    return None
  return info


def remove_stale(directory: str, prefix: str, paths: List[str], key: str, manifest: str,
                 done_keys: Sequence[str] = ()) -> None:
  """Removes the manifest, temporary files, shards of another layout and shards whose done
  file does not match `key` (a half-written or outdated conversion)."""
  if os.path.exists(os.path.join(directory, manifest)):
    os.remove(os.path.join(directory, manifest))
  current = set(paths)
  for path in glob.glob(os.path.join(directory, f"{prefix}-*")):
    shard = path[:-len(DONE_SUFFIX)] if path.endswith(DONE_SUFFIX) else path
    if path.endswith(".tmp") or shard not in current:
      os.remove(path)
  for path in paths:
    if read_done(path, key, done_keys) is None:
      for stale in (path, path + DONE_SUFFIX):
        if os.path.exists(stale):
          os.remove(stale)


def read_done(path: str, key: str, done_keys: Sequence[str] = ()) -> Optional[dict]:
  """A shard's done file when it matches the fingerprint digest, holds `done_keys` and the
  shard exists."""
  try:
    with open(path + DONE_SUFFIX) as f:
      shard = json.load(f)
  except (OSError, ValueError):
    return None
  usable = (isinstance(shard, dict) and shard.get("digest") == key
            and all(k in shard for k in done_keys) and os.path.exists(path))
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

  Returns the done file's content: the shard, its file name, the digest, records written, the
  work's counts and the seconds it took.
  """
  log = log or log_to_stderr
  start = time.perf_counter()
  run = job.work(job.index, job.count, log)
  name = os.path.basename(job.path)

  def progress(count: int, seconds: float) -> str:
    return f"{name}: {run.progress(count, seconds)}"
  with _fewer_collections():
    written = tfrecords.write_shard(
        with_progress(run.records, progress, log, run.every_seconds), job.path)
  shard = {"shard": job.index, "file": name, "digest": job.digest, "written": written}
  shard.update(run.counts())
  shard["seconds"] = round(time.perf_counter() - start, 3)
  atomic_write_json(job.path + DONE_SUFFIX, shard)
  return shard


_COLLECTED_ONCE = False


@contextlib.contextmanager
def _fewer_collections():
  """Converting makes millions of short-lived objects; the garbage collector's default
  thresholds then keep re-scanning the long-lived ones (TensorFlow's modules, the vocabulary).
  Those are frozen out of collection and the young generation is collected less often while a
  shard is written (NQ: 1.12x less CPU per page, measured with benchmarks/conversion.py --gc)."""
  global _COLLECTED_ONCE
  threshold = gc.get_threshold()
  if not _COLLECTED_ONCE:  # a full collection with TensorFlow loaded costs ~0.16 CPU s: once
    gc.collect()
    _COLLECTED_ONCE = True
  gc.freeze()
  gc.set_threshold(50_000, 20, 20)
  try:
    yield
  finally:
    gc.set_threshold(*threshold)
    gc.unfreeze()


def with_progress(records: Iterable, progress: Callable[[int, float], str], log: Log,
                  every_seconds: float = PROGRESS_SECONDS) -> Iterator:
  """Passes the records on, logging `progress(count, seconds)` every `every_seconds`."""
  start = last = time.perf_counter()
  for count, record in enumerate(records, start=1):
    yield record
    now = time.perf_counter()
    if now - last >= every_seconds:
      last = now
      log(progress(count, now - start))


def log_to_stderr(message: str) -> None:
  """The log of a worker process (its stderr is the parent's)."""
  print(message, file=sys.stderr, flush=True)
