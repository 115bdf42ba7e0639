"""HotpotQA metrics: hand-computed values for every scoring rule, averaging and errors."""

import json
import os
import subprocess
import sys

import pytest

from tasks.hotpotqa import metrics
from tasks.hotpotqa.metrics import (answer_scores, evaluate, evaluate_files, format_metrics,
                                    load_json, missing_ids, normalize_answer, sp_scores)

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def exact(value):
  return pytest.approx(value, abs=1e-12)


# ---------------------------------------------------------------- normalisation


def test_normalize_removes_punctuation():
  assert normalize_answer("Hello, World!") == "hello world"
  assert normalize_answer("U.S.A.") == "usa"
  # Punctuation is deleted, not replaced by a space.
  assert normalize_answer("well-known") == "wellknown"
  assert normalize_answer("\"Rock 'n' Roll\"") == "rock n roll"


def test_normalize_removes_whole_word_articles_only():
  assert normalize_answer("The Eiffel Tower") == "eiffel tower"
  assert normalize_answer("an apple a day") == "apple day"
  # Articles inside words stay.
  assert normalize_answer("Theatre and Anthem") == "theatre and anthem"
  # Punctuation goes first, so "the," is an article once the comma is gone.
  assert normalize_answer("the, end") == "end"
  # An article between two non-word characters becomes a space, splitting the token.
  assert normalize_answer("x\u20acthe\u20acy") == "x\u20ac \u20acy"


def test_normalize_collapses_white_space():
  assert normalize_answer("  New   York\tCity\n") == "new york city"
  assert normalize_answer("") == ""
  assert normalize_answer(" the ") == ""


# ---------------------------------------------------------------- answer scores


def test_answer_exact_match_after_normalisation():
  # "the eiffel tower" -> "eiffel tower"; "eiffel tower!" -> "eiffel tower": all 1.
  assert answer_scores("The Eiffel Tower", "eiffel tower!") == (1.0, 1.0, 1.0, 1.0)


def test_answer_token_f1_with_repeated_tokens():
  # pred tokens red,red,red,blue; gold red,red,green. Common: min(3, 2) red = 2.
  # P = 2/4 = 1/2, R = 2/3, F1 = 2 * (1/2) * (2/3) / (1/2 + 2/3) = (2/3) / (7/6) = 4/7.
  em, f1, prec, recall = answer_scores("red red red blue", "red red green")
  assert em == 0.0
  assert prec == exact(1 / 2)
  assert recall == exact(2 / 3)
  assert f1 == exact(4 / 7)


def test_answer_token_f1_ignores_articles_and_punctuation():
  # pred "the big, red dog" -> big,red,dog; gold "A red dog." -> red,dog.
  # Common 2: P = 2/3, R = 2/2 = 1, F1 = 2 * (2/3) / (5/3) = 4/5.
  em, f1, prec, recall = answer_scores("the big, red dog", "A red dog.")
  assert em == 0.0
  assert (prec, recall, f1) == (exact(2 / 3), exact(1.0), exact(4 / 5))


def test_answer_no_common_token_scores_zero():
  assert answer_scores("Paris", "London") == (0.0, 0.0, 0.0, 0.0)
  assert answer_scores("", "London") == (0.0, 0.0, 0.0, 0.0)


def test_answer_both_empty_is_exact_match_but_zero_f1():
  # Normalised strings are equal ("" == "") so EM = 1, but there are no common tokens.
  assert answer_scores("The", "") == (1.0, 0.0, 0.0, 0.0)


def test_answer_yes_no_special_cases():
  # Different normalised strings, one side is "yes": everything 0.
  assert answer_scores("yes", "no") == (0.0, 0.0, 0.0, 0.0)
  # Token overlap would give P = 1/3, R = 1, F1 = 1/2, but gold is "yes": F1 = 0.
  assert answer_scores("yes it is", "yes") == (0.0, 0.0, 0.0, 0.0)
  # Same with the special answer on the prediction side.
  assert answer_scores("no", "no way") == (0.0, 0.0, 0.0, 0.0)
  # "Yes." normalises to "yes": identical, so full marks.
  assert answer_scores("Yes.", "yes") == (1.0, 1.0, 1.0, 1.0)


def test_answer_special_case_needs_an_exact_special_side():
  # Neither side normalises to exactly yes/no/noanswer: ordinary overlap.
  # pred it,is; gold yes,it,is. Common 2: P = 1, R = 2/3, F1 = 2 * (2/3) / (5/3) = 4/5.
  em, f1, prec, recall = answer_scores("it is", "yes it is")
  assert em == 0.0
  assert (prec, recall, f1) == (exact(1.0), exact(2 / 3), exact(4 / 5))


def test_answer_noanswer_special_case():
  # "noanswer" vs "no answer": normalised strings differ and one is special: all 0.
  assert answer_scores("noanswer", "no answer") == (0.0, 0.0, 0.0, 0.0)
  assert answer_scores("noanswer extra", "noanswer") == (0.0, 0.0, 0.0, 0.0)
  assert answer_scores("NoAnswer", "noanswer") == (1.0, 1.0, 1.0, 1.0)


# ---------------------------------------------------------------- supporting facts


def test_sp_partial_overlap():
  # pred {A0, A1, B2}; gold {A0, B0, B2, C1}: tp = 2 (A0, B2), fp = 1 (A1), fn = 2 (B0, C1).
  # P = 2/3, R = 2/4 = 1/2, F1 = 2 * (1/3) / (7/6) = 4/7, EM = 0.
  prediction = [["A", 0], ["A", 1], ["B", 2]]
  gold = [["A", 0], ["B", 0], ["B", 2], ["C", 1]]
  em, f1, prec, recall = sp_scores(prediction, gold)
  assert em == 0.0
  assert (prec, recall, f1) == (exact(2 / 3), exact(1 / 2), exact(4 / 7))


def test_sp_exact_match_accepts_lists_and_tuples_and_duplicates():
  # Sets: {A0, B3} on both sides: tp = 2, fp = fn = 0: all 1.
  assert sp_scores([("A", 0), ["B", 3], ["A", 0]], [["B", 3], ("A", 0)]) == (1.0, 1.0, 1.0, 1.0)


def test_sp_empty_prediction():
  # tp = fp = 0 so P = 0; fn = 2 so R = 0; F1 = 0; EM = 0.
  assert sp_scores([], [["A", 0], ["B", 1]]) == (0.0, 0.0, 0.0, 0.0)
  # Both empty: fp + fn = 0 so EM = 1, but P, R (zero denominators) and F1 are 0.
  assert sp_scores([], []) == (1.0, 0.0, 0.0, 0.0)


def test_sp_superset_prediction():
  # pred {A0, A1, B0}; gold {A0}: tp = 1, fp = 2, fn = 0.
  # P = 1/3, R = 1, F1 = 2 * (1/3) / (4/3) = 1/2.
  em, f1, prec, recall = sp_scores([["A", 0], ["A", 1], ["B", 0]], [["A", 0]])
  assert em == 0.0
  assert (prec, recall, f1) == (exact(1 / 3), exact(1.0), exact(1 / 2))


# ---------------------------------------------------------------- evaluate

GOLD = [
    {"_id": "q1", "answer": "red red green",
     "supporting_facts": [["A", 0], ["B", 0], ["B", 2], ["C", 1]]},
    {"_id": "q2", "answer": "yes", "supporting_facts": [["D", 1], ["E", 0]]},
]

PREDICTION = {
    "answer": {"q1": "red red red blue", "q2": "Yes.", "extra": "ignored"},
    "sp": {"q1": [["A", 0], ["A", 1], ["B", 2]], "q2": [["E", 0], ["D", 1]],
           "extra": [["Z", 9]]},
}


def test_joint_f1_is_recomputed_not_a_product():
  # q1 answer: P = 1/2, R = 2/3, F1 = 4/7; sp: P = 2/3, R = 1/2, F1 = 4/7.
  # Joint P = (1/2)(2/3) = 1/3, R = (2/3)(1/2) = 1/3, F1 = 2 * (1/9) / (2/3) = 1/3,
  # while ans_f1 * sp_f1 = 16/49. Joint EM = 0 * 0 = 0.
  result = evaluate(GOLD[:1], {"answer": {"q1": PREDICTION["answer"]["q1"]},
                              "sp": {"q1": PREDICTION["sp"]["q1"]}})
  assert result["joint_prec"] == exact(1 / 3)
  assert result["joint_recall"] == exact(1 / 3)
  assert result["joint_f1"] == exact(1 / 3)
  assert result["joint_f1"] != pytest.approx(result["f1"] * result["sp_f1"], abs=1e-3)
  assert result["f1"] * result["sp_f1"] == exact(16 / 49)
  assert result["joint_em"] == 0.0


def test_joint_scores_products():
  # answer (em 1, f1 -, P 1, R 1/2) with sp (em 0, f1 -, P 1/4, R 1):
  # P = 1/4, R = 1/2, F1 = 2 * (1/8) / (3/4) = 1/3, EM = 1 * 0 = 0.
  em, f1, prec, recall = metrics.joint_scores((1.0, 2 / 3, 1.0, 0.5), (0.0, 0.4, 0.25, 1.0))
  assert em == 0.0
  assert (prec, recall, f1) == (exact(1 / 4), exact(1 / 2), exact(1 / 3))


def test_evaluate_averages_over_gold():
  # q1: answer (0, 4/7, 1/2, 2/3), sp (0, 4/7, 2/3, 1/2), joint (0, 1/3, 1/3, 1/3).
  # q2: everything 1 ("Yes." == "yes"; same sp set). Averages over 2 ids:
  result = evaluate(GOLD, PREDICTION)
  expected = {
      "em": 1 / 2, "f1": (4 / 7 + 1) / 2, "prec": (1 / 2 + 1) / 2, "recall": (2 / 3 + 1) / 2,
      "sp_em": 1 / 2, "sp_f1": (4 / 7 + 1) / 2, "sp_prec": (2 / 3 + 1) / 2,
      "sp_recall": (1 / 2 + 1) / 2,
      "joint_em": 1 / 2, "joint_f1": (1 / 3 + 1) / 2, "joint_prec": (1 / 3 + 1) / 2,
      "joint_recall": (1 / 3 + 1) / 2,
  }
  # i.e. f1 = 11/14, prec = 3/4, recall = 5/6, sp_prec = 5/6, sp_recall = 3/4, joint_* = 2/3.
  assert set(result) == set(expected)
  for key, value in expected.items():
    assert result[key] == exact(value), key
  assert all(isinstance(value, float) for value in result.values())


def test_evaluate_returns_exactly_the_twelve_keys():
  result = evaluate(GOLD, PREDICTION)
  assert list(result) == [
      "em", "f1", "prec", "recall", "sp_em", "sp_f1", "sp_prec", "sp_recall",
      "joint_em", "joint_f1", "joint_prec", "joint_recall"]


def test_missing_id_counts_as_zero():
  # q1 is perfect (all 1); q2 is missing from both: every average is (1 + 0) / 2 = 1/2.
  prediction = {"answer": {"q1": "Red red green."},
                "sp": {"q1": [["C", 1], ["B", 2], ["B", 0], ["A", 0]]}}
  result = evaluate(GOLD, prediction)
  for key in metrics.METRIC_KEYS:
    assert result[key] == exact(1 / 2), key
  assert missing_ids(GOLD, prediction) == {"answer": ["q2"], "sp": ["q2"]}


def test_missing_sp_only_zeroes_sp_and_joint():
  # Both answers perfect: answer averages 1. q2 lacks sp: sp and joint averages (1 + 0) / 2.
  prediction = {"answer": {"q1": "red red green", "q2": "yes"},
                "sp": {"q1": GOLD[0]["supporting_facts"]}}
  result = evaluate(GOLD, prediction)
  for key in metrics.ANSWER_KEYS:
    assert result[key] == exact(1.0), key
  for key in metrics.SP_KEYS + metrics.JOINT_KEYS:
    assert result[key] == exact(1 / 2), key
  assert missing_ids(GOLD, prediction) == {"answer": [], "sp": ["q2"]}


def test_evaluate_rejects_prediction_without_a_key():
  with pytest.raises(ValueError, match="prediction lacks the key 'sp'"):
    evaluate(GOLD, {"answer": {}})
  with pytest.raises(ValueError, match="prediction lacks the key 'answer'"):
    evaluate(GOLD, {"sp": {}})


def test_evaluate_rejects_incomplete_gold_records():
  no_answer = [GOLD[0], {"_id": "q2", "supporting_facts": []}]
  with pytest.raises(ValueError, match=r"index 1 \(id 'q2'\) lacks the field 'answer'"):
    evaluate(no_answer, PREDICTION)
  no_id = [{"answer": "x", "supporting_facts": []}]
  with pytest.raises(ValueError, match="index 0 lacks the field '_id'"):
    evaluate(no_id, PREDICTION)
  no_facts = [{"_id": "q1", "answer": "x"}]
  with pytest.raises(ValueError, match=r"\(id 'q1'\) lacks the field 'supporting_facts'"):
    evaluate(no_facts, PREDICTION)


def test_evaluate_rejects_empty_gold():
  with pytest.raises(ValueError, match="gold is empty"):
    evaluate([], PREDICTION)


# ---------------------------------------------------------------- files


def test_evaluate_files_round_trip(tmp_path):
  prediction_path = tmp_path / "pred.json"
  gold_path = tmp_path / "gold.json"
  prediction_path.write_text(json.dumps(PREDICTION))
  gold_path.write_text(json.dumps(GOLD))
  assert evaluate_files(str(gold_path), str(prediction_path)) == evaluate(GOLD, PREDICTION)


def test_load_json_missing_file(tmp_path):
  path = tmp_path / "absent.json"
  with pytest.raises(FileNotFoundError, match="gold file not found: .*absent.json"):
    load_json(str(path), "gold")


def test_load_json_empty_file(tmp_path):
  path = tmp_path / "empty.json"
  path.write_text("  \n")
  with pytest.raises(ValueError, match="prediction file is empty: .*empty.json"):
    load_json(str(path), "prediction")


def test_load_json_invalid_json_names_line_and_column(tmp_path):
  path = tmp_path / "broken.json"
  # The error is at the "o" of "oops": line 2, column 3.
  path.write_text('{"a": 1,\n  oops}')
  with pytest.raises(ValueError, match=r"prediction file .*broken.json is not valid JSON: "
                                       r".* at line 2, column 3"):
    load_json(str(path), "prediction")


def test_evaluate_files_names_the_bad_file(tmp_path):
  good = tmp_path / "gold.json"
  good.write_text(json.dumps(GOLD))
  bad = tmp_path / "pred.json"
  bad.write_text("not json")
  with pytest.raises(ValueError, match="prediction file .*pred.json is not valid JSON"):
    evaluate_files(str(good), str(bad))


# ---------------------------------------------------------------- formatting


def test_format_metrics_table():
  table = format_metrics(evaluate(GOLD, PREDICTION))
  lines = table.split("\n")
  assert len(lines) == 4
  assert lines[0].split() == ["em", "f1", "prec", "recall"]
  # em 1/2, f1 11/14 = 0.78571..., prec 3/4, recall 5/6 = 0.83333...
  assert lines[1].split() == ["answer", "0.5000", "0.7857", "0.7500", "0.8333"]
  # sp_em 1/2, sp_f1 11/14, sp_prec 5/6, sp_recall 3/4.
  assert lines[2].split() == ["sp", "0.5000", "0.7857", "0.8333", "0.7500"]
  # joint_em 1/2, the others 2/3 = 0.66666...
  assert lines[3].split() == ["joint", "0.5000", "0.6667", "0.6667", "0.6667"]
  # Aligned: every line has the same width.
  assert len({len(line) for line in lines}) == 1


def test_format_metrics_rejects_missing_keys():
  with pytest.raises(ValueError, match="joint_em"):
    format_metrics({key: 0.0 for key in metrics.METRIC_KEYS if key != "joint_em"})


# ---------------------------------------------------------------- dependencies


def test_module_does_not_import_tensorflow():
  code = ("import sys; import tasks.hotpotqa.metrics; "
          "sys.exit(1 if 'tensorflow' in sys.modules else 0)")
  result = subprocess.run([sys.executable, "-c", code], cwd=_REPO_ROOT, check=False)
  assert result.returncode == 0
