"""NQ example -> ETC feature windows, and the map back (docs/task_layouts.md, "Natural Questions").

Document pieces: the tokens of the top-level long-answer candidates, in document order (tokens
outside every top-level candidate are dropped). An html token becomes one marker piece
(`html_marker_id`, an [unusedN] slot per tag name, opening and closing tags apart); a text token
becomes its word pieces. Every piece remembers its document token (`piece_token`).

Windows: the question pieces (at most `max_question_pieces`) come first in every window, then
document pieces [start, end). A window holds at most `long_seq_len - Q` pieces and at most as
many top-level candidates as fit in `global_seq_len - 1 - Q` global tokens; the next window
starts `doc_stride` pieces later (or where this one ended, if it ended earlier), so every piece
is in some window.

Layout of one window (Q question pieces, C candidates touching the window):

  global: [CLS] [Q]-token x Q (id 35) | one PARAGRAPH token (id 5) per candidate | padding
  ([CLS] is the tokenizer's: 101 in BERT uncased, "<unused_63>" in the ETC SentencePiece model.)
  long:   q_1 .. q_Q                  | the window's document pieces             | padding

  sentence_ids: question piece i -> global 1 + i; a document piece -> its top-level candidate's
    global token. ignore_hard_g2l_mask: CLS and the question tokens see every long token.
  segment ids: question 0; a document piece and its candidate's global token get the candidate's
    kind (1 paragraph, 2 table, 3 list, 4 other), from its first tag.

Labels (from the annotations; see `gold_label`): answer_type (0 null, 1 yes, 2 no, 3 long,
4 short); long_start/long_end, the long positions of the first and last piece of the gold long
answer when all of it is in the window (else the window is null); short_start/short_end likewise
for the first short span (only when the long answer is in the window); -1 when absent.
doc_mask [L] marks document pieces (where long answers start and end), short_mask [L] the
non-html ones (where short answers may).
"""

import dataclasses
import re
import zlib
from typing import Dict, List, Optional, Tuple

import numpy as np

from etc_realformer.data import vocab
from etc_realformer.data.span_tokenization import OffsetTokenizer
from tasks.common import feature_config
from tasks.nq.data import NULL_SPAN, Annotation, NqExample, Span

NULL, YES, NO, LONG, SHORT = range(5)
ANSWER_TYPES = ("null", "yes", "no", "long", "short")
# Global id of question tokens (the official converter's): "[unused34]" in BERT uncased,
# "<unused_34>" in the ETC SentencePiece model.
QUESTION_ID = 35
SEGMENT_QUESTION = 0
KIND_SEGMENTS = {"P": 1, "TABLE": 2, "TR": 2, "UL": 3, "OL": 3, "LI": 3, "DL": 3, "DT": 3,
                 "DD": 3}
SEGMENT_OTHER = 4
MODEL_FEATURES = ("token_ids", "segment_ids", "sentence_ids", "global_token_ids",
                  "global_segment_ids", "ignore_hard_g2l_mask")
LABEL_FEATURES = ("answer_type", "long_start", "long_end", "short_start", "short_end",
                  "doc_mask", "short_mask")
_SCALARS = ("answer_type", "long_start", "long_end", "short_start", "short_end")

# Html tags with a marker of their own; any other tag uses the "other" marker. Opening tags use
# [unused40 + i], closing tags [unused70 + i] (ids 41.. and 71..; [unusedN] has id N + 1).
HTML_TAGS = ("P", "TABLE", "TR", "TD", "TH", "UL", "OL", "LI", "DL", "DT", "DD", "H1", "H2",
             "H3", "H4", "H5", "H6", "DIV", "SPAN", "A", "B", "I", "BR", "HR", "IMG", "SUP",
             "SUB", "OTHER")
_OPEN_BASE, _CLOSE_BASE = 41, 71
_TAG = re.compile(r"^<\s*(/?)\s*([A-Za-z][A-Za-z0-9]*)")
# html token -> its marker id (pages repeat a few dozen tags; bounded for odd inputs).
_MARKER_IDS: Dict[str, int] = {}
_MAX_CACHED_MARKERS = 1 << 16


def html_marker_id(token: str) -> int:
  """The marker piece id of an html token ("<P>" -> 41, "</P>" -> 71, unknown tags -> other)."""
  marker = _MARKER_IDS.get(token)
  if marker is None:
    match = _TAG.match(token)
    closing, name = (match.group(1) == "/", match.group(2).upper()) if match else (False, "OTHER")
    index = HTML_TAGS.index(name) if name in HTML_TAGS else HTML_TAGS.index("OTHER")
    marker = (_CLOSE_BASE if closing else _OPEN_BASE) + index
    if len(_MARKER_IDS) < _MAX_CACHED_MARKERS:
      _MARKER_IDS[token] = marker
  return marker


def tag_name(token: str) -> str:
  match = _TAG.match(token)
  return match.group(2).upper() if match else ""


@dataclasses.dataclass
class NqFeatureConfig(feature_config.FeatureConfig):
  """Lengths and windowing of the converted features (long_seq_len 4096, global_seq_len 256)."""
  doc_stride: int = 2048
  max_question_pieces: int = 64
  include_html_tokens: bool = True
  null_window_keep_rate: float = 0.1   # training: the share of answerless windows kept
  # Official layout only: the keep rate of answerless windows of examples without any answer
  # (Google's include_unknown_rate_for_unanswerable); negative: 4 x null_window_keep_rate, as
  # Google's default.
  unanswerable_keep_rate: float = -1.0
  # Official layout options (off: Google's behaviour). html_tag_markers: an html token becomes
  # the marker of its tag name ("<P>", "</Table>", as the package layout writes them) instead of
  # Google's one open and one close id. snap_long_answers_to_candidates: the predicted long
  # answer becomes the top-level candidate holding its start token (official_decode.py).
  html_tag_markers: bool = False
  snap_long_answers_to_candidates: bool = False

  layouts = (feature_config.PACKAGE_LAYOUT, feature_config.OFFICIAL_LAYOUT)

  def check(self):
    self.check_question_room("max_question_pieces", "candidates", "the document")
    if self.layout == feature_config.OFFICIAL_LAYOUT:
      # [CLS] question [SEP] document [SEP]: Google's windows hold L - Q - 3 document pieces.
      room = self.long_seq_len - self.max_question_pieces - 3
      if self.max_question_pieces + 2 >= self.global_seq_len or room < 1:
        raise ValueError(f"max_question_pieces: {self.max_question_pieces} leaves no room for "
                         f"the document in long_seq_len {self.long_seq_len} / global_seq_len "
                         f"{self.global_seq_len} (official layout: Q + 3 long, Q + 2 global "
                         "tokens are taken)")
      if self.doc_stride > room:
        raise ValueError(f"doc_stride: {self.doc_stride} is longer than a window's document "
                         f"part ({room}): pieces would be skipped")
    elif self.doc_stride > self.long_seq_len - self.max_question_pieces:
      raise ValueError(f"doc_stride: {self.doc_stride} is longer than a window's document part "
                       f"({self.long_seq_len} - {self.max_question_pieces}): pieces would be "
                       "skipped")
    if self.layout != feature_config.OFFICIAL_LAYOUT:
      for name in ("html_tag_markers", "snap_long_answers_to_candidates"):
        if getattr(self, name):
          raise ValueError(f"{name}: an option of the official layout (the package layout "
                           "always writes tag markers and decodes whole candidates)")
    if not 0.0 <= self.null_window_keep_rate <= 1.0:
      raise ValueError(f"null_window_keep_rate: must be in [0, 1], got "
                       f"{self.null_window_keep_rate!r}")


def feature_lengths(config: NqFeatureConfig) -> Dict[str, int]:
  """Length of every stored feature (0 = a scalar)."""
  return feature_config.feature_lengths(config, MODEL_FEATURES + LABEL_FEATURES,
                                        scalar_names=_SCALARS)


@dataclasses.dataclass
class GoldLabel:
  """The answer a training window is labelled with (long None = null)."""
  long_answer: Optional[Span] = None
  short_answer: Optional[Span] = None   # the first short span
  yes_no: str = "NONE"


def gold_label(annotations: List[Annotation]) -> GoldLabel:
  """The label to train on, by the scorer's vote: with one annotation, that annotation; with
  several, a long (short) answer needs >= 2 annotators, and the first annotator giving one is
  taken. A yes/no counts as a short answer, as in the scorer."""
  if not annotations:
    return GoldLabel()
  needed = 1 if len(annotations) == 1 else 2
  with_long = [a for a in annotations if a.has_long]
  if len(with_long) < needed:
    return GoldLabel()
  with_short = [a for a in with_long if a.has_short]
  if len(with_short) >= needed:
    chosen = with_short[0]
    if chosen.yes_no_answer != "NONE":
      return GoldLabel(chosen.long_answer, None, chosen.yes_no_answer)
    return GoldLabel(chosen.long_answer, chosen.short_answers[0])
  return GoldLabel(with_long[0].long_answer)


@dataclasses.dataclass
class ExampleLayout:
  """Where the pieces of one example went, for labels and decoding.

  piece_token [P]: document token of each document piece (P pieces in all).
  piece_html [P]: whether the piece is an html marker.
  piece_top [P]: index (into `top_candidates`) of the top-level candidate holding the piece.
  top_candidates: indices into example.candidates of the top-level candidates kept, in order.
  candidate_pieces [num candidates, 2]: first and last piece of every candidate (top-level or
    nested), -1 when it has none.
  windows: [start, end) piece ranges; question_len: Q.
  """
  example_id: object
  piece_token: np.ndarray
  piece_html: np.ndarray
  piece_top: np.ndarray
  top_candidates: List[int]
  candidate_pieces: np.ndarray
  windows: List[Tuple[int, int]]
  question_len: int
  question_truncated: bool = False

  def position(self, window: int, piece: int) -> int:
    """Long position of document piece `piece` in window `window`."""
    return self.question_len + piece - self.windows[window][0]

  def span_pieces(self, span: Span) -> Tuple[int, int]:
    """First and last piece of the tokens of `span` (-1, -1 if none was kept)."""
    inside = np.nonzero((self.piece_token >= span.start_token) &
                        (self.piece_token < span.end_token))[0]
    return (int(inside[0]), int(inside[-1])) if len(inside) else (-1, -1)


def _top_level(example: NqExample) -> List[int]:
  """Indices of the top-level candidates in token order, without overlaps."""
  order = sorted((i for i, c in enumerate(example.candidates) if c.top_level),
                 key=lambda i: example.candidates[i].span.start_token)
  kept, last_end = [], 0
  for i in order:
    if example.candidates[i].span.start_token >= last_end:
      kept.append(i)
      last_end = example.candidates[i].span.end_token
  return kept


def document_pieces(example: NqExample, tokenizer: OffsetTokenizer, config: NqFeatureConfig):
  """-> (piece ids [P] int64, piece_token, piece_html, piece_top, top candidate indices)."""
  top = _top_level(example)
  spans = [example.candidates[c].span for c in top]
  widths = np.asarray([span.end_token - span.start_token for span in spans], np.int64)
  # [K] the document tokens kept, in order (the top-level candidates do not overlap), and the
  # index into `top` of the candidate holding each.
  token_index = (np.concatenate([np.arange(span.start_token, span.end_token) for span in spans])
                 if spans else np.zeros([0], np.int64))
  top_of = np.repeat(np.arange(len(top)), widths)
  is_html = np.asarray(example.is_html, bool)                      # [T]
  html_of = is_html[token_index]                                   # [K]
  if not config.include_html_tokens:
    token_index, top_of, html_of = token_index[~html_of], top_of[~html_of], html_of[~html_of]
  tokens = example.tokens
  text_index = token_index[~html_of]                               # [K_text]
  text_ids, text_owner = tokenizer.tokenize_each([tokens[i] for i in text_index.tolist()])
  # [K] pieces per kept token: one marker per html token, a text token its word pieces.
  counts = np.ones(len(token_index), np.int64)
  counts[~html_of] = np.bincount(text_owner, minlength=len(text_index))
  piece_html = np.repeat(html_of, counts)                          # [P]
  ids = np.empty(len(piece_html), np.int64)                        # [P]
  ids[~piece_html] = text_ids
  ids[piece_html] = [html_marker_id(tokens[i]) for i in token_index[html_of].tolist()]
  return (ids, np.repeat(token_index, counts).astype(np.int32), piece_html,
          np.repeat(top_of, counts).astype(np.int32), top)


def make_windows(piece_top: np.ndarray, config: NqFeatureConfig, question_len: int
                 ) -> List[Tuple[int, int]]:
  """[start, end) piece ranges covering all pieces (see the module docstring)."""
  capacity = config.long_seq_len - question_len
  max_candidates = config.global_seq_len - 1 - question_len
  n = len(piece_top)
  windows, start = [], 0
  while True:
    end = min(start + capacity, n)
    if end > start:
      # Cut the window where it would need more candidate tokens than fit.
      first = piece_top[start]
      over = np.nonzero(piece_top[start:end] >= first + max_candidates)[0]
      if len(over):
        end = start + int(over[0])
    windows.append((start, end))
    if end >= n:
      return windows
    start = start + min(config.doc_stride, end - start)


def _segment(example: NqExample, candidate: int) -> int:
  first = example.tokens[example.candidates[candidate].span.start_token]
  return KIND_SEGMENTS.get(tag_name(first), SEGMENT_OTHER) if first.startswith("<") \
      else SEGMENT_OTHER


def window_keep(example_id, window: int, rate: float) -> bool:
  """Deterministic down-sampling of answerless training windows (same choice every run)."""
  if rate >= 1.0:
    return True
  draw = zlib.crc32(f"{example_id}:{window}".encode()) / 2.0 ** 32
  return draw < rate


def convert_example(example: NqExample, tokenizer: OffsetTokenizer, config: NqFeatureConfig,
                    with_labels: bool) -> Tuple[List[Dict[str, np.ndarray]], ExampleLayout]:
  """One example -> (one feature dict per window, layout). Labels only when with_labels."""
  question = tokenizer.tokenize(example.question)
  q_ids = question.ids[:config.max_question_pieces]
  num_q = len(q_ids)
  ids, piece_token, piece_html, piece_top, top = document_pieces(example, tokenizer, config)
  candidate_pieces = np.full([len(example.candidates), 2], -1, np.int32)
  layout = ExampleLayout(example.example_id, piece_token, piece_html, piece_top, top,
                         candidate_pieces, [], num_q, len(question.ids) > num_q)
  if len(example.candidates):
    # piece_token is non-decreasing (the top-level candidates are in token order), so the pieces
    # of tokens [start, end) are the range the two bounds find (`ExampleLayout.span_pieces`).
    bounds = np.asarray([(c.span.start_token, c.span.end_token) for c in example.candidates],
                        np.int64)                                  # [num candidates, 2]
    first = np.searchsorted(piece_token, bounds[:, 0], side="left")
    last = np.searchsorted(piece_token, bounds[:, 1], side="left") - 1
    found = first <= last
    candidate_pieces[found, 0] = first[found]
    candidate_pieces[found, 1] = last[found]
  layout.windows = make_windows(piece_top, config, num_q)
  label = gold_label(example.annotations) if with_labels else None
  lengths = feature_lengths(config)
  features = []
  for w, (start, end) in enumerate(layout.windows):
    f = {name: np.zeros([n], np.int64) if n else np.int64(0) for name, n in lengths.items()}
    n = end - start
    f["token_ids"][:num_q] = q_ids
    f["token_ids"][num_q:num_q + n] = ids[start:end]
    f["sentence_ids"][:num_q] = np.arange(1, 1 + num_q)
    f["global_token_ids"][0] = tokenizer.tokenizer.cls_id   # the official converter's choice
    f["global_token_ids"][1:1 + num_q] = QUESTION_ID
    f["ignore_hard_g2l_mask"][:1 + num_q] = 1
    if n:
      first_top = int(piece_top[start])
      tops = range(first_top, int(piece_top[end - 1]) + 1)
      for t in tops:
        g = 1 + num_q + t - first_top
        f["global_token_ids"][g] = vocab.PARAGRAPH_ID
        f["global_segment_ids"][g] = _segment(example, top[t])
      owners = 1 + num_q + piece_top[start:end] - first_top
      f["sentence_ids"][num_q:num_q + n] = owners
      f["segment_ids"][num_q:num_q + n] = f["global_segment_ids"][owners]
      f["doc_mask"][num_q:num_q + n] = 1
      f["short_mask"][num_q:num_q + n] = ~piece_html[start:end]
    if with_labels:
      _label_window(f, layout, w, label)
    else:
      for name in LABEL_FEATURES:
        f.pop(name)
    features.append(f)
  return features, layout


def _label_window(f: Dict[str, np.ndarray], layout: ExampleLayout, window: int,
                  label: GoldLabel) -> None:
  start, end = layout.windows[window]
  for name in ("long_start", "long_end", "short_start", "short_end"):
    f[name] = np.int64(-1)
  f["answer_type"] = np.int64(NULL)
  if label.long_answer is None or label.long_answer == NULL_SPAN:
    return
  first, last = layout.span_pieces(label.long_answer)
  if first < start or last < 0 or last >= end:
    return                          # not (entirely) in this window
  f["long_start"] = np.int64(layout.position(window, first))
  f["long_end"] = np.int64(layout.position(window, last))
  if label.yes_no != "NONE":
    f["answer_type"] = np.int64(YES if label.yes_no == "YES" else NO)
    return
  f["answer_type"] = np.int64(LONG)
  if label.short_answer is not None:
    s_first, s_last = layout.span_pieces(label.short_answer)
    if s_first >= start and 0 <= s_last < end:
      f["short_start"] = np.int64(layout.position(window, s_first))
      f["short_end"] = np.int64(layout.position(window, s_last))
      f["answer_type"] = np.int64(SHORT)


def is_answer_window(f: Dict[str, np.ndarray]) -> bool:
  return int(f["answer_type"]) != NULL
