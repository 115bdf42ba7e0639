"""Pretraining corpus reading: sentence splitting, documents, and a report of skipped input.

Two on-disk formats are read, chosen by file extension (a trailing `.gz` is looked through, so
`corpus.txt.gz` is plain text and `data.jsonl.gz` is JSON Lines):

* `.jsonl` / `.json`: JSON Lines, one document per line, an object with a string `text` field
  (split into sentences with `split_sentences`) and an optional `id` field (string or integer)
  that replaces the line number in the document id. Blank lines are ignored.
* anything else: plain text, one sentence per line, one or more blank lines between documents.

Files are read as bytes and decoded line by line as UTF-8, so one bad line never costs more than
itself. Every line or document that is dropped is counted in a `CorpusReport` under a reason,
with the first few messages naming `file:line`. Control characters other than tab become spaces
and runs of whitespace collapse to one space.

This module is pure Python and does not import TensorFlow.
"""

from __future__ import annotations

import collections
import dataclasses
import glob
import gzip
import json
import os
import re
import zlib
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple, Union

PathLike = Union[str, "os.PathLike[str]"]

# Reasons under which `read_corpus` counts dropped input.
REASON_INVALID_UTF8 = "invalid utf-8"
REASON_INVALID_JSON = "invalid json"
REASON_BAD_TEXT = "missing or non-string 'text' field"
REASON_EMPTY = "empty document"
REASON_TOO_FEW = "too few sentences"
REASON_UNREADABLE = "unreadable file"

JSONL_EXTENSIONS = (".jsonl", ".json")
MAX_EXAMPLES = 20

# Lower-cased abbreviations (without their final period) after which a period does not end a
# sentence. "etc." is left out on purpose: it ends sentences about as often as it does not.
ABBREVIATIONS = frozenset([
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "rev", "hon", "gen", "col", "lt",
    "sgt", "capt", "cmdr", "gov", "sen", "rep", "pres", "vs", "inc", "ltd", "co", "corp",
    "dept", "univ", "assn", "bros", "approx", "est", "fig", "figs", "vol", "vols", "pp", "ch",
    "eq", "eqs", "ref", "refs", "ed", "eds", "al", "cf", "ave", "blvd", "rd", "jan", "feb",
    "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "ph.d", "e.g",
    "i.e", "a.m", "p.m", "u.s", "u.k",
])

_OPENING = "\"'(\u201c\u2018["
_OPEN_QUOTES = "\"'\u201c\u2018"
_CLOSING = "\"')\u201d\u2019]"
# A run of sentence-final punctuation, closing quotes/brackets, then whitespace.
_CANDIDATE_RE = re.compile(r"[.!?]+[" + re.escape(_CLOSING) + r"]*\s+")
_INITIAL_RE = re.compile(r"[^\W\d_]")                      # "J" in "J. Smith"
_DOTTED_RE = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")          # "U.S", "e.g", "i.e"
# C0 controls except tab (newline included: it has been stripped from a line), DEL, C1.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def clean_text(text: str) -> str:
  """Replaces control characters (other than tab) with spaces and collapses whitespace.

  Args:
    text: any string.

  Returns:
    The string with every whitespace run (tabs included) turned into one space, stripped.
  """
  return " ".join(_CONTROL_RE.sub(" ", text).split())


def _is_abbreviation(token: str) -> bool:
  """Whether `token` (the word before a lone period, without it) is an abbreviation."""
  token = token.lstrip(_OPENING)
  return (token.lower() in ABBREVIATIONS or _INITIAL_RE.fullmatch(token) is not None
          or _DOTTED_RE.fullmatch(token) is not None)


def _split_line(line: str) -> List[str]:
  """Splits one line (no line breaks) into sentences; see `split_sentences`."""
  sentences = []
  start = 0
  for match in _CANDIDATE_RE.finditer(line):
    end = match.end()
    if end >= len(line):
      break  # trailing whitespace: the rest is the last sentence anyway
    following = line[end]
    if not (following.isupper() or following.isdigit() or following in _OPEN_QUOTES):
      continue
    marks = match.group(0).rstrip()
    if marks == ".":  # a lone period may belong to an abbreviation or initial
      word_start = match.start()
      while word_start > 0 and not line[word_start - 1].isspace():
        word_start -= 1
      if _is_abbreviation(line[word_start:match.start()]):
        continue
    sentences.append(line[start:end])
    start = end
  sentences.append(line[start:])
  return sentences


def split_sentences(text: str) -> List[str]:
  """Splits English text into sentences with a few simple rules.

  Rules:
    * Every line break (as `str.splitlines` sees them) ends a sentence.
    * Inside a line, a sentence ends after a run of `.`, `!` or `?` (optionally followed by
      closing quotes or brackets) when whitespace and then an uppercase letter, a digit or an
      opening quote follow. "3.14" or "a.b" never split since no whitespace follows the period.
    * A lone `.` does not end a sentence when the word before it is a common abbreviation
      ("Mr.", "Dr.", "e.g.", "i.e.", "Jan.", see `ABBREVIATIONS`), a single letter (the initial
      in "J. Smith") or a dotted acronym ("U.S.", "U.N.").
    * Each sentence is stripped and its inner whitespace runs collapse to one space; empty
      pieces are dropped.

  Args:
    text: the text to split.

  Returns:
    The sentences in order.
  """
  sentences = []
  for line in text.splitlines():
    for piece in _split_line(line):
      piece = " ".join(piece.split())
      if piece:
        sentences.append(piece)
  return sentences


@dataclasses.dataclass
class Document:
  """One document of the corpus.

  Attributes:
    doc_id: where the document comes from: the file's base name and the 1-based line where the
      document starts ("corpus.txt:12"), or for JSON Lines with an `id` field, that id
      ("data.jsonl:abc").
    sentences: the cleaned, non-empty sentences.
  """

  doc_id: str
  sentences: List[str]


@dataclasses.dataclass
class CorpusReport:
  """What `read_corpus` read and what it skipped.

  Attributes:
    files: files opened.
    documents: documents produced.
    sentences: sentences in the produced documents.
    skipped: reason -> number of lines or documents skipped for it.
    examples: the first `MAX_EXAMPLES` skip messages, each "path:line: reason (detail)".
  """

  files: int = 0
  documents: int = 0
  sentences: int = 0
  skipped: collections.Counter = dataclasses.field(default_factory=collections.Counter)
  examples: List[str] = dataclasses.field(default_factory=list)

  @property
  def total_skipped(self) -> int:
    """Number of skipped lines and documents over all reasons."""
    return sum(self.skipped.values())

  def skip(self, path: str, line: int, reason: str, detail: Optional[str] = None) -> None:
    """Counts one skip under `reason`, keeping its message if fewer than MAX_EXAMPLES are kept.

    Args:
      path: the file.
      line: 1-based line number in the file.
      reason: the reason it was skipped (the counter key).
      detail: optional extra words (the field, the JSON error).
    """
    self.skipped[reason] += 1
    if len(self.examples) < MAX_EXAMPLES:
      message = f"{path}:{line}: {reason}"
      if detail:
        message += f" ({detail})"
      self.examples.append(message)

  def summary(self) -> str:
    """A multi-line human-readable summary."""
    lines = [f"corpus: {self.files} file(s), {self.documents} document(s), "
             f"{self.sentences} sentence(s), {self.total_skipped} skipped"]
    for reason, count in sorted(self.skipped.items()):
      lines.append(f"  skipped {count} x {reason}")
    if self.examples:
      shown = len(self.examples)
      lines.append(f"  first {shown} skip message(s):" if shown < self.total_skipped
                   else "  skip messages:")
      lines.extend(f"    {message}" for message in self.examples)
    return "\n".join(lines)

  def to_dict(self) -> Dict[str, Any]:
    """A JSON-serialisable dict of the counters and messages."""
    return {
        "files": self.files,
        "documents": self.documents,
        "sentences": self.sentences,
        "skipped": dict(sorted(self.skipped.items())),
        "examples": list(self.examples),
    }


def _format_of(path: str) -> Tuple[str, bool]:
  """("jsonl" | "text", gzipped) from the file name."""
  name = path.lower()
  gzipped = name.endswith(".gz")
  if gzipped:
    name = name[:-3]
  return ("jsonl" if name.endswith(JSONL_EXTENSIONS) else "text"), gzipped


def expand_paths(paths: Union[PathLike, Iterable[PathLike]]) -> List[str]:
  """Expands files and glob patterns into a list of files.

  Args:
    paths: one path or pattern, or an iterable of them.

  Returns:
    The files in order: each pattern's matches sorted; a file named twice is kept once.

  Raises:
    FileNotFoundError: a pattern matches no file, or a plain path does not exist.
  """
  if isinstance(paths, (str, bytes, os.PathLike)):
    paths = [paths]
  files = []
  seen = set()
  for path in paths:
    path = os.fsdecode(os.fspath(path))
    if glob.has_magic(path):
      matches = [m for m in sorted(glob.glob(path)) if os.path.isfile(m)]
      if not matches:
        raise FileNotFoundError(f"corpus pattern {path!r} matches no file")
    elif os.path.isfile(path):
      matches = [path]
    else:
      raise FileNotFoundError(f"corpus file {path!r} does not exist or is not a file")
    for match in matches:
      key = os.path.abspath(match)
      if key not in seen:
        seen.add(key)
        files.append(match)
  return files


def _decoded_lines(path: str, gzipped: bool,
                   report: CorpusReport) -> Iterator[Tuple[int, str]]:
  """Yields (1-based line number, decoded line without its newline) of valid UTF-8 lines.

  Invalid lines are counted in `report`; a read error (truncated gzip, I/O error) is counted as
  an unreadable file at the line reached and ends the file.
  """
  lineno = 0
  try:
    with (gzip.open(path, "rb") if gzipped else open(path, "rb")) as f:
      for lineno, raw in enumerate(f, 1):
        try:
          line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
          report.skip(path, lineno, REASON_INVALID_UTF8, f"byte {e.start}")
          continue
        if lineno == 1:
          line = line.lstrip("\ufeff")  # byte-order mark
        yield lineno, line.rstrip("\r\n")
  except (OSError, EOFError, zlib.error) as e:
    report.skip(path, lineno + 1, REASON_UNREADABLE, f"{type(e).__name__}: {e}")


def _read_text(path: str, gzipped: bool, report: CorpusReport,
               min_sentences: int) -> Iterator[Document]:
  """Plain text: one sentence per line, blank lines between documents."""
  name = os.path.basename(path)
  sentences: List[str] = []
  start = 0

  def finish():
    if len(sentences) < min_sentences:
      report.skip(path, start, REASON_TOO_FEW, f"{len(sentences)} < {min_sentences}")
      return None
    return Document(f"{name}:{start}", list(sentences))

  for lineno, line in _decoded_lines(path, gzipped, report):
    sentence = clean_text(line)
    if sentence:
      if not sentences:
        start = lineno
      sentences.append(sentence)
    elif sentences:
      doc = finish()
      if doc is not None:
        yield doc
      sentences = []
  if sentences:
    doc = finish()
    if doc is not None:
      yield doc


def _read_jsonl(path: str, gzipped: bool, report: CorpusReport,
                min_sentences: int) -> Iterator[Document]:
  """JSON Lines: one object with a string `text` (and optional `id`) per line."""
  name = os.path.basename(path)
  for lineno, line in _decoded_lines(path, gzipped, report):
    if not line.strip():
      continue
    try:
      record = json.loads(line, strict=False)  # strict=False: raw control chars get cleaned
    except ValueError as e:  # json.JSONDecodeError
      report.skip(path, lineno, REASON_INVALID_JSON, str(e))
      continue
    except RecursionError:
      report.skip(path, lineno, REASON_INVALID_JSON, "nested too deeply")
      continue
    if not isinstance(record, dict):
      report.skip(path, lineno, REASON_BAD_TEXT, f"line is a JSON {type(record).__name__}")
      continue
    text = record.get("text")
    if not isinstance(text, str):
      detail = ("no 'text' key" if "text" not in record
                else f"'text' is {type(text).__name__}")
      report.skip(path, lineno, REASON_BAD_TEXT, detail)
      continue
    sentences = [s for s in (clean_text(s) for s in split_sentences(text)) if s]
    if not sentences:
      report.skip(path, lineno, REASON_EMPTY, "'text' has no words")
      continue
    if len(sentences) < min_sentences:
      report.skip(path, lineno, REASON_TOO_FEW, f"{len(sentences)} < {min_sentences}")
      continue
    doc_id = record.get("id")
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)) or doc_id == "":
      doc_id = lineno
    yield Document(f"{name}:{doc_id}", sentences)


def read_corpus(paths: Union[PathLike, Iterable[PathLike]],
                report: Optional[CorpusReport] = None,
                min_sentences: int = 1,
                tfds_data_dir: Optional[str] = None) -> Iterator[Document]:
  """Reads documents from plain-text and JSON Lines files (see the module docstring).

  Paths are expanded (and missing ones reported) when this is called, before iterating.
  An input starting with "tfds:" is a prepared TensorFlow Datasets source
  ("tfds:<name>/<config>[:<split>]", read from `tfds_data_dir` by
  `tfds_documents`, which is opened, and its errors raised,
  when this is called; TensorFlow is imported only then).

  Args:
    paths: files, glob patterns or "tfds:" specs (one, or an iterable); each pattern's matches
      are sorted.
    report: the `CorpusReport` to count into (it accumulates over calls); a fresh one if None.
    min_sentences: documents with fewer sentences are skipped as "too few sentences".
    tfds_data_dir: the TFDS data directory of "tfds:" inputs (None: TFDS's default).

  Returns:
    An iterator over the documents, in input, file and line order.

  Raises:
    FileNotFoundError: a pattern matches no file or a path does not exist (for a "tfds:" input:
      the dataset is not prepared in tfds_data_dir).
    ValueError: min_sentences is negative, or a "tfds:" input is malformed.
  """
  if min_sentences < 0:
    raise ValueError(f"min_sentences must be >= 0, got {min_sentences}")
  if report is None:
    report = CorpusReport()
  if isinstance(paths, (str, bytes, os.PathLike)):
    paths = [paths]
  sources = _sources(list(paths), report, min_sentences, tfds_data_dir)

  def documents() -> Iterator[Document]:
    for source in sources:
      if not isinstance(source, str):
        yield from source  # tfds_documents counts its own files, documents and sentences
        continue
      report.files += 1
      fmt, gzipped = _format_of(source)
      reader = _read_jsonl if fmt == "jsonl" else _read_text
      for doc in reader(source, gzipped, report, min_sentences):
        report.documents += 1
        report.sentences += len(doc.sentences)
        yield doc

  return documents()


def _sources(paths: List[PathLike], report: CorpusReport, min_sentences: int,
             tfds_data_dir: Optional[str]) -> List[Union[str, Iterator[Document]]]:
  """The inputs in order: each file once (patterns expanded, as `expand_paths`), and for a
  "tfds:" spec its opened document iterator (TensorFlow is imported only then)."""
  is_tfds = lambda p: isinstance(p, str) and p.startswith("tfds:")  # pylint: disable=unnecessary-lambda-assignment
  if not any(is_tfds(p) for p in paths):
    return list(expand_paths(paths))
  sources: List[Union[str, Iterator[Document]]] = []
  seen = set()
  for path in paths:
    if is_tfds(path):
      sources.append(tfds_documents(path, tfds_data_dir, report, min_sentences))
      continue
    for match in expand_paths(path):
      if os.path.abspath(match) not in seen:
        seen.add(os.path.abspath(match))
        sources.append(match)
  return sources


# A TFDS record whose text field holds something else than text (with REASON_EMPTY,
# REASON_TOO_FEW and REASON_INVALID_UTF8, the reasons `tfds_documents` counts).
REASON_NOT_STRING = "text field is not a string"


def tfds_documents(spec: str, data_dir: Optional[str], report: CorpusReport,
                   min_sentences: int = 1, num_workers: int = 1, worker_index: int = 0,
                   text_field: Optional[str] = None) -> Iterator[Document]:
  """Documents of a prepared TFDS dataset for the offline converter, like `read_corpus`.

  Each record's text is split with `split_sentences` and cleaned with `clean_text`. A record is
  skipped, counted in `report` under its reason with a message
  "tfds:<name>/<config>:<split>:<record>: <reason>", when its text is not valid UTF-8 ("invalid
  utf-8"), has no words ("empty document") or fewer than `min_sentences` sentences ("too few
  sentences"). Document ids read "tfds:<name>/<config>:<split>:<record>" (0-based record number
  in the split). The source counts as one of `report.files` and every document is counted in
  `report.documents` / `report.sentences` (so use this, or `read_corpus`, which calls it for
  "tfds:" inputs, not both on the same report).

  The dataset is opened, and its errors raised, when this is called (TensorFlow is imported
  only then); records are read while iterating. Worker sharding, `text_field` and the errors
  (TfdsNotPreparedError, ValueError) are those of `tfds_source.tfds_text_dataset`; ValueError
  also for a negative min_sentences.
  """
  from etc_realformer.data import tfds_source  # pylint: disable=g-import-not-at-top
  if min_sentences < 0:
    raise ValueError(f"min_sentences must be >= 0, got {min_sentences}")
  field, records = tfds_source.tfds_texts(spec, data_dir, num_workers, worker_index, text_field)

  def documents() -> Iterator[Document]:
    report.files += 1
    for where, index, raw in records:
      if isinstance(raw, bytes):
        try:
          text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
          report.skip(where, index, REASON_INVALID_UTF8, f"byte {e.start}")
          continue
      elif isinstance(raw, str):
        text = raw
      else:
        report.skip(where, index, REASON_NOT_STRING, f"{field!r} is {type(raw).__name__}")
        continue
      sentences = [s for s in (clean_text(s) for s in split_sentences(text)) if s]
      if not sentences:
        report.skip(where, index, REASON_EMPTY, f"{field!r} has no words")
        continue
      if len(sentences) < min_sentences:
        report.skip(where, index, REASON_TOO_FEW, f"{len(sentences)} < {min_sentences}")
        continue
      report.documents += 1
      report.sentences += len(sentences)
      yield Document(f"{where}:{index}", sentences)

  return documents()
