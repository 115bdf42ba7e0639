"""HotpotQA reading: every kind of bad input gets a message naming the record and the field."""

import json

import pytest

import hotpot_fixtures as hf
from tasks.hotpotqa.data import HotpotDataError, read_examples


def _write(tmp_path, records, name="data.json"):
  path = tmp_path / name
  path.write_text(records if isinstance(records, str) else json.dumps(records), encoding="utf-8")
  return str(path)


def test_good_record_reads(tmp_path):
  examples, report = read_examples(_write(tmp_path, [hf.raw_record()]), with_labels=True)
  assert report.records == report.examples == 1 and not report.skipped
  ex = examples[0]
  assert (ex.qas_id, ex.answer, ex.supporting_facts) == ("q1", "Ann", [("Ann", 0), ("Zoë", 0)])
  assert ex.context[1] == ("Zoë", ["Zoë was born in 1930."])


@pytest.mark.parametrize("change,reason,field", [
    ({"answer": None}, "bad field", "answer"),
    ({"question": 3}, "bad field", "question"),
    ({"supporting_facts": "Ann"}, "bad supporting facts", "supporting_facts"),
    ({"supporting_facts": [["Ann", "0"]]}, "bad supporting facts", "supporting_facts[0]"),
    ({"context": "text"}, "malformed context", "context"),
    ({"context": [["Ann", ["Ann was born in 1921.", 7]], ["Zoë", ["Zoë was born."]]]},
     "malformed context", "context[0]"),
    ({"_id": None}, "missing field", "_id"),
])
def test_training_skips_records_of_the_wrong_shape_with_a_clear_message(tmp_path, change,
                                                                        reason, field):
  bad = hf.raw_record(_id="bad", **{k: v for k, v in change.items() if k != "_id"})
  if "_id" in change:
    bad["_id"] = change["_id"]
  path = _write(tmp_path, [bad, hf.raw_record(_id="good")])
  examples, report = read_examples(path, with_labels=True)
  assert [e.qas_id for e in examples] == ["good"]
  assert report.skipped == {reason: 1}
  message = report.messages[0]
  assert path in message and "record 0" in message and f"field '{field}'" in message
  if change.get("_id", "x") is not None:
    assert "_id bad" in message
  assert f"1 x {reason}" in report.summary()


def test_training_reads_labels_as_google_s_converter_does(tmp_path):
  # Answer and supporting facts are not checked against the context: the converter decides
  # what it can label and counts the rest (tests/test_hotpotqa_layout.py).
  records = [hf.raw_record(_id="a", answer="Paris"),
             hf.raw_record(_id="b", supporting_facts=[["Nobody", 0], ["Zoë", 3]]),
             hf.raw_record(_id="c", context=[]),
             {k: v for k, v in hf.raw_record(_id="d").items()
              if k not in ("answer", "supporting_facts")}]
  examples, report = read_examples(_write(tmp_path, records), with_labels=True)
  assert [e.qas_id for e in examples] == ["a", "b", "c", "d"] and not report.skipped
  assert examples[0].answer == "Paris"
  assert examples[1].supporting_facts == [("Nobody", 0), ("Zoë", 3)]
  assert examples[2].context == []
  assert (examples[3].answer, examples[3].supporting_facts) == ("", [])


def test_prediction_keeps_every_id_and_counts_repairs(tmp_path):
  records = [hf.raw_record(_id="a", answer="Paris"),            # labels are not checked
             hf.raw_record(_id="b", context=[]),                 # no context: still predicted
             hf.raw_record(_id="c", context=[["Ann", ["ok.", None]]]),
             {k: v for k, v in hf.raw_record(_id="d").items() if k != "answer"}]
  examples, report = read_examples(_write(tmp_path, records), with_labels=False)
  assert [e.qas_id for e in examples] == ["a", "b", "c", "d"]
  assert examples[1].context == []
  assert examples[2].context == [("Ann", ["ok.", ""])]
  assert report.repaired == {"empty context": 1, "non-string sentence": 1}
  assert not report.skipped


@pytest.mark.parametrize("content,match", [
    ("", "empty"), ("[{]", "not valid JSON"), ('{"a": 1}', "JSON array"),
])
def test_unreadable_files(tmp_path, content, match):
  path = _write(tmp_path, content)
  with pytest.raises(HotpotDataError, match=match) as info:
    read_examples(path, with_labels=True)
  assert path in str(info.value)


def test_missing_file_and_nothing_usable(tmp_path):
  with pytest.raises(FileNotFoundError, match="nope.json"):
    read_examples(str(tmp_path / "nope.json"), with_labels=True)
  with pytest.raises(HotpotDataError, match="no usable record"):
    read_examples(_write(tmp_path, [hf.raw_record(answer=None)]), with_labels=True)


def test_duplicate_ids_are_skipped(tmp_path):
  examples, report = read_examples(_write(tmp_path, [hf.raw_record(), hf.raw_record()]),
                                   with_labels=False)
  assert len(examples) == 1 and report.skipped == {"duplicate _id": 1}
