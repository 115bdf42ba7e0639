"""Exporting a fine-tuned WikiHop model as a SavedModel, and predicting with it.

Export directory (etc_realformer.serving): saved_model/ (the int32 features of
records.INPUT_FEATURES -> candidate_logits [batch, global_seq_len]), vocab.txt and
task_config.json (feature and encoder config).
"""

import dataclasses
import time
from typing import Callable, Dict, Sequence

from absl import logging

from etc_realformer import serving
from etc_realformer.data import tfrecords
from tasks.wikihop import decode
from tasks.wikihop import features as features_lib
from tasks.wikihop import records
from tasks.wikihop.data import WikiHopExample


def export_model(model, feature_config: features_lib.WikiHopFeatureConfig, vocab_file: str,
                 directory: str) -> str:
  """Writes the export directory; replaces an older export."""
  lengths = features_lib.feature_lengths(feature_config)
  return serving.export_task_model(
      model, {name: lengths[name] for name in records.INPUT_FEATURES}, decode.OUTPUT_NAMES,
      vocab_file, directory, {"feature_config": dataclasses.asdict(feature_config),
                              "etc_config": model.etc_config.to_dict()})


class Predictor(serving.TaskPredictor):
  """Runs a WikiHop model over examples and returns {id: candidate}."""
  feature_config_class = features_lib.WikiHopFeatureConfig
  output_names = decode.OUTPUT_NAMES
  export_description = ("a WikiHop export (`python -m tasks.wikihop.finetune` writes "
                        "<output_dir>/export)")

  def predict(self, examples: Sequence[WikiHopExample], batch_size: int = 16,
              log: Callable[[str], None] = logging.info) -> Dict[str, str]:
    """{id: candidate} for every example, in input order."""
    chosen, pending = {}, []
    start = time.perf_counter()

    def flush():
      batch = tfrecords.stack_features([f for _, f in pending], records.INPUT_FEATURES)
      logits = self.run_batch(batch)["candidate_logits"]            # [b, G]
      for (example, _), row in zip(pending, logits):
        chosen[example.example_id] = decode.choose(example, row)
      pending.clear()
      if len(chosen) % (50 * batch_size) < batch_size:
        log(f"  predicted {len(chosen)}/{len(examples)} examples "
            f"({len(chosen) / max(time.perf_counter() - start, 1e-9):.1f}/s)")

    for example, f in records.prediction_features(examples, self.tokenizer,
                                                  self.feature_config):
      pending.append((example, f))
      if len(pending) == batch_size:
        flush()
    if pending:
      flush()
    without = sum(not e.candidates for e in examples)
    log(f"predicted {len(chosen)} example(s) in {time.perf_counter() - start:.1f} s"
        + (f"; {without} without candidates predict \"\"" if without else ""))
    return decode.complete(examples, chosen)
