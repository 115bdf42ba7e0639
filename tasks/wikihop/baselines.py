"""The trivial WikiHop baseline: the candidate mentioned most often in the supports."""

from typing import Dict, Sequence

from tasks.wikihop import features as features_lib
from tasks.wikihop.data import WikiHopExample


def mention_counts(example: WikiHopExample) -> Dict[str, int]:
  """Whole-word, case-insensitive mentions of each candidate (a longer candidate wins where two
  overlap, as in the l2g links)."""
  pattern = features_lib.mention_pattern(example.candidates)
  counts = {c: 0 for c in example.candidates}
  for text in example.supports:
    for _, _, index in features_lib.find_mentions(text, pattern, example.candidates):
      counts[example.candidates[index]] += 1
  return counts


def most_mentioned(examples: Sequence[WikiHopExample]) -> Dict[str, str]:
  """{id: the most mentioned candidate} (ties: the earlier candidate; "" without candidates)."""
  out = {}
  for example in examples:
    counts = mention_counts(example)
    out[example.example_id] = max(example.candidates, key=lambda c: counts[c],
                                  default="") if example.candidates else ""
  return out
