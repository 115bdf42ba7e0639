"""Predicting HotpotQA with a fine-tuned model, in memory or exported.

The export (tasks.common.serving) maps the eight int32 model features ([batch, long_seq_len] /
[batch, global_seq_len]) to the four head outputs (answer_type_logits, sp_logits, begin_logits,
end_logits); its task_config.json also keeps the supporting-fact threshold. `Predictor` turns
HotpotQA examples into the prediction file's content.

With `features.layout: official` the export's inputs are Google's eight inference features
(tasks.hotpotqa.official.MODEL_INPUTS), the examples are converted by the official converter
and decoded by Google's rules (tasks.hotpotqa.official_decode).
"""

import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from absl import logging

from etc_realformer.data import tfrecords
from tasks.common import serving
from tasks.common.feature_config import OFFICIAL_LAYOUT
from tasks.hotpotqa import decode
from tasks.hotpotqa import features as features_lib
from tasks.hotpotqa import official
from tasks.hotpotqa import official_decode
from tasks.hotpotqa import records
from tasks.hotpotqa.data import HotpotExample

OUTPUT_NAMES = ("answer_type_logits", "sp_logits", "begin_logits", "end_logits")


class Predictor(serving.TaskPredictor):
  """Runs a HotpotQA model over examples and decodes the prediction file.

  Its one setting, `sp_threshold` (the supporting-fact threshold chosen on dev), travels with
  the export.
  """
  feature_config_class = features_lib.HotpotFeatureConfig
  input_features = features_lib.MODEL_FEATURES
  output_names = OUTPUT_NAMES
  setting_names = ("sp_threshold",)
  export_description = ("a HotpotQA export (`python -m tasks.hotpotqa finetune` writes "
                        "<output_dir>/export)")

  def __init__(self, *args, **kwargs):
    super().__init__(*args, **kwargs)
    if self.official:
      self.input_features = official.MODEL_INPUTS

  @property
  def official(self) -> bool:
    return self.feature_config.layout == OFFICIAL_LAYOUT

  @property
  def threshold(self) -> float:
    return float(self.settings.get("sp_threshold", decode.DEFAULT_THRESHOLD))

  def run(self, examples: Sequence[HotpotExample], batch_size: int = 8,
          log: Callable[[str], None] = logging.info) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """Model outputs of every example with a usable context: (layouts, outputs) by id; a
    layout is a features_lib.ExampleLayout, or with the official layout the example's official
    features (every example is converted, as Google's converter converts them)."""
    if self.official:
      usable = list(examples)
      features = official.prediction_features(usable, self.tokenizer, self.feature_config,
                                               log=log)
      layouts, ids = features, [e.qas_id for e in usable]
    else:
      usable = [e for e in examples if e.context]
      if len(usable) < len(examples):
        log(f"{len(examples) - len(usable)} example(s) have no usable context: they get an "
            "empty answer and no supporting fact")
      features, layouts = records.convert_examples(usable, self.tokenizer, self.feature_config,
                                                   with_labels=False, log=log)
      ids = [layout.qas_id for layout in layouts]
    outputs: List[decode.ExampleOutput] = []
    start = time.perf_counter()
    for begin in range(0, len(features), batch_size):
      batch = tfrecords.stack_features(features[begin:begin + batch_size], self.input_features)
      outputs.extend(decode.split_batch(self.run_batch(batch)))
      done = begin + len(batch[self.input_features[0]])
      if done % max(batch_size, 500 // batch_size * batch_size) == 0 or done == len(features):
        log(f"  predicted {done}/{len(features)} examples "
            f"({done / max(time.perf_counter() - start, 1e-9):.1f}/s)")
    return dict(zip(ids, layouts)), dict(zip(ids, outputs))

  def make_predictions(self, examples, layouts, outputs, threshold: float) -> dict:
    """The prediction file's content, decoded by the layout's rules."""
    if self.official:
      return official_decode.make_predictions(
          examples, layouts, outputs, self.tokenizer.tokenizer, threshold,
          min_supporting_facts=self.feature_config.min_supporting_facts)
    return decode.make_predictions(examples, layouts, outputs, threshold)

  def choose_threshold(self, examples, layouts, outputs, gold):
    """(threshold, {threshold: metrics}) on labelled data, by the layout's rules."""
    if self.official:
      return official_decode.choose_threshold(
          examples, layouts, outputs, gold, self.tokenizer.tokenizer,
          min_supporting_facts=self.feature_config.min_supporting_facts)
    return decode.choose_threshold(examples, layouts, outputs, gold)

  def predict(self, examples: Sequence[HotpotExample], batch_size: int = 8,
              threshold: Optional[float] = None) -> dict:
    layouts, outputs = self.run(examples, batch_size)
    return self.make_predictions(examples, layouts, outputs,
                                 self.threshold if threshold is None else threshold)
