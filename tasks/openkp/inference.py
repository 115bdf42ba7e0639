"""Predicting OpenKP with a fine-tuned model, in memory or exported.

The export (tasks.common.serving) maps int32 token_ids, sentence_ids, word_ids [batch,
long_seq_len], global_token_ids [batch, global_seq_len], num_words [batch] and float32
global_visual_features [batch, global_seq_len, 20] to ngram_logits [batch, 5, long_seq_len].
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
  input_features = records.INPUT_FEATURES
  output_names = decode.OUTPUT_NAMES
  export_description = ("an OpenKP export (`python -m tasks.openkp finetune` writes "
                        "<output_dir>/export)")

  def predict(self, pages: Sequence[OpenKpPage], batch_size: int = 16,
              log: Callable[[str], None] = logging.info) -> List[dict]:
    """The prediction lines, one per page in input order."""
    chosen = {}

    def use(page, outputs):
      chosen[page.url] = decode.top_phrases(page, outputs["ngram_logits"])   # [5, L]

    self.run_examples(records.prediction_features(pages, self.tokenizer, self.feature_config),
                      batch_size, use, len(pages), unit="pages", log=log)
    return decode.prediction_lines(pages, chosen)
