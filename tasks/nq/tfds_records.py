r"""Natural Questions from TensorFlow Datasets, back in the official raw NQ JSON format.

  python -m tasks.nq.tfds_records --tfds=natural_questions --tfds_data_dir=<dir> \
      --split=validation --output=nq-dev.jsonl.gz

TFDS's `natural_questions` (config "default") has no long-answer candidates, no
`candidate_index` and no token byte offsets, which the NQ reader (tasks/nq/data.py) needs.
`tfds_example_to_nq_record` rebuilds them: candidates from the html tokens by NQ's block-tag
rule (`candidates_from_tokens`), token byte offsets by searching the html (`align_tokens`, the
annotations' exact offsets as anchors). Every written record passes the reader's checks
(`tasks.nq.data.parse_record`); the others are skipped and counted under their reason. The
rules, and where the result can differ from the official files: docs/tasks.md, "From
TensorFlow Datasets".
"""

import bisect
import collections
import gzip
import html as html_lib
import json
import os
import re
import time
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

CANDIDATE_TAGS = ("P", "Table", "Tr", "Ul", "Ol", "Dl", "Li", "Dd", "Dt")
_CANDIDATE_NAMES = frozenset(tag.lower() for tag in CANDIDATE_TAGS)
YES_NO_NAMES = {-1: "NONE", 0: "NO", 1: "YES"}
_SPAN_KEYS = ("start_token", "end_token", "start_byte", "end_byte")

NOTE_APPROXIMATED = "token bytes approximated"
NOTE_UNCLOSED = "unclosed candidate element"
NOTE_UNMATCHED = "unmatched closing tag"

_TOKEN_TAG_RE = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)[^>]*>\Z")
_HTML_TAG_RE = re.compile(rb"<!--.*?-->|<(/?)([A-Za-z][A-Za-z0-9]*)[^>]*>|<[!?][^>]*>", re.S)
_INT_RE = re.compile(r"-?\d+\Z")


class TfdsRecordError(ValueError):
  """One TFDS example cannot become an NQ record: a reason (the count's key) and a field."""

  def __init__(self, reason: str, field: str, detail: str):
    super().__init__(f"field '{field}': {detail}")
    self.reason, self.field, self.detail = reason, field, detail


# ----------------------------------------------------------------------------- candidates


def _tag(token: str) -> Optional[Tuple[bool, str]]:
  """(closing, lower-case name) of an html token such as "<Table>" or "</P>", else None."""
  match = _TOKEN_TAG_RE.match(token)
  return (match.group(1) == "/", match.group(2).lower()) if match else None


def candidates_from_tokens(tokens: Sequence[str], is_html: Sequence[bool],
                           notes: Optional[collections.Counter] = None) -> List[Dict[str, Any]]:
  """The long-answer candidates of a document by NQ's block-tag rule (docs/tasks.md).

  Args:
    tokens: the document tokens.
    is_html: per token, whether it is an html tag.
    notes: a Counter that gets "unclosed candidate element" / "unmatched closing tag" counts.

  Returns:
    [{"start_token", "end_token", "top_level"}] in document order (end_token exclusive).
  """
  found: List[Dict[str, Any]] = []
  stack: List[Tuple[str, int]] = []  # (name, index into found) of the open candidate elements
  unclosed = unmatched = 0
  for i, (token, html_token) in enumerate(zip(tokens, is_html)):
    tag = _tag(token) if html_token else None
    if tag is None or tag[1] not in _CANDIDATE_NAMES:
      continue
    closing, name = tag
    if not closing:
      stack.append((name, len(found)))
      found.append({"start_token": i, "end_token": -1, "top_level": len(stack) == 1})
      continue
    depth = next((k for k in range(len(stack) - 1, -1, -1) if stack[k][0] == name), -1)
    if depth < 0:
      unmatched += 1
      continue
    unclosed += len(stack) - depth - 1
    found[stack[depth][1]]["end_token"] = i + 1
    del stack[depth:]
  unclosed += len(stack)
  if notes is not None:
    if unclosed:
      notes[NOTE_UNCLOSED] += unclosed
    if unmatched:
      notes[NOTE_UNMATCHED] += unmatched
  return [c for c in found if c["end_token"] > 0]


# ----------------------------------------------------------------------------- byte offsets


def _variants(token: str) -> List[bytes]:
  """The UTF-8 forms a text token may take in html: as written, and html-escaped."""
  escaped = html_lib.escape(token, quote=False)
  forms = [token, escaped, html_lib.escape(token, quote=True),
           escaped.replace("'", "&#39;").replace('"', "&#34;"),
           escaped.replace("'", "&apos;").replace('"', "&quot;")]
  out: List[bytes] = []
  for form in forms:
    data = form.encode("utf-8")
    if data and data not in out:
      out.append(data)
  return out


class _HtmlIndex:
  """The tags of an html document (byte ranges) and searches over it."""

  def __init__(self, data: bytes):
    self.data = data
    self.tags: List[Tuple[int, int, bool, str]] = []  # (start, end, closing, lower name or "")
    for match in _HTML_TAG_RE.finditer(data):
      name = match.group(2)
      self.tags.append((match.start(), match.end(), match.group(1) == b"/",
                        name.decode("ascii").lower() if name else ""))
    self.starts = [t[0] for t in self.tags]

  def find_tag(self, closing: bool, name: str, position: int) -> Optional[Tuple[int, int]]:
    """The byte range of the first tag at or after `position` of this name and kind."""
    for k in range(bisect.bisect_left(self.starts, position), len(self.tags)):
      start, end, tag_closing, tag_name = self.tags[k]
      if tag_closing == closing and tag_name == name:
        return start, end
    return None

  def find_text(self, token: str, position: int) -> Optional[Tuple[int, int]]:
    """The byte range of the first occurrence of the token (any form) outside tags."""
    best = None
    for form in _variants(token):
      at = position
      while True:
        found = self.data.find(form, at)
        if found < 0:
          break
        k = bisect.bisect_right(self.starts, found) - 1
        if k >= 0 and self.tags[k][1] > found:  # inside a tag: look after it
          at = self.tags[k][1]
          continue
        if best is None or found < best[0] or (found == best[0]
                                               and found + len(form) > best[1]):
          best = (found, found + len(form))
        break
    return best


def align_tokens(html: bytes, tokens: Sequence[str], is_html: Sequence[bool],
                 known_starts: Optional[Mapping[int, int]] = None,
                 known_ends: Optional[Mapping[int, int]] = None,
                 notes: Optional[collections.Counter] = None) -> Tuple[List[int], List[int]]:
  """Byte offsets [start, end) of every token in the UTF-8 html (docs/tasks.md).

  Args:
    html: the document html as UTF-8 bytes.
    tokens: the document tokens.
    is_html: per token, whether it is an html tag.
    known_starts: token index -> its exact start byte (from the annotations), used as is.
    known_ends: token index -> its exact end byte.
    notes: a Counter that gets the number of tokens whose bytes are approximated.

  Returns:
    (start_bytes, end_bytes), each a list with one entry per token.

  Raises:
    TfdsRecordError: the exact offsets disagree with the html or with the order of the tokens.
  """
  known_starts = known_starts or {}
  known_ends = known_ends or {}
  index = _HtmlIndex(html)
  starts: List[int] = []
  ends: List[int] = []
  position = 0
  approximated = 0
  for i, (token, html_token) in enumerate(zip(tokens, is_html)):
    if i in known_starts:
      position = known_starts[i]
    tag = _tag(token) if html_token else None
    found = (index.find_tag(tag[0], tag[1], position) if tag is not None
             else index.find_text(token, position) if token else None)
    if found is None:
      approximated += 1
      found = (position, position)
    start, end = found
    if i in known_starts:
      start = known_starts[i]
    if i in known_ends:
      end = known_ends[i]
    if end < start or end > len(html) or (starts and start < starts[-1]):
      raise TfdsRecordError(
          "token alignment failed", f"document/tokens[{i}]",
          f"token {token!r} would span bytes [{start}, {end}), out of order with the previous "
          f"token's start {starts[-1] if starts else 0} or outside the {len(html)}-byte html")
    starts.append(start)
    ends.append(end)
    position = max(position, end)
  if notes is not None and approximated:
    notes[NOTE_APPROXIMATED] += approximated
  return starts, ends


# ----------------------------------------------------------------------------- one example


def _get(example: Mapping[str, Any], path: str) -> Any:
  value: Any = example
  for key in path.split("/"):
    if not isinstance(value, Mapping) or key not in value:
      raise TfdsRecordError("missing field", path, "missing from the TFDS example")
    value = value[key]
  return value


def _text(value: Any, field: str) -> str:
  if isinstance(value, (bytes, bytearray)):
    try:
      return bytes(value).decode("utf-8")
    except UnicodeDecodeError as e:
      raise TfdsRecordError("invalid utf-8", field, f"invalid UTF-8 at byte {e.start}") from None
  if isinstance(value, str):
    return str(value)
  raise TfdsRecordError("malformed field", field, f"expected a string, got {type(value).__name__}")


def _list(value: Any) -> List[Any]:
  """A list from a numpy array, a ragged tensor (`to_list`) or a list."""
  if hasattr(value, "to_list"):
    return value.to_list()
  if hasattr(value, "tolist"):
    return value.tolist()
  return list(value)


def _id(text: str) -> Any:
  return int(text) if _INT_RE.match(text) else text


def _rows(annotations: Mapping[str, Any]) -> List[Dict[str, Any]]:
  """The annotation dict of column arrays (TFDS's Sequence layout) as one dict per annotation."""
  ids = _list(_get(annotations, "id"))
  count = len(ids)
  columns = {"id": ids, "yes_no_answer": _list(_get(annotations, "yes_no_answer"))}
  for part in ("long_answer", "short_answers"):
    for key in _SPAN_KEYS:
      columns[f"{part}/{key}"] = _list(_get(annotations, f"{part}/{key}"))
  for name, column in columns.items():
    if len(column) != count:
      raise TfdsRecordError("malformed annotations", f"annotations/{name}",
                            f"{len(column)} values for {count} annotations")
  rows = []
  for j in range(count):
    shorts = [columns[f"short_answers/{key}"][j] for key in _SPAN_KEYS]
    if len({len(s) for s in shorts}) != 1:
      raise TfdsRecordError("malformed annotations", f"annotations[{j}]/short_answers",
                            "its offset lists have different lengths")
    rows.append({
        "id": _text(ids[j], f"annotations[{j}]/id"),
        "long_answer": {key: int(columns[f"long_answer/{key}"][j]) for key in _SPAN_KEYS},
        "short_answers": [{key: int(v) for key, v in zip(_SPAN_KEYS, offsets)}
                          for offsets in zip(*shorts)],
        "yes_no_answer": int(columns["yes_no_answer"][j]),
    })
  return rows


def tfds_example_to_nq_record(example: Mapping[str, Any],
                              notes: Optional[collections.Counter] = None) -> Dict[str, Any]:
  """One TFDS natural_questions example (numpy dict, as from `tfds.as_numpy`) -> the raw NQ
  JSON record of the official original format, with rebuilt candidates and token byte offsets.

  Args:
    example: the example (strings as bytes or str; sequences as arrays, lists or ragged
      tensors).
    notes: a Counter that gets the approximation notes (docs/tasks.md).

  Returns:
    {example_id, question_text, question_tokens, document_title, document_url, document_html,
    document_tokens [{token, start_byte, end_byte, html_token}], long_answer_candidates
    [{start_token, end_token, start_byte, end_byte, top_level}], annotations [{annotation_id,
    long_answer {start_token, end_token, start_byte, end_byte, candidate_index},
    short_answers [{start_token, end_token, start_byte, end_byte}], yes_no_answer}]}.

  Raises:
    TfdsRecordError: a field is missing or malformed, the offsets disagree with the document,
      or a long answer is not one of the rebuilt candidates.
  """
  example_id = _id(_text(_get(example, "id"), "id"))
  html_text = _text(_get(example, "document/html"), "document/html")
  html = html_text.encode("utf-8")
  tokens = [_text(t, f"document/tokens/token[{i}]")
            for i, t in enumerate(_list(_get(example, "document/tokens/token")))]
  is_html = [bool(b) for b in _list(_get(example, "document/tokens/is_html"))]
  if len(is_html) != len(tokens):
    raise TfdsRecordError("malformed document", "document/tokens/is_html",
                          f"{len(is_html)} flags for {len(tokens)} tokens")
  if not tokens:
    raise TfdsRecordError("empty document", "document/tokens", "the document has no tokens")
  annotations = _rows(_get(example, "annotations"))

  known_starts: Dict[int, int] = {}
  known_ends: Dict[int, int] = {}
  for j, annotation in enumerate(annotations):
    spans = [("long_answer", annotation["long_answer"])] + [
        (f"short_answers[{k}]", s) for k, s in enumerate(annotation["short_answers"])]
    for name, span in spans:
      if span["start_token"] == -1 and span["end_token"] == -1:
        continue
      field = f"annotations[{j}]/{name}"
      if not 0 <= span["start_token"] < span["end_token"] <= len(tokens):
        raise TfdsRecordError("offsets disagree with document", field,
                              f"tokens [{span['start_token']}, {span['end_token']}) are not a "
                              f"range of the {len(tokens)} document tokens")
      for table, token, value in ((known_starts, span["start_token"], span["start_byte"]),
                                  (known_ends, span["end_token"] - 1, span["end_byte"])):
        if table.setdefault(token, value) != value:
          raise TfdsRecordError("offsets disagree with document", field,
                                f"token {token} has byte offsets {table[token]} and {value} in "
                                "two annotations")
  starts, ends = align_tokens(html, tokens, is_html, known_starts, known_ends, notes)

  candidates = []
  by_span = {}
  for c in candidates_from_tokens(tokens, is_html, notes):
    by_span.setdefault((c["start_token"], c["end_token"]), len(candidates))
    candidates.append({"start_token": c["start_token"], "end_token": c["end_token"],
                       "start_byte": starts[c["start_token"]],
                       "end_byte": ends[c["end_token"] - 1], "top_level": c["top_level"]})

  out_annotations = []
  for j, annotation in enumerate(annotations):
    long_answer = dict(annotation["long_answer"])
    if long_answer["start_token"] == -1 and long_answer["end_token"] == -1:
      long_answer = dict.fromkeys(_SPAN_KEYS + ("candidate_index",), -1)
    else:
      key = (long_answer["start_token"], long_answer["end_token"])
      if key not in by_span:
        raise TfdsRecordError("long answer is not a rebuilt candidate",
                              f"annotations[{j}]/long_answer",
                              f"tokens [{key[0]}, {key[1]}) are not a <P>/<Table>/<Tr>/<Ul>/"
                              f"<Ol>/<Dl>/<Li>/<Dd>/<Dt> element of the document tokens")
      long_answer["candidate_index"] = by_span[key]
    yes_no = YES_NO_NAMES.get(annotation["yes_no_answer"])
    if yes_no is None:
      raise TfdsRecordError("malformed annotations", f"annotations[{j}]/yes_no_answer",
                            f"expected -1, 0 or 1, got {annotation['yes_no_answer']}")
    out_annotations.append({"annotation_id": _id(annotation["id"]), "long_answer": long_answer,
                            "short_answers": annotation["short_answers"],
                            "yes_no_answer": yes_no})

  return {
      "example_id": example_id,
      "question_text": _text(_get(example, "question/text"), "question/text"),
      "question_tokens": [_text(t, f"question/tokens[{i}]")
                          for i, t in enumerate(_list(_get(example, "question/tokens")))],
      "document_title": _text(_get(example, "document/title"), "document/title"),
      "document_url": _text(_get(example, "document/url"), "document/url"),
      "document_html": html_text,
      "document_tokens": [{"token": t, "start_byte": s, "end_byte": e, "html_token": h}
                          for t, s, e, h in zip(tokens, starts, ends, is_html)],
      "long_answer_candidates": candidates,
      "annotations": out_annotations,
  }


# ----------------------------------------------------------------------------- a whole split


def write_nq_jsonl(examples: Iterable[Mapping[str, Any]], output: str, source: str = "TFDS",
                   progress_every: int = 1000, max_records: int = 0,
                   log: Callable[[str], None] = print) -> Dict[str, Any]:
  """Converts TFDS NQ examples and writes the records the reader accepts as JSON Lines.

  The file is gzipped when `output` ends in ".gz", and is written under a temporary name and
  renamed when complete. A record that cannot be converted, or that the NQ reader's checks
  reject, is skipped and counted under its reason (the first few messages name the record).

  Args:
    examples: TFDS examples (numpy dicts).
    output: the JSONL(.gz) file to write.
    source: how messages name the input (e.g. "tfds:natural_questions/default:validation").
    progress_every: log a progress line every this many records (0: never).
    max_records: stop after this many records (0: all).
    log: where progress and the summary go.

  Returns:
    {"records", "written", "skipped": {reason: count}, "notes": {note: count}, "messages"}.
  """
  from tasks.common.read_report import RecordProblem  # pylint: disable=g-import-not-at-top
  from tasks.nq import data as nq_data  # pylint: disable=g-import-not-at-top

  os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
  temporary = f"{output}.tmp-{os.getpid()}"
  counts: Dict[str, Any] = {"records": 0, "written": 0, "skipped": collections.Counter(),
                            "notes": collections.Counter(), "messages": []}
  start = time.time()

  def skip(index: int, reason: str, message: str) -> None:
    counts["skipped"][reason] += 1
    if len(counts["messages"]) < 20:
      counts["messages"].append(f"{source}: record {index}: {message}")

  opener = gzip.open if output.endswith(".gz") else open
  try:
    with opener(temporary, "wt", encoding="utf-8") as f:
      for index, example in enumerate(examples):
        if max_records and index >= max_records:
          break
        counts["records"] += 1
        notes: collections.Counter = collections.Counter()
        try:
          record = tfds_example_to_nq_record(example, notes)
          repairs: List[RecordProblem] = []
          nq_data.parse_record(record, with_labels=False, repairs=repairs)
          if repairs:
            raise repairs[0]
        except TfdsRecordError as e:
          skip(index, e.reason, str(e))
          continue
        except RecordProblem as problem:
          skip(index, f"rejected by the NQ reader: {problem.reason}",
               f"field '{problem.field}': {problem.detail}")
          continue
        counts["notes"].update(notes)
        f.write(json.dumps(record, ensure_ascii=False) + "\n")
        counts["written"] += 1
        if progress_every and counts["records"] % progress_every == 0:
          log(f"{source}: {counts['records']} records read, {counts['written']} written, "
              f"{sum(counts['skipped'].values())} skipped ({time.time() - start:.1f}s)")
    os.replace(temporary, output)
  finally:
    if os.path.exists(temporary):
      os.remove(temporary)
  counts["skipped"] = dict(sorted(counts["skipped"].items()))
  counts["notes"] = dict(sorted(counts["notes"].items()))
  lines = [f"{source}: {counts['records']} records read, {counts['written']} written to "
           f"{output}, {sum(counts['skipped'].values())} skipped ({time.time() - start:.1f}s)"]
  lines += [f"  skipped {n} x {reason}" for reason, n in counts["skipped"].items()]
  lines += [f"  note: {n} x {note}" for note, n in counts["notes"].items()]
  lines += [f"    {message}" for message in counts["messages"]]
  log("\n".join(lines))
  return counts


def convert_tfds_split(dataset: str, data_dir: Optional[str], split: str, output: str,
                       progress_every: int = 1000, max_records: int = 0,
                       log: Callable[[str], None] = print) -> Dict[str, Any]:
  """Reads a prepared TFDS NQ split (never downloads) and writes it with `write_nq_jsonl`.

  Args:
    dataset: "natural_questions" or "natural_questions/<config>" (the config must have the
      "default" layout: document, question, annotations).
    data_dir: the TFDS data directory holding the prepared dataset (None: TFDS's default).
    split: the split, e.g. "validation" or "train[:1000]".
    output: the JSONL(.gz) file to write.
    progress_every, max_records, log: as in `write_nq_jsonl`.

  Returns:
    The counts of `write_nq_jsonl`.

  Raises:
    etc_realformer.data.tfds_source.TfdsNotPreparedError: the dataset is not prepared.
    ValueError: a malformed name or split, or a config without the NQ document layout.
  """
  import tensorflow_datasets as tfds  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import tfds_source  # pylint: disable=g-import-not-at-top

  spec = f"{tfds_source.TFDS_PREFIX}{dataset}:{split}"
  builder, name, config, split = tfds_source.load_prepared_builder(spec, data_dir)
  features = builder.info.features
  for key in ("id", "document", "question", "annotations"):
    if key not in features:
      raise ValueError(f"{spec}: the dataset has no {key!r} feature (features: "
                       f"{sorted(features.keys())}); use the 'default' config of "
                       "natural_questions")
  config = config or getattr(builder.builder_config, "name", None)
  source = f"{tfds_source.TFDS_PREFIX}{name}" + (f"/{config}" if config else "") + f":{split}"
  examples = tfds.as_numpy(builder.as_dataset(split=split, shuffle_files=False))
  return write_nq_jsonl(examples, output, source, progress_every, max_records, log)


def main(argv):
  from absl import flags  # pylint: disable=g-import-not-at-top

  if len(argv) > 1:
    raise ValueError(f"unexpected arguments: {argv[1:]}")
  flag_values = flags.FLAGS
  if not flag_values.output:
    raise ValueError("--output is required (a .jsonl.gz or .jsonl file)")
  counts = convert_tfds_split(flag_values.tfds, flag_values.tfds_data_dir, flag_values.split,
                              flag_values.output, flag_values.progress_every,
                              flag_values.max_records)
  if not counts["written"]:
    raise SystemExit(f"no record written to {flag_values.output}")


if __name__ == "__main__":
  from absl import app  # pylint: disable=g-import-not-at-top
  from absl import flags  # pylint: disable=g-import-not-at-top

  flags.DEFINE_string("tfds", "natural_questions",
                      "The TFDS dataset, 'natural_questions' or 'natural_questions/<config>'.")
  flags.DEFINE_string("tfds_data_dir", None,
                      "The TFDS data directory holding the prepared dataset (nothing is "
                      "downloaded); default: TFDS's own.")
  flags.DEFINE_string("split", "validation", "The split, e.g. validation or train[:1000].")
  flags.DEFINE_string("output", None, "The JSONL file to write (gzipped when it ends in .gz).")
  flags.DEFINE_integer("progress_every", 1000, "Print progress every this many records.")
  flags.DEFINE_integer("max_records", 0, "Stop after this many records (0: all).")
  app.run(main)
