"""NQ examples -> the features Google's ETC converter writes (etcmodel/models/nq/preproc_nq_lib.py:
NQPreprocessFn, then NQSplitFn), under its names and with its values: the task's one layout.
docs/official_layouts/nq.md has every feature, the quirks reproduced and the options.

Stage 1, the document (`document`): the tokens of the top-level long-answer candidates, in
candidate order (tokens outside every top-level candidate are dropped; overlapping top-level
candidates would repeat tokens, as Google's loop does). An html token becomes one piece, the
html close id when the token starts with "</", else the html open id (none without
include_html_tokens; Google's Beam steps always include them); a text token becomes its word
pieces (tokenized on its own). Every piece keeps its candidate index and document token.
Labels come from the first annotation only.

Stage 2, the windows (`windows`): Q = min(question pieces, max_question_pieces) and doc_len =
L - Q - 3; each window is [CLS] q_1..q_Q [SEP] | doc_len document pieces | [SEP] | padding, with
one global token per candidate run. Every feature, its length and meaning: docs/file_formats.md
("TFRecords of the official layouts", Natural Questions); the window starts, the labels per
window and Google's other quirks: docs/official_layouts/nq.md. Training drops answerless windows
unless a fixed draw from the example id and window falls under the keep rate (`window_keep`;
Google draws from Python's `random`, so the rates match but not which windows).
"""

import dataclasses
import functools
import re
import zlib
from typing import Dict, Iterator, List, Tuple

import numpy as np

from etc_realformer.data.span_tokenization import OffsetTokenizer
from etc_realformer.data.tokenization import Tokenizer
from tasks.common import feature_config
from tasks.nq.data import NqExample

NULL, YES, NO, LONG, SHORT = range(5)
ANSWER_TYPES = ("null", "yes", "no", "long", "short")

LONG_FEATURES = ("token_ids", "candidate_ids", "token_pos", "long_breakpoints", "sentence_ids")
GLOBAL_FEATURES = ("global_token_ids", "global_breakpoints", "global_type_id",
                   "global_candidate_ids", "global_token_pos_start", "global_token_pos_end")
LABEL_FEATURES = ("sa_start", "sa_end", "la_start", "la_end", "answer_type", "la_global")
# Written but not parsed for training: unique_ids (int64 ids do not fit the int32 the parser
# casts to) and question_ids (variable length; the question is inside token_ids).
OTHER_FEATURES = ("unique_ids", "question_ids")
FEATURE_NAMES = LONG_FEATURES + GLOBAL_FEATURES + LABEL_FEATURES + OTHER_FEATURES
MODEL_FEATURES = ("token_ids", "global_token_ids", "long_breakpoints", "global_breakpoints",
                  "sentence_ids")

GLOBAL_QUESTION_ID = 35   # "[unused34]" in BERT uncased, "<unused_34>" in the ETC SentencePiece
GLOBAL_SENTENCE_ID = 1    # one per candidate run
TYPE_SENTENCE, TYPE_CLS, TYPE_QUESTION = 0, 1, 2   # preproc_nq.py --global_token_types=0,1,2

# Pieces Google's converter looks up, by tokenizer kind: (html open, html close, pad, cls, sep).
WORDPIECE_PIECES = ("[unused102]", "[unused103]", "[PAD]", "[CLS]", "[SEP]")
SENTENCEPIECE_PIECES = ("<unused_35>", "<unused_36>", "<pad>", "<unused_63>", "<unused_2>")
# When a vocabulary lacks the two html pieces (e.g. a small WordPiece vocabulary that stops at
# [unused98]), Google's code fails; here the `html_tag_markers` markers of an unknown opening
# and closing tag stand in (html_marker_id), and `OfficialIds.html_fallback` says so.
FALLBACK_HTML_PIECES = {"wordpiece": ("[unused67]", "[unused97]"),
                        "sentencepiece": ("<unused_37>", "<unused_38>")}


# Option html_tag_markers (not Google's): an html token becomes the marker of its tag name. Tags
# with a marker of their own; any other tag uses the "OTHER" marker. Opening tags use
# [unused40 + i], closing tags [unused70 + i] (ids 41.. and 71..; [unusedN] has id N + 1).
HTML_TAGS = ("P", "TABLE", "TR", "TD", "TH", "UL", "OL", "LI", "DL", "DT", "DD", "H1", "H2",
             "H3", "H4", "H5", "H6", "DIV", "SPAN", "A", "B", "I", "BR", "HR", "IMG", "SUP",
             "SUB", "OTHER")
_OPEN_BASE, _CLOSE_BASE = 41, 71
_TAG = re.compile(r"^<\s*(/?)\s*([A-Za-z][A-Za-z0-9]*)")


@functools.lru_cache(maxsize=1 << 16)   # pages repeat a few dozen tags; bounded for odd inputs
def html_marker_id(token: str) -> int:
  """The marker piece id of an html token ("<P>" -> 41, "</P>" -> 71, unknown tags -> other)."""
  match = _TAG.match(token)
  closing, name = (match.group(1) == "/", match.group(2).upper()) if match else (False, "OTHER")
  index = HTML_TAGS.index(name) if name in HTML_TAGS else HTML_TAGS.index("OTHER")
  return (_CLOSE_BASE if closing else _OPEN_BASE) + index


@dataclasses.dataclass
class NqFeatureConfig(feature_config.FeatureConfig):
  """Google's preproc_nq flags (long_seq_len = --seq_len, global_seq_len = --global_seq_len,
  doc_stride = --stride, max_question_pieces = --question_len, null_window_keep_rate =
  --include_unknown_rate, unanswerable_keep_rate = --include_unknown_rate_for_unanswerable,
  negative: 4 x the former, Google's default) and the options that are not Google's, all off
  by default (docs/official_layouts/nq.md has what each measured):

    html_tag_markers: an html token becomes the marker of its tag name (html_marker_id) instead
      of Google's one open and one close id.
    snap_long_answers_to_candidates: the predicted long answer becomes the smallest candidate
      holding it (decode.snap_long_answer).
  """
  doc_stride: int = 2048
  max_question_pieces: int = 32
  include_html_tokens: bool = True
  null_window_keep_rate: float = 1.0
  unanswerable_keep_rate: float = -1.0
  html_tag_markers: bool = False
  snap_long_answers_to_candidates: bool = False

  def check(self):
    self.check_question_room("max_question_pieces", "candidates", "the document")
    # [CLS] question [SEP] document [SEP]: Google's windows hold L - Q - 3 document pieces.
    room = self.long_seq_len - self.max_question_pieces - 3
    if self.max_question_pieces + 2 >= self.global_seq_len or room < 1:
      raise ValueError(f"max_question_pieces: {self.max_question_pieces} leaves no room for the "
                       f"document in long_seq_len {self.long_seq_len} / global_seq_len "
                       f"{self.global_seq_len} (Q + 3 long, Q + 2 global tokens are taken)")
    if self.doc_stride > room:
      raise ValueError(f"doc_stride: {self.doc_stride} is longer than a window's document part "
                       f"({room}): pieces would be skipped")
    if not 0.0 <= self.null_window_keep_rate <= 1.0:
      raise ValueError(f"null_window_keep_rate: must be in [0, 1], got "
                       f"{self.null_window_keep_rate!r}")
    if self.unanswerable_keep_rate > 1.0:
      raise ValueError(f"unanswerable_keep_rate: must be at most 1 (negative: 4 x "
                       f"null_window_keep_rate), got {self.unanswerable_keep_rate!r}")


def window_keep(example_id, window: int, rate: float) -> bool:
  """Whether an answerless training window is kept at `rate`: a fixed draw from the example id
  and window (Google draws from Python's random), so re-runs convert the same windows."""
  if rate >= 1.0:
    return True
  return zlib.crc32(f"{example_id}:{window}".encode()) / 2.0 ** 32 < rate


@dataclasses.dataclass(frozen=True)
class OfficialIds:
  """The special ids of Google's NQ converter for one vocabulary."""
  html_open: int
  html_close: int
  pad: int
  cls: int
  sep: int
  html_fallback: bool = False   # the vocabulary lacks Google's html pieces (see above)


@functools.lru_cache(maxsize=8)
def official_ids(tokenizer: Tokenizer) -> OfficialIds:
  """Looks Google's pieces up in the tokenizer's vocabulary; ValueError naming a missing one."""
  pieces = tokenizer.id_to_token(range(tokenizer.vocab_size))
  index = {}
  for i, piece in enumerate(pieces):
    index.setdefault(piece, i)
  wanted = SENTENCEPIECE_PIECES if tokenizer.kind == "sentencepiece" else WORDPIECE_PIECES
  fallback = wanted[0] not in index or wanted[1] not in index
  if fallback:
    wanted = FALLBACK_HTML_PIECES[tokenizer.kind] + wanted[2:]
  missing = [p for p in wanted if p not in index]
  if missing:
    source = getattr(tokenizer, "vocab_file", None) or getattr(tokenizer, "model_file", "")
    raise ValueError(f"{source}: the vocabulary lacks {', '.join(missing)}, which the official "
                     "NQ layout needs")
  return OfficialIds(*(index[p] for p in wanted), html_fallback=fallback)


@dataclasses.dataclass
class Document:
  """Stage 1 of one example: P document pieces and the first annotation's labels.

  token_ids, candidate_ids, token_pos: [P] piece id, candidate index, document token.
  la_start, la_end, sa_start, sa_end: document tokens (ends exclusive), -1 when absent.
  """
  example_id: int
  question_ids: List[int]
  token_ids: np.ndarray
  candidate_ids: np.ndarray
  token_pos: np.ndarray
  answer_type: int = -1
  la_start: int = -1
  la_end: int = -1
  sa_start: int = -1
  sa_end: int = -1


def _labels(example: NqExample) -> Dict[str, int]:
  """Answer type and spans of the first annotation (the only one the windows use)."""
  if not example.annotations:
    return {}
  a = example.annotations[0]
  out = {"la_start": a.long_answer.start_token, "la_end": a.long_answer.end_token}
  if a.short_answers:   # several spans merge into one, from the first start to the last end
    out.update(sa_start=a.short_answers[0].start_token, sa_end=a.short_answers[-1].end_token)
  has_long = a.long_answer.start_token >= 0 and a.long_answer.end_token >= 0
  if a.yes_no_answer in ("YES", "NO"):
    out["answer_type"] = YES if a.yes_no_answer == "YES" else NO
  elif a.short_answers:
    out["answer_type"] = SHORT
  else:
    out["answer_type"] = LONG if has_long else NULL
  return out


def document(example: NqExample, tokenizer: OffsetTokenizer, ids: OfficialIds,
             where: str = "", include_html_tokens: bool = True,
             html_tag_markers: bool = False) -> Document:
  """Stage 1 (see the module docstring). Without include_html_tokens (Google's Beam steps
  always include them) html tokens give no piece; with html_tag_markers (not Google's) an html
  token becomes the marker of its tag name (html_marker_id: "<P>", "</Table>", ...)
  instead of one of Google's two html ids. ValueError for an example id that is not an
  integer."""
  if isinstance(example.example_id, bool) or not isinstance(example.example_id, int):
    raise ValueError(f"{where or 'example'}: field 'example_id': the NQ layout stores "
                     f"it as an int64, got {example.example_id!r}")
  question_ids = list(tokenizer.tokenize(example.question).ids)
  positions, owners = [], []
  for c, candidate in enumerate(example.candidates):
    if candidate.top_level:
      span = range(candidate.span.start_token, candidate.span.end_token)
      positions.extend(span)
      owners.extend([c] * len(span))
  text = [example.tokens[p] for p in positions if not example.is_html[p]]
  text_pieces = iter(tokenizer.tokenize_many(text))
  token_ids, candidate_ids, token_pos = [], [], []
  for p, c in zip(positions, owners):
    if not example.is_html[p]:
      pieces = next(text_pieces).ids
    elif not include_html_tokens:
      pieces = []
    elif html_tag_markers:
      pieces = [html_marker_id(example.tokens[p])]
    else:
      pieces = [ids.html_close] if example.tokens[p].startswith("</") else [ids.html_open]
    token_ids.extend(pieces)
    candidate_ids.extend([c] * len(pieces))
    token_pos.extend([p] * len(pieces))
  return Document(example.example_id, question_ids, np.asarray(token_ids, np.int64),
                  np.asarray(candidate_ids, np.int64), np.asarray(token_pos, np.int64),
                  **_labels(example))


def window_starts(num_pieces: int, doc_len: int, stride: int) -> range:
  """First document piece of every window (Google's range, at least one window)."""
  return range(0, max(num_pieces - doc_len, 0) + stride, stride)


def window_count(doc: Document, config) -> int:
  """How many windows stage 2 makes of `doc` before any is dropped."""
  question = min(len(doc.question_ids), config.max_question_pieces)
  return len(window_starts(len(doc.token_ids), config.long_seq_len - question - 3,
                           config.doc_stride))


def _first(values: np.ndarray, value: int) -> int:
  """Index of the first `value` in `values`, 0 when absent (numpy argmax of a mask)."""
  return int(np.argmax(values == value))


def _last_of_run(values: np.ndarray, value: int) -> int:
  """From the first `value` (or 0), the last index of its run of consecutive equal values."""
  i = _first(values, value)
  while i < len(values) - 1 and values[i + 1] == value:
    i += 1
  return i


def windows(doc: Document, config, ids: OfficialIds, is_train: bool
            ) -> Iterator[Tuple[int, Dict[str, np.ndarray]]]:
  """Stage 2: (window index, features) of the windows kept; every value an int64 array."""
  seq_len, global_len = config.long_seq_len, config.global_seq_len
  question = doc.question_ids[:config.max_question_pieces]
  preamble = [ids.cls] + question + [ids.sep]
  n_pre = len(preamble)
  doc_len = seq_len - n_pre - 1
  # Google's ends are exclusive; -1 - 1 = -2 matches no token when there is no answer.
  short = (doc.sa_start, doc.sa_end - 1)
  long_ = (doc.la_start, doc.la_end - 1)
  cand_all = doc.candidate_ids
  rate, unanswerable_rate = config.null_window_keep_rate, config.unanswerable_keep_rate
  if unanswerable_rate < 0:   # Google's default: 4 x the rate of answered examples
    unanswerable_rate = 4.0 * rate

  @functools.lru_cache(maxsize=None)
  def candidate_bounds(c: int) -> Tuple[int, int]:
    """First and last document token of candidate c over the whole document (from its first
    piece to the end of that run of pieces)."""
    return (int(doc.token_pos[_first(cand_all, c)]), int(doc.token_pos[_last_of_run(cand_all, c)]))

  for w, start in enumerate(window_starts(len(doc.token_ids), doc_len, config.doc_stride)):
    piece_ids = doc.token_ids[start:start + doc_len]
    pad = doc_len - len(piece_ids)
    tail = [-1] * (pad + 1)
    token_ids = np.asarray(preamble + piece_ids.tolist() + [ids.sep] + [ids.pad] * pad, np.int64)
    candidate_ids = np.asarray([-1] * n_pre + cand_all[start:start + doc_len].tolist() + tail,
                               np.int64)                                                # [L]
    pos = np.asarray([-1] * n_pre + doc.token_pos[start:start + doc_len].tolist() + tail,
                     np.int64)                                                          # [L]
    breakpoints = np.zeros([seq_len], np.int64)
    breakpoints[seq_len - 1 - pad] = 1

    f = {"token_ids": token_ids, "candidate_ids": candidate_ids, "token_pos": pos,
         "long_breakpoints": breakpoints}
    sa = (_first(pos, short[0]), _last_of_run(pos, short[1]))
    la = (_first(pos, long_[0]), _last_of_run(pos, long_[1]))
    answer_type = doc.answer_type
    if (answer_type == SHORT and sa == (0, 0)) or (answer_type == LONG and la == (0, 0)):
      answer_type = NULL

    # Global tokens: CLS, Q + 1 question tokens, then one per run of equal candidate ids after
    # the preamble (the run of -1 after the document included), while fewer than G are used.
    changes = np.nonzero(candidate_ids[n_pre:] != candidate_ids[n_pre - 1:-1])[0] + n_pre
    changes = changes[:max(global_len - n_pre, 0)]                                      # [R]
    run_cands = candidate_ids[changes]                                                  # [R]
    is_cand = run_cands >= 0
    n_global = n_pre + len(changes)
    sentence_ids = np.arange(seq_len, dtype=np.int64)
    counts = np.zeros([seq_len], np.int64)
    counts[changes] = 1
    sentence_ids[n_pre:] = n_pre - 1 + np.cumsum(counts)[n_pre:]
    bounds = [candidate_bounds(int(c)) if ok else (0, 0) for c, ok in zip(run_cands, is_cand)]

    def global_row(head: List[int], runs, fill: int) -> np.ndarray:
      row = np.full([global_len], fill, np.int64)                                       # [G]
      values = list(head) + [int(v) for v in runs]
      row[:len(values)] = values
      return row

    f["sentence_ids"] = sentence_ids
    f["global_token_ids"] = global_row([ids.cls] + [GLOBAL_QUESTION_ID] * (n_pre - 1),
                                       np.where(is_cand, GLOBAL_SENTENCE_ID, 0), 0)
    f["global_breakpoints"] = np.zeros([global_len], np.int64)
    f["global_breakpoints"][n_global - 1] = 1
    f["global_token_pos_start"] = global_row([0] * n_pre, [b[0] for b in bounds], 0)
    f["global_token_pos_end"] = global_row([0] * n_pre, [b[1] for b in bounds], 0)
    f["global_candidate_ids"] = global_row([-1] * n_pre, run_cands, -1)
    f["global_type_id"] = global_row([TYPE_CLS] + [TYPE_QUESTION] * (n_pre - 1),
                                     np.full([len(changes)], TYPE_SENTENCE), 0)
    la_global = int(sentence_ids[la[0]]) if la != (0, 0) and la[0] >= 0 else 0
    for name, value in (("sa_start", sa[0]), ("sa_end", sa[1]), ("la_start", la[0]),
                        ("la_end", la[1]), ("answer_type", answer_type), ("la_global", la_global),
                        ("unique_ids", doc.example_id)):
      f[name] = np.asarray([value], np.int64)
    f["question_ids"] = np.asarray(doc.question_ids, np.int64)
    if answer_type == NULL and is_train:
      keep = unanswerable_rate if doc.answer_type == NULL else rate
      if not window_keep(doc.example_id, w, keep):
        continue
    yield w, f


def convert_example(example: NqExample, tokenizer: OffsetTokenizer, config, is_train: bool,
                    where: str = "") -> List[Dict[str, np.ndarray]]:
  """One example -> the feature dicts of its windows (training drops answerless ones at the
  keep rates; prediction keeps all)."""
  ids = official_ids(tokenizer.tokenizer)
  doc = document(example, tokenizer, ids, where, config.include_html_tokens,
                 config.html_tag_markers)
  return [f for _, f in windows(doc, config, ids, is_train)]


def feature_lengths(config) -> Dict[str, int]:
  """Length of every feature parsed for training (0 = a scalar)."""
  return feature_config.feature_lengths(config, LONG_FEATURES + GLOBAL_FEATURES + LABEL_FEATURES,
                                        scalar_names=LABEL_FEATURES)


def is_answer_window(f: Dict[str, np.ndarray]) -> bool:
  return int(f["answer_type"][0]) != NULL
