"""Reading official HotpotQA (distractor) JSON files, with checks that name the bad field.

One JSON array of records (docs/file_formats.md, "HotpotQA"). `read_examples` gives `HotpotExample`s
and a `ReadReport`. Two modes:
  - with_labels=True (training): a record that cannot be labelled (missing answer, supporting
    facts pointing at a title or sentence that does not exist, a span answer that occurs in no
    supporting sentence) is skipped, counted under its reason, and its first messages kept.
  - with_labels=False (prediction): nothing with an `_id` is skipped. Unusable parts are
    replaced by what can be used (non-string sentences dropped, a malformed context emptied), and
    each repair is counted, so every id still gets a prediction.

`iter_training_examples` streams a training file one record at a time (same checks and counts)
for the conversion to TFRecords.

Every message reads "<file>: record <index> (_id <id>): field '<name>': <what is wrong>".
"""

import dataclasses
from typing import Any, Dict, Iterator, List, Optional, Tuple

from tasks.common import input_parts
from tasks.common import json_files
from tasks.common.read_report import ReadReport
from tasks.common.read_report import (RecordProblem, iter_records, object_with_id, read_array,
                                      tolerate)

YES_NO = ("yes", "no")


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

  @property
  def answer_type(self) -> int:
    """0 span, 1 yes, 2 no (the answer-type head's classes)."""
    answer = (self.answer or "").strip().lower()
    return 1 + YES_NO.index(answer) if answer in YES_NO else 0


def load_json_array(path: str) -> List[Any]:
  """The records of a HotpotQA file; FileNotFoundError / HotpotDataError name the file."""
  return json_files.load_json_array(path, "HotpotQA", "records", HotpotDataError)


def iter_records_of(path: str) -> Iterator[Any]:
  """The records of a HotpotQA file one at a time (never the whole file in memory)."""
  return json_files.iter_json_array(path, "HotpotQA", "records", HotpotDataError)


def _parse_context(record: Dict[str, Any], repairs: List[RecordProblem]):
  """[(title, [sentences])]; problems that allow a best-effort context go to `repairs`."""
  context = record.get("context")
  if context is None:
    raise RecordProblem("missing field", "context", "missing")
  if not isinstance(context, list):
    raise RecordProblem("malformed context", "context",
                         f"expected a list of [title, sentences], got {type(context).__name__}")
  if not context:
    raise RecordProblem("empty context", "context", "the list of paragraphs is empty")
  out = []
  for p, paragraph in enumerate(context):
    if (not isinstance(paragraph, (list, tuple)) or len(paragraph) != 2
        or not isinstance(paragraph[0], str) or not isinstance(paragraph[1], list)):
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


def _parse_labels(record, context):
  """(answer, supporting_facts) checked against the context."""
  for field in ("answer", "supporting_facts"):
    if field not in record:
      raise RecordProblem("missing field", field, "missing")
  answer = record["answer"]
  if not isinstance(answer, str) or not answer.strip():
    raise RecordProblem("bad answer", "answer", f"expected a non-empty string, got {answer!r}")
  facts = record["supporting_facts"]
  if not isinstance(facts, list) or not facts:
    raise RecordProblem("bad supporting facts", "supporting_facts",
                         "expected a non-empty list of [title, sentence_index]")
  sentences_of = {title: sentences for title, sentences in context}
  parsed = []
  for i, fact in enumerate(facts):
    if (not isinstance(fact, (list, tuple)) or len(fact) != 2 or not isinstance(fact[0], str)
        or not isinstance(fact[1], int) or isinstance(fact[1], bool)):
      raise RecordProblem("bad supporting facts", f"supporting_facts[{i}]",
                           f"expected [title, integer index], got {fact!r}")
    title, index = fact
    if title not in sentences_of:
      raise RecordProblem("supporting fact title not in context", f"supporting_facts[{i}]",
                           f"title {title!r} is not a context title")
    if not 0 <= index < len(sentences_of[title]):
      raise RecordProblem("supporting fact index out of range", f"supporting_facts[{i}]",
                           f"paragraph {title!r} has {len(sentences_of[title])} sentence(s), "
                           f"index {index} does not exist")
    parsed.append((title, index))
  if answer.strip().lower() not in YES_NO:
    if not any(answer.lower() in sentences_of[t][i].lower() for t, i in parsed):
      raise RecordProblem("answer not in supporting facts", "answer",
                           f"{answer!r} occurs in none of the supporting sentences")
  return answer, parsed


def parse_record(record: Any, with_labels: bool, repairs: List[RecordProblem]) -> HotpotExample:
  qas_id = object_with_id(record, "record", "_id")
  question = record.get("question")
  if not isinstance(question, str):
    tolerate(RecordProblem("missing field", "question", "missing or not a string"), with_labels,
             repairs, "predicted from the context alone")
    question = ""
  try:
    context = _parse_context(record, repairs)
  except RecordProblem as problem:
    if with_labels:
      raise
    repairs.append(RecordProblem(problem.reason, problem.field,
                                  problem.detail + "; an empty answer will be predicted"))
    context = []
  example = HotpotExample(qas_id, question, context, type=str(record.get("type", "")),
                          level=str(record.get("level", "")))
  if with_labels:
    if repairs:
      raise repairs[0]
    example.answer, example.supporting_facts = _parse_labels(record, context)
  return example


def read_examples(path: str, with_labels: bool) -> Tuple[List[HotpotExample], ReadReport]:
  """Reads and checks a HotpotQA file; see the module docstring for the two modes."""
  return read_array(path, load_json_array(path),
                    lambda record, repairs: parse_record(record, with_labels, repairs),
                    "_id", "record", lambda example: example.qas_id, HotpotDataError)


def iter_training_examples(path: str, report: ReadReport,
                           part: input_parts.Part = input_parts.WHOLE
                           ) -> Iterator[HotpotExample]:
  """The labelled examples of one part of a training file (records keyed by `_id`), streamed
  one record at a time and counted in `report` as `read_examples(path, True)` counts them."""
  return iter_records(part.select(iter_records_of(path), "_id"), report,
                      lambda record, repairs: parse_record(record, True, repairs),
                      "_id", "record", lambda example: example.qas_id)
