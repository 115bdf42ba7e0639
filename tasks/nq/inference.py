"""Predicting Natural Questions with a fine-tuned model, in memory or exported.

The export (tasks.common.serving) maps the int32 model features ([batch, long_seq_len] /
[batch, global_seq_len]; features.MODEL_FEATURES) to the five head outputs
(decode.OUTPUT_NAMES). `Predictor` runs every window of every example and decodes the
predictions JSON.
"""

import collections
import time
from typing import Callable, Iterator, List, Sequence, Tuple

import numpy as np

from absl import logging

from etc_realformer.data import tfrecords
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

  def _windows(self, examples):
    return records.prediction_windows(examples, self.tokenizer, self.feature_config)

  def run(self, examples: Sequence[NqExample], batch_size: int = 8,
          log: Callable[[str], None] = logging.info
          ) -> Iterator[Tuple[NqExample, List[np.ndarray], List[decode.WindowOutput]]]:
    """(example, token_pos of its windows ([L] each), window outputs) of every usable example,
    as soon as its windows are done.

    Windows of several examples share a batch; an example's outputs are handed over (and can
    be dropped) once its last window has run, so memory does not grow with the file.
    """
    unusable = sum(1 for e in examples if e.problem)
    if unusable:
      log(f"{unusable} example(s) could not be converted: they get a null answer")
    waiting = collections.OrderedDict()   # id -> [example, token_pos, outputs, windows left]
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
        example, token_pos, outputs, _ = waiting.popitem(last=False)[1]
        examples_done += 1
        yield example, token_pos, outputs

    for example, token_pos, windows in self._windows(examples):
      waiting[example.example_id] = [example, token_pos, [], len(windows)]
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
    entries = {}
    snap = self.feature_config.snap_long_answers_to_candidates
    for example, token_pos, outputs in self.run(examples, batch_size):
      entries[example.example_id] = decode.decode_example(
          example.example_id, outputs, token_pos, snap_to=example if snap else None)
    return decode.finish([entries.get(e.example_id) or decode.null_prediction(e.example_id)
                          for e in examples])
