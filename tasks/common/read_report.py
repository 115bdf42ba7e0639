"""A count of what a reader of task files kept, skipped and repaired, with the first messages.

Task readers never drop a record silently: a skipped record (training: it cannot be labelled) or
a repaired one (prediction: it is used as far as possible) is counted under its reason, and the
first MAX_MESSAGES messages are kept to show the user which file, record and field went wrong.

A report also notes, by input file, the ids its reader's duplicate check took (a later record
with one of them is a duplicate): a sharded conversion (tasks.common.conversion) compares them
across its shards, whose readers never meet each other's records.
"""

import collections
import dataclasses
from typing import Any, Callable, Dict, Iterable, Iterator, List, Sequence, Tuple

from tasks.common import input_parts
from tasks.common import json_files

MAX_MESSAGES = 20


class RecordProblem(Exception):
  """What is wrong with one record: a reason (the count's key), the field, and the detail."""

  def __init__(self, reason: str, field: str, detail: str):
    super().__init__(reason)
    self.reason, self.field, self.detail = reason, field, detail


@dataclasses.dataclass
class ReadReport:
  """What was read, skipped (training) or repaired (prediction), per reason."""
  path: str = ""
  records: int = 0
  examples: int = 0
  skipped: collections.Counter = dataclasses.field(default_factory=collections.Counter)
  repaired: collections.Counter = dataclasses.field(default_factory=collections.Counter)
  messages: List[str] = dataclasses.field(default_factory=list)
  ids: Dict[str, list] = dataclasses.field(default_factory=dict)   # {input file: [id, ...]}

  def _note(self, counter, reason, message):
    counter[reason] += 1
    if len(self.messages) < MAX_MESSAGES:
      self.messages.append(message)

  def skip(self, reason: str, message: str) -> None:
    self._note(self.skipped, reason, message)

  def repair(self, reason: str, message: str) -> None:
    self._note(self.repaired, reason, message)

  def note_id(self, example_id: Any, file: str = "") -> None:
    """Notes an id the duplicate check took, under its input file (default: `path`)."""
    self.ids.setdefault(file or self.path, []).append(example_id)

  def take_counts(self, other: "ReadReport") -> None:
    """Copies another report's counts, messages and ids into this one (same file, read
    elsewhere)."""
    self.records, self.examples = other.records, other.examples
    self.skipped, self.repaired = other.skipped, other.repaired
    self.messages, self.ids = other.messages, other.ids

  def summary(self) -> str:
    lines = [f"{self.path}: {self.records} record(s), {self.examples} example(s) kept, "
             f"{sum(self.skipped.values())} skipped, {sum(self.repaired.values())} repaired"]
    for title, counter in (("skipped", self.skipped), ("repaired", self.repaired)):
      for reason, count in sorted(counter.items()):
        lines.append(f"  {title}: {count} x {reason}")
    if self.messages:
      lines.append(f"  first {len(self.messages)} message(s):")
      lines.extend(f"    {m}" for m in self.messages)
    return "\n".join(lines)


def object_with_id(record: Any, unit: str, key: str) -> str:
  """The non-empty string `key` of a JSON object record; RecordProblem (skip) otherwise."""
  if not isinstance(record, dict):
    raise RecordProblem("not an object", f"({unit})",
                        f"expected a JSON object, got {type(record).__name__}")
  value = record.get(key)
  if not isinstance(value, str) or not value:
    raise RecordProblem("missing field", key, "missing or not a non-empty string")
  return value


def typed_field(record: Dict[str, Any], field: str, kind: type, expected: str,
                malformed: str = "", missing: str = "missing field", empty: str = "",
                empty_detail: str = "the list is empty") -> Any:
  """record[field], checked: RecordProblem (reason `missing`) when absent, (reason `malformed`,
  default "malformed <field>") when not a `kind` ("expected <expected>, got <type>"), and,
  when `empty` names a reason, when it is empty."""
  value = record.get(field)
  if value is None:
    raise RecordProblem(missing, field, "missing")
  if not isinstance(value, kind):
    raise RecordProblem(malformed or f"malformed {field}", field,
                        f"expected {expected}, got {type(value).__name__}")
  if empty and not value:
    raise RecordProblem(empty, field, empty_detail)
  return value


def text_field(record: Dict[str, Any], field: str, reason: str, with_labels: bool,
               repairs: List[RecordProblem], consequence: str) -> str:
  """record[field] when it is a non-blank string; otherwise training skips the record and
  prediction goes on with "" (see `tolerate`)."""
  value = record.get(field)
  if isinstance(value, str) and value.strip():
    return value
  tolerate(RecordProblem(reason, field, "missing, empty or not a string"), with_labels, repairs,
           consequence)
  return ""


def tolerate(problem: RecordProblem, with_labels: bool, repairs: List[RecordProblem],
             consequence: str) -> None:
  """Training (`with_labels`) skips the record; prediction repairs it and says how."""
  if with_labels:
    raise problem
  problem.detail += f"; {consequence}"
  repairs.append(problem)


def collect_records(records: Sequence[Any], report: ReadReport,
                    parse: Callable[[Any, List[RecordProblem]], Any], key: str, unit: str,
                    example_id: Callable[[Any], str]) -> list:
  """Parses the records of a JSON array into examples, counting skips and repairs in `report`
  (see iter_records)."""
  return list(iter_records(enumerate(records), report, parse, key, unit, example_id))


def iter_records(records: Iterable[Tuple[int, Any]], report: ReadReport,
                 parse: Callable[[Any, List[RecordProblem]], Any], key: str, unit: str,
                 example_id: Callable[[Any], str]) -> Iterator[Any]:
  """Streams the examples of (position, record) pairs, counting records, examples, skips and
  repairs in `report` as they go.

  parse(record, repairs) returns an example, raises RecordProblem (the record is skipped) or
  appends repairs it made. A second record with an id seen before is skipped. Messages read
  "<file>: <unit> <index> (<key> <id>): field '<name>': <what is wrong>".
  """
  seen = set()
  for index, record in records:
    report.records += 1
    record_id = record.get(key) if isinstance(record, dict) else None
    where = f"{report.path}: {unit} {index} ({key} {record_id})"
    repairs: List[RecordProblem] = []
    try:
      example = parse(record, repairs)
    except RecordProblem as problem:
      report.skip(problem.reason, f"{where}: field '{problem.field}': {problem.detail}")
      continue
    taken_id = example_id(example)
    if taken_id in seen:
      report.skip(f"duplicate {key}", f"{where}: field '{key}': seen before; {unit} skipped")
      continue
    seen.add(taken_id)
    report.note_id(taken_id)
    for problem in repairs:
      report.repair(problem.reason, f"{where}: field '{problem.field}': {problem.detail}")
    report.examples += 1
    yield example


@dataclasses.dataclass(frozen=True)
class ArrayReader:
  """The reader of one benchmark's JSON-array files (HotpotQA, WikiHop): whole, or streamed one
  part at a time for a conversion, with the same checks, messages and counts either way.

  parse(record, with_labels, repairs) returns an example, raises RecordProblem (skipped) or
  appends the repairs it made; `key` is the records' id field, `unit` what one record is called
  in messages ("record", "item"), `error` the exception for a file that cannot be read at all.
  """
  what: str
  unit: str
  key: str
  parse: Callable[[Any, bool, List[RecordProblem]], Any]
  example_id: Callable[[Any], str]
  error: type = ValueError

  def load(self, path: str) -> List[Any]:
    """The records of a file; FileNotFoundError / `error` name the file."""
    return json_files.load_json_array(path, self.what, self.unit + "s", self.error)

  def iter(self, path: str) -> Iterator[Any]:
    """The records of a file one at a time (never the whole file in memory)."""
    return json_files.iter_json_array(path, self.what, self.unit + "s", self.error)

  def read_examples(self, path: str, with_labels: bool) -> Tuple[list, ReadReport]:
    """(examples, report) of a whole file; `error` when no record is usable."""
    report = ReadReport(path=path)
    examples = collect_records(self.load(path), report,
                               lambda record, repairs: self.parse(record, with_labels, repairs),
                               self.key, self.unit, self.example_id)
    if not examples:
      raise self.error(f"{path}: no usable {self.unit}.\n{report.summary()}")
    return examples, report

  def iter_training_examples(self, path: str, report: ReadReport,
                             part: input_parts.Part = input_parts.WHOLE) -> Iterator[Any]:
    """The labelled examples of one part of a training file, streamed one record at a time
    and counted in `report` as `read_examples(path, True)` counts them."""
    return iter_records(part.select(self.iter(path), self.key), report,
                        lambda record, repairs: self.parse(record, True, repairs),
                        self.key, self.unit, self.example_id)
