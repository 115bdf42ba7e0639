"""Model outputs of an example's windows -> its entry of the NQ predictions JSON, by the rules
of Google's etcmodel/models/nq (run_nq_lib.py process_prediction, eval_nq_lib.py with the run_nq.py
defaults: span_selection_method "joint", consider_answer_type, max_short_answer_len 32).

Per window and output, the 50 best long positions are scored (logit / logit at [CLS], a ratio
kept as Google computes it) and mapped to document tokens through token_pos; the pairs of all
windows are pooled, the answer type is the last window's, and the joint selection picks the
long answer and one short span. Every rule, its ties and Google's quirks:
docs/official_layouts/nq.md, "Prediction". An example without windows (its record could not be
converted) gets a null answer; non-finite scores become the lowest finite score, so the JSON
stays valid. Option `snap_long_answers_to_candidates` (not Google's) snaps the long answer to a
candidate (`snap_long_answer`): the scorer counts a long answer only when it equals a candidate
span exactly, and a start-to-end span rarely does.
"""

import dataclasses
import math
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from tasks.nq.data import NULL_SPAN, NqExample, Span

TOP_K = 50
MAX_SHORT_ANSWER_LEN = 32
SPAN_OUTPUTS = (("sa_start", "short_start_logits"), ("sa_end", "short_end_logits"),
                ("la_start", "long_start_logits"), ("la_end", "long_end_logits"))
ANSWER_TYPE_NAMES = ("null", "yes", "no", "long", "short")
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


Pairs = List[Tuple[float, int]]


def window_pairs(logits: np.ndarray, token_pos: np.ndarray, top_k: int = TOP_K) -> Pairs:
  """(score, document token) of the top_k positions of one window's logits [L]."""
  logits = np.asarray(logits, np.float32)
  order = np.argsort(-logits, kind="stable")[:top_k]                            # [k]
  with np.errstate(divide="ignore", invalid="ignore"):
    scores = logits[order].astype(np.float64) / np.float64(logits[0])            # [k]
  mapped = np.asarray(token_pos)[order]
  return [(float(s), int(t)) for s, t in zip(scores, mapped) if t >= 0]


def pool_windows(outputs: Sequence[WindowOutput],
                 token_pos: Sequence[np.ndarray], top_k: int = TOP_K) -> Dict[str, object]:
  """{sa_start, sa_end, la_start, la_end: pooled pairs, answer_type_logits: the last window's}."""
  pooled = {name: [] for name, _ in SPAN_OUTPUTS}
  pooled["answer_type_logits"] = None
  for out, pos in zip(outputs, token_pos):
    for name, field in SPAN_OUTPUTS:
      pooled[name].extend(window_pairs(getattr(out, field), pos, top_k))
    pooled["answer_type_logits"] = np.asarray(out.answer_type_logits, np.float32)
  return pooled


def _best(pairs: Pairs) -> Tuple[float, int]:
  return sorted(pairs, reverse=True)[0]


def _end(pairs: Pairs, start: int, width: Optional[int]) -> Optional[Tuple[float, int]]:
  """The first highest-scoring pair with start <= token (< start + width)."""
  best = None
  for score, token in pairs:
    if token >= start and (width is None or token - start < width):
      if best is None or score > best[0]:
        best = (score, token)
  return best


def _joint_span(starts: Pairs, ends: Pairs, width: Optional[int]) -> Tuple[float, int, int]:
  """(start score + end score, first token, last token) of one answer."""
  start_score, start = _best(starts) if starts else (0.0, 0)
  end = _end(ends, start, width)
  if end is None:
    if not ends:
      return 0.0, 0, 0
    end = _best(ends)
  return start_score + end[0], min(start, end[1]), max(start, end[1])


def joint_prediction(pooled: Dict[str, object], example_id) -> dict:
  """The prediction entry of one example (docs/official_layouts/nq.md, "Prediction")."""
  la_score, la_first, la_last = _joint_span(pooled["la_start"], pooled["la_end"], None)
  sa_score, sa_first, sa_last = _joint_span(pooled["sa_start"], pooled["sa_end"],
                                            MAX_SHORT_ANSWER_LEN)
  entry = {
      "example_id": example_id,
      "long_answer": Span(la_first, la_last + 1).to_json(),
      "long_answer_score": la_score,
      "short_answers": [Span(sa_first, sa_last + 1).to_json()],
      "short_answers_score": sa_score,
      "yes_no_answer": "NONE",
  }
  logits = pooled["answer_type_logits"]
  if logits is not None:
    kind = int(np.argmax(logits))   # the first maximum
    if kind in (1, 2):
      entry["short_answers"] = []
      entry["yes_no_answer"] = ANSWER_TYPE_NAMES[kind]
  return entry


def null_prediction(example_id) -> dict:
  return {"example_id": example_id, "long_answer": NULL_SPAN.to_json(),
          "long_answer_score": -np.inf, "short_answers": [], "short_answers_score": -np.inf,
          "yes_no_answer": "NONE"}


def snap_long_answer(entry: dict, example: NqExample) -> dict:
  """The long answer replaced by the smallest candidate (nested ones included) holding the whole
  predicted span, else by the top-level candidate holding its start token (unchanged when none
  does)."""
  start, end = entry["long_answer"]["start_token"], entry["long_answer"]["end_token"]
  holding = [c.span for c in example.candidates
             if c.span.start_token <= start and end <= c.span.end_token]
  if not holding:
    holding = [c.span for c in example.candidates
               if c.top_level and c.span.start_token <= start < c.span.end_token][:1]
  if holding:
    span = min(holding, key=lambda s: s.end_token - s.start_token)
    entry["long_answer"] = example.span(span.start_token, span.end_token).to_json()
  return entry


def decode_example(example_id, outputs: Sequence[WindowOutput], token_pos: Sequence[np.ndarray],
                   snap_to: Optional[NqExample] = None) -> dict:
  """One example's entry from its windows' outputs and token_pos [L] arrays; with `snap_to`
  (the example), the long answer snapped to a candidate (docs/official_layouts/nq.md)."""
  if not outputs:
    return null_prediction(example_id)
  entry = joint_prediction(pool_windows(outputs, token_pos), example_id)
  return snap_long_answer(entry, snap_to) if snap_to is not None else entry


def finite_scores(entries: List[dict]) -> List[dict]:
  """Replaces -inf (and nan) scores by the lowest finite score of the same key (0 if none)."""
  for key in ("long_answer_score", "short_answers_score"):
    finite = [e[key] for e in entries if math.isfinite(e[key])]
    lowest = min(finite) if finite else 0.0
    for e in entries:
      if not math.isfinite(e[key]):
        e[key] = lowest
  return entries


def finish(entries: List[dict]) -> dict:
  """The predictions JSON content (non-finite scores replaced)."""
  return {"predictions": finite_scores(entries)}
