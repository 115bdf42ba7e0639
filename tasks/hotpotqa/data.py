"""Reading official HotpotQA (distractor) JSON files, with checks that name the bad field.

One JSON array of records (docs/file_formats.md, "HotpotQA"). `read_examples` gives `HotpotExample`s
and a `ReadReport`. Two modes:
  - with_labels=True (training): records are read as Google's converter reads them
    (`parse_training_record`): answer and supporting facts are taken as they are, and the
    converter (tasks.hotpotqa.features) skips and counts what it cannot label; a record whose
    fields have the wrong shape is skipped, counted under its reason, and its first messages kept.
  - with_labels=False (prediction): nothing with an `_id` is skipped. Unusable parts are
    replaced by what can be used (non-string sentences dropped, a malformed context emptied), and
    each repair is counted, so every id still gets a prediction.

`iter_training_examples` streams a training file one record at a time (same checks and counts)
for the conversion to TFRecords.

Every message reads "<file>: record <index> (_id <id>): field '<name>': <what is wrong>".
"""

import dataclasses
from typing import Any, Dict, List, Optional, Tuple

from tasks.common.read_report import (ArrayReader, RecordProblem, object_with_id,
                                      tolerate, typed_field)


class HotpotDataError(ValueError):
  """A file that cannot be read at all (missing, empty, not JSON, not an array)."""


@dataclasses.dataclass
class HotpotExample:
  """One question with its paragraphs. Labels are None when the record has none (test files)."""
  qas_id: str
  question: str
  context: List[Tuple[str, List[str]]]        # [(title, [sentence, ...]), ...]
  answer: Optional[str] = None
  supporting_facts: Optional[List[Tuple[str, int]]] = None
  type: str = ""
  level: str = ""


def _is_paragraph(paragraph: Any) -> bool:
  """[title string, list of sentences] (the sentences themselves unchecked)."""
  return (isinstance(paragraph, (list, tuple)) and len(paragraph) == 2
          and isinstance(paragraph[0], str) and isinstance(paragraph[1], list))


def _parse_context(record: Dict[str, Any], repairs: List[RecordProblem]):
  """[(title, [sentences])]; problems that allow a best-effort context go to `repairs`."""
  context = typed_field(record, "context", list, "a list of [title, sentences]",
                        empty="empty context", empty_detail="the list of paragraphs is empty")
  out = []
  for p, paragraph in enumerate(context):
    if not _is_paragraph(paragraph):
      repairs.append(RecordProblem("malformed paragraph", f"context[{p}]",
                                    "expected [title string, [sentence, ...]]; paragraph dropped"))
      continue
    title, sentences = paragraph
    kept = []
    for s, sentence in enumerate(sentences):
      if isinstance(sentence, str):
        kept.append(sentence)
      else:
        repairs.append(RecordProblem(
            "non-string sentence", f"context[{p}][1][{s}]",
            f"expected a string, got {type(sentence).__name__}; replaced by an empty sentence"))
        kept.append("")   # keeps the indices of the later sentences
    out.append((title, kept))
  if not out:
    raise RecordProblem("empty context", "context", "no usable paragraph")
  return out


def _string_field(record: Dict[str, Any], name: str, default: Optional[str] = None) -> str:
  value = record.get(name, default)
  if not isinstance(value, str):
    raise RecordProblem("bad field", name, f"expected a string, got {type(value).__name__}")
  return value


def parse_training_record(record: Any) -> HotpotExample:
  """A record read as Google's converter reads it: `_id`, `question` and `context` required;
  `answer` (default ""), `supporting_facts` (default []), `type` and `level` (default "")
  taken as they are, unchecked against the context (the converter decides what it can label
  and counts what it cannot). RecordProblem names a field whose shape it cannot use."""
  qas_id = object_with_id(record, "record", "_id")
  question = _string_field(record, "question")
  context = record.get("context")
  if not isinstance(context, list):
    raise RecordProblem("malformed context", "context",
                        f"expected a list of [title, sentences], got {type(context).__name__}")
  paragraphs = []
  for p, paragraph in enumerate(context):
    if not _is_paragraph(paragraph) or not all(isinstance(s, str) for s in paragraph[1]):
      raise RecordProblem("malformed context", f"context[{p}]",
                          "expected [title string, [sentence string, ...]]")
    paragraphs.append((paragraph[0], list(paragraph[1])))
  facts = record.get("supporting_facts", [])
  if not isinstance(facts, list):
    raise RecordProblem("bad supporting facts", "supporting_facts", "expected a list")
  parsed = []
  for i, fact in enumerate(facts):
    if (not isinstance(fact, (list, tuple)) or len(fact) != 2 or not isinstance(fact[0], str)
        or not isinstance(fact[1], int) or isinstance(fact[1], bool)):
      raise RecordProblem("bad supporting facts", f"supporting_facts[{i}]",
                          f"expected [title, integer index], got {fact!r}")
    parsed.append((fact[0], fact[1]))
  return HotpotExample(qas_id, question, paragraphs, answer=_string_field(record, "answer", ""),
                       supporting_facts=parsed, type=_string_field(record, "type", ""),
                       level=_string_field(record, "level", ""))


def parse_record(record: Any, with_labels: bool, repairs: List[RecordProblem]) -> HotpotExample:
  """Training (`with_labels`): `parse_training_record`. Prediction: every record with an `_id`
  is kept, its unusable parts repaired and counted (module docstring)."""
  if with_labels:
    return parse_training_record(record)
  qas_id = object_with_id(record, "record", "_id")
  question = record.get("question")
  if not isinstance(question, str):
    tolerate(RecordProblem("missing field", "question", "missing or not a string"), False,
             repairs, "predicted from the context alone")
    question = ""
  try:
    context = _parse_context(record, repairs)
  except RecordProblem as problem:
    tolerate(problem, False, repairs, "an empty answer will be predicted")
    context = []
  return HotpotExample(qas_id, question, context, type=str(record.get("type", "")),
                       level=str(record.get("level", "")))


READER = ArrayReader("HotpotQA", "record", "_id", parse_record, lambda example: example.qas_id,
                     HotpotDataError)
load_json_array, iter_records_of = READER.load, READER.iter
# read_examples(path, with_labels): (examples, report), the two modes of the module docstring.
read_examples, iter_training_examples = READER.read_examples, READER.iter_training_examples
