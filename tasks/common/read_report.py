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


def tolerate(problem: RecordProblem, with_labels: bool, repairs: List[RecordProblem],
             consequence: str) -> None:
  """Training (`with_labels`) skips the record; prediction repairs it and says how."""
  if with_labels:
    raise problem
  problem.detail += f"; {consequence}"
  repairs.append(problem)


def read_array(path: str, records: Sequence[Any], parse: Callable[[Any, List[RecordProblem]], Any],
               key: str, unit: str, example_id: Callable[[Any], str],
               error: Callable[[str], Exception]) -> Tuple[list, "ReadReport"]:
  """(examples, report) of the records of a JSON array (see collect_records); `error(message)`
  is raised, naming the file, when no record is usable."""
  report = ReadReport(path=path)
  examples = collect_records(records, report, parse, key, unit, example_id)
  if not examples:
    raise error(f"{path}: no usable {unit}.\n{report.summary()}")
  return examples, report


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
    if example_id(example) in seen:
      report.skip(f"duplicate {key}", f"{where}: field '{key}': seen before; {unit} skipped")
      continue
    seen.add(example_id(example))
    report.note_id(example_id(example))
    for problem in repairs:
      report.repair(problem.reason, f"{where}: field '{problem.field}': {problem.detail}")
    report.examples += 1
    yield example
