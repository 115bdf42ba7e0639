"""OpenKP features on disk: converting a labelled file to TFRecords, and reading them back.

`convert_file` writes `<directory>/openkp-*.tfrecord` and `<directory>/features.json` (the
fingerprint, counts and the reader's report); an unchanged input, vocab, tokenizer and config
is reused.
"""

import collections
from typing import Callable, Dict, Iterator, List, Sequence, Tuple

from absl import logging
import numpy as np

from etc_realformer.data import conversion
from etc_realformer.data import tfrecords
from etc_realformer.data.read_report import ReadReport
from etc_realformer.data.span_tokenization import OffsetTokenizer
from tasks.openkp import features as features_lib
from tasks.openkp.data import OpenKpPage, read_pages

PREFIX = "openkp"
INPUT_FEATURES = features_lib.MODEL_FEATURES + features_lib.FLOAT_FEATURES


def training_features(pages: Sequence[OpenKpPage], tokenizer: OffsetTokenizer,
                      config: features_lib.OpenKpFeatureConfig, report: ReadReport,
                      counts: collections.Counter, progress_every: int = 2000,
                      log: Callable[[str], None] = logging.info
                      ) -> Iterator[Dict[str, np.ndarray]]:
  """Labelled features; a page none of whose key phrases is in its input is skipped (counted)."""
  for i, page in enumerate(pages):
    f, info = features_lib.convert_page(page, tokenizer, config, with_labels=True)
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
      log(f"  converted {i + 1}/{len(pages)} pages")


def convert_file(input_path: str, directory: str, tokenizer: OffsetTokenizer, vocab_file: str,
                 config: features_lib.OpenKpFeatureConfig,
                 log: Callable[[str], None] = logging.info) -> dict:
  """Converts a labelled OpenKP file (or reuses an identical conversion); -> features.json."""

  def produce(report: ReadReport, counts):
    pages, read = read_pages(input_path, with_labels=True)
    report.records, report.examples = read.records, read.examples
    report.skipped, report.repaired, report.messages = read.skipped, read.repaired, read.messages
    return training_features(pages, tokenizer, config, report, counts, log=log)

  return conversion.convert_once(directory, PREFIX,
                                 dict(conversion.fingerprint([input_path], vocab_file, config),
                                      tokenizer=tokenizer.tokenizer.signature),
                                 produce, input_path, log)


def parse_fn(config: features_lib.OpenKpFeatureConfig) -> Callable:
  """[batch] serialized records -> int32 features and float32 global_visual_features."""
  return tfrecords.fixed_length_parse_fn(features_lib.feature_lengths(config),
                                         features_lib.float_shapes(config))


def record_files(directory: str) -> List[str]:
  return conversion.record_files(directory, PREFIX)


def prediction_features(pages: Sequence[OpenKpPage], tokenizer: OffsetTokenizer,
                        config: features_lib.OpenKpFeatureConfig
                        ) -> Iterator[Tuple[OpenKpPage, Dict[str, np.ndarray]]]:
  """(page, features) for every page with words (the others predict no phrase)."""
  for page in pages:
    if page.words:
      yield page, features_lib.convert_page(page, tokenizer, config, with_labels=False)[0]
