"""The trivial Natural Questions baselines a trained model must beat.

* "always null": every example answered null.
* "first paragraph": the long answer is the first top-level candidate that starts with a <P>
  tag, with the same score everywhere; no short answer. Kwiatkowski et al. 2019 report it as
  the trivial long-answer baseline of the benchmark (long answer F1 about 0.28 on the real dev
  set), because many questions are answered in a page's opening paragraph.
"""

from typing import Sequence

from tasks.nq import decode
from tasks.nq.data import NqExample


def null_predictions(examples: Sequence[NqExample]) -> dict:
  """The "always null" baseline: every example answered null (finite scores)."""
  return decode.finish([decode.null_prediction(e.example_id) for e in examples])


def first_paragraph_index(example: NqExample) -> int:
  """The index of the first top-level candidate whose first token is a <P> tag; -1 if none."""
  for index, candidate in enumerate(example.candidates):
    start = candidate.span.start_token
    if (candidate.top_level and 0 <= start < len(example.tokens)
        and example.is_html[start] and example.tokens[start].strip("<>").upper() == "P"):
      return index
  return -1


def first_paragraph_predictions(examples: Sequence[NqExample]) -> dict:
  """The "first paragraph" baseline (score 1.0 for every answered example, null otherwise)."""
  entries = []
  for example in examples:
    index = first_paragraph_index(example)
    entry = decode.null_prediction(example.example_id)
    if index >= 0:
      entry.update(long_answer=example.candidates[index].span.to_json(), long_answer_score=1.0)
    entries.append(entry)
  return decode.finish(entries)
