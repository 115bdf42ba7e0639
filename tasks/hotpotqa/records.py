"""HotpotQA examples -> feature dicts: streamed labelled ones to train on, and feature dicts with
layouts to predict.

The task (tasks.hotpotqa.task) writes the training features to TFRecords once and reuses them.
"""

import collections
from typing import Callable, Dict, Iterable, Iterator, Sequence

from absl import logging
import numpy as np

from etc_realformer.data.span_tokenization import OffsetTokenizer
from tasks.hotpotqa import features as features_lib
from tasks.common.read_report import ReadReport
from tasks.hotpotqa.data import HotpotExample


def training_features(examples: Iterable[HotpotExample], tokenizer: OffsetTokenizer,
                      config: features_lib.HotpotFeatureConfig, report: ReadReport,
                      counts: collections.Counter, progress_every: int = 1000,
                      log: Callable[[str], None] = logging.info
                      ) -> Iterator[Dict[str, np.ndarray]]:
  """Labelled features of a stream of examples; an example that cannot be labelled after
  conversion (answer truncated) is skipped and counted in `report`, truncation in `counts`."""
  for i, example in enumerate(examples):
    try:
      f, layout = features_lib.convert_example(example, tokenizer, config, with_labels=True)
    except features_lib.LabelError as e:
      report.skip(e.reason, f"{report.path}: _id {example.qas_id}: field 'answer': {e}")
      report.examples -= 1
      continue
    counts["examples"] += 1
    counts["truncated examples"] += bool(layout.dropped or layout.question_truncated)
    yield f
    if progress_every and (i + 1) % progress_every == 0:
      log(f"  converted {i + 1} examples")


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
