"""The official NQ scorer through tasks.nq.metrics: hand-computed F1s, 1.0 for predictions made
from the gold annotations through the project's conversion, decoding and export path, and clear
errors for bad files."""

import json

import numpy as np
import pytest

import nq_fixtures as nf
from tasks.nq import data
from tasks.nq import decode
from tasks.nq import features as fl
from tasks.nq import metrics

A = nf.annotation
# Token:    0       1     2    3    4      5      6      7    8       9       10     11   12
TOKENS = ["<HTML>", "<P>", "a", "b", "</P>", "<Ul>", "<Li>", "c", "cafe", "</Li>", "<Li>", "d",
          "</Li>", "</Ul>", "<P>", "e", "f", "g", "</P>", "</HTML>"]
#           13      14     15   16   17    18      19
# Candidates: 0 P [1, 5), 1 Ul [5, 14), 2 Li [6, 10), 3 Li [10, 13), 4 P [14, 19).
NULL = {"start_token": -1, "end_token": -1, "start_byte": -1, "end_byte": -1}


def gold_file(tmp_path):
  records = [
      # 1: long answer by 3 of 5 (candidate 2), short "cafe" by 2.
      nf.record(1, "q one", TOKENS, [A(TOKENS, 2, [(8, 9)]), A(TOKENS, 2, [(8, 9)]),
                                     A(TOKENS, 2), A(TOKENS), A(TOKENS)]),
      # 2: only one annotator (not the first) gives a long answer: gold null.
      nf.record(2, "q two", TOKENS, [A(TOKENS), A(TOKENS, 0), A(TOKENS), A(TOKENS), A(TOKENS)]),
      # 3: long answer candidate 4 by 2 (one YES, one NO): short by the yes/no vote.
      nf.record(3, "q three", TOKENS, [A(TOKENS, 4, yes_no="YES"), A(TOKENS, 4, yes_no="NO"),
                                       A(TOKENS), A(TOKENS), A(TOKENS)]),
  ]
  return nf.write_jsonl_gz(records, str(tmp_path / "dev.jsonl.gz"))


def entry(example_id, long_span, long_score, shorts=(), short_score=0.0, yes_no="NONE"):
  return {"example_id": example_id, "long_answer": long_span, "long_answer_score": long_score,
          "short_answers": list(shorts), "short_answers_score": short_score,
          "yes_no_answer": yes_no}


def test_hand_computed_best_threshold_f1(tmp_path):
  gold = gold_file(tmp_path)
  predictions = {"predictions": [
      entry(1, nf.span(TOKENS, 6, 10), 3.0, [nf.span(TOKENS, 8, 9)], 1.0),    # long right, short right
      entry(2, nf.span(TOKENS, 1, 5), 2.0, [nf.span(TOKENS, 2, 3)], 3.0),     # gold null: both wrong
      entry(3, dict(nf.span(TOKENS, 14, 19), start_byte=-1, end_byte=-1), 1.0,
            short_score=2.0, yes_no="NO"),                                     # tokens only; NO right
  ]}
  scores = metrics.evaluate(gold, predictions)
  # Long, by score: (1: right, 3.0), (2: wrong, 2.0), (3: right, 1.0); 2 gold answers.
  # Cut at 3.0: P 1, R 1/2, F1 2/3; at 2.0: P 1/2, R 1/2; at 1.0: P 2/3, R 1, F1 0.8.
  assert scores["long-best-threshold-f1"] == pytest.approx(0.8)
  assert scores["long-best-threshold"] == 1.0
  # Short, by score: (2: wrong, 3.0), (3: right, 2.0), (1: right, 1.0); 2 gold answers.
  # Cut at 3.0: P 0; at 2.0: P 1/2, R 1/2; at 1.0: P 2/3, R 1, F1 0.8.
  assert scores["short-best-threshold-f1"] == pytest.approx(0.8)
  assert scores["short-best-threshold-precision"] == pytest.approx(2 / 3)
  # Written to a file, the same numbers.
  path = tmp_path / "p.json"
  path.write_text(json.dumps(predictions))
  assert metrics.evaluate(gold, str(path)) == scores
  assert "long-best-threshold-f1: 0.8000" in metrics.format_metrics(scores)


def oracle_outputs(windows):
  """Logits that Google's decoding reads as each window's labels (0 = no answer here): 30 at the
  label, 1 at [CLS] otherwise, so the label's score (logit / [CLS] logit) is 30; elsewhere 0, or
  -30 in a null window, whose positions then score below those of an answer window (a yes/no
  window has no span labels: its short score would tie with a null page's)."""
  outs = []
  for f in windows:
    def logits(i, size=len(f["token_ids"])):
      v = np.full(size, -30.0 if int(f["answer_type"][0]) <= 0 else 0.0)
      v[0] = 1.0
      v[i] = 30.0
      return v
    types = np.full(5, -30.0)
    types[max(int(f["answer_type"][0]), 0)] = 30.0
    outs.append(decode.WindowOutput(types, *(logits(int(f[name][0])) for name in
                                             ("la_start", "la_end", "sa_start", "sa_end"))))
  return outs


def oracle_predictions(path, tokenizer, config):
  """Gold labels -> Google's windows -> Google's decoding (long answers snapped to candidates)
  -> the predictions JSON. Google's labels come from the first annotation."""
  examples, _ = data.read_examples(path, with_labels=False)
  entries = []
  for example in examples:
    windows = fl.convert_example(example, tokenizer, config, is_train=False)
    entries.append(decode.decode_example(example.example_id, oracle_outputs(windows),
                                         [f["token_pos"] for f in windows], snap_to=example))
  return decode.finish(entries)


def test_gold_annotations_through_the_export_path_score_one(tmp_path):
  gold = gold_file(tmp_path)
  config = fl.NqFeatureConfig(long_seq_len=10, global_seq_len=6, doc_stride=4,
                              max_question_pieces=3, html_tag_markers=True)
  predictions = oracle_predictions(gold, nf.tokenizer(tmp_path), config)
  path = tmp_path / "predictions.json"
  path.write_text(json.dumps(predictions))
  scores = metrics.evaluate(gold, str(path))
  assert scores["long-best-threshold-f1"] == 1.0
  assert scores["short-best-threshold-f1"] == 1.0
  by_id = {e["example_id"]: e for e in predictions["predictions"]}
  assert by_id[1]["long_answer"] == nf.span(TOKENS, 6, 10)     # bytes from document_tokens
  assert by_id[3]["yes_no_answer"] == "yes" and by_id[3]["short_answers"] == []  # Google writes lower case


def test_bad_prediction_files_are_named(tmp_path):
  gold = gold_file(tmp_path)
  good = [entry(i, NULL, 0.0) for i in (1, 2, 3)]
  with pytest.raises(data.NqDataError, match=r"field 'example_id': 1 gold id\(s\) without a "
                     r"prediction \(first: \[3\]\)"):
    metrics.evaluate(gold, {"predictions": good[:2]})
  with pytest.raises(data.NqDataError, match="gold ids are ints, predicted ids strs"):
    metrics.evaluate(gold, {"predictions": [dict(e, example_id=str(e["example_id"]))
                                            for e in good]})
  with pytest.raises(data.NqDataError, match=r"predictions\[1\]: field 'short_answers_score'"):
    metrics.evaluate(gold, {"predictions": [good[0], {k: v for k, v in good[1].items()
                                                      if k != "short_answers_score"}, good[2]]})
  bad = tmp_path / "bad.json"
  bad.write_text("{oops")
  with pytest.raises(data.NqDataError, match="bad.json: not JSON"):
    metrics.evaluate(gold, str(bad))
  both = [good[0], good[1], entry(3, NULL, 0.0, [nf.span(TOKENS, 2, 3)], yes_no="YES")]
  with pytest.raises(data.NqDataError, match="rejected by the official reader"):
    metrics.evaluate(gold, {"predictions": both})


def test_bad_gold_files_are_named(tmp_path):
  plain = tmp_path / "dev.jsonl"
  plain.write_text(json.dumps(nf.record(1, "q", TOKENS)) + "\n")
  with pytest.raises(data.NqDataError, match="dev.jsonl: gold files must be gzipped"):
    metrics.evaluate(str(plain), {"predictions": []})
  record = nf.record(1, "q", TOKENS)
  del record["annotations"][0]["yes_no_answer"]
  path = nf.write_jsonl_gz([record], str(tmp_path / "g.jsonl.gz"))
  with pytest.raises(data.NqDataError, match="g.jsonl.gz: field 'yes_no_answer': missing"):
    metrics.evaluate(path, {"predictions": []})


def test_synthetic_dev_labels_through_the_export_path_come_back(tmp_path):
  """Google's labels (the first annotation) -> windows -> oracle logits -> decoding give back
  that annotation on every page: its long answer (snapped to the candidate, byte offsets
  included), its short span (several merge from the first start to the last end), its yes/no;
  and pages it leaves null score below every answered one."""
  from synthetic_data import nq as synthetic   # pylint: disable=import-outside-toplevel
  # Dev-like pages of the short preset (5 annotations, every answer kind).
  path = nf.write_jsonl_gz(synthetic.generate_examples(80, seed=5, split="dev", preset="short"),
                           str(tmp_path / "dev.jsonl.gz"))
  # Short windows: several windows per document.
  config = fl.NqFeatureConfig(long_seq_len=256, global_seq_len=48, doc_stride=128,
                              max_question_pieces=24, html_tag_markers=True)
  predictions = oracle_predictions(path, nf.tokenizer(tmp_path), config)
  examples, _ = data.read_examples(path, with_labels=True)
  entries = predictions["predictions"]
  assert [e["example_id"] for e in entries] == [e.example_id for e in examples]
  answered, null = [], []
  kinds = set()
  for example, got in zip(examples, entries):
    first = example.annotations[0]
    if not first.has_long:
      null.append(got["long_answer_score"])
      continue
    answered.append(got["long_answer_score"])
    assert got["long_answer"] == first.long_answer.to_json(), example.example_id
    if first.yes_no_answer != "NONE":
      kinds.add("yes/no")
      assert (got["yes_no_answer"], got["short_answers"]) == (first.yes_no_answer.lower(), [])
    elif first.short_answers:
      kinds.add("short")
      span = got["short_answers"][0]
      assert (span["start_token"], span["end_token"]) == (first.short_answers[0].start_token,
                                                          first.short_answers[-1].end_token)
    else:
      kinds.add("long")
  assert kinds == {"yes/no", "short", "long"} and null
  assert max(null) < min(answered)
  scores = metrics.evaluate(path, predictions)
  # The vote of five annotators differs from the first one on some pages.
  assert 0.5 < scores["long-best-threshold-f1"] < 1.0


def test_first_paragraph_baseline_scores_what_it_should(tmp_path):
  # Two pages with TOKENS: gold long answer candidate 0 (the first <P>, tokens [1, 5)) and
  # candidate 4 (the second <P>). "first paragraph" answers candidate 0 on both: 1 of 2
  # predictions right, 1 of 2 gold answers found -> long F1 0.5. A page that opens with a
  # list gets the first <P> after it.
  from tasks.nq import baselines  # pylint: disable=import-outside-toplevel
  records = [nf.record(1, "q one", TOKENS, [A(TOKENS, 0)] * 3 + [A(TOKENS)] * 2),
             nf.record(2, "q two", TOKENS, [A(TOKENS, 4)] * 3 + [A(TOKENS)] * 2)]
  path = nf.write_jsonl_gz(records, str(tmp_path / "dev.jsonl.gz"))
  examples, _ = data.read_examples(path, with_labels=True)
  assert [baselines.first_paragraph_index(e) for e in examples] == [0, 0]
  prediction = baselines.first_paragraph_predictions(examples)
  for e in prediction["predictions"]:
    assert (e["long_answer"]["start_token"], e["long_answer"]["end_token"]) == (1, 5)
    assert e["short_answers"] == [] and e["long_answer_score"] == 1.0
  scores = metrics.evaluate(path, prediction)
  assert scores["long-best-threshold-f1"] == pytest.approx(0.5)
  assert scores["short-best-threshold-f1"] == 0.0
  lists_first = ["<HTML>", "<Ul>", "<Li>", "c", "</Li>", "</Ul>", "<P>", "e", "</P>", "</HTML>"]
  record = nf.record(9, "q", lists_first, [A(lists_first, 2)] * 5)
  example, _ = data.read_examples(nf.write_jsonl_gz([record], str(tmp_path / "l.jsonl.gz")),
                                  with_labels=True)
  assert baselines.first_paragraph_index(example[0]) == 2
  assert baselines.first_paragraph_predictions(example)["predictions"][0]["long_answer"][
      "start_token"] == 6
