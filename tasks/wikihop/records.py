"""WikiHop records: reading items as Google's converter does, converting them to its features
(training and prediction), and parsing its TFRecords.

Items are read and checked by tasks.wikihop.data (which also skips, under its own reason, an item
Google's converter could not label: its answer, lower-cased but not stripped, is not a
candidate) and converted here from their JSON items.
"""

import collections
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from absl import logging
import numpy as np
import tensorflow as tf

from etc_realformer.data.span_tokenization import OffsetTokenizer
from tasks.common.read_report import ReadReport
from tasks.wikihop import features
from tasks.wikihop.sentences import sentence_splitter


SKIP_REASON = "does not fit (official layout)"


def as_official(example, with_labels: bool) -> features.OfficialExample:
  """A WikiHopExample (tasks.wikihop.data) as Google's converter reads its JSON item."""
  if example.item is None:
    raise ValueError(f"id {example.example_id}: the converter needs the JSON item "
                     "(read the file with tasks.wikihop.data)")
  return features.from_item(example.item, with_labels)


def converter(tokenizer: OffsetTokenizer, config) -> Callable[..., Dict[str, object]]:
  """example, with_labels -> Google's features, with the config's lengths."""
  split = sentence_splitter()
  tokenize = tokenizer.tokenizer.tokenize

  def convert(example: features.OfficialExample, with_labels: bool, info=None):
    return features.convert(example, tokenize, split, config.long_seq_len,
                            config.global_seq_len, config.max_num_sentences, with_labels, info)
  return convert


def training_features(examples: Iterable, tokenizer: OffsetTokenizer, config,
                      counts: collections.Counter, progress_every: int = 2000,
                      log: Callable[[str], None] = logging.info, source: str = "",
                      report: Optional[ReadReport] = None) -> Iterator[Dict[str, object]]:
  """Google's features of every labelled example; `counts` gathers truncation figures.

  An example that does not fit the lengths (features.DoesNotFit: Google's converter fails on
  it; with the official lengths WikiHop's items fit) is skipped and counted in `report` under
  "does not fit (official layout)"; without a report it stops the conversion. Any other
  ValueError (a candidate without pieces) stops it, naming the file and item.
  """
  convert = converter(tokenizer, config)
  for i, example in enumerate(examples):
    example = as_official(example, with_labels=True)
    info = {}
    try:
      f = convert(example, with_labels=True, info=info)
    except features.DoesNotFit as e:
      if report is None:
        raise features.DoesNotFit(f"{source}: {e}" if source else str(e)) from None
      report.skip(SKIP_REASON, f"{source}: {e}; item skipped")
      report.examples -= 1
      continue
    except ValueError as e:
      raise ValueError(f"{source}: {e}" if source else str(e)) from None
    counts["examples"] += 1
    counts["truncated examples"] += info["kept_sentences"] < info["sentences"]
    counts["dropped sentences"] += info["sentences"] - info["kept_sentences"]
    counts["linked mention pieces"] += int(np.sum(
        (f["l2g_linked_ids"] >= 0) & (f["long_token_type_ids"] == features.SENTENCE_TYPE_ID)))
    yield f
    if progress_every and (i + 1) % progress_every == 0:
      log(f"  converted {i + 1} examples")


def prediction_features(examples: Sequence, tokenizer: OffsetTokenizer, config, skipped: List[str]
                        ) -> Iterator[Tuple[features.OfficialExample, Dict[str, object]]]:
  """(example as Google reads it, features) of every example with candidates that fits the lengths;
  the others predict "" (the messages of those that do not fit go to `skipped`)."""
  convert = converter(tokenizer, config)
  for example in examples:
    example = as_official(example, with_labels=False)
    if not example.candidates:
      continue
    try:
      converted = convert(example, with_labels=False)
    except features.DoesNotFit as e:
      skipped.append(str(e))
      continue
    yield example, converted


def parse_fn(config) -> Callable:
  """[batch] serialized records -> the model's features ([batch, length] int32,
  is_real_example [batch] int32, label_id [batch] float32); the text features are not read."""
  spec = {name: tf.io.FixedLenFeature([length] if length else [], tf.int64,
                                      default_value=1 if name == "is_real_example" else None)
          for name, length in features.feature_lengths(config).items()}
  spec["label_id"] = tf.io.FixedLenFeature([], tf.float32)

  def parse(serialized):
    parsed = tf.io.parse_example(serialized, spec)
    return {name: value if value.dtype == tf.float32 else tf.cast(value, tf.int32)
            for name, value in parsed.items()}
  return parse
