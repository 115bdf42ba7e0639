"""Model outputs of an example's windows -> one entry of the official NQ predictions JSON.

Scores are log-probabilities, so they compare across examples (the scorer sweeps a threshold
over them). For window w with answer-type log-probabilities t (null, yes, no, long, short):

  long answer: every candidate (top-level or nested) whose pieces all lie in w scores
      log_softmax(long_start)[first piece] + log_softmax(long_end)[last piece] + log(1 - p_null)
    (softmaxes over the window's document pieces). The best candidate over all windows is the
    long answer, so it is always exactly a candidate span: "snapped" by construction.
  short answer, in the windows holding that candidate: the best span i <= j of non-html pieces
    inside it, at most `max_short_pieces` long, scoring
      log_softmax(short_start)[i] + log_softmax(short_end)[j] + t[short],
    against t[yes] and t[no]; the best of the three is the short answer (a yes/no has no spans).

A document token span comes from the pieces' tokens; byte offsets are filled from
document_tokens (-1 in the simplified format). An example without windows or candidates gets a
null answer with score -inf, which `make_predictions` replaces by the lowest finite score.
"""

import dataclasses
import math
from typing import Dict, List, Optional, Sequence

import numpy as np

from tasks.nq.data import NULL_SPAN, NqExample, Span
from tasks.nq.features import LONG, NO, SHORT, YES, ExampleLayout

MAX_SHORT_PIECES = 30
OUTPUT_NAMES = ("answer_type_logits", "long_start_logits", "long_end_logits",
                "short_start_logits", "short_end_logits")


@dataclasses.dataclass
class WindowOutput:
  """The model's outputs for one window: answer_type_logits [5], the others [L]."""
  answer_type_logits: np.ndarray
  long_start_logits: np.ndarray
  long_end_logits: np.ndarray
  short_start_logits: np.ndarray
  short_end_logits: np.ndarray


def split_batch(outputs: Dict[str, np.ndarray]) -> List[WindowOutput]:
  """Batched outputs ([b, ...] arrays) -> one WindowOutput per window."""
  size = len(outputs["answer_type_logits"])
  return [WindowOutput(*(np.asarray(outputs[name][i], np.float32) for name in OUTPUT_NAMES))
          for i in range(size)]


def _log_softmax(x: np.ndarray) -> np.ndarray:
  x = np.asarray(x, np.float64)
  top = np.max(x)
  return x - top - np.log(np.sum(np.exp(x - top)))


@dataclasses.dataclass
class Decoded:
  """The answer of one example, before formatting."""
  long_answer: Span = NULL_SPAN
  long_score: float = -math.inf
  short_answers: List[Span] = dataclasses.field(default_factory=list)
  short_score: float = -math.inf
  yes_no: str = "NONE"
  candidate_index: int = -1


def decode_example(example: NqExample, layout: Optional[ExampleLayout],
                   outputs: Sequence[WindowOutput],
                   max_short_pieces: int = MAX_SHORT_PIECES) -> Decoded:
  """The best long answer (a candidate) and short answer / yes-no of one example."""
  if layout is None or not outputs or not example.candidates:
    return Decoded()
  q = layout.question_len
  first, last = layout.candidate_pieces[:, 0], layout.candidate_pieces[:, 1]   # [C]
  per_window = []
  best = (-math.inf, -1)
  for w, ((start, end), out) in enumerate(zip(layout.windows, outputs)):
    n = end - start
    types = _log_softmax(out.answer_type_logits)                                  # [5]
    if n == 0:
      per_window.append(None)
      continue
    long_start = _log_softmax(out.long_start_logits[q:q + n])                     # [n]
    long_end = _log_softmax(out.long_end_logits[q:q + n])
    answer = np.logaddexp.reduce(types[[YES, NO, LONG, SHORT]])
    per_window.append((types, out))
    inside = np.nonzero((first >= start) & (last < end) & (first >= 0))[0]
    if len(inside):
      scores = long_start[first[inside] - start] + long_end[last[inside] - start] + answer
      k = int(np.argmax(scores))
      if scores[k] > best[0]:
        best = (float(scores[k]), int(inside[k]))
  score, c = best
  if c < 0:
    return Decoded()
  candidate = example.candidates[c]
  decoded = Decoded(example.span(candidate.span.start_token, candidate.span.end_token), score,
                    candidate_index=c)
  c_first, c_last = int(first[c]), int(last[c])
  for w, item in enumerate(per_window):
    start, end = layout.windows[w]
    if item is None or not (start <= c_first and c_last < end):
      continue
    types, out = item
    for kind, value in ((YES, "YES"), (NO, "NO")):
      if types[kind] > decoded.short_score:
        decoded.short_score, decoded.yes_no, decoded.short_answers = float(types[kind]), value, []
    span = _best_short_span(layout, w, out, c_first, c_last, max_short_pieces)
    if span is not None and span[0] + types[SHORT] > decoded.short_score:
      i, j = span[1], span[2]
      decoded.short_score = float(span[0] + types[SHORT])
      decoded.yes_no = "NONE"
      decoded.short_answers = [example.span(int(layout.piece_token[i]),
                                            int(layout.piece_token[j]) + 1)]
  return decoded


def _best_short_span(layout: ExampleLayout, window: int, out: WindowOutput, c_first: int,
                     c_last: int, max_pieces: int):
  """(score, first piece, last piece) of the best short span inside pieces c_first..c_last."""
  start, end = layout.windows[window]
  q = layout.question_len
  n = end - start
  allowed = ~layout.piece_html[start:end]                                         # [n]
  if not allowed.any():
    return None
  neg = -1e30
  s_logits = np.where(allowed, out.short_start_logits[q:q + n], neg)
  e_logits = np.where(allowed, out.short_end_logits[q:q + n], neg)
  s_lp = _log_softmax(s_logits)[c_first - start:c_last - start + 1]              # [m]
  e_lp = _log_softmax(e_logits)[c_first - start:c_last - start + 1]
  ok = allowed[c_first - start:c_last - start + 1]
  m = len(s_lp)
  width = min(max_pieces, m)
  # scores[i, d] = span from piece i to piece i + d.                             # [m, width]
  ends = np.arange(m)[:, None] + np.arange(width)[None, :]
  # [m + 1] html pieces before each piece: a span holds none (no tag inside it, as in the gold
  # short answers, not only none at its ends).
  html_before = np.concatenate([[0], np.cumsum(~ok)])
  valid = (ends < m) & (html_before[np.minimum(ends, m - 1) + 1] == html_before[:m, None])
  scores = np.where(valid, s_lp[:, None] + e_lp[np.minimum(ends, m - 1)], -np.inf)
  flat = int(np.argmax(scores))
  i, d = divmod(flat, width)
  if not np.isfinite(scores[i, d]):
    return None
  # A span of a text token's pieces maps to whole document tokens.
  return float(scores[i, d]), c_first + i, c_first + i + d


def to_prediction(example: NqExample, decoded: Decoded) -> dict:
  """One entry of the predictions JSON (both score keys always present)."""
  return {
      "example_id": example.example_id,
      "long_answer": decoded.long_answer.to_json(),
      "long_answer_score": decoded.long_score,
      "short_answers": [s.to_json() for s in decoded.short_answers],
      "short_answers_score": decoded.short_score,
      "yes_no_answer": decoded.yes_no,
  }


def finite_scores(entries: List[dict]) -> List[dict]:
  """Replaces -inf (and nan) scores by the lowest finite score of the same key (0 if none)."""
  for key in ("long_answer_score", "short_answers_score"):
    finite = [e[key] for e in entries if math.isfinite(e[key])]
    lowest = min(finite) if finite else 0.0
    for e in entries:
      if not math.isfinite(e[key]):
        e[key] = lowest
  return entries


def make_predictions(examples: Sequence[NqExample], layouts: Dict[object, ExampleLayout],
                     outputs: Dict[object, List[WindowOutput]],
                     max_short_pieces: int = MAX_SHORT_PIECES) -> dict:
  """The predictions JSON content: one entry per example, in input order."""
  entries = [to_prediction(e, decode_example(e, layouts.get(e.example_id),
                                             outputs.get(e.example_id, []), max_short_pieces))
             for e in examples]
  return {"predictions": finite_scores(entries)}
