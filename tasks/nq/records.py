"""NQ examples -> windows of Google's features: labelled ones to train on, all of them to predict.

The task (tasks.nq.task) streams a file (or glob) one example at a time into TFRecords and
reuses an unchanged conversion. Every window with an answer type other than null is kept;
answerless windows at Google's keep rates (features.windows).
"""

import collections
from typing import Callable, Dict, Iterable, Iterator, List, Tuple

from absl import logging
import numpy as np

from etc_realformer.data.span_tokenization import OffsetTokenizer
from tasks.nq import features as features_lib
from tasks.nq.data import NqExample


def training_windows(examples: Iterable[NqExample], tokenizer: OffsetTokenizer,
                     config: features_lib.NqFeatureConfig, counts: collections.Counter,
                     progress_every: int = 1000, log: Callable[[str], None] = logging.info
                     ) -> Iterator[Dict[str, np.ndarray]]:
  """Labelled windows, answerless ones kept at the keep rates; `counts` gathers windows by
  kind."""
  ids = features_lib.official_ids(tokenizer.tokenizer)
  if ids.html_fallback and not config.html_tag_markers:
    log("NQ: the vocabulary lacks Google's html pieces; html tags use ids "
        f"{ids.html_open} / {ids.html_close} (tasks/nq/features.py)")
  for i, example in enumerate(examples):
    doc = features_lib.document(example, tokenizer, ids, f"training example {i + 1}",
                                config.include_html_tokens, config.html_tag_markers)
    total = features_lib.window_count(doc, config)
    counts["examples"] += 1
    counts["windows"] += total
    kept = 0
    for _, f in features_lib.windows(doc, config, ids, is_train=True):
      kept += 1
      kind = features_lib.is_answer_window(f)
      counts["answer windows" if kind else "null windows kept"] += 1
      if kind:
        answer_type = int(f["answer_type"][0])
        counts[f"type {features_lib.ANSWER_TYPES[answer_type]}" if answer_type >= 0
               else "type unannotated"] += 1
      yield f
    counts["null windows dropped"] += total - kept
    if progress_every and (i + 1) % progress_every == 0:
      log(f"  converted {i + 1} examples ({counts['windows']} windows)")


def prediction_windows(examples: Iterable[NqExample], tokenizer: OffsetTokenizer,
                       config: features_lib.NqFeatureConfig
                       ) -> Iterator[Tuple[NqExample, List[np.ndarray],
                                           List[Dict[str, np.ndarray]]]]:
  """(example, token_pos [L] of each window, windows) for every usable example (all windows)."""
  for example in examples:
    if example.problem:
      continue
    windows = features_lib.convert_example(example, tokenizer, config, is_train=False,
                                           where=f"example_id {example.example_id!r}")
    yield example, [f["token_pos"] for f in windows], windows
