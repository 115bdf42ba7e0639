"""Exporting a fine-tuned HotpotQA model as a SavedModel, and predicting with it.

Export directory:
  saved_model/       tf.saved_model with a `serving_default` signature: the eight int32 model
                     features ([batch, long_seq_len] / [batch, global_seq_len]) -> the four
                     head outputs (answer_type_logits, sp_logits, begin_logits, end_logits)
  vocab.txt          the WordPiece vocabulary the features were made with
  task_config.json   feature config, encoder config and the supporting-fact threshold

`Predictor` loads such a directory (or wraps an in-memory model) and turns HotpotQA examples
into the prediction file's content.
"""

import dataclasses
import json
import os
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from absl import logging
import numpy as np

from etc_realformer.data.span_tokenization import OffsetTokenizer
from etc_realformer import serving
from etc_realformer.io_utils import atomic_write_json
from tasks.hotpotqa import decode
from tasks.hotpotqa import features as features_lib
from tasks.hotpotqa import records
from tasks.hotpotqa.data import HotpotExample

TASK_CONFIG_FILE = serving.TASK_CONFIG_FILE
OUTPUT_NAMES = ("answer_type_logits", "sp_logits", "begin_logits", "end_logits")


def export_model(model, feature_config: features_lib.HotpotFeatureConfig, vocab_file: str,
                 directory: str, threshold: float = decode.DEFAULT_THRESHOLD) -> str:
  """Writes the export directory (see the module docstring); replaces an older export."""
  lengths = features_lib.feature_lengths(feature_config)
  return serving.export_task_model(
      model, {name: lengths[name] for name in features_lib.MODEL_FEATURES}, OUTPUT_NAMES,
      vocab_file, directory, {"feature_config": dataclasses.asdict(feature_config),
                              "etc_config": model.etc_config.to_dict(),
                              "sp_threshold": float(threshold)})


def set_threshold(directory: str, threshold: float) -> None:
  """Records the dev-chosen supporting-fact threshold in an export's task_config.json."""
  path = os.path.join(directory, TASK_CONFIG_FILE)
  with open(path) as f:
    config = json.load(f)
  config["sp_threshold"] = float(threshold)
  atomic_write_json(path, config)


class Predictor:
  """Runs a HotpotQA model over examples and decodes the prediction file.

  Args:
    run_batch: features dict of int32 arrays [b, ...] -> dict of the OUTPUT_NAMES arrays.
    feature_config: how examples are converted.
    tokenizer: the WordPiece tokenizer of the model's vocabulary.
    threshold: the supporting-fact threshold.
  """

  def __init__(self, run_batch: Callable[[Dict[str, np.ndarray]], Dict[str, np.ndarray]],
               feature_config: features_lib.HotpotFeatureConfig, tokenizer: OffsetTokenizer,
               threshold: float = decode.DEFAULT_THRESHOLD):
    self.run_batch = run_batch
    self.feature_config = feature_config
    self.tokenizer = tokenizer
    self.threshold = threshold

  @classmethod
  def from_export(cls, directory: str) -> "Predictor":
    config, run_batch, loaded = serving.load_task_export(
        directory, "a HotpotQA export (`python -m tasks.hotpotqa.finetune` writes "
        "<output_dir>/export)")
    predictor = cls(run_batch, features_lib.HotpotFeatureConfig(**config["feature_config"]),
                    serving.export_tokenizer(directory),
                    config.get("sp_threshold", decode.DEFAULT_THRESHOLD))
    predictor.loaded = loaded  # keeps the SavedModel's variables alive
    return predictor

  @classmethod
  def from_model(cls, model, feature_config, tokenizer, threshold=decode.DEFAULT_THRESHOLD):
    return cls(serving.model_run_batch(model, OUTPUT_NAMES), feature_config, tokenizer,
               threshold)

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
      batch = records.stack(features[begin:begin + batch_size], features_lib.MODEL_FEATURES)
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
