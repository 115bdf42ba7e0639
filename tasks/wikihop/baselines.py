"""The trivial WikiHop baseline: the candidate mentioned most often in the supports."""

import re
from typing import Dict, List, Sequence, Tuple

from tasks.wikihop.data import WikiHopExample

_LETTER_OR_DIGIT = re.compile(r"[^\W_]")


def mention_pattern(candidates: List[str]):
  """A regex finding mentions of the (lower-case) candidates not followed by a letter or
  digit, longest first; `find_mentions` keeps those not preceded by one (whole words)."""
  words = sorted({c for c in candidates if c}, key=lambda c: (-len(c), c))
  if not words:
    return None
  # The alternatives come first, so that the regex engine looks only at the positions where
  # one of their first characters is (a look-behind first would make it try every position).
  return re.compile(r"(?:" + "|".join(re.escape(c) for c in words) + r")(?![^\W_])")


def find_mentions(text: str, pattern, candidates: List[str]) -> List[Tuple[int, int, int]]:
  """(start, end, candidate index) of the candidate mentions in `text` (case-insensitive):
  at the first position not preceded by a letter or digit where a candidate matches, the
  longest such candidate, then on after it."""
  lowered = text.lower()
  if pattern is None or len(lowered) != len(text):   # a case change moved characters: skip
    return []
  index = {c: i for i, c in enumerate(candidates)}
  out, position, search, word_char = [], 0, pattern.search, _LETTER_OR_DIGIT.match
  while True:
    match = search(lowered, position)
    if match is None:
      return out
    start = match.start()
    if start and word_char(lowered, start - 1):   # inside a word: try the next position
      position = start + 1
      continue
    out.append((start, match.end(), index[match.group()]))
    position = match.end()


def mention_counts(example: WikiHopExample) -> Dict[str, int]:
  """Whole-word, case-insensitive mentions of each candidate (a longer candidate wins where two
  overlap)."""
  pattern = mention_pattern(example.candidates)
  counts = {c: 0 for c in example.candidates}
  for text in example.supports:
    for _, _, index in find_mentions(text, pattern, example.candidates):
      counts[example.candidates[index]] += 1
  return counts


def most_mentioned(examples: Sequence[WikiHopExample]) -> Dict[str, str]:
  """{id: the most mentioned candidate} (ties: the earlier candidate; "" without candidates)."""
  return {e.example_id: max(e.candidates, key=mention_counts(e).get, default="")
          for e in examples}
