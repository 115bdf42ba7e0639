"""OpenKP pages -> feature dicts: labelled ones to train on, and unlabelled ones to predict.

The task (tasks.openkp.task) writes the training features to TFRecords once and reuses them.
"""

import collections
from typing import Callable, Dict, Iterable, Iterator, List, Sequence, Tuple

from absl import logging
import numpy as np

from etc_realformer.data.span_tokenization import OffsetTokenizer
from tasks.common.batches import map_in_batches
from tasks.common.read_report import ReadReport
from tasks.openkp import features as features_lib
from tasks.openkp import official
from tasks.openkp.data import OpenKpPage

INPUT_FEATURES = features_lib.MODEL_FEATURES + features_lib.FLOAT_FEATURES
# Pages tokenized in one call when converting (one call into the library per page would cost
# about twice the tokenizer's CPU time).
PAGES_PER_CALL = 32


def training_features(pages: Iterable[OpenKpPage], tokenizer: OffsetTokenizer,
                      config: features_lib.OpenKpFeatureConfig, report: ReadReport,
                      counts: collections.Counter, progress_every: int = 2000,
                      log: Callable[[str], None] = logging.info
                      ) -> Iterator[Dict[str, np.ndarray]]:
  """Labelled features; a page none of whose key phrases is in its input is skipped (counted).
  Pages are tokenized PAGES_PER_CALL at a time (read ahead of their conversion)."""
  for i, (page, pieces) in enumerate(_tokenized(pages, tokenizer)):
    f, info = features_lib.convert_page(page, tokenizer, config, with_labels=True,
                                        pieces=pieces)
    counts["pages"] += 1
    counts["truncated pages"] += info["words_kept"] < info["words"]
    counts["phrases labelled"] += info["phrases_labelled"]
    counts["phrases not in the input (or too long)"] += info["phrases_unlabelled"]
    if not info["phrases_labelled"]:
      report.skip("no key phrase in the input",
                  f"{report.path}: url {page.url}: field 'KeyPhrases': none of "
                  f"{[' '.join(p) for p in page.key_phrases or []]} occurs in the first "
                  f"{info['words_kept']} words (or is longer than "
                  f"{config.max_phrase_words} words)")
      report.examples -= 1
      continue
    yield f
    if progress_every and (i + 1) % progress_every == 0:
      log(f"  converted {i + 1} pages")


def _tokenized(pages: Iterable[OpenKpPage], tokenizer: OffsetTokenizer
               ) -> Iterator[Tuple[OpenKpPage, Tuple[List[int], np.ndarray]]]:
  """(page, its word pieces) of every page, PAGES_PER_CALL pages per tokenizer call."""
  return map_in_batches(pages, PAGES_PER_CALL,
                        lambda batch: features_lib.word_pieces_many(batch, tokenizer))


def prediction_features(pages: Sequence[OpenKpPage], tokenizer: OffsetTokenizer,
                        config: features_lib.OpenKpFeatureConfig
                        ) -> Iterator[Tuple[OpenKpPage, Dict[str, np.ndarray]]]:
  """(page, features) for every page with words (the others predict no phrase)."""
  for page, pieces in _tokenized((page for page in pages if page.words), tokenizer):
    yield page, features_lib.convert_page(page, tokenizer, config, with_labels=False,
                                          pieces=pieces)[0]


# ----------------------------------------------------------------------------- official layout


def official_training_features(pages: Iterable[OpenKpPage], tokenizer: OffsetTokenizer,
                               config: features_lib.OpenKpFeatureConfig, report: ReadReport,
                               counts: collections.Counter, progress_every: int = 2000,
                               log: Callable[[str], None] = logging.info
                               ) -> Iterator[Dict[str, np.ndarray]]:
  """Google's features of every page it converts; its parse failures are skipped (counted
  under their reason, the message naming url and field)."""
  settings = official.OfficialSettings.from_feature_config(config)
  words = official.WordTokenizer(tokenizer)
  for i, page in enumerate(pages):
    counts["pages"] += 1
    try:
      _, f = official.convert_record(page.record, words, settings, with_labels=True)
    except official.OfficialConversionError as e:
      report.skip(e.reason, f"{report.path}: url {page.url}: {e}")
      report.examples -= 1
      continue
    counts["phrases labelled"] += int(np.sum(f["label_start_idx"] >= 0))
    counts["elements kept"] += int(np.sum(f["global_input_mask"]))
    yield f
    if progress_every and (i + 1) % progress_every == 0:
      log(f"  converted {i + 1} pages")


def official_prediction_features(pages: Sequence[OpenKpPage], tokenizer: OffsetTokenizer,
                                 config: features_lib.OpenKpFeatureConfig,
                                 failures: Dict[str, str]
                                 ) -> Iterator[Tuple[OpenKpPage, Dict[str, np.ndarray]]]:
  """(page, Google's features without labels) of every page it converts; the others go into
  `failures` ({url: message}) and get no prediction from the model."""
  settings = official.OfficialSettings.from_feature_config(config)
  words = official.WordTokenizer(tokenizer)
  for page in pages:
    try:
      _, f = official.convert_record(page.record, words, settings, with_labels=False)
    except official.OfficialConversionError as e:
      failures[page.url] = str(e)
      continue
    yield page, f
