"""Predicting HotpotQA with a fine-tuned model, in memory or exported.

The export (tasks.common.serving) maps the eight int32 model features ([batch, long_seq_len] /
[batch, global_seq_len]) to the four head outputs (answer_type_logits, sp_logits, begin_logits,
end_logits); its task_config.json also keeps the supporting-fact threshold. `Predictor` turns
HotpotQA examples into the prediction file's content.
"""

import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from absl import logging

from etc_realformer.data import tfrecords
from tasks.common import serving
from tasks.hotpotqa import decode
from tasks.hotpotqa import features as features_lib
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

  @property
  def threshold(self) -> float:
    return float(self.settings.get("sp_threshold", decode.DEFAULT_THRESHOLD))

  def run(self, examples: Sequence[HotpotExample], batch_size: int = 8,
          log: Callable[[str], None] = logging.info
          ) -> Tuple[Dict[str, features_lib.ExampleLayout], Dict[str, decode.ExampleOutput]]:
    """Model outputs of every example with a usable context: (layouts, outputs) by id."""
    usable = [e for e in examples if e.context]
    if len(usable) < len(examples):
      log(f"{len(examples) - len(usable)} example(s) have no usable context: they get an "
          "empty answer and no supporting fact")
    features, layouts = records.convert_examples(usable, self.tokenizer, self.feature_config,
                                                 with_labels=False, log=log)
    outputs: List[decode.ExampleOutput] = []
    start = time.perf_counter()
    for begin in range(0, len(features), batch_size):
      batch = tfrecords.stack_features(features[begin:begin + batch_size], self.input_features)
      outputs.extend(decode.split_batch(self.run_batch(batch)))
      done = begin + len(batch["token_ids"])
      if done % max(batch_size, 500 // batch_size * batch_size) == 0 or done == len(features):
        log(f"  predicted {done}/{len(features)} examples "
            f"({done / max(time.perf_counter() - start, 1e-9):.1f}/s)")
    return ({l.qas_id: l for l in layouts},
            {l.qas_id: o for l, o in zip(layouts, outputs)})

  def predict(self, examples: Sequence[HotpotExample], batch_size: int = 8,
              threshold: Optional[float] = None) -> dict:
    layouts, outputs = self.run(examples, batch_size)
    return decode.make_predictions(examples, layouts, outputs,
                                   self.threshold if threshold is None else threshold)
