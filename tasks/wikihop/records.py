"""WikiHop examples -> feature dicts: labelled ones to train on, and unlabelled ones to predict.

The task (tasks.wikihop.task) writes the training features to TFRecords once and reuses them.
"""

import collections
from typing import Callable, Dict, Iterable, Iterator, Sequence, Tuple

from absl import logging
import numpy as np

from etc_realformer.data.span_tokenization import OffsetTokenizer
from tasks.common.batches import map_in_batches
from tasks.wikihop import features as features_lib
from tasks.wikihop.data import WikiHopExample

# Examples tokenized in one call when converting (fewer calls into the library).
EXAMPLES_PER_CALL = 16


def training_features(examples: Iterable[WikiHopExample], tokenizer: OffsetTokenizer,
                      config: features_lib.WikiHopFeatureConfig, counts: collections.Counter,
                      progress_every: int = 2000, log: Callable[[str], None] = logging.info,
                      source: str = "") -> Iterator[Dict[str, np.ndarray]]:
  """Labelled features of every example; `counts` gathers truncation and linking figures.

  CandidatesDoNotFit stops the conversion: it is a setting to change, not a bad record.
  Examples are tokenized EXAMPLES_PER_CALL at a time (read ahead of their conversion).
  """
  for i, (example, tokenized) in enumerate(_tokenized(examples, tokenizer)):
    try:
      f, info = features_lib.convert_example(example, tokenizer, config, with_labels=True,
                                             tokenized=tokenized)
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
      log(f"  converted {i + 1} examples")


INPUT_FEATURES = features_lib.MODEL_FEATURES + ("candidate_mask",)


def _tokenized(examples: Iterable[WikiHopExample], tokenizer: OffsetTokenizer
               ) -> Iterator[Tuple[WikiHopExample, features_lib.Tokenized]]:
  """(example, its tokenized texts) of every example, EXAMPLES_PER_CALL at a time."""
  return map_in_batches(examples, EXAMPLES_PER_CALL,
                        lambda batch: features_lib.tokenize_examples(batch, tokenizer))


def prediction_features(examples: Sequence[WikiHopExample], tokenizer: OffsetTokenizer,
                        config: features_lib.WikiHopFeatureConfig
                        ) -> Iterator[Tuple[WikiHopExample, Dict[str, np.ndarray]]]:
  """(example, features) for every example with candidates (the others predict "")."""
  for example, tokenized in _tokenized((e for e in examples if e.candidates), tokenizer):
    yield example, features_lib.convert_example(example, tokenizer, config, with_labels=False,
                                                tokenized=tokenized)[0]
