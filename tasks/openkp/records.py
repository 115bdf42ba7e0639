"""OpenKP pages -> Google's feature dicts: labelled ones to train on, and unlabelled ones to
predict. A page Google's converter rejects ("parse failure": tasks.openkp.features) is skipped
in training and counted under its reason; at prediction it gets an empty line.

The task (tasks.openkp.task) writes the training features to TFRecords once and reuses them.
"""

import collections
from typing import Callable, Dict, Iterable, Iterator, Sequence, Tuple

from absl import logging
import numpy as np

from etc_realformer.data.span_tokenization import OffsetTokenizer
from tasks.common.read_report import ReadReport
from tasks.openkp import features as features_lib
from tasks.openkp.data import OpenKpPage


def training_features(pages: Iterable[OpenKpPage], tokenizer: OffsetTokenizer,
                      config: features_lib.OpenKpFeatureConfig, report: ReadReport,
                      counts: collections.Counter, progress_every: int = 2000,
                      log: Callable[[str], None] = logging.info
                      ) -> Iterator[Dict[str, np.ndarray]]:
  """Google's features of every page it converts; its parse failures are skipped (counted
  under their reason, the message naming url and field)."""
  settings = features_lib.OfficialSettings.from_feature_config(config)
  words = features_lib.WordTokenizer(tokenizer)
  for i, page in enumerate(pages):
    counts["pages"] += 1
    try:
      _, f = features_lib.convert_record(page.record, words, settings, with_labels=True)
    except features_lib.OfficialConversionError as e:
      report.skip(e.reason, f"{report.path}: url {page.url}: {e}")
      report.examples -= 1
      continue
    counts["phrases labelled"] += int(np.sum(f["label_start_idx"] >= 0))
    counts["elements kept"] += int(np.sum(f["global_input_mask"]))
    yield f
    if progress_every and (i + 1) % progress_every == 0:
      log(f"  converted {i + 1} pages")


def prediction_features(pages: Sequence[OpenKpPage], tokenizer: OffsetTokenizer,
                        config: features_lib.OpenKpFeatureConfig, failures: Dict[str, str]
                        ) -> Iterator[Tuple[OpenKpPage, Dict[str, np.ndarray]]]:
  """(page, Google's features without labels) of every page it converts; the others go into
  `failures` ({url: message}) and get no prediction from the model."""
  settings = features_lib.OfficialSettings.from_feature_config(config)
  words = features_lib.WordTokenizer(tokenizer)
  for page in pages:
    try:
      _, f = features_lib.convert_record(page.record, words, settings, with_labels=False)
    except features_lib.OfficialConversionError as e:
      failures[page.url] = str(e)
      continue
    yield page, f
