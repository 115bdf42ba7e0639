"""Predicting WikiHop with a fine-tuned model, in memory or exported.

The export (tasks.common.serving) maps the int32 input features to candidate_logits
[batch, global_seq_len]; task_config.json holds the feature and encoder config. The inputs
depend on the feature config's layout: records.INPUT_FEATURES (package) or Google's features
official.MODEL_FEATURES (official, decoded by official_decode as Google's wikihop_eval.py).
"""

from typing import Callable, Dict, Sequence

from absl import logging

from tasks.common import feature_config as feature_config_lib
from tasks.common import serving
from tasks.wikihop import decode
from tasks.wikihop import features as features_lib
from tasks.wikihop import official
from tasks.wikihop import official_decode
from tasks.wikihop import official_records
from tasks.wikihop import records
from tasks.wikihop.data import WikiHopExample


def is_official(feature_config) -> bool:
  return feature_config.layout == feature_config_lib.OFFICIAL_LAYOUT


def input_features(feature_config) -> Sequence[str]:
  """The features the model (and its export) reads in the config's layout."""
  return official.MODEL_FEATURES if is_official(feature_config) else records.INPUT_FEATURES


class Predictor(serving.TaskPredictor):
  """Runs a WikiHop model over examples and returns {id: candidate}."""
  feature_config_class = features_lib.WikiHopFeatureConfig
  input_features = records.INPUT_FEATURES   # the package layout's; set per layout in __init__
  output_names = decode.OUTPUT_NAMES
  export_description = ("a WikiHop export (`python -m tasks.wikihop finetune` writes "
                        "<output_dir>/export)")

  def __init__(self, run_batch, feature_config, tokenizer, settings=None):
    super().__init__(run_batch, feature_config, tokenizer, settings)
    self.input_features = input_features(feature_config)

  def predict(self, examples: Sequence[WikiHopExample], batch_size: int = 16,
              log: Callable[[str], None] = logging.info) -> Dict[str, str]:
    """{id: candidate} for every example, in input order."""
    chosen, too_long = {}, []
    if is_official(self.feature_config):
      def use(example, outputs):
        chosen[example.example_id] = official_decode.choose(example,
                                                            outputs["candidate_logits"])  # [G]
      pairs = official_records.prediction_features(examples, self.tokenizer, self.feature_config,
                                                   skipped=too_long)
    else:
      def use(example, outputs):
        chosen[example.example_id] = decode.choose(example, outputs["candidate_logits"])  # [G]
      pairs = records.prediction_features(examples, self.tokenizer, self.feature_config)
    self.run_examples(pairs, batch_size, use, len(examples), log=log)
    without = sum(not e.candidates for e in examples)
    if without:
      log(f"{without} example(s) without candidates predict \"\"")
    if too_long:
      log(f"{len(too_long)} example(s) do not fit the official layout's lengths and predict "
          f"\"\" (Google's converter fails on them), e.g. {too_long[0]}")
    return decode.complete(examples, chosen)
