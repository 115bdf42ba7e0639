"""Exporting a fine-tuned OpenKP model as a SavedModel, and predicting with it.

Export directory (etc_realformer.serving): saved_model/ (int32 token_ids, sentence_ids,
word_ids [batch, long_seq_len], global_token_ids [batch, global_seq_len], num_words [batch] and
float32 global_visual_features [batch, global_seq_len, 20] -> ngram_logits [batch, 5,
long_seq_len]), vocab.txt and task_config.json (feature and encoder config).
"""

import dataclasses
import time
from typing import Callable, List, Sequence

from absl import logging
import tensorflow as tf

from etc_realformer import serving
from etc_realformer.data import tfrecords
from tasks.openkp import decode
from tasks.openkp import features as features_lib
from tasks.openkp import records
from tasks.openkp.data import NUM_VISUAL_FEATURES, OpenKpPage


def export_model(model, feature_config: features_lib.OpenKpFeatureConfig, vocab_file: str,
                 directory: str) -> str:
  """Writes the export directory; replaces an older export."""
  lengths = features_lib.feature_lengths(feature_config)
  specs = {name: lengths[name] for name in features_lib.MODEL_FEATURES}
  specs["num_words"] = tf.TensorSpec([None], tf.int32)
  specs["global_visual_features"] = tf.TensorSpec(
      [None, feature_config.global_seq_len, NUM_VISUAL_FEATURES], tf.float32)
  return serving.export_task_model(
      model, specs, decode.OUTPUT_NAMES, vocab_file, directory,
      {"feature_config": dataclasses.asdict(feature_config),
       "etc_config": model.etc_config.to_dict()})


class Predictor(serving.TaskPredictor):
  """Runs an OpenKP model over pages and returns the prediction lines (top-5 phrases)."""
  feature_config_class = features_lib.OpenKpFeatureConfig
  output_names = decode.OUTPUT_NAMES
  export_description = ("an OpenKP export (`python -m tasks.openkp.finetune` writes "
                        "<output_dir>/export)")

  def predict(self, pages: Sequence[OpenKpPage], batch_size: int = 16,
              log: Callable[[str], None] = logging.info) -> List[dict]:
    """The prediction lines, one per page in input order."""
    chosen, pending = {}, []
    start = time.perf_counter()

    def flush():
      batch = tfrecords.stack_features([f for _, f in pending], records.INPUT_FEATURES)
      logits = self.run_batch(batch)["ngram_logits"]                   # [b, 5, L]
      for (page, _), row in zip(pending, logits):
        chosen[page.url] = decode.top_phrases(page, row)
      pending.clear()
      if len(chosen) % (50 * batch_size) < batch_size:
        log(f"  predicted {len(chosen)}/{len(pages)} pages "
            f"({len(chosen) / max(time.perf_counter() - start, 1e-9):.1f}/s)")

    for page, f in records.prediction_features(pages, self.tokenizer, self.feature_config):
      pending.append((page, f))
      if len(pending) == batch_size:
        flush()
    if pending:
      flush()
    log(f"predicted {len(chosen)} page(s) in {time.perf_counter() - start:.1f} s")
    return decode.prediction_lines(pages, chosen)
