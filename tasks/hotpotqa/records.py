"""HotpotQA examples -> feature dicts: streamed labelled ones to train on (written to TFRecords once
by the task and reused), and the features of every example to predict.

Both are Google's converter's features (tasks.hotpotqa.features.convert_example).
"""

import collections
from typing import Any, Callable, Dict, Iterable, Iterator, List, Sequence

from absl import logging

from tasks.common.read_report import ReadReport
from tasks.hotpotqa.data import HotpotExample
from tasks.hotpotqa.features import (ConverterOptions, Dropped, convert_example, pop_stats,
                                     tokenize_examples)
from tasks.hotpotqa.text import TextTokenizer


def training_features(examples: Iterable[HotpotExample], tokenizer, config,
                      report: ReadReport, counts: collections.Counter,
                      progress_every: int = 1000, log: Callable[[str], None] = logging.info
                      ) -> Iterator[Dict[str, Any]]:
  """Google's training tf.Example features of a stream of examples (debug features included,
  as its converter's defaults write them); a record it drops is skipped and counted in
  `report` under the reason, items that did not fit in `counts`."""
  text_tokenizer = TextTokenizer(tokenizer.tokenizer)
  for i, (example, tokenized) in enumerate(tokenize_examples(examples, text_tokenizer)):
    try:
      f = convert_example(example, text_tokenizer, config.long_seq_len, config.global_seq_len,
                          is_training=True, tokenized=tokenized,
                          options=ConverterOptions.of(config))
    except Dropped as e:
      report.skip(e.reason, f"{report.path}: _id {example.qas_id}: field '{e.field}': {e}")
      report.examples -= 1
      continue
    stats = pop_stats(f)
    counts["examples"] += 1
    counts["truncated examples"] += bool(stats["skipped"])
    counts["skipped titles/sentences/question pieces"] += stats["skipped"]
    yield f
    if progress_every and (i + 1) % progress_every == 0:
      log(f"  converted {i + 1} examples")


def prediction_features(examples: Sequence[HotpotExample], tokenizer, config,
                        log: Callable[[str], None] = logging.info) -> List[Dict[str, Any]]:
  """Google's prediction features of every example (no labels, nothing dropped)."""
  text_tokenizer = TextTokenizer(tokenizer.tokenizer)
  out, truncated = [], 0
  for example, tokenized in tokenize_examples(examples, text_tokenizer):
    f = convert_example(example, text_tokenizer, config.long_seq_len, config.global_seq_len,
                        is_training=False, debug=False, tokenized=tokenized,
                        options=ConverterOptions.of(config))
    truncated += bool(pop_stats(f)["skipped"])
    out.append(f)
  log(f"converted {len(out)} example(s); {truncated} with titles or "
      f"sentences left out to fit {config.long_seq_len} long / {config.global_seq_len} global "
      "tokens")
  return out
