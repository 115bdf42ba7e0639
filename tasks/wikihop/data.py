"""Reading official WikiHop (QAngaroo v1.1) JSON files, with checks that name the bad field.

A JSON array of items (docs/file_formats.md, "WikiHop"): `id`, `query` ("<relation> <subject>"),
`candidates` (lower-case strings), `supports` (document strings), `answer` (absent in test
files), `annotations` (dev only, ignored). `read_examples` returns `WikiHopExample`s and a
`ReadReport`. Two modes:
  - with_labels=True (training): an item that cannot be labelled (missing or non-string fields,
    no candidates, an answer that is not a candidate, or not one once lower-cased without being
    stripped as Google's converter does, duplicate id) is skipped and counted under its reason,
    with its first messages kept.
  - with_labels=False (prediction): every item with an id is kept so every id gets a
    prediction; unusable parts are repaired (non-string supports dropped, a missing query
    emptied) and counted. An item without usable candidates is kept and predicted as "".

`iter_training_examples` streams a training file one record at a time (same checks and counts)
for the conversion to TFRecords.

Every message reads "<file>: item <index> (id <id>): field '<name>': <what is wrong>".
"""

import dataclasses
from typing import Any, List, Optional

from tasks.common.read_report import (ArrayReader, RecordProblem, object_with_id, text_field,
                                      tolerate, typed_field)


class WikiHopDataError(ValueError):
  """A file that cannot be read at all (missing, empty, not JSON, not an array, no item)."""


def normalize(candidate: str) -> str:
  """The form predictions and answers are compared in: lower-cased and stripped."""
  return candidate.strip().lower()


@dataclasses.dataclass
class WikiHopExample:
  """One query with its candidates and supporting documents."""
  example_id: str
  query: str
  candidates: List[str]          # normalised, in file order (duplicates removed)
  supports: List[str]
  answer: Optional[str] = None   # normalised; None for test files
  # The JSON item as read: the converter (tasks.wikihop.features) reads the raw
  # query and candidates, as Google's converter does.
  item: Optional[dict] = dataclasses.field(default=None, repr=False, compare=False)

  @property
  def label(self) -> int:
    """Index of the answer among the candidates (-1 without an answer)."""
    return self.candidates.index(self.answer) if self.answer in self.candidates else -1


def _string_list(item, field: str, with_labels: bool, repairs: List[RecordProblem]) -> List[str]:
  kept = []
  for i, entry in enumerate(typed_field(item, field, list, "a list of strings")):
    if isinstance(entry, str):
      kept.append(entry)
    else:
      tolerate(RecordProblem(f"non-string {field} entry", f"{field}[{i}]",
                             f"expected a string, got {type(entry).__name__}"),
               with_labels, repairs, "dropped")
  return kept


def parse_item(item: Any, with_labels: bool, repairs: List[RecordProblem]) -> WikiHopExample:
  """One JSON item -> WikiHopExample; raises RecordProblem (skip) or appends to `repairs`."""
  example_id = object_with_id(item, "item", "id")
  query = text_field(item, "query", "missing field", with_labels, repairs,
                     "predicted from the documents alone")
  try:
    raw_candidates = _string_list(item, "candidates", with_labels, repairs)
    if not raw_candidates:
      raise RecordProblem("no candidates", "candidates", "the list is empty")
  except RecordProblem as problem:
    tolerate(problem, with_labels, repairs, "an empty answer will be predicted")
    raw_candidates = []
  candidates = list(dict.fromkeys(c for c in map(normalize, raw_candidates) if c))
  try:
    supports = _string_list(item, "supports", with_labels, repairs)
  except RecordProblem as problem:
    tolerate(problem, with_labels, repairs, "predicted from the candidates alone")
    supports = []
  example = WikiHopExample(example_id, query.strip().lower(), candidates, supports, item=item)
  if with_labels:
    answer = item.get("answer")
    if not isinstance(answer, str) or not answer.strip():
      raise RecordProblem("missing field", "answer", "missing or not a non-empty string")
    if normalize(answer) not in candidates:
      raise RecordProblem("answer not a candidate", "answer",
                     f"{answer!r} is not among the {len(candidates)} candidates")
    if answer.lower() not in candidates:   # Google's converter lower-cases it, not strips it
      raise RecordProblem("answer not a candidate (official layout)", "answer",
                          f"{answer!r} lower-cased (Google's converter does not strip it) is "
                          "not one of the stripped, lower-cased candidates")
    example.answer = normalize(answer)
  elif isinstance(item.get("answer"), str):
    example.answer = normalize(item["answer"])
  return example


READER = ArrayReader("WikiHop", "item", "id", parse_item, lambda example: example.example_id,
                     WikiHopDataError)
iter_items = READER.iter   # the items of a file one at a time (never the whole file in memory)
# read_examples(path, with_labels): (examples, report), the two modes of the module docstring.
read_examples, iter_training_examples = READER.read_examples, READER.iter_training_examples
