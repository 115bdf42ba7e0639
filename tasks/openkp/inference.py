"""Predicting OpenKP with a fine-tuned model, in memory or exported.

Package layout: the export (tasks.common.serving) maps int32 token_ids, sentence_ids, word_ids
[batch, long_seq_len], global_token_ids [batch, global_seq_len], num_words [batch] and float32
global_visual_features [batch, global_seq_len, 20] to ngram_logits [batch, 5, long_seq_len].

Official layout: the export reads Google's features (official.MODEL_FEATURES: int32 long_*
[batch, long_seq_len], int32 global_* [batch, global_seq_len], float32 coordinates [batch,
global_seq_len]) and returns the same ngram_logits; phrases are picked by Google's rules
(tasks/openkp/official_decode.py). A page Google's converter rejects gets an empty prediction.
"""

from typing import Callable, List, Sequence

from absl import logging

from tasks.common import feature_config as feature_config_lib
from tasks.common import serving
from tasks.openkp import decode
from tasks.openkp import features as features_lib
from tasks.openkp import official
from tasks.openkp import official_decode
from tasks.openkp import records
from tasks.openkp.data import OpenKpPage


class Predictor(serving.TaskPredictor):
  """Runs an OpenKP model over pages and returns the prediction lines (top-5 phrases)."""
  feature_config_class = features_lib.OpenKpFeatureConfig
  input_features = records.INPUT_FEATURES
  output_names = decode.OUTPUT_NAMES
  export_description = ("an OpenKP export (`python -m tasks.openkp finetune` writes "
                        "<output_dir>/export)")

  def __init__(self, *args, **kwargs):
    super().__init__(*args, **kwargs)
    if self.official:
      self.input_features = official.MODEL_FEATURES

  @property
  def official(self) -> bool:
    return self.feature_config.layout == feature_config_lib.OFFICIAL_LAYOUT

  def predict(self, pages: Sequence[OpenKpPage], batch_size: int = 16,
              log: Callable[[str], None] = logging.info) -> List[dict]:
    """The prediction lines, one per page in input order."""
    if self.official:
      return self._predict_official(pages, batch_size, log)
    chosen = {}

    def use(page, outputs):
      chosen[page.url] = decode.top_phrases(page, outputs["ngram_logits"])   # [5, L]

    self.run_examples(records.prediction_features(pages, self.tokenizer, self.feature_config),
                      batch_size, use, len(pages), unit="pages", log=log)
    return decode.prediction_lines(pages, chosen)

  def _predict_official(self, pages, batch_size, log) -> List[dict]:
    lines, failures = {}, {}

    def use(page, outputs):
      lines[page.url] = official_decode.page_prediction(
          page.url, page.record["text"], outputs["ngram_logits"])            # [5, L]

    items = records.official_prediction_features(pages, self.tokenizer, self.feature_config,
                                                 failures)
    self.run_examples(items, batch_size, use, len(pages), unit="pages", log=log)
    if failures:
      url, message = next(iter(failures.items()))
      log(f"{len(failures)} page(s) Google's converter rejects get an empty prediction, e.g. "
          f"url {url}: {message}")
    return [lines.get(p.url, {"url": p.url, "KeyPhrases": []}) for p in pages]
