"""Decoding official-layout outputs by the rules of Google's HotpotQA prediction code, on
hand-made model outputs whose prediction follows from those rules."""

import numpy as np
import pytest

import hotpot_fixtures as hf
from etc_realformer.data.span_tokenization import OffsetTokenizer
from tasks.hotpotqa import features as fl
from tasks.hotpotqa import decode as od
from tasks.hotpotqa.decode import ExampleOutput
from tasks.hotpotqa.features import HotpotFeatureConfig
from tasks.hotpotqa.inference import Predictor
from tasks.hotpotqa.text import TextTokenizer

LOW, HIGH = -20.0, 20.0


@pytest.fixture(name="case")
def fixture_case(tmp_path):
  """(example, official prediction features, tokenizer) of the shared hand-made example.

  global: 0 [CLS], 1-5 question, 6 PARAGRAPH Ann, 7 title, 8 sentence 0, 9 sentence 1,
  10 PARAGRAPH Zoë, 11 title, 12 sentence 0."""
  tokenizer = hf.tokenizer(tmp_path).tokenizer
  example = hf.example()
  f = fl.convert_example(example, TextTokenizer(tokenizer), 64, 24, is_training=False)
  fl.pop_stats(f)
  assert f["global_sentence_ids"][:13].tolist() == [-1] * 8 + [0, 1, -1, -1, 0]
  return example, f, tokenizer


def _output(f, sp=(), begin=(), end=(), answer_type=0):
  """Logits: sp probability ~1 on `sp`, ~0 elsewhere; begin/end logits as given
  ({position: logit}), LOW elsewhere."""
  sp_logits = np.full(len(f["global_token_ids"]), LOW, np.float32)
  sp_logits[list(sp)] = HIGH
  begin_logits = np.full(len(f["long_token_ids"]), LOW, np.float32)
  end_logits = begin_logits.copy()
  for logits, given in ((begin_logits, begin), (end_logits, end)):
    for position, value in dict(given).items():
      logits[position] = value
  types = np.zeros(3, np.float32)
  types[answer_type] = 5.0
  return ExampleOutput(types, sp_logits, begin_logits, end_logits)


def _positions(f, word):
  return np.nonzero(f["long_token_ids"] == hf.piece_id(word))[0].tolist()


def test_supporting_facts_are_sentence_tokens_over_the_threshold(case):
  example, f, tokenizer = case
  answer, sp = od.decode_example(example, f, _output(f, sp=[6, 7, 9, 12], answer_type=1),
                                 tokenizer)
  assert answer == "yes"
  assert sp == [["Ann", 1], ["Zoë", 0]]           # PARAGRAPH and title tokens give nothing
  answer, sp = od.decode_example(example, f, _output(f, answer_type=2), tokenizer)
  assert (answer, sp) == ("no", [])               # no "at least one" rule
  # threshold 0.0 takes every sentence token (and every token with sigmoid >= 0)
  _, sp = od.decode_example(example, f, _output(f), tokenizer, threshold=0.0)
  assert sp == [["Ann", 0], ["Ann", 1], ["Zoë", 0]]


def test_span_must_lie_in_one_supporting_sentence(case):
  example, f, tokenizer = case
  ann_1921 = _positions(f, "1921")[0]
  zoe_1930 = _positions(f, "1930")[0]
  # The best pair (1930) is in a sentence not predicted supporting: the 1921 one wins.
  output = _output(f, sp=[8], begin={zoe_1930: 9.0, ann_1921: 5.0},
                   end={zoe_1930: 9.0, ann_1921: 5.0})
  assert od.decode_example(example, f, output, tokenizer) == ("1921", [["Ann", 0]])
  # Begin in one sentence, end in another: that pair is out. Of the pairs left (one strong and
  # one weak end each, equal scores) the larger begin wins: 1930 alone.
  output = _output(f, sp=[8, 12], begin={ann_1921: 9.0}, end={zoe_1930: 9.0})
  spans = od.candidate_spans(f, output, od.supporting_mask(output, 0.5))
  assert (ann_1921, zoe_1930) not in [s for _, s in spans]
  assert od.decode_example(example, f, output, tokenizer)[0] == "1930"
  # Nothing predicted supporting: no candidate, empty answer.
  output = _output(f, begin={ann_1921: 9.0}, end={ann_1921: 9.0})
  assert od.decode_example(example, f, output, tokenizer) == ("", [])
  # begin after end, or longer than the limit: never a candidate.
  output = _output(f, sp=[8], begin={ann_1921: 9.0}, end={ann_1921 - 2: 9.0})
  spans = od.candidate_spans(f, output, od.supporting_mask(output, 0.5))
  assert spans and (ann_1921, ann_1921 - 2) not in [s for _, s in spans]
  spans = od.candidate_spans(f, _output(f, sp=[8], begin={7: 9.0}, end={12: 9.0}),
                             od.supporting_mask(_output(f, sp=[8]), 0.5), max_answer_pieces=5)
  assert (7, 12) not in [s for _, s in spans]


def test_span_text_is_the_original_words_narrowed_to_the_pieces(case):
  example, f, tokenizer = case
  ann = _positions(f, "ann")
  # the whole first sentence of Ann, from "Ann" to "1921" (the unigram "1921." narrowed)
  output = _output(f, sp=[8], begin={ann[1]: 9.0}, end={_positions(f, "1921")[0]: 9.0})
  assert od.decode_example(example, f, output, tokenizer)[0] == "Ann was born in 1921"
  # a title span (type 2) is allowed when the title token is predicted supporting
  zoe = _positions(f, "zoe")[0]
  output = _output(f, sp=[11], begin={zoe: 9.0}, end={zoe: 9.0})
  assert od.decode_example(example, f, output, tokenizer)[0] == "Zoë"


def test_question_pieces_are_never_answers(case):
  example, f, tokenizer = case
  born = _positions(f, "born")
  output = _output(f, sp=list(range(13)), begin={born[0]: 15.0, born[1]: 1.0},
                   end={born[0]: 15.0, born[1]: 1.0})
  assert f["long_token_type_ids"][born[0]] == fl.QUESTION_TYPE
  assert od.decode_example(example, f, output, tokenizer)[0] == "born"
  span = max(od.candidate_spans(f, output, od.supporting_mask(output, 0.5)))[1]
  assert span == (born[1], born[1])


def test_top_k_keeps_the_lower_position_on_a_tie():
  assert od.top_k(np.array([0.1, 0.3, 0.3, 0.2]), 3).tolist() == [1, 2, 3]


def test_final_text_alignment():
  assert od.final_text("steve smith", "Steve Smith's") == "Steve Smith"
  assert od.final_text("1895", "(1895-1943).") == "1895"
  assert od.final_text("cafe", "Café") == "Café"
  assert od.final_text("zzz", "Café") == "Café"             # not found: the words themselves
  assert od.pieces_text(["ann", "##e", "was"]) == "anne was"


def test_threshold_is_the_first_with_the_best_joint_f1(case):
  example, f, tokenizer = case
  gold = [{"_id": "q1", "answer": "yes", "supporting_facts": [["Ann", 0], ["Zoë", 0]]}]
  output = _output(f, answer_type=1)
  output.sp_logits[[8, 12]] = 1.0        # sigmoid 0.73: kept up to threshold 0.7
  output.sp_logits[9] = -1.0             # sigmoid 0.27: kept up to 0.2
  threshold, table = od.choose_threshold([example], {"q1": f}, {"q1": output}, gold, tokenizer)
  assert threshold == pytest.approx(0.3)
  assert list(table) == pytest.approx(list(od.THRESHOLDS))
  assert table[threshold]["sp_f1"] == 1.0


def test_min_supporting_facts(case):
  example, f, tokenizer = case
  zoe_1930 = _positions(f, "1930")[0]
  # No sentence passes 0.5; the PARAGRAPH and title tokens are more probable but no facts.
  output = _output(f, answer_type=0, begin={zoe_1930: 9.0}, end={zoe_1930: 9.0})
  output.sp_logits[[8, 9, 12]] = [-3.0, -2.0, -1.0]
  output.sp_logits[[6, 7]] = -0.5
  assert od.decode_example(example, f, output, tokenizer) == ("", [])     # Google's
  # At least one: the most probable sentence (Zoë's), which may then own the answer.
  assert od.decode_example(example, f, output, tokenizer, min_supporting_facts=1) == (
      "1930", [["Zoë", 0]])
  _, sp = od.decode_example(example, f, output, tokenizer, min_supporting_facts=2)
  assert sp == [["Ann", 1], ["Zoë", 0]]                 # in global order
  _, sp = od.decode_example(example, f, output, tokenizer, min_supporting_facts=5)
  assert sp == [["Ann", 0], ["Ann", 1], ["Zoë", 0]]     # no more than there are
  # Enough pass the threshold: nothing is added.
  output.sp_logits[[8, 9]] = HIGH
  _, sp = od.decode_example(example, f, output, tokenizer, min_supporting_facts=1)
  assert sp == [["Ann", 0], ["Ann", 1]]


def test_threshold_search_and_predictor_honour_min_supporting_facts(case):
  example, f, tokenizer = case
  gold = [{"_id": "q1", "answer": "yes", "supporting_facts": [["Ann", 0]]}]
  output = _output(f, answer_type=1)
  output.sp_logits[8] = 1.0               # sigmoid 0.73: passes up to threshold 0.7
  for minimum, sp_f1_at_1 in ((0, 0.0), (1, 1.0)):
    _, table = od.choose_threshold([example], {"q1": f}, {"q1": output}, gold, tokenizer,
                                   min_supporting_facts=minimum)
    assert table[1.0]["sp_f1"] == sp_f1_at_1
    predictor = Predictor(None, HotpotFeatureConfig(layout="official",
                                                    min_supporting_facts=minimum),
                          OffsetTokenizer(tokenizer))
    _, table = predictor.choose_threshold([example], {"q1": f}, {"q1": output}, gold)
    assert table[1.0]["sp_f1"] == sp_f1_at_1
    prediction = predictor.make_predictions([example], {"q1": f}, {"q1": output}, 1.0)
    assert prediction["sp"]["q1"] == [["Ann", 0]][:minimum]


def test_examples_without_output_get_empty_predictions(case):
  example, _, tokenizer = case
  assert od.make_predictions([example], {}, {}, tokenizer) == {"answer": {"q1": ""},
                                                              "sp": {"q1": []}}
