"""WikiHop model outputs -> the leaderboard's prediction file {id: candidate}."""

from typing import Dict, Sequence

import numpy as np

from tasks.wikihop.data import WikiHopExample

OUTPUT_NAMES = ("candidate_logits",)


def choose(example: WikiHopExample, candidate_logits: np.ndarray) -> str:
  """The candidate with the highest logit (candidate i is global token i); "" without any."""
  if not example.candidates:
    return ""
  scores = np.asarray(candidate_logits)[:len(example.candidates)]
  return example.candidates[int(np.argmax(scores))]


def complete(examples: Sequence[WikiHopExample], chosen: Dict[str, str]) -> Dict[str, str]:
  """{id: candidate} for every example in input order ("" where nothing was chosen)."""
  return {e.example_id: chosen.get(e.example_id, "") for e in examples}
