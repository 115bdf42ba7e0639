"""WikiHop features on disk: converting a labelled file to TFRecords, and reading them back.

`convert_file` writes `<directory>/wikihop-*.tfrecord` and `<directory>/features.json` (the
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
from tasks.wikihop import features as features_lib
from tasks.wikihop.data import WikiHopExample, read_examples

PREFIX = "wikihop"


def training_features(examples: Sequence[WikiHopExample], tokenizer: OffsetTokenizer,
                      config: features_lib.WikiHopFeatureConfig, counts: collections.Counter,
                      progress_every: int = 2000, log: Callable[[str], None] = logging.info,
                      source: str = "") -> Iterator[Dict[str, np.ndarray]]:
  """Labelled features of every example; `counts` gathers truncation and linking figures.

  CandidatesDoNotFit stops the conversion: it is a setting to change, not a bad record.
  """
  for i, example in enumerate(examples):
    try:
      f, info = features_lib.convert_example(example, tokenizer, config, with_labels=True)
    except features_lib.CandidatesDoNotFit as e:
      raise features_lib.CandidatesDoNotFit(f"{source}: {e}" if source else str(e)) from None
    counts["examples"] += 1
    counts["truncated examples"] += bool(info["dropped_sentences"])
    counts["dropped sentences"] += info["dropped_sentences"]
    counts["dropped documents"] += info["dropped_documents"]
    counts["linked mention pieces"] += info["linked_pieces"]
    counts["query truncated"] += info["query_truncated"]
    yield f
    if progress_every and (i + 1) % progress_every == 0:
      log(f"  converted {i + 1}/{len(examples)} examples")


def convert_file(input_path: str, directory: str, tokenizer: OffsetTokenizer, vocab_file: str,
                 config: features_lib.WikiHopFeatureConfig,
                 log: Callable[[str], None] = logging.info) -> dict:
  """Converts a labelled WikiHop file (or reuses an identical conversion); -> features.json."""

  def produce(report: ReadReport, counts):
    examples, read = read_examples(input_path, with_labels=True)
    report.records, report.examples = read.records, read.examples
    report.skipped, report.repaired, report.messages = read.skipped, read.repaired, read.messages
    return training_features(examples, tokenizer, config, counts, log=log, source=input_path)

  return conversion.convert_once(directory, PREFIX,
                                 dict(conversion.fingerprint([input_path], vocab_file, config),
                                      tokenizer=tokenizer.tokenizer.signature),
                                 produce, input_path, log)


def parse_fn(config: features_lib.WikiHopFeatureConfig) -> Callable:
  """[batch] serialized records -> dict of int32 tensors ([batch] or [batch, length])."""
  return tfrecords.fixed_length_parse_fn(features_lib.feature_lengths(config))


def record_files(directory: str) -> List[str]:
  return conversion.record_files(directory, PREFIX)


INPUT_FEATURES = features_lib.MODEL_FEATURES + ("candidate_mask",)


def prediction_features(examples: Sequence[WikiHopExample], tokenizer: OffsetTokenizer,
                        config: features_lib.WikiHopFeatureConfig
                        ) -> Iterator[Tuple[WikiHopExample, Dict[str, np.ndarray]]]:
  """(example, features) for every example with candidates (the others predict "")."""
  for example in examples:
    if example.candidates:
      yield example, features_lib.convert_example(example, tokenizer, config,
                                                  with_labels=False)[0]
