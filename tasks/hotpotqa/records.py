"""HotpotQA features on disk: conversion of a whole file to TFRecord shards, and reading them.

`convert_file` writes `<directory>/hotpotqa-*.tfrecord` and `<directory>/features.json` (the
feature config, vocab, counts and the conversion report). A directory converted with the same
input, vocab and feature config is reused, not converted again.
"""

import dataclasses
import json
import os
from typing import Callable, List, Sequence

from absl import logging

from etc_realformer.data import tfrecords
from etc_realformer.data.span_tokenization import OffsetTokenizer
from etc_realformer.io_utils import atomic_write_json
from tasks.hotpotqa import features as features_lib
from tasks.hotpotqa.data import HotpotExample, ReadReport, read_examples

FEATURES_FILE = "features.json"
PREFIX = "hotpotqa"


def convert_examples(examples: Sequence[HotpotExample], tokenizer: OffsetTokenizer,
                     config: features_lib.HotpotFeatureConfig, with_labels: bool,
                     report: ReadReport = None, progress_every: int = 1000,
                     log: Callable[[str], None] = logging.info):
  """-> (list of feature dicts, list of layouts), skipping (and counting) unlabelable examples."""
  features, layouts, truncated = [], [], 0
  for i, example in enumerate(examples):
    try:
      f, layout = features_lib.convert_example(example, tokenizer, config, with_labels)
    except features_lib.LabelError as e:
      if report is not None:
        report.skip(e.reason, f"{report.path}: _id {example.qas_id}: field 'answer': {e}")
      continue
    truncated += bool(layout.dropped or layout.question_truncated)
    features.append(f)
    layouts.append(layout)
    if progress_every and (i + 1) % progress_every == 0:
      log(f"  converted {i + 1}/{len(examples)} examples")
  if report is not None:
    report.examples = len(features)
  log(f"converted {len(features)} example(s); {truncated} truncated to "
      f"{config.long_seq_len} long / {config.global_seq_len} global tokens")
  return features, layouts


def _fingerprint(input_path: str, vocab_file: str, config, tokenizer: OffsetTokenizer) -> dict:
  stat = os.stat(input_path)
  return {"input": os.path.abspath(input_path), "input_size": stat.st_size,
          "input_mtime": stat.st_mtime, "vocab_file": os.path.abspath(vocab_file),
          "tokenizer": tokenizer.tokenizer.signature,
          "feature_config": dataclasses.asdict(config)}


def convert_file(input_path: str, directory: str, tokenizer: OffsetTokenizer, vocab_file: str,
                 config: features_lib.HotpotFeatureConfig, num_shards: int = 1,
                 log: Callable[[str], None] = logging.info) -> dict:
  """Converts a labelled HotpotQA file to TFRecords (or reuses an identical conversion).

  Returns the content of features.json (fingerprint, counts, report).
  """
  info_path = os.path.join(directory, FEATURES_FILE)
  fingerprint = _fingerprint(input_path, vocab_file, config, tokenizer)
  if os.path.exists(info_path):
    with open(info_path) as f:
      info = json.load(f)
    if info.get("fingerprint") == fingerprint:
      log(f"{directory}: reusing {info['examples']} converted example(s)")
      return info
  examples, report = read_examples(input_path, with_labels=True)
  features, _ = convert_examples(examples, tokenizer, config, with_labels=True, report=report,
                                 log=log)
  log(report.summary())
  if not features:
    raise ValueError(f"{input_path}: no example could be labelled.\n{report.summary()}")
  count = tfrecords.write_shards(features, os.path.join(directory, PREFIX), num_shards)
  info = {"fingerprint": fingerprint, "examples": count, "records": report.records,
          "skipped": dict(report.skipped), "repaired": dict(report.repaired),
          "messages": report.messages}
  atomic_write_json(info_path, info)
  return info


def parse_fn(config: features_lib.HotpotFeatureConfig) -> Callable:
  """[batch] serialized records -> dict of int32 tensors ([batch] or [batch, length])."""
  return tfrecords.fixed_length_parse_fn(features_lib.feature_lengths(config))


def record_files(directory: str) -> List[str]:
  return tfrecords.expand_files(os.path.join(directory, f"{PREFIX}-*.tfrecord"))


stack = tfrecords.stack_features   # feature dicts -> int32 arrays [N, ...]
