"""WikiHop reader, accuracy metric and baseline on hand-made items."""

import json

import pytest

import wikihop_fixtures as wf
from tasks.wikihop import baselines
from tasks.wikihop import metrics
from tasks.wikihop.data import WikiHopDataError, read_examples


def test_reads_and_normalises(tmp_path):
  path = wf.write_items(tmp_path, [wf.raw_item(candidates=[" Freedonia", "new york", "York",
                                                           "freedonia"], answer="FREEDONIA")])
  (example,), report = read_examples(path, with_labels=True)
  assert example.candidates == ["freedonia", "new york", "york"]
  assert example.answer == "freedonia" and example.label == 0
  assert report.examples == 1 and not report.skipped
  # Google's converter lower-cases the answer but does not strip it: " freedonia" has no label.
  path = wf.write_items(tmp_path, [wf.raw_item(id="a", answer="FREEDONIA "), wf.raw_item()],
                        name="spaced.json")
  examples, report = read_examples(path, with_labels=True)
  assert [e.example_id for e in examples] == ["WH_dev_0"]
  assert report.skipped == {"answer not a candidate (official layout)": 1}
  examples, _ = read_examples(path, with_labels=False)   # predicted all the same
  assert examples[0].answer == "freedonia"


@pytest.mark.parametrize("change,reason,field", [
    (dict(answer="atlantis"), "answer not a candidate", "answer"),
    (dict(answer=None), "missing field", "answer"),
    (dict(candidates=[]), "no candidates", "candidates"),
    (dict(candidates="freedonia"), "malformed candidates", "candidates"),
    (dict(supports=["ok", 3]), "non-string supports entry", "supports[1]"),
    (dict(query=7), "missing field", "query"),
    (dict(id=""), "missing field", "id"),
])
def test_training_skips_bad_items_and_names_them(tmp_path, change, reason, field):
  path = wf.write_items(tmp_path, [wf.raw_item(id="WH_train_0"), wf.raw_item(**change)])
  examples, report = read_examples(path, with_labels=True)
  assert [e.example_id for e in examples] == ["WH_train_0"]
  assert report.skipped == {reason: 1}
  assert report.messages[0].startswith(f"{path}: item 1 (id ")
  assert f"field '{field}'" in report.messages[0]


def test_prediction_keeps_every_id(tmp_path):
  items = [wf.raw_item(id="a", answer=None), wf.raw_item(id="b", candidates=[]),
           wf.raw_item(id="c", supports=["fine", None], query=None), wf.raw_item(id="a")]
  path = wf.write_items(tmp_path, items)
  examples, report = read_examples(path, with_labels=False)
  assert [e.example_id for e in examples] == ["a", "b", "c"]
  assert examples[1].candidates == [] and examples[2].supports == ["fine"]
  assert report.skipped == {"duplicate id": 1}
  assert report.repaired == {"no candidates": 1, "non-string supports entry": 1,
                             "missing field": 1}


@pytest.mark.parametrize("content,message", [
    ("", "empty"), ("{}", "expected a JSON array"), ("[1, 2", "not valid JSON"),
    ("[1]", "no usable item")])
def test_unreadable_files(tmp_path, content, message):
  path = tmp_path / "bad.json"
  path.write_text(content)
  with pytest.raises(WikiHopDataError, match=message):
    read_examples(str(path), with_labels=False)
  with pytest.raises(FileNotFoundError):
    read_examples(str(tmp_path / "missing.json"), with_labels=False)


def test_accuracy_by_hand(tmp_path):
  gold = [wf.raw_item(id=i, answer=a) for i, a in
          (("a", "freedonia"), ("b", "york"), ("c", "new york"), ("d", "york"))]
  path = wf.write_items(tmp_path, gold, "gold.json")
  prediction = {"a": "Freedonia ", "b": "new york", "c": "new york", "zz": "york"}
  scores = metrics.evaluate(path, prediction)
  assert scores == {"accuracy": 0.5, "correct": 2, "total": 4, "missing": 1, "extra": 1}
  pred_path = tmp_path / "pred.json"
  pred_path.write_text(json.dumps(prediction))
  assert metrics.evaluate(path, str(pred_path)) == scores
  with pytest.raises(ValueError, match="id a: expected a candidate string"):
    metrics.evaluate(path, {"a": ["freedonia"]})
  with pytest.raises(ValueError, match=r"item 0 \(id a\): field 'answer'"):
    metrics.evaluate([{"id": "a"}], {})


def test_most_mentioned_baseline_by_hand():
  example = wf.example(candidates=["ann", "ann arbor", "bo"],
                       supports=["Anna met Ann in Ann Arbor.", "Ann Arbor and bo. Bob."])
  assert baselines.mention_counts(example) == {"ann": 1, "ann arbor": 2, "bo": 1}
  assert baselines.most_mentioned([example]) == {"WH_dev_0": "ann arbor"}
  tie = wf.example(candidates=["york", "freedonia"], supports=["Freedonia, York."])
  assert baselines.most_mentioned([tie])["WH_dev_0"] == "york"
  assert baselines.most_mentioned([wf.example(candidates=[])])["WH_dev_0"] == ""
