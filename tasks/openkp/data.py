"""Reading official OpenKP (MS MARCO OpenKeyPhrase) JSONL files, with checks that name the field.

One page a line (docs/file_formats.md, "OpenKP"): `url`, `text` (single-space words), `VDOM` (a
STRING holding a JSON list of elements {Id, text, feature: 20 floats, start_idx, end_idx}, word
indices into the text, end exclusive) and `KeyPhrases` (a list of phrases, each a list of
words). `read_pages` returns `OpenKpPage`s and a `ReadReport`:
  - A url seen again replaces the earlier page (the scorer keeps the last record too); the
    page keeps the position of the url's first line, and the replacement is counted.
  - A broken VDOM never costs the page: elements with bad fields are dropped, words no element
    covers go to the element before them (or a plain one at the start), and a VDOM that is not
    a JSON list becomes one plain element over the whole text. Each repair is counted.
  - with_labels=True (training) skips pages without usable key phrases or text, counted under
    their reason; with_labels=False (prediction) keeps every url (a page without text gets an
    empty prediction).

`iter_training_pages` streams a training file one line at a time (with the same counts) for
the conversion to TFRecords.

Every message reads "<file>: line <n> (url <url>): field '<name>': <what is wrong>".
"""

import dataclasses
import itertools
import json
import os
from typing import Any, Dict, Iterator, List, Optional, Tuple

from tasks.common import input_parts
from tasks.common.read_report import ReadReport, RecordProblem, object_with_id, text_field

NUM_VISUAL_FEATURES = 20


class OpenKpDataError(ValueError):
  """A file that cannot be read at all (missing, empty, not JSON lines, no page)."""


@dataclasses.dataclass
class Element:
  """A VDOM element: words [start, end) of the page and its 20 raw visual features."""
  start: int
  end: int
  features: List[float]


@dataclasses.dataclass
class OpenKpPage:
  url: str
  words: List[str]
  elements: List[Element]                    # in word order, covering every word
  key_phrases: Optional[List[List[str]]] = None
  # The decoded JSON line, for the converter (tasks/openkp/features.py),
  # which reads the raw VDOM and KeyPhrases as Google's code does.
  record: Optional[dict] = dataclasses.field(default=None, repr=False, compare=False)


def _number(value) -> bool:
  return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_phrase_list(value: Any) -> bool:
  """Whether `value` is a list of phrases, each a list of words (strings)."""
  return isinstance(value, list) and all(
      isinstance(p, list) and all(isinstance(w, str) for w in p) for p in value)


def parse_vdom(value: Any, num_words: int, repairs: List[RecordProblem]) -> List[Element]:
  """The VDOM string -> elements sorted by start, non-overlapping, covering words 0..n-1."""
  plain = [0.0] * NUM_VISUAL_FEATURES
  elements, raw = [], None

  def drop(field: str, detail: str) -> None:
    repairs.append(RecordProblem("bad VDOM element", field, f"{detail}; dropped"))

  if not isinstance(value, str):
    repairs.append(RecordProblem("VDOM missing", "VDOM",
                                 "missing or not a string; one plain element used"))
  else:
    try:
      raw = json.loads(value)
    except json.JSONDecodeError as e:
      repairs.append(RecordProblem("VDOM not JSON", "VDOM", f"{e.msg}; one plain element used"))
    else:
      if not isinstance(raw, list):
        repairs.append(RecordProblem("VDOM not a list", "VDOM", "one plain element used"))
        raw = None
  if raw:
    fast = _well_formed_elements(raw, num_words)
    if fast is not None:
      return fast
  for i, element in enumerate(raw or []):
    field = f"VDOM[{i}]"
    if not isinstance(element, dict):
      drop(field, "not an object")
      continue
    start, end, features = (element.get("start_idx"), element.get("end_idx"),
                            element.get("feature"))
    if not (isinstance(start, int) and isinstance(end, int)) or not 0 <= start < end:
      drop(field + ".start_idx", f"word range [{start!r}, {end!r}) is not valid")
      continue
    if start >= num_words:
      drop(field + ".start_idx", f"starts at word {start} but the text has {num_words}")
      continue
    if (not isinstance(features, list) or len(features) != NUM_VISUAL_FEATURES
        or not all(_number(x) for x in features)):   # a bool is no number
      drop(field + ".feature", f"expected {NUM_VISUAL_FEATURES} numbers")
      continue
    elements.append(Element(start, min(end, num_words), list(map(float, features))))
  elements.sort(key=lambda e: e.start)
  # Overlaps: an element starts where the previous one ends. Gaps: the previous element grows.
  cleaned: List[Element] = []
  for element in elements:
    if cleaned and element.start < cleaned[-1].end:
      if element.end <= cleaned[-1].end:
        drop("VDOM", f"element over words [{element.start}, {element.end}) lies inside an "
             "earlier one")
        continue
      element = Element(cleaned[-1].end, element.end, element.features)
    if cleaned and element.start > cleaned[-1].end:
      cleaned[-1].end = element.start
    cleaned.append(element)
  if not cleaned:
    cleaned = [Element(0, num_words, plain)] if num_words else []
  else:
    if cleaned[0].start > 0:
      cleaned.insert(0, Element(0, cleaned[0].start, plain))
    cleaned[-1].end = num_words
  return cleaned


def _well_formed_elements(raw: list, num_words: int) -> Optional[List[Element]]:
  """`parse_vdom`'s elements of a decoded VDOM list that needs no repair, found with a few
  whole-list checks instead of element by element; None when anything would be repaired (or
  is unusual, such as a bool index or an integer feature), and `parse_vdom` checks element by
  element, naming what it repairs.

  Needs no repair: every element an object with int `start_idx` < `end_idx`, `start_idx` below
  the number of words, 20 float features, and each element starting at or after the end of the
  one before. The elements then cover the words as `parse_vdom` makes them: each one ends where
  the next starts, the last at the end of the text, a plain element before the first if that
  starts later than word 0.
  """
  try:
    starts = [element["start_idx"] for element in raw]
    ends = [element["end_idx"] for element in raw]
    features = [element["feature"] for element in raw]
  except (TypeError, KeyError):   # not an object, or a field missing
    return None
  if (not set(map(type, starts)) == set(map(type, ends)) == {int}
      or starts[0] < 0 or starts[-1] >= num_words
      or not all(start < end <= following
                 for start, end, following in zip(starts, ends, starts[1:]))
      or not starts[-1] < ends[-1]
      or set(map(type, features)) != {list}
      or set(map(len, features)) != {NUM_VISUAL_FEATURES}
      or set(map(type, itertools.chain.from_iterable(features))) != {float}):
    return None
  starts.append(num_words)   # each element ends where the next starts, the last at the end
  # The decoded lists of floats are what list(map(float, ...)) would copy.
  elements = [Element(start, end, row)
              for start, end, row in zip(starts, starts[1:], features)]
  if elements[0].start > 0:
    elements.insert(0, Element(0, elements[0].start, [0.0] * NUM_VISUAL_FEATURES))
  return elements


def _key_phrases(record, with_labels: bool) -> Optional[List[List[str]]]:
  phrases = record.get("KeyPhrases")
  if phrases is None:
    if with_labels:
      raise RecordProblem("missing field", "KeyPhrases", "missing")
    return None
  if not is_phrase_list(phrases):
    if with_labels:
      raise RecordProblem("malformed KeyPhrases", "KeyPhrases", "expected a list of lists of words")
    return None
  phrases = [p for p in phrases if any(w.strip() for w in p)]
  if not phrases and with_labels:
    raise RecordProblem("no key phrases", "KeyPhrases", "the list has no non-empty phrase")
  return phrases


def parse_record(record: Any, with_labels: bool, repairs: List[RecordProblem]) -> OpenKpPage:
  url = object_with_id(record, "line", "url")
  text = text_field(record, "text", "missing text", with_labels, repairs,
                    "an empty prediction will be written")
  words = text.split(" ") if text else []   # VDOM word indices count single-space words
  elements = parse_vdom(record.get("VDOM"), len(words), repairs)
  return OpenKpPage(url, words, elements, _key_phrases(record, with_labels), record=record)


def read_pages(path: str, with_labels: bool) -> Tuple[List[OpenKpPage], ReadReport]:
  """Reads and checks an OpenKP JSONL file; see the module docstring."""
  report = ReadReport(path=path)
  pages, position = [], {}
  for number, line in _lines(path):
    page = _read_line(path, number, line, with_labels, report)
    if page is None:
      continue
    if page.url in position:
      report.repair("duplicate url (the last record wins)",
                    f"{_where(path, number, page.url)}: field 'url': seen before; this record "
                    "replaces the earlier one")
      pages[position[page.url]] = page
    else:
      position[page.url] = len(pages)
      report.note_id(page.url)
      pages.append(page)
  report.examples = len(pages)
  if not pages:
    raise OpenKpDataError(f"{path}: no usable page.\n{report.summary()}")
  return pages, report


def iter_training_pages(path: str, report: ReadReport,
                        part: input_parts.Part = input_parts.WHOLE) -> Iterator[OpenKpPage]:
  """The labelled pages of one part of a training file, one line at a time, counted in
  `report` as `read_pages(path, True)` counts them.

  Lines are keyed by url (tasks.common.input_parts). A url on several lines becomes the page of
  its last usable record, as in `read_pages`, but in that record's place; a first pass over the
  file finds those records (memory: the urls of the part, never the pages).
  """
  keys, winners = _last_usable_lines(path, part)
  for number, line in _lines(path):
    key = keys.get(number)
    if key is None:   # another part's line
      continue
    page = _read_line(path, number, line, True, report)
    if page is None:
      continue
    if winners.get(key, number) != number:
      report.repair("duplicate url (the last record wins)",
                    f"{_where(path, number, page.url)}: field 'url': a later record replaces "
                    "this one")
      continue
    report.examples += 1
    report.note_id(page.url)   # a copy in another shard is found when the shards are merged
    yield page


def line_key(line: str, number: int) -> str:
  """The routing key of a raw line: its url, found without decoding the line, else its number."""
  return input_parts.line_id_key(line, "url") or input_parts.position_key(number)


def _last_usable_lines(path: str, part: input_parts.Part
                       ) -> Tuple[Dict[int, str], Dict[str, int]]:
  """({line number: url key} of the part's lines, {url key: line of its last usable record}
  for the part's urls that are on several lines)."""
  keys, seen, repeated = {}, set(), set()
  for number, line in _lines(path):
    key = line_key(line, number)
    if part.owns(key):
      keys[number] = key
      (repeated if key in seen else seen).add(key)
  winners = {}
  if repeated:
    for number, line in _lines(path):
      key = keys.get(number)
      if key in repeated and _read_line(path, number, line, True, ReadReport(path)):
        winners[key] = number
  return keys, winners


def _lines(path: str) -> Iterator[Tuple[int, str]]:
  """(line number from 1, line) of the non-blank lines of a JSONL file."""
  if not os.path.isfile(path):
    raise FileNotFoundError(f"OpenKP file not found: {path}")
  with open(path, encoding="utf-8") as f:
    for number, line in enumerate(f, start=1):
      if line.strip():
        yield number, line


def _where(path: str, number: int, url: Any) -> str:
  return f"{path}: line {number} (url {url})"


def _read_line(path: str, number: int, line: str, with_labels: bool,
               report: ReadReport) -> Optional[OpenKpPage]:
  """The page of one line, None when it is skipped; counts the record, its skip or repairs."""
  report.records += 1
  try:
    record = json.loads(line)
  except json.JSONDecodeError as e:
    report.skip("not JSON", f"{path}: line {number}: {e.msg} at column {e.colno}")
    return None
  where = _where(path, number, record.get("url") if isinstance(record, dict) else None)
  repairs: List[RecordProblem] = []
  try:
    page = parse_record(record, with_labels, repairs)
  except RecordProblem as problem:
    report.skip(problem.reason, f"{where}: field '{problem.field}': {problem.detail}")
    return None
  for problem in repairs:
    report.repair(problem.reason, f"{where}: field '{problem.field}': {problem.detail}")
  return page
