"""Predicting Natural Questions with a fine-tuned model, in memory or exported.

The export (tasks.common.serving) maps the int32 model features ([batch, long_seq_len] /
[batch, global_seq_len]; the package layout's six, or the official layout's five:
official.MODEL_FEATURES) to the five head outputs (decode.OUTPUT_NAMES). `Predictor` runs every
window of every example and decodes the predictions JSON.
"""

import collections
import time
from typing import Callable, Iterator, List, Sequence, Tuple

from absl import logging

from etc_realformer.data import tfrecords
from tasks.common import serving
from tasks.common.feature_config import OFFICIAL_LAYOUT
from tasks.nq import decode
from tasks.nq import official
from tasks.nq import official_decode
from tasks.nq import features as features_lib
from tasks.nq import records
from tasks.nq.data import NqExample


def input_features(feature_config: features_lib.NqFeatureConfig) -> Tuple[str, ...]:
  """The model (and export) inputs of the config's layout."""
  if feature_config.layout == OFFICIAL_LAYOUT:
    return official.MODEL_FEATURES
  return features_lib.MODEL_FEATURES


class Predictor(serving.TaskPredictor):
  """Runs an NQ model over the windows of examples and decodes the predictions JSON (the
  package layout's decoding, or Google's for the official layout)."""
  feature_config_class = features_lib.NqFeatureConfig
  input_features = features_lib.MODEL_FEATURES   # the package layout's; see __init__
  output_names = decode.OUTPUT_NAMES
  export_description = "an NQ export (`python -m tasks.nq finetune` writes <output_dir>/export)"

  def __init__(self, *args, **kwargs):
    super().__init__(*args, **kwargs)
    self.input_features = input_features(self.feature_config)

  def _windows(self, examples):
    if self.feature_config.layout == OFFICIAL_LAYOUT:
      return records.official_prediction_windows(examples, self.tokenizer, self.feature_config)
    return records.prediction_windows(examples, self.tokenizer, self.feature_config)

  def run(self, examples: Sequence[NqExample], batch_size: int = 8,
          log: Callable[[str], None] = logging.info
          ) -> Iterator[Tuple[NqExample, object, List[decode.WindowOutput]]]:
    """(example, layout, window outputs) of every usable example, as soon as its windows are done.
    The layout is a features.ExampleLayout, or for the official layout the windows' token_pos
    arrays ([L] each).

    Windows of several examples share a batch; an example's outputs are handed over (and can
    be dropped) once its last window has run, so memory does not grow with the file.
    """
    unusable = sum(1 for e in examples if e.problem)
    if unusable:
      log(f"{unusable} example(s) could not be converted: they get a null answer")
    waiting = collections.OrderedDict()   # example_id -> [example, layout, outputs, windows left]
    pending, owners = [], []
    start, done, examples_done = time.perf_counter(), 0, 0

    def flush():
      nonlocal done
      batch = tfrecords.stack_features(pending, self.input_features)
      for owner, out in zip(owners, decode.split_batch(self.run_batch(batch))):
        entry = waiting[owner]
        entry[2].append(out)
        entry[3] -= 1
      done += len(pending)
      pending.clear()
      owners.clear()

    def finished():
      nonlocal examples_done
      while waiting and next(iter(waiting.values()))[3] == 0:
        example, layout, outputs, _ = waiting.popitem(last=False)[1]
        examples_done += 1
        yield example, layout, outputs

    for example, layout, windows in self._windows(examples):
      waiting[example.example_id] = [example, layout, [], len(windows)]
      for window in windows:
        pending.append(window)
        owners.append(example.example_id)
        if len(pending) == batch_size:
          flush()
          if done % max(batch_size, 512 // batch_size * batch_size) == 0:
            log(f"  predicted {done} windows of {examples_done} examples "
                f"({done / max(time.perf_counter() - start, 1e-9):.1f} windows/s)")
      yield from finished()
    if pending:
      flush()
    yield from finished()
    log(f"predicted {done} windows of {examples_done} examples in "
        f"{time.perf_counter() - start:.1f} s")

  def predict(self, examples: Sequence[NqExample], batch_size: int = 8) -> dict:
    """The predictions JSON content: one entry per example, in input order."""
    if self.feature_config.layout == OFFICIAL_LAYOUT:
      entries = {}
      for example, token_pos, outputs in self.run(examples, batch_size):
        entries[example.example_id] = official_decode.decode_example(
            example.example_id, outputs, token_pos,
            snap_to=example if self.feature_config.snap_long_answers_to_candidates else None)
      return official_decode.finish([entries.get(e.example_id) or
                                     official_decode.null_prediction(e.example_id)
                                     for e in examples])
    decoded = {}
    for example, layout, outputs in self.run(examples, batch_size):
      decoded[example.example_id] = decode.decode_example(example, layout, outputs)
    entries = [decode.to_prediction(e, decoded.get(e.example_id, decode.Decoded()))
               for e in examples]
    return {"predictions": decode.finite_scores(entries)}
