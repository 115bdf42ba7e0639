"""Predicting OpenKP with a fine-tuned model, in memory or exported.

The export (tasks.common.serving) reads Google's features (features.MODEL_FEATURES: int32 long_*
[batch, long_seq_len], int32 global_* [batch, global_seq_len], float32 coordinates [batch,
global_seq_len]) and returns ngram_logits [batch, 5, long_seq_len]; phrases are picked by
Google's rules (tasks/openkp/decode.py). A page Google's converter rejects gets an empty
prediction.
"""

from typing import Callable, List, Sequence

from absl import logging

from tasks.common import serving
from tasks.openkp import decode
from tasks.openkp import features as features_lib
from tasks.openkp import records
from tasks.openkp.data import OpenKpPage


class Predictor(serving.TaskPredictor):
  """Runs an OpenKP model over pages and returns the prediction lines (top-5 phrases)."""
  feature_config_class = features_lib.OpenKpFeatureConfig
  input_features = features_lib.MODEL_FEATURES
  output_names = decode.OUTPUT_NAMES
  export_description = ("an OpenKP export (`python -m tasks.openkp finetune` writes "
                        "<output_dir>/export)")

  def predict(self, pages: Sequence[OpenKpPage], batch_size: int = 16,
              log: Callable[[str], None] = logging.info) -> List[dict]:
    """The prediction lines, one per page in input order."""
    lines, failures = {}, {}

    def use(page, outputs):
      lines[page.url] = decode.page_prediction(
          page.url, page.record["text"], outputs["ngram_logits"])            # [5, L]

    items = records.prediction_features(pages, self.tokenizer, self.feature_config, failures)
    self.run_examples(items, batch_size, use, len(pages), unit="pages", log=log)
    if failures:
      url, message = next(iter(failures.items()))
      log(f"{len(failures)} page(s) Google's converter rejects get an empty prediction, e.g. "
          f"url {url}: {message}")
    return [lines.get(p.url, {"url": p.url, "KeyPhrases": []}) for p in pages]
