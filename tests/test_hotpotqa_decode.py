"""HotpotQA decoding: supporting facts by threshold, spans inside them, yes/no, every id."""

import numpy as np

import hotpot_fixtures as hf
from tasks.hotpotqa import decode
from tasks.hotpotqa import features as fl

CONFIG = fl.HotpotFeatureConfig(long_seq_len=32, global_seq_len=16, max_question_pieces=8)


def _outputs(sp=None, begin=None, end=None, answer_type=0):
  """Hand-set logits: sp {global position: logit}, begin/end {long position: logit}."""
  out = decode.ExampleOutput(np.zeros(3), np.full(16, -5.0), np.zeros(32), np.zeros(32))
  out.answer_type_logits[answer_type] = 4.0
  for position, value in (sp or {}).items():
    out.sp_logits[position] = value
  for position, value in (begin or {}).items():
    out.begin_logits[position] = value
  for position, value in (end or {}).items():
    out.end_logits[position] = value
  return out


def _layout(tmp_path, example):
  return fl.convert_example(example, hf.tokenizer(tmp_path), CONFIG, with_labels=False)[1]


def test_span_is_restricted_to_predicted_supporting_sentences(tmp_path):
  ex = hf.example()
  layout = _layout(tmp_path, ex)
  # Sentence tokens: global 8 (Ann, 0), 9 (Ann, 1), 12 (Zoë, 0). The best span overall is
  # "kind" (long 14) in (Ann, 1), but only (Ann, 0) and (Zoë, 0) pass the threshold.
  out = _outputs(sp={8: 2.0, 9: -2.0, 12: 1.0}, begin={14: 9.0, 17: 3.0, 10: 1.0},
                 end={14: 9.0, 17: 3.0, 10: 2.0})
  answer, sp = decode.decode_example(ex, layout, out, threshold=0.5)
  assert sp == [["Ann", 0], ["Zoë", 0]]
  assert answer == "Zoë"            # original characters, accent kept
  # A lower threshold lets (Ann, 1) in, and then "kind" wins.
  answer, sp = decode.decode_example(ex, layout, out, threshold=0.1)
  assert answer == "kind" and sp == [["Ann", 0], ["Ann", 1], ["Zoë", 0]]


def test_span_never_crosses_a_sentence_or_goes_backwards(tmp_path):
  ex = hf.example()
  layout = _layout(tmp_path, ex)
  # begin only at "1921" (10); end peaks at "ann" of the next sentence (12) and before the
  # begin (9): the best legal span is 10..11.
  out = _outputs(sp={8: 3.0, 9: 3.0}, begin={i: -10.0 for i in range(32)},
                 end={12: 9.0, 9: 9.0, 11: 1.0})
  out.begin_logits[10] = 5.0
  answer, _ = decode.decode_example(ex, layout, out)
  assert answer == "1921."


def test_max_answer_length(tmp_path):
  ex = hf.example()
  layout = _layout(tmp_path, ex)
  out = _outputs(sp={8: 3.0}, begin={6: 5.0}, end={11: 5.0, 7: 1.0})
  assert decode.decode_example(ex, layout, out)[0] == "Ann was born in 1921."
  assert decode.decode_example(ex, layout, out, max_answer_pieces=2)[0] == "Ann was"


def test_yes_no_and_at_least_one_supporting_fact(tmp_path):
  ex = hf.example()
  layout = _layout(tmp_path, ex)
  out = _outputs(sp={8: -1.0, 9: -3.0, 12: -0.5}, answer_type=1)
  assert decode.decode_example(ex, layout, out) == ("yes", [["Zoë", 0]])
  out = _outputs(answer_type=2)
  assert decode.decode_example(ex, layout, out)[0] == "no"


def test_every_id_is_predicted(tmp_path):
  good = hf.example(qas_id="a")
  empty = hf.example(qas_id="b", context=[])
  layout = _layout(tmp_path, good)
  out = _outputs(sp={8: 3.0}, begin={6: 5.0}, end={6: 5.0})
  prediction = decode.make_predictions([good, empty], {"a": layout}, {"a": out})
  assert prediction == {"answer": {"a": "Ann", "b": ""}, "sp": {"a": [["Ann", 0]], "b": []}}
  assert all(isinstance(i, int) for _, i in prediction["sp"]["a"])


def test_threshold_is_chosen_on_dev(tmp_path):
  ex = hf.example()
  layout = _layout(tmp_path, ex)
  # sigmoid(0.0) = 0.5 for (Zoë, 0): only thresholds <= 0.5 recover both gold facts, and
  # sigmoid(-1.0) = 0.27 for (Ann, 1): thresholds <= 0.25 add a wrong one.
  out = _outputs(sp={8: 3.0, 9: -1.0, 12: 0.0}, begin={6: 5.0}, end={6: 5.0})
  gold = [hf.raw_record()]
  threshold, table = decode.choose_threshold([ex], {"q1": layout}, {"q1": out}, gold)
  assert threshold == 0.5
  assert table[0.5]["joint_em"] == 1.0 and table[0.55]["sp_em"] == 0.0
  assert table[0.25]["sp_prec"] == 2 / 3
