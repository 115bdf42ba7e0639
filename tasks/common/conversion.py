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
same records. One conversion at a time may write a directory. The machinery is the encoder
library's (etc_realformer.data.sharded_conversion); this module adds the task's reader counts.

Duplicate ids. Every copy of an id goes to one part, where the reader's duplicate check handles
it. When whole files are parts (NQ with at least as many files as shards), copies in different
files reach different parts: each done file then also keeps the ids its reader took, by input
file (`ids`), and `merge` stops with a ValueError naming the ids found in more than one shard
(why, and the fixes: docs/file_formats.md, "Duplicate ids in a sharded conversion").
"""

import collections
import dataclasses
import json
import os
from typing import Callable, Dict, Iterable, List

import numpy as np

from etc_realformer.data import sharded_conversion
from etc_realformer.data import tfrecords
from etc_realformer.data.sharded_conversion import ShardRun
from tasks.common.input_parts import Part
from tasks.common.read_report import MAX_MESSAGES, ReadReport

FEATURES_FILE = "features.json"
MAX_NAMED_IDS = 10

Log = Callable[[str], None]
Produce = Callable[[Part, ReadReport, collections.Counter, Log],
                   Iterable[Dict[str, np.ndarray]]]


def fingerprint(input_files: List[str], vocab_file: str, config) -> dict:
  """What a conversion depends on: the input files (with size and time), vocab, feature config."""
  return dict(sharded_conversion.file_fingerprint(input_files),
              vocab_file=os.path.abspath(vocab_file), feature_config=dataclasses.asdict(config))


def convert_once(directory: str, prefix: str, stamp: dict, produce: Produce, source: str,
                 log: Log, num_shards: int = 1, num_workers: int = 1) -> dict:
  """Writes the records of every part of the input, or reuses an identical conversion.

  Returns the content of features.json (see the module docstring). Raises ValueError when no
  record at all could be made.
  """
  def finish(shards: List[dict], stamp: dict) -> dict:
    info = merge(shards, stamp)
    _log_summary(info, source, log)
    if not info["written"]:
      raise ValueError(f"{source}: no training record could be made.\n"
                       f"{_report(info, source).summary()}")
    return info

  info, reused = sharded_conversion.convert_once(
      directory, prefix, stamp, TaskWork(produce, source), log, manifest=FEATURES_FILE,
      finish=finish, describe_shard=_describe_shard, num_shards=num_shards,
      num_workers=num_workers, done_keys=("ids",))
  if reused:
    log(f"{directory}: reusing {info['written']} converted record(s)")
  return info


@dataclasses.dataclass(frozen=True)
class TaskWork:
  """The work of a task's shard: `produce` streams the features of a part and counts what the
  reader took in a ReadReport and the task's counter (a worker process receives it pickled, so
  `produce` must pickle)."""
  produce: Produce
  source: str         # the input, for messages

  def __call__(self, index: int, count: int, log: Log) -> ShardRun:
    """The done record holds, besides the shard, digest, records written and seconds: the
    reader's counts and first messages, the task's counts and the ids the reader took
    ({input file: [id, ...]}, for the check across shards)."""
    report, counts = ReadReport(path=self.source), collections.Counter()
    features = self.produce(Part(index, count), report, counts, log)

    def done() -> dict:
      return {"records": report.records, "examples": report.examples,
              "skipped": dict(report.skipped), "repaired": dict(report.repaired),
              "messages": report.messages, "counts": dict(counts), "ids": report.ids}

    def progress(written: int, seconds: float) -> str:
      return (f"{written} record(s) from {report.records} input record(s) "
              f"({report.records / seconds:.1f} input records/s)")
    return ShardRun(features, done, progress)


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


def _describe_shard(shard: dict) -> str:
  return (f"{shard['file']}: {shard['written']} record(s) from {shard['records']} input "
          f"record(s) in {shard['seconds']:.1f}s "
          f"({shard['records'] / max(shard['seconds'], 1e-9):.1f}/s)")


def _log_summary(info: dict, source: str, log: Log) -> None:
  log(_report(info, source).summary())
  if info["counts"]:
    log("conversion: " + ", ".join(f"{k} {v}" for k, v in sorted(info["counts"].items())))


def record_files(directory: str, prefix: str) -> List[str]:
  return tfrecords.expand_files(os.path.join(directory, f"{prefix}-*.tfrecord"))
