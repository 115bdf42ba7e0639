"""Google's NQ prediction rules (tasks.nq.decode) on hand-made window outputs."""

import numpy as np

from tasks.nq import decode as od
from tasks.nq.decode import WindowOutput

L = 8


def _window(la_start=(), la_end=(), sa_start=(), sa_end=(), cls=1.0, types=(0, 0, 0, 1, 0)):
  """Logits [L]: `cls` at position 0, 0.5 elsewhere, and (position, logit) pairs given."""
  def logits(pairs):
    x = np.full([L], 0.5, np.float32)
    x[0] = cls
    for p, v in pairs:
      x[p] = v
    return x
  return WindowOutput(np.asarray(types, np.float32), logits(la_start), logits(la_end),
                      logits(sa_start), logits(sa_end))


# token_pos of two windows over a page: [CLS] q [SEP] | 4 pieces | [SEP] -> L = 8.
POS = [np.array([-1, -1, -1, 10, 11, 11, 12, -1]), np.array([-1, -1, -1, 12, 13, 14, 15, -1])]


def test_pairs_are_logit_over_cls_logit_and_skip_unmapped_positions():
  out = _window(la_start=[(3, 4.0), (1, 9.0)], cls=2.0)
  pairs = od.window_pairs(out.long_start_logits, POS[0], top_k=3)
  # Top 3: position 1 (9.0, question: dropped), 3 (4.0), 0 ([CLS], dropped).
  assert pairs == [(2.0, 10)]


def test_joint_selection_over_windows():
  first = _window(la_start=[(3, 5.0)], la_end=[(4, 4.0), (6, 3.0)],
                  sa_start=[(4, 3.0)], sa_end=[(5, 6.0)], types=(0, 0, 0, 0, 5))
  second = _window(la_start=[(3, 4.0)], la_end=[(6, 4.5)],
                   sa_start=[(5, 3.5)], sa_end=[(3, 9.0)], types=(0, 0, 0, 0, 1))
  entry = od.decode_example(42, [first, second], POS)
  # Long start: token 10 (score 5); end: the best token >= 10 -> token 15 (4.5).
  assert entry["long_answer"] == {"start_token": 10, "end_token": 16, "start_byte": -1,
                                  "end_byte": -1}
  assert entry["long_answer_score"] == 9.5
  # Short start: token 14 (3.5); the ends at tokens 12 (9.0) and 11 (6.0) lie before it; of the
  # 0.5 fillers at tokens 14 and 15 the first seen wins: token 14.
  assert entry["short_answers"] == [{"start_token": 14, "end_token": 15, "start_byte": -1,
                                     "end_byte": -1}]
  assert entry["short_answers_score"] == 4.0
  assert entry["yes_no_answer"] == "NONE"


def test_answer_type_comes_from_the_last_window():
  yes = _window(types=(0, 9, 0, 0, 0))
  plain = _window(types=(0, 0, 0, 0, 9))
  assert od.decode_example(1, [plain, yes], POS)["yes_no_answer"] == "yes"
  entry = od.decode_example(1, [yes, plain], POS)
  assert entry["yes_no_answer"] == "NONE" and len(entry["short_answers"]) == 1
  no = od.decode_example(1, [plain, _window(types=(0, 0, 9, 0, 0))], POS)
  assert no["yes_no_answer"] == "no" and no["short_answers"] == []
  # A "long" answer type keeps the short span (Google's code sets a misspelled key).
  assert len(od.decode_example(1, [_window(types=(0, 0, 0, 9, 0))], POS)["short_answers"]) == 1


def test_negative_cls_logit_turns_the_order_around():
  out = _window(la_start=[(3, -4.0), (4, -1.0)], la_end=[(6, -1.0)], cls=-2.0)
  entry = od.decode_example(1, [out], POS[:1])
  # Scores: position 3 -> 2.0, position 4 -> 0.5, fillers 0.5 / -2 = -0.25: token 10 wins.
  assert entry["long_answer"]["start_token"] == 10


def test_long_end_before_every_start_falls_back_to_the_best_end_in_order():
  out = _window(la_start=[(6, 9.0)], la_end=[(3, 9.0)])
  pooled = od.pool_windows([out], POS[:1], top_k=2)
  # top 2 of la_end: position 3 (token 10) and position 0 ([CLS], dropped): no end >= 12.
  entry = od.joint_prediction(pooled, 1)
  assert entry["long_answer"]["start_token"] == 10 and entry["long_answer"]["end_token"] == 13


def test_short_end_must_be_within_32_tokens():
  pooled = {"la_start": [], "la_end": [], "sa_start": [(1.0, 100)],
            "sa_end": [(5.0, 140), (2.0, 131), (1.0, 120)], "answer_type_logits": None}
  entry = od.joint_prediction(pooled, 1)
  assert entry["short_answers"][0]["start_token"] == 100
  assert entry["short_answers"][0]["end_token"] == 132
  # No end within reach: the best end overall, spans put in order.
  pooled["sa_end"] = [(5.0, 90)]
  assert od.joint_prediction(pooled, 1)["short_answers"][0] == {
      "start_token": 90, "end_token": 101, "start_byte": -1, "end_byte": -1}
  # Nothing at all: zeros.
  assert od.joint_prediction(pooled, 1)["long_answer"]["end_token"] == 1


def test_ties_go_to_the_later_token_for_starts_and_the_first_seen_for_ends():
  pooled = {"la_start": [(1.0, 5), (1.0, 9)], "la_end": [(2.0, 12), (2.0, 11)],
            "sa_start": [], "sa_end": [], "answer_type_logits": None}
  entry = od.joint_prediction(pooled, 1)
  assert entry["long_answer"]["start_token"] == 9 and entry["long_answer"]["end_token"] == 13


def test_examples_without_windows_get_a_null_answer_with_a_finite_score():
  result = od.finish([od.decode_example(1, [_window()], POS[:1]), od.decode_example(2, [], [])])
  null = result["predictions"][1]
  assert null["long_answer"]["start_token"] == -1 and null["short_answers"] == []
  assert np.isfinite(null["long_answer_score"]) and np.isfinite(null["short_answers_score"])


def test_snapping_replaces_the_long_answer_by_the_candidate_holding_it():
  from tasks.nq.data import Candidate, NqExample, Span   # pylint: disable=import-outside-toplevel
  tokens = [f"w{i}" for i in range(20)]
  example = NqExample(example_id=42, question="q", tokens=tokens, is_html=[False] * 20,
                      start_bytes=[-1] * 20, end_bytes=[-1] * 20, annotations=[], has_bytes=False,
                      candidates=[Candidate(Span(8, 12), True), Candidate(Span(10, 11), False),
                                  Candidate(Span(12, 18), True)])
  first = _window(la_start=[(3, 5.0)], la_end=[(4, 4.0), (6, 3.0)])
  second = _window(la_start=[(3, 4.0)], la_end=[(6, 4.5)])
  plain = od.decode_example(42, [first, second], POS)
  assert (plain["long_answer"]["start_token"], plain["long_answer"]["end_token"]) == (10, 16)
  # Token 10 lies in the top-level candidate [8, 12) (and in the nested [10, 11), skipped).
  snapped = od.decode_example(42, [first, second], POS, snap_to=example)
  assert snapped["long_answer"] == {"start_token": 8, "end_token": 12, "start_byte": -1,
                                    "end_byte": -1}
  assert snapped["long_answer_score"] == plain["long_answer_score"]
  assert snapped["short_answers"] == plain["short_answers"]
  # The smallest candidate holding the whole span wins, nested or not: [10, 16) lies in
  # [9, 17) (nested) and [8, 18) (top level).
  nested = NqExample(example_id=42, question="q", tokens=tokens, is_html=[False] * 20,
                     start_bytes=[-1] * 20, end_bytes=[-1] * 20, annotations=[],
                     has_bytes=False, candidates=[Candidate(Span(8, 18), True),
                                                  Candidate(Span(9, 17), False),
                                                  Candidate(Span(10, 12), False)])
  got = od.decode_example(42, [first, second], POS, snap_to=nested)["long_answer"]
  assert (got["start_token"], got["end_token"]) == (9, 17)
  # A start outside every top-level candidate keeps Google's span.
  outside = NqExample(example_id=42, question="q", tokens=tokens, is_html=[False] * 20,
                      start_bytes=[-1] * 20, end_bytes=[-1] * 20, annotations=[], has_bytes=False,
                      candidates=[Candidate(Span(0, 5), True)])
  assert od.decode_example(42, [first, second], POS, snap_to=outside) == plain
