"""Predicting HotpotQA with a fine-tuned model, in memory or exported.

The export (tasks.common.serving) maps Google's eight int32 inference features
(features.MODEL_INPUTS, [batch, long_seq_len] / [batch, global_seq_len]) to the four head
outputs (decode.OUTPUT_NAMES); its task_config.json also keeps the supporting-fact threshold.
`Predictor` converts HotpotQA examples as Google's converter does and decodes by Google's rules
(tasks.hotpotqa.decode).
"""

from typing import Any, Callable, Dict, Optional, Sequence, Tuple

from absl import logging

from tasks.common import serving
from tasks.hotpotqa import decode
from tasks.hotpotqa import features as features_lib
from tasks.hotpotqa import records
from tasks.hotpotqa.data import HotpotExample


class Predictor(serving.TaskPredictor):
  """Runs a HotpotQA model over examples and decodes the prediction file.

  Its one setting, `sp_threshold` (the supporting-fact threshold chosen on dev), travels with
  the export.
  """
  feature_config_class = features_lib.HotpotFeatureConfig
  input_features = features_lib.MODEL_INPUTS
  output_names = decode.OUTPUT_NAMES
  setting_names = ("sp_threshold",)
  export_description = ("a HotpotQA export (`python -m tasks.hotpotqa finetune` writes "
                        "<output_dir>/export)")

  @property
  def threshold(self) -> float:
    return float(self.settings.get("sp_threshold", decode.DEFAULT_THRESHOLD))

  def run(self, examples: Sequence[HotpotExample], batch_size: int = 8,
          log: Callable[[str], None] = logging.info) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """Model outputs of every example: (features, outputs) by id; every example is converted,
    as Google's converter converts them."""
    examples = list(examples)
    features = records.prediction_features(examples, self.tokenizer, self.feature_config,
                                           log=log)
    outputs: Dict[str, decode.ExampleOutput] = {}

    def use(example, row):   # row: {output name: this example's [3] / [G] / [L] array}
      outputs[example.qas_id] = decode.ExampleOutput(**row)
    self.run_examples(zip(examples, features), batch_size, use, len(examples), log=log)
    return {e.qas_id: f for e, f in zip(examples, features)}, outputs

  def make_predictions(self, examples, layouts, outputs, threshold: float) -> dict:
    """The prediction file's content."""
    return decode.make_predictions(
        examples, layouts, outputs, self.tokenizer.tokenizer, threshold,
        min_supporting_facts=self.feature_config.min_supporting_facts)

  def choose_threshold(self, examples, layouts, outputs, gold):
    """(threshold, {threshold: metrics}) on labelled data."""
    return decode.choose_threshold(
        examples, layouts, outputs, gold, self.tokenizer.tokenizer,
        min_supporting_facts=self.feature_config.min_supporting_facts)

  def predict(self, examples: Sequence[HotpotExample], batch_size: int = 8,
              threshold: Optional[float] = None) -> dict:
    layouts, outputs = self.run(examples, batch_size)
    return self.make_predictions(examples, layouts, outputs,
                                 self.threshold if threshold is None else threshold)
