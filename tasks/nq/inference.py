"""Predicting Natural Questions with a fine-tuned model, in memory or exported.

The export (tasks.common.serving) maps the int32 model features ([batch, long_seq_len] /
[batch, global_seq_len]; features.MODEL_FEATURES) to the five head outputs
(decode.OUTPUT_NAMES). `Predictor` runs every window of every example and decodes the
predictions JSON.
"""

from typing import Callable, Dict, Sequence

from absl import logging
import numpy as np

from tasks.common import serving
from tasks.nq import decode
from tasks.nq import features as features_lib
from tasks.nq import records
from tasks.nq.data import NqExample


class Predictor(serving.TaskPredictor):
  """Runs an NQ model over the windows of examples and decodes the predictions JSON."""
  feature_config_class = features_lib.NqFeatureConfig
  input_features = features_lib.MODEL_FEATURES
  output_names = decode.OUTPUT_NAMES
  export_description = "an NQ export (`python -m tasks.nq finetune` writes <output_dir>/export)"

  def predict(self, examples: Sequence[NqExample], batch_size: int = 8,
              log: Callable[[str], None] = logging.info) -> dict:
    """The predictions JSON content: one entry per example, in input order.

    Windows of several examples share a batch (TaskPredictor.run_examples); an example is
    decoded, and its outputs dropped, once its last window has run, so memory does not grow
    with the file.
    """
    unusable = sum(1 for e in examples if e.problem)
    if unusable:
      log(f"{unusable} example(s) could not be converted: they get a null answer")
    snap = self.feature_config.snap_long_answers_to_candidates
    waiting = {}   # example_id -> [example, token_pos [L] per window, outputs, windows left]
    entries = {}

    def windows():
      for example, token_pos, example_windows in records.prediction_windows(
          examples, self.tokenizer, self.feature_config):
        waiting[example.example_id] = [example, token_pos, [], len(example_windows)]
        for window in example_windows:
          yield example.example_id, window

    def use(owner, row: Dict[str, np.ndarray]):
      entry = waiting[owner]
      entry[2].append(decode.WindowOutput(*(np.asarray(row[name], np.float32)
                                            for name in decode.OUTPUT_NAMES)))
      entry[3] -= 1
      if entry[3] == 0:
        example, token_pos, outputs, _ = waiting.pop(owner)
        entries[owner] = decode.decode_example(owner, outputs, token_pos,
                                               snap_to=example if snap else None)

    self.run_examples(windows(), batch_size, use, None, unit="windows", log=log)
    return decode.finish([entries.get(e.example_id) or decode.null_prediction(e.example_id)
                          for e in examples])
