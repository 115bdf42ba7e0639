"""NQ training windows on disk: streaming conversion of a file to TFRecords, and reading them.

`convert_file` reads the file (or glob) one example at a time, writes the training windows to
`<directory>/nq-*.tfrecord` and `<directory>/features.json` (the feature config, vocab, counts
and the reader's report). Every window holding the answer is kept; answerless windows are kept
at `null_window_keep_rate` (a fixed choice per example id and window, so re-running converts the
same windows). A directory converted from the same input, vocab and config is reused.
"""

import collections
import json
import os
from typing import Callable, Dict, Iterable, Iterator, List, Tuple

from absl import logging
import numpy as np

from etc_realformer.data import conversion
from etc_realformer.data import tfrecords
from etc_realformer.data.read_report import ReadReport
from etc_realformer.data.span_tokenization import OffsetTokenizer
from etc_realformer.io_utils import atomic_write_json
from tasks.nq import features as features_lib
from tasks.nq.data import NqExample, expand_paths, iter_examples

FEATURES_FILE = "features.json"
PREFIX = "nq"


def training_windows(examples: Iterable[NqExample], tokenizer: OffsetTokenizer,
                     config: features_lib.NqFeatureConfig, counts: collections.Counter,
                     progress_every: int = 1000, log: Callable[[str], None] = logging.info
                     ) -> Iterator[Dict[str, np.ndarray]]:
  """Labelled windows to train on; `counts` gathers windows by kind and answers lost."""
  for i, example in enumerate(examples):
    windows, _ = features_lib.convert_example(example, tokenizer, config, with_labels=True)
    label = features_lib.gold_label(example.annotations)
    answered = [features_lib.is_answer_window(f) for f in windows]
    counts["examples"] += 1
    counts["windows"] += len(windows)
    if label.long_answer is not None and not any(answered):
      counts["answer in no single window (all windows null)"] += 1
    for w, (f, has_answer) in enumerate(zip(windows, answered)):
      if has_answer:
        counts["answer windows"] += 1
        counts[f"type {features_lib.ANSWER_TYPES[int(f['answer_type'])]}"] += 1
        yield f
      elif features_lib.window_keep(example.example_id, w, config.null_window_keep_rate):
        counts["null windows kept"] += 1
        yield f
      else:
        counts["null windows dropped"] += 1
    if progress_every and (i + 1) % progress_every == 0:
      log(f"  converted {i + 1} examples ({counts['windows']} windows)")


def convert_file(input_path: str, directory: str, tokenizer: OffsetTokenizer, vocab_file: str,
                 config: features_lib.NqFeatureConfig, num_shards: int = 1,
                 log: Callable[[str], None] = logging.info) -> dict:
  """Converts a labelled NQ file (original or simplified format) to TFRecord windows.

  Returns the content of features.json (fingerprint, counts, report).
  """
  info_path = os.path.join(directory, FEATURES_FILE)
  fingerprint = dict(conversion.fingerprint(expand_paths(input_path), vocab_file, config),
                     tokenizer=tokenizer.tokenizer.signature)
  if os.path.exists(info_path):
    with open(info_path) as f:
      info = json.load(f)
    if info.get("fingerprint") == fingerprint:
      log(f"{directory}: reusing {info['windows']} converted window(s)")
      return info
  report = ReadReport(path=input_path)
  counts = collections.Counter()
  examples = iter_examples(input_path, with_labels=True, report=report)
  written = tfrecords.write_shards(training_windows(examples, tokenizer, config, counts, log=log),
                                   os.path.join(directory, PREFIX), num_shards)
  log(report.summary())
  log("windows: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
  if not written:
    raise ValueError(f"{input_path}: no training window could be made.\n{report.summary()}")
  info = {"fingerprint": fingerprint, "windows": written, "records": report.records,
          "examples": report.examples, "counts": dict(counts), "skipped": dict(report.skipped),
          "messages": report.messages}
  atomic_write_json(info_path, info)
  return info


def parse_fn(config: features_lib.NqFeatureConfig) -> Callable:
  """[batch] serialized records -> dict of int32 tensors ([batch] or [batch, length])."""
  return tfrecords.fixed_length_parse_fn(features_lib.feature_lengths(config))


def record_files(directory: str) -> List[str]:
  return tfrecords.expand_files(os.path.join(directory, f"{PREFIX}-*.tfrecord"))


stack = tfrecords.stack_features   # feature dicts -> int32 arrays [N, ...]


def prediction_windows(examples: Iterable[NqExample], tokenizer: OffsetTokenizer,
                       config: features_lib.NqFeatureConfig
                       ) -> Iterator[Tuple[NqExample, features_lib.ExampleLayout,
                                           List[Dict[str, np.ndarray]]]]:
  """(example, layout, windows) for every usable example (all windows, no labels)."""
  for example in examples:
    if example.problem:
      continue
    windows, layout = features_lib.convert_example(example, tokenizer, config, with_labels=False)
    yield example, layout, windows
