"""Converting a task's training file to TFRecords once, and reusing the result while unchanged.

A task hands `convert_once` a fingerprint (input files with sizes and times, vocab, feature
config) and a function that streams its feature dicts. The records go to
`<directory>/<prefix>-*.tfrecord` and `<directory>/features.json` records the fingerprint, the
counts and the reader's report; the next call with the same fingerprint reuses them.
"""

import collections
import dataclasses
import json
import os
from typing import Callable, Dict, Iterable, List

import numpy as np

from etc_realformer.data import tfrecords
from tasks.common.read_report import ReadReport
from etc_realformer.io_utils import atomic_write_json

FEATURES_FILE = "features.json"


def fingerprint(input_files: List[str], vocab_file: str, config) -> dict:
  """What a conversion depends on: the input files (with size and time), vocab, feature config."""
  return {"input": [os.path.abspath(f) for f in input_files],
          "input_sizes": [os.stat(f).st_size for f in input_files],
          "input_mtimes": [os.stat(f).st_mtime for f in input_files],
          "vocab_file": os.path.abspath(vocab_file), "feature_config": dataclasses.asdict(config)}


def convert_once(directory: str, prefix: str, stamp: dict,
                 produce: Callable[[ReadReport, collections.Counter],
                                   Iterable[Dict[str, np.ndarray]]],
                 source: str, log: Callable[[str], None], num_shards: int = 1) -> dict:
  """Writes the records `produce(report, counts)` yields, or reuses an identical conversion.

  Returns the content of features.json: fingerprint, number of records written, the reader's
  record/example/skip counts and messages, and `counts` (what `produce` counted).
  """
  info_path = os.path.join(directory, FEATURES_FILE)
  if os.path.exists(info_path):
    with open(info_path) as f:
      info = json.load(f)
    if info.get("fingerprint") == stamp:
      log(f"{directory}: reusing {info['written']} converted record(s)")
      return info
  report = ReadReport(path=source)
  counts = collections.Counter()
  written = tfrecords.write_shards(produce(report, counts), os.path.join(directory, prefix),
                                   num_shards)
  log(report.summary())
  if counts:
    log("conversion: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
  if not written:
    raise ValueError(f"{source}: no training record could be made.\n{report.summary()}")
  info = {"fingerprint": stamp, "written": written, "records": report.records,
          "examples": report.examples, "counts": dict(counts), "skipped": dict(report.skipped),
          "repaired": dict(report.repaired), "messages": report.messages}
  atomic_write_json(info_path, info)
  return info


def record_files(directory: str, prefix: str) -> List[str]:
  return tfrecords.expand_files(os.path.join(directory, f"{prefix}-*.tfrecord"))
