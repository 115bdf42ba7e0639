"""NQ examples -> windows of features: labelled ones to train on, all of them to predict.

The task (tasks.nq.task) streams a file (or glob) one example at a time into TFRecords and
reuses an unchanged conversion. Every window holding the answer is kept; answerless windows are
kept at `null_window_keep_rate` (a fixed choice per example id and window, so re-running
converts the same windows).
"""

import collections
from typing import Callable, Dict, Iterable, Iterator, List, Tuple

from absl import logging
import numpy as np

from etc_realformer.data.span_tokenization import OffsetTokenizer
from tasks.nq import features as features_lib
from tasks.nq import official
from tasks.nq.data import NqExample

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


def official_training_windows(examples: Iterable[NqExample], tokenizer: OffsetTokenizer,
                              config: features_lib.NqFeatureConfig, counts: collections.Counter,
                              progress_every: int = 1000,
                              log: Callable[[str], None] = logging.info
                              ) -> Iterator[Dict[str, np.ndarray]]:
  """Labelled windows in Google's layout (tasks.nq.official), answerless ones kept at Google's
  rates; `counts` gathers windows by kind."""
  ids = official.official_ids(tokenizer.tokenizer)
  if ids.html_fallback and not config.html_tag_markers:
    log("official NQ layout: the vocabulary lacks Google's html pieces; html tags use "
        f"ids {ids.html_open} / {ids.html_close} (tasks/nq/official.py)")
  for i, example in enumerate(examples):
    doc = official.document(example, tokenizer, ids, f"training example {i + 1}",
                            config.include_html_tokens, config.html_tag_markers)
    total = official.window_count(doc, config)
    counts["examples"] += 1
    counts["windows"] += total
    kept = 0
    for _, f in official.windows(doc, config, ids, is_train=True):
      kept += 1
      kind = official.is_answer_window(f)
      counts["answer windows" if kind else "null windows kept"] += 1
      if kind:
        answer_type = int(f["answer_type"][0])
        counts[f"type {features_lib.ANSWER_TYPES[answer_type]}" if answer_type >= 0
               else "type unannotated"] += 1
      yield f
    counts["null windows dropped"] += total - kept
    if progress_every and (i + 1) % progress_every == 0:
      log(f"  converted {i + 1} examples ({counts['windows']} windows)")


def official_prediction_windows(examples: Iterable[NqExample], tokenizer: OffsetTokenizer,
                                config: features_lib.NqFeatureConfig
                                ) -> Iterator[Tuple[NqExample, List[np.ndarray],
                                                    List[Dict[str, np.ndarray]]]]:
  """(example, token_pos [L] of each window, windows) for every usable example (all windows)."""
  for example in examples:
    if example.problem:
      continue
    windows = official.convert_example(example, tokenizer, config, is_train=False,
                                       where=f"example_id {example.example_id!r}")
    yield example, [f["token_pos"] for f in windows], windows
