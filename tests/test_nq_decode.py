"""NQ decoding on hand-made logits: pooled over windows, snapped to candidates, short answers
inside the long answer, yes/no, scores and the predictions JSON entries."""

import math

import numpy as np
import pytest

import nq_fixtures as nf
from tasks.nq import baselines
from tasks.nq import data
from tasks.nq import decode
from tasks.nq import features as fl
from test_nq_features import CONFIG, TOKENS

L = CONFIG.long_seq_len


def log_softmax(x):
  x = np.asarray(x, np.float64)
  return x - np.log(np.sum(np.exp(x)))


@pytest.fixture(name="setup")
def fixture_setup(tmp_path):
  example = data.parse_record(nf.record(7, "what is a", TOKENS, []), False, [])
  _, layout = fl.convert_example(example, nf.tokenizer(tmp_path), CONFIG, with_labels=False)
  assert layout.windows == [(0, 7), (4, 11), (8, 15), (12, 18)]
  return example, layout


def outputs(num_windows=4, types=(3.0, 0, 0, 0, 0)):
  return [decode.WindowOutput(np.array(types, float), *(np.zeros(L) for _ in range(4)))
          for _ in range(num_windows)]


def test_long_answer_is_the_best_whole_candidate_with_its_score(setup):
  example, layout = setup
  outs = outputs()
  w1 = outs[1]
  w1.answer_type_logits = np.array([0.0, -1.0, -1.0, 1.0, 2.0])
  w1.long_start_logits[3 + 1] = 5.0     # piece 5: "<Li>" of candidate 2
  w1.long_end_logits[3 + 4] = 5.0       # piece 8: "</Li>"
  w1.short_start_logits[3 + 1] = 10.0   # an html piece: never a short answer
  w1.short_start_logits[3 + 3] = 4.0    # piece 7: "cafe"
  w1.short_end_logits[3 + 3] = 4.0
  decoded = decode.decode_example(example, layout, outs)
  assert decoded.candidate_index == 2
  assert decoded.long_answer.to_json() == nf.span(TOKENS, 6, 10)
  types = log_softmax(w1.answer_type_logits)
  start = log_softmax(w1.long_start_logits[3:10])
  end = log_softmax(w1.long_end_logits[3:10])
  expected = start[1] + end[4] + math.log(1.0 - math.exp(types[0]))
  assert decoded.long_score == pytest.approx(expected, abs=1e-9)
  # Short: softmax over the window's non-html pieces (4..10 minus the tags: pieces 6, 7, 10).
  allowed = [3 + 2, 3 + 3, 3 + 6]
  s = log_softmax(w1.short_start_logits[allowed])
  e = log_softmax(w1.short_end_logits[allowed])
  assert decoded.short_answers == [example.span(8, 9)]
  assert decoded.short_score == pytest.approx(s[1] + e[1] + types[fl.SHORT], abs=1e-9)
  assert decoded.yes_no == "NONE"
  entry = decode.to_prediction(example, decoded)
  assert entry["long_answer"] == nf.span(TOKENS, 6, 10)
  assert entry["short_answers"] == [nf.span(TOKENS, 8, 9)]


def test_candidates_split_by_windows_are_never_chosen(setup):
  example, layout = setup
  outs = outputs(types=(0.0, 0, 0, 0, 0))
  outs[1].long_start_logits[3 + 0] = 30.0    # the <Ul> starts at piece 4 (window 1) ...
  outs[2].long_end_logits[3 + 4] = 30.0      # ... and ends at piece 12 (window 2)
  decoded = decode.decode_example(example, layout, outs)
  assert decoded.candidate_index != 1
  # With equal logits everywhere, the candidate of the window with the fewest pieces wins
  # (window 3 has 6 document pieces, the others 7): the last paragraph.
  assert decoded.candidate_index == 4


def test_yes_no_wins_over_spans(setup):
  example, layout = setup
  outs = outputs()
  outs[3].answer_type_logits = np.array([0.0, 0.0, 6.0, 1.0, 1.0])
  outs[3].long_start_logits[3 + 1] = 8.0     # piece 13: "<P>" of the last paragraph
  outs[3].long_end_logits[3 + 5] = 8.0       # piece 17: "</P>"
  decoded = decode.decode_example(example, layout, outs)
  assert decoded.candidate_index == 4
  assert (decoded.yes_no, decoded.short_answers) == ("NO", [])
  types = log_softmax(outs[3].answer_type_logits)
  assert decoded.short_score == pytest.approx(types[fl.NO])


def one_window(tmp_path, tokens, long_seq_len, doc_stride):
  """(example, layout, zero outputs favouring a short answer, question length) of a page that
  fits one window."""
  example = data.parse_record(nf.record(1, "a", tokens, []), False, [])
  config = fl.NqFeatureConfig(long_seq_len=long_seq_len, global_seq_len=4,
                              doc_stride=doc_stride, max_question_pieces=2)
  _, layout = fl.convert_example(example, nf.tokenizer(tmp_path), config, with_labels=False)
  assert layout.windows == [(0, len(tokens))]
  out = decode.WindowOutput(np.array([0.0, 0, 0, 0, 5]),
                            *(np.zeros(long_seq_len) for _ in range(4)))
  return example, layout, out, layout.question_len


def test_short_answers_are_at_most_max_pieces(tmp_path):
  tokens = ["<P>"] + ["a"] * 40 + ["</P>"]
  example, layout, out, q = one_window(tmp_path, tokens, 48, 40)
  out.short_start_logits[q + 1] = 9.0       # token 1 (the first "a")
  out.short_end_logits[q + 36] = 9.0        # token 36: a 36-piece span
  out.short_end_logits[q + 20] = 6.0        # token 20: a 20-piece span
  decoded = decode.decode_example(example, layout, [out])
  assert decoded.short_answers == [example.span(1, 21)]
  decoded = decode.decode_example(example, layout, [out], max_short_pieces=40)
  assert decoded.short_answers == [example.span(1, 37)]


def test_short_answers_hold_no_html_piece(tmp_path):
  # A table row: the best start and end sit in two cells, with the tags between them; the
  # short answer is the best span inside one cell.
  tokens = ["<Table>", "<Tr>", "<Td>", "a", "b", "</Td>", "<Td>", "c", "d", "</Td>", "</Tr>",
            "</Table>"]
  example, layout, out, q = one_window(tmp_path, tokens, 24, 16)
  out.long_start_logits[q + 0] = 9.0          # the table is the long answer
  out.long_end_logits[q + 11] = 9.0
  out.short_start_logits[q + 3] = 9.0         # "a" (first cell)
  out.short_end_logits[q + 8] = 9.0           # "d" (second cell): across "</Td> <Td>"
  out.short_end_logits[q + 4] = 7.0           # "b"
  out.short_start_logits[q + 7] = 6.0         # "c"
  decoded = decode.decode_example(example, layout, [out])
  assert decoded.long_answer.to_json() == nf.span(tokens, 0, 12)
  assert decoded.short_answers == [example.span(3, 5)]      # "a b": 9 + 7 beats 6 + 9
  out.short_end_logits[q + 4] = 0.0
  decoded = decode.decode_example(example, layout, [out])
  assert decoded.short_answers == [example.span(7, 9)]      # "c d": 6 + 9 beats 9 + 0


def test_predictions_cover_every_example_with_finite_scores(setup):
  example, layout = setup
  broken = data.NqExample(-3, "q", [], [], [], [], [], [], problem="empty document")
  simplified = data.NqExample(11, example.question, example.tokens, example.is_html,
                              [-1] * len(example.tokens), [-1] * len(example.tokens),
                              [data.Candidate(data.Span(c.span.start_token, c.span.end_token),
                                              c.top_level) for c in example.candidates], [],
                              has_bytes=False)
  outs = outputs()
  prediction = decode.make_predictions(
      [example, broken, simplified], {7: layout, 11: layout}, {7: outs, 11: outs})
  entries = prediction["predictions"]
  assert [e["example_id"] for e in entries] == [7, -3, 11]
  null = {"start_token": -1, "end_token": -1, "start_byte": -1, "end_byte": -1}
  assert entries[1]["long_answer"] == null and entries[1]["short_answers"] == []
  assert entries[1]["long_answer_score"] == min(entries[0]["long_answer_score"],
                                                entries[2]["long_answer_score"])
  assert entries[1]["short_answers_score"] == entries[0]["short_answers_score"]
  assert all(math.isfinite(e[k]) for e in entries for k in ("long_answer_score",
                                                              "short_answers_score"))
  assert entries[2]["long_answer"]["start_byte"] == -1
  assert entries[2]["long_answer"]["start_token"] == entries[0]["long_answer"]["start_token"]
  baseline = baselines.null_predictions([example, broken])["predictions"]
  assert all(e["long_answer"] == null and e["long_answer_score"] == 0.0 for e in baseline)
