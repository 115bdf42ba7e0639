"""Reading official Natural Questions files, with checks that name the example and the field.

Two formats (docs/file_formats.md, "Natural Questions"), told apart per record:
  - original: `document_html` + `document_tokens` ({token, start_byte, end_byte, html_token});
    candidates and annotations carry byte and token offsets.
  - simplified (train): `document_text`, the tokens joined by single spaces; token offsets only.
    A token is an html token when it looks like a tag ("<P>", "</Table>").

A path may be one file or a glob (the official dev set is split in shards). Files are gzipped
JSONL (plain JSONL is accepted when the name does not end in .gz).

Two modes, as for HotpotQA:
  - with_labels=True (training): a record whose document, candidates or annotation offsets are
    unusable is skipped and counted under its reason.
  - with_labels=False (prediction): every record with an `example_id` is kept. A record whose
    document or candidates are unusable is kept with `problem` set and gets a null prediction;
    unusable annotations are dropped (they are not needed to predict) and counted as repairs.

Offsets are checked against `document_tokens`: a span's start_byte must be its first token's
start_byte and its end_byte its last token's end_byte (end exclusive), token ranges must lie in
the document, and a long answer must equal the candidate its `candidate_index` names.
Every message reads "<file>: line <n> (example_id <id>): field '<name>': <what is wrong>".
"""

import dataclasses
import glob
import gzip
import json
import operator
import os
import zlib
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np

from tasks.common import input_parts
from tasks.common.read_report import ReadReport, RecordProblem, typed_field

YES_NO_VALUES = ("NONE", "YES", "NO")
_STR, _INT = frozenset((str,)), frozenset((int,))
_HTML_TOKEN = operator.methodcaller("get", "html_token", False)   # a token's flag, default False


class NqDataError(ValueError):
  """A file that cannot be read at all (missing, invalid gzip, mixed id types)."""


@dataclasses.dataclass(frozen=True)
class Span:
  """[start_token, end_token) with [start_byte, end_byte) (-1 when the file has no bytes)."""
  start_token: int
  end_token: int
  start_byte: int = -1
  end_byte: int = -1

  def to_json(self) -> Dict[str, int]:
    return dataclasses.asdict(self)


NULL_SPAN = Span(-1, -1, -1, -1)


@dataclasses.dataclass
class Candidate:
  span: Span
  top_level: bool


@dataclasses.dataclass
class Annotation:
  """One annotator's answer. long_answer NULL_SPAN / candidate_index -1 when null."""
  long_answer: Span
  candidate_index: int
  short_answers: List[Span]
  yes_no_answer: str = "NONE"

  @property
  def has_long(self) -> bool:
    return self.candidate_index >= 0


@dataclasses.dataclass
class NqExample:
  """One question with its document. `problem` is set when the document cannot be used."""
  example_id: Any                       # int (official) or str, as in the file
  question: str
  tokens: List[str]
  is_html: List[bool]
  start_bytes: List[int]                # -1s in the simplified format
  end_bytes: List[int]
  candidates: List[Candidate]
  annotations: List[Annotation]
  has_bytes: bool = True
  problem: str = ""

  def span(self, start_token: int, end_token: int) -> Span:
    """The Span of tokens [start_token, end_token) with byte offsets from document_tokens."""
    if not self.has_bytes:
      return Span(start_token, end_token)
    return Span(start_token, end_token, self.start_bytes[start_token],
                self.end_bytes[end_token - 1])


def expand_paths(path: str) -> List[str]:
  """A file or a glob -> sorted existing files; FileNotFoundError names the pattern."""
  paths = sorted(glob.glob(path)) if any(c in path for c in "*?[") else [path]
  paths = [p for p in paths if os.path.isfile(p)]
  if not paths:
    raise FileNotFoundError(f"{path}: no Natural Questions file found")
  return paths


def iter_lines(path: str) -> Iterator[Tuple[int, bytes]]:
  """(line number from 1, raw line) of a gzipped (or, without .gz, plain) JSONL file."""
  with open(path, "rb") as f:
    magic = f.read(2)
  gzipped = magic == b"\x1f\x8b"
  if path.endswith(".gz") and not gzipped:
    raise NqDataError(f"{path}: not a gzip file (NQ shards are gzipped JSONL); "
                      "the file starts with " + repr(magic))
  opener = gzip.open if gzipped else open
  number = 0
  try:
    with opener(path, "rb") as f:
      for number, line in enumerate(f, start=1):
        if line.strip():
          yield number, line
  except (OSError, EOFError, zlib.error) as e:
    raise NqDataError(f"{path}: invalid gzip data after line {number}: {e}") from None


def _int(record: Dict[str, Any], key: str, field: str) -> int:
  value = record.get(key)
  if isinstance(value, bool) or not isinstance(value, int):
    raise RecordProblem("malformed offsets", f"{field}.{key}",
                        f"expected an integer, got {value!r}")
  return value


class _Document:
  """Tokens of one record and the checks of spans against them."""

  def __init__(self, record: Dict[str, Any]):
    if "document_tokens" in record:
      self.has_bytes = True
      raw = record["document_tokens"]
      if not isinstance(raw, list):
        raise RecordProblem("malformed document", "document_tokens",
                            f"expected a list, got {type(raw).__name__}")
      html = record.get("document_html")
      html_bytes = len(html.encode("utf-8")) if isinstance(html, str) else None
      if not self._read_tokens(raw, html_bytes):
        self._check_tokens(raw, html_bytes)   # raises the first token's problem
    elif "document_text" in record:
      self.has_bytes = False
      text = record["document_text"]
      if not isinstance(text, str):
        raise RecordProblem("malformed document", "document_text",
                            f"expected a string, got {type(text).__name__}")
      self.tokens = text.split(" ") if text else []
      self.is_html = [t.startswith("<") and t.endswith(">") and len(t) > 2 for t in self.tokens]
      self.starts = [-1] * len(self.tokens)
      self.ends = [-1] * len(self.tokens)
    else:
      raise RecordProblem(
          "missing field", "document_tokens",
          "neither document_tokens (original format) nor document_text (simplified)")
    if not self.tokens:
      raise RecordProblem("empty document", "document_tokens", "the document has no tokens")

  def _read_tokens(self, raw: List[Any], html_bytes: Optional[int]) -> bool:
    """Reads `document_tokens` whole (lists, then the checks on arrays); False when some token
    fails a check (`_check_tokens` then finds the first one and names it)."""
    try:
      tokens = list(map(operator.itemgetter("token"), raw))
      starts = list(map(operator.itemgetter("start_byte"), raw))
      ends = list(map(operator.itemgetter("end_byte"), raw))
      is_html = list(map(_HTML_TOKEN, raw))
    except (TypeError, KeyError, AttributeError):   # not an object, or a field missing
      return False
    # JSON gives exact types: a bool offset (a subclass of int) fails here, as in _int.
    if not (set(map(type, tokens)) <= _STR and set(map(type, starts)) <= _INT
            and set(map(type, ends)) <= _INT):
      return False
    try:
      start_array = np.asarray(starts, np.int64)   # [T]
      end_array = np.asarray(ends, np.int64)       # [T]
    except OverflowError:
      return False
    if len(raw) and (start_array.min() < 0 or np.any(end_array < start_array)
                     or (html_bytes is not None and end_array.max() > html_bytes)
                     or np.any(start_array[1:] < start_array[:-1])):
      return False
    self.tokens, self.starts, self.ends = tokens, starts, ends
    self.is_html = list(map(bool, is_html))
    return True

  def _check_tokens(self, raw: List[Any], html_bytes: Optional[int]) -> None:
    """Reads `document_tokens` one token at a time; RecordProblem names the first bad one."""
    self.tokens, self.is_html, self.starts, self.ends = [], [], [], []
    for i, token in enumerate(raw):
      field = f"document_tokens[{i}]"
      if not isinstance(token, dict) or not isinstance(token.get("token"), str):
        raise RecordProblem("malformed document", field, "expected {token, start_byte, end_byte, "
                            "html_token} with a string token")
      start, end = _int(token, "start_byte", field), _int(token, "end_byte", field)
      if start < 0 or end < start or (html_bytes is not None and end > html_bytes):
        raise RecordProblem("offsets disagree with document", field,
                            f"bytes [{start}, {end}) are not inside the {html_bytes}-byte html")
      if self.starts and start < self.starts[-1]:
        raise RecordProblem("offsets disagree with document", field,
                            f"start_byte {start} is before the previous token's {self.starts[-1]}")
      self.tokens.append(token["token"])
      self.is_html.append(bool(token.get("html_token", False)))
      self.starts.append(start)
      self.ends.append(end)

  def span(self, record: Dict[str, Any], field: str, allow_null: bool) -> Span:
    """Reads and checks one span record; NULL_SPAN for a null span when allowed."""
    if not isinstance(record, dict):
      raise RecordProblem("malformed offsets", field, f"expected an object, got {record!r}")
    start, end = _int(record, "start_token", field), _int(record, "end_token", field)
    if start == -1 and end == -1 and allow_null:
      return NULL_SPAN
    if not 0 <= start < end <= len(self.tokens):
      raise RecordProblem("offsets disagree with document", field,
                          f"tokens [{start}, {end}) are not a range of the {len(self.tokens)} "
                     "document tokens")
    if not self.has_bytes:
      return Span(start, end)
    start_byte, end_byte = _int(record, "start_byte", field), _int(record, "end_byte", field)
    if start_byte != self.starts[start] or end_byte != self.ends[end - 1]:
      raise RecordProblem("offsets disagree with document", field,
                          f"bytes [{start_byte}, {end_byte}) but document_tokens "
                          f"{start}..{end - 1} span bytes [{self.starts[start]}, "
                          f"{self.ends[end - 1]})")
    return Span(start, end, start_byte, end_byte)


def _candidates(record: Dict[str, Any], document: _Document) -> List[Candidate]:
  raw = typed_field(record, "long_answer_candidates", list, "a list",
                    malformed="missing candidates", missing="missing candidates",
                    empty="missing candidates")
  return [Candidate(document.span(candidate, f"long_answer_candidates[{i}]", allow_null=False),
                    bool(candidate.get("top_level", True)))
          for i, candidate in enumerate(raw)]


def _annotation(raw: Any, field: str, document: _Document,
                candidates: List[Candidate]) -> Annotation:
  if not isinstance(raw, dict):
    raise RecordProblem("malformed annotation", field, f"expected an object, got {raw!r}")
  long_raw = raw.get("long_answer")
  if not isinstance(long_raw, dict):
    raise RecordProblem("malformed annotation", f"{field}.long_answer", "missing")
  long_span = document.span(long_raw, f"{field}.long_answer", allow_null=True)
  index = long_raw.get("candidate_index", -1)
  if long_span == NULL_SPAN:
    index = -1
  else:
    if isinstance(index, bool) or not isinstance(index, int) or not (
        0 <= index < len(candidates)):
      raise RecordProblem("offsets disagree with document", f"{field}.long_answer.candidate_index",
                          f"{index!r} is not one of the {len(candidates)} candidates")
    if candidates[index].span != long_span:
      raise RecordProblem("offsets disagree with document", f"{field}.long_answer",
                          f"tokens [{long_span.start_token}, {long_span.end_token}) differ from "
                     f"candidate {index}'s [{candidates[index].span.start_token}, "
                     f"{candidates[index].span.end_token})")
  shorts_raw = raw.get("short_answers", [])
  if not isinstance(shorts_raw, list):
    raise RecordProblem("malformed annotation", f"{field}.short_answers", "expected a list")
  shorts = [document.span(s, f"{field}.short_answers[{j}]", allow_null=False)
            for j, s in enumerate(shorts_raw)]
  for j, s in enumerate(shorts):
    if long_span == NULL_SPAN or not (
        long_span.start_token <= s.start_token and s.end_token <= long_span.end_token):
      raise RecordProblem("offsets disagree with document", f"{field}.short_answers[{j}]",
                          "the short answer is not inside the long answer")
  yes_no = raw.get("yes_no_answer", "NONE")
  if not isinstance(yes_no, str) or yes_no.upper() not in YES_NO_VALUES:
    raise RecordProblem("malformed annotation", f"{field}.yes_no_answer",
                        f"expected one of {YES_NO_VALUES}, got {yes_no!r}")
  return Annotation(long_span, index, shorts, yes_no.upper())


def parse_record(record: Any, with_labels: bool, repairs: List[RecordProblem]) -> NqExample:
  """One JSON record -> NqExample. Raises RecordProblem (the record is unusable)."""
  if not isinstance(record, dict):
    raise RecordProblem("malformed record", "(record)", f"expected a JSON object, got "
                        f"{type(record).__name__}")
  question = record.get("question_text")
  if not isinstance(question, str):
    raise RecordProblem("missing field", "question_text", f"expected a string, got {question!r}")
  document = _Document(record)
  candidates = _candidates(record, document)
  annotations = []
  raw = record.get("annotations", [])
  if with_labels and (not isinstance(raw, list) or not raw):
    raise RecordProblem("missing annotations", "annotations", "a training record needs one")
  for i, annotation in enumerate(raw if isinstance(raw, list) else []):
    try:
      annotations.append(_annotation(annotation, f"annotations[{i}]", document, candidates))
    except RecordProblem as problem:
      if with_labels:
        raise
      repairs.append(problem)
  return NqExample(record["example_id"], question, document.tokens, document.is_html,
                   document.starts, document.ends, candidates, annotations,
                   document.has_bytes)


def _example_id(record: Any) -> Optional[Any]:
  value = record.get("example_id") if isinstance(record, dict) else None
  if isinstance(value, bool) or not isinstance(value, (int, str)):
    return None
  return value


def line_key(line: bytes, file_index: int, number: int) -> str:
  """The routing key of a raw line (tasks.common.input_parts): its example_id, found without
  decoding the line, else its place."""
  return (input_parts.line_id_key(line, "example_id")
          or input_parts.position_key(file_index, number))


def iter_examples(path: str, with_labels: bool, report: ReadReport,
                  part: input_parts.Part = input_parts.WHOLE) -> Iterator[NqExample]:
  """Examples of a file (or glob), one line at a time, counting what was skipped or repaired in
  `report`. With a `part`, only that part's lines are decoded and counted: whole files when
  the glob has at least as many files as parts, else the lines whose key falls in the part (the
  ids of a file must share one JSON type within each part)."""
  id_type, first_id_place = None, ""
  seen = set()
  files, within = part.files(expand_paths(path))
  for file_index, file in enumerate(files):
    for number, line in iter_lines(file):
      if within.count > 1 and not within.owns(line_key(line, file_index, number)):
        continue
      report.records += 1
      where = f"{file}: line {number}"
      try:
        record = json.loads(line)
      except ValueError as e:
        report.skip("not JSON", f"{where}: not a JSON object: {e}")
        continue
      example_id = _example_id(record)
      if example_id is None:
        got = record.get("example_id") if isinstance(record, dict) else record
        report.skip("missing example_id", f"{where}: field 'example_id': expected a JSON "
                    f"integer, got {got!r}")
        continue
      where = f"{where} (example_id {example_id})"
      if id_type is None:
        id_type, first_id_place = type(example_id), where
      elif type(example_id) is not id_type:
        raise NqDataError(f"{where}: field 'example_id': a {type(example_id).__name__} id but "
                          f"{first_id_place} has a {id_type.__name__} id; the ids of a file "
                          "must all have one JSON type (NQ uses integers)")
      if example_id in seen:
        report.skip("duplicate example_id", f"{where}: field 'example_id': seen before")
        continue
      seen.add(example_id)
      report.note_id(example_id, file)   # a copy in another shard is found when merging
      repairs: List[RecordProblem] = []
      try:
        example = parse_record(record, with_labels, repairs)
      except RecordProblem as problem:
        message = f"{where}: field '{problem.field}': {problem.detail}"
        if with_labels:
          report.skip(problem.reason, message)
          continue
        report.repair(problem.reason + " (null prediction)", message)
        question = record.get("question_text")
        example = NqExample(example_id, question if isinstance(question, str) else "", [], [],
                            [], [], [], [], problem=message)
      for problem in repairs:
        report.repair(problem.reason + " (annotation dropped)",
                      f"{where}: field '{problem.field}': {problem.detail}")
      report.examples += 1
      yield example


def read_examples(path: str, with_labels: bool) -> Tuple[List[NqExample], ReadReport]:
  """All examples of a file (or glob) and the report of what was skipped or repaired."""
  report = ReadReport(path=path)
  examples = list(iter_examples(path, with_labels, report))
  return examples, report
