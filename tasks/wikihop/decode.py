"""Model outputs -> the prediction {id: candidate}, by Google's rules.

Google's wikihop_eval.py (get_predicted_answer): the logits of the first C global tokens (the
C candidates, in the item's order, duplicates kept) are compared; the first highest one wins
(numpy argmax) and its candidate, lower-cased and stripped, is the answer. An item without
candidates (Google's converter fails on it) predicts "".
"""

from typing import Sequence

import numpy as np

from tasks.wikihop.features import OfficialExample

OUTPUT_NAMES = ("candidate_logits",)   # Google's export calls it "logits"


def choose(example: OfficialExample, logits: Sequence[float]) -> str:
  """The answer for one example from its logits [G] (G >= the number of candidates)."""
  if not example.candidates:
    return ""
  logits = np.asarray(logits)
  if logits.shape[0] < len(example.candidates):
    raise ValueError(f"id {example.example_id}: {logits.shape[0]} logits for "
                     f"{len(example.candidates)} candidates")
  best = int(np.argmax(logits[:len(example.candidates)]))
  return example.candidates[best].lower().strip()
