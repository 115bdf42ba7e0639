"""Predicting WikiHop with a fine-tuned model, in memory or exported.

The export (tasks.common.serving) maps Google's int features (features.MODEL_FEATURES) to
candidate_logits [batch, global_seq_len], decoded as Google's wikihop_eval.py decodes them;
task_config.json holds the feature and encoder config.
"""

from typing import Callable, Dict, Sequence

from absl import logging

from tasks.common import serving
from tasks.wikihop import decode
from tasks.wikihop import features as features_lib
from tasks.wikihop import records
from tasks.wikihop.data import WikiHopExample


class Predictor(serving.TaskPredictor):
  """Runs a WikiHop model over examples and returns {id: candidate}."""
  feature_config_class = features_lib.WikiHopFeatureConfig
  input_features = features_lib.MODEL_FEATURES
  output_names = decode.OUTPUT_NAMES
  export_description = ("a WikiHop export (`python -m tasks.wikihop finetune` writes "
                        "<output_dir>/export)")

  def predict(self, examples: Sequence[WikiHopExample], batch_size: int = 16,
              log: Callable[[str], None] = logging.info) -> Dict[str, str]:
    """{id: candidate} for every example, in input order."""
    chosen, too_long = {}, []

    def use(example, outputs):
      chosen[example.example_id] = decode.choose(example, outputs["candidate_logits"])  # [G]
    pairs = records.prediction_features(examples, self.tokenizer, self.feature_config,
                                        skipped=too_long)
    self.run_examples(pairs, batch_size, use, len(examples), log=log)
    without = sum(not e.candidates for e in examples)
    if without:
      log(f"{without} example(s) without candidates predict \"\"")
    if too_long:
      log(f"{len(too_long)} example(s) do not fit the lengths and predict \"\" (Google's "
          f"converter fails on them), e.g. {too_long[0]}")
    return {e.example_id: chosen.get(e.example_id, "") for e in examples}
