"""Reading NQ files: bad records are skipped (training) or kept with a null answer (prediction),
every message names the file, the line, the example_id and the field."""

import copy
import gzip
import json

import pytest

import nq_fixtures as nf
from tasks.nq import data

TOKENS = ["<HTML>", "<P>", "the", "capital", "is", "brevik", "</P>", "<Ul>", "<Li>", "a",
          "</Li>", "</Ul>", "</HTML>"]


def good(example_id=1):
  return nf.record(example_id, "what is the capital", TOKENS,
                   [nf.annotation(TOKENS, 0, [(5, 6)])])


def read(tmp_path, records, with_labels=True, name="f.jsonl.gz"):
  path = nf.write_jsonl_gz(records, str(tmp_path / name))
  return path, data.read_examples(path, with_labels)


def test_good_record_round_trips_offsets(tmp_path):
  _, (examples, report) = read(tmp_path, [good()])
  assert report.examples == 1 and not report.skipped
  e = examples[0]
  assert e.example_id == 1 and e.has_bytes
  assert [c.top_level for c in e.candidates] == [True, True, False]
  assert e.candidates[0].span == data.Span(1, 7, 7, 37)
  a = e.annotations[0]
  assert a.candidate_index == 0 and a.short_answers == [e.span(5, 6)]
  html = good()["document_html"].encode("utf-8")
  s = a.short_answers[0]
  assert html[s.start_byte:s.end_byte].decode() == "brevik"


@pytest.mark.parametrize("mutate, reason, field", [
    (lambda r: r["long_answer_candidates"][0].update(start_byte=8),
     "offsets disagree with document", "long_answer_candidates[0]"),
    (lambda r: r["long_answer_candidates"][1].update(end_token=99),
     "offsets disagree with document", "long_answer_candidates[1]"),
    (lambda r: r["annotations"][0]["long_answer"].update(candidate_index=1),
     "offsets disagree with document", "annotations[0].long_answer"),
    (lambda r: r["annotations"][0]["short_answers"][0].update(end_byte=3),
     "offsets disagree with document", "annotations[0].short_answers[0]"),
    (lambda r: r["document_tokens"][3].update(start_byte=1),
     "offsets disagree with document", "document_tokens[3]"),
    (lambda r: r.pop("long_answer_candidates"), "missing candidates", "long_answer_candidates"),
    (lambda r: r.update(long_answer_candidates=[]), "missing candidates",
     "long_answer_candidates"),
    (lambda r: r.update(document_tokens=[], document_html=""), "empty document",
     "document_tokens"),
    (lambda r: r.pop("question_text"), "missing field", "question_text"),
    (lambda r: r["annotations"][0].update(yes_no_answer="MAYBE"), "malformed annotation",
     "annotations[0].yes_no_answer"),
])
def test_bad_records_are_skipped_in_training_with_a_precise_message(tmp_path, mutate, reason,
                                                                    field):
  bad = good(2)
  mutate(bad)
  path, (examples, report) = read(tmp_path, [good(1), bad, good(3)])
  assert [e.example_id for e in examples] == [1, 3]
  assert report.skipped == {reason: 1}
  (message,) = report.messages
  assert message.startswith(f"{path}: line 2 (example_id 2): field '{field}'"), message


def test_prediction_mode_keeps_every_id(tmp_path):
  no_candidates = good(2)
  no_candidates["long_answer_candidates"] = []
  bad_annotation = good(3)
  bad_annotation["annotations"].append(copy.deepcopy(bad_annotation["annotations"][0]))
  bad_annotation["annotations"][1]["long_answer"]["start_byte"] += 1
  _, (examples, report) = read(tmp_path, [good(1), no_candidates, bad_annotation],
                               with_labels=False)
  assert [e.example_id for e in examples] == [1, 2, 3]
  assert examples[1].problem and "long_answer_candidates" in examples[1].problem
  assert not examples[2].problem and len(examples[2].annotations) == 1
  assert report.repaired == {"missing candidates (null prediction)": 1,
                             "offsets disagree with document (annotation dropped)": 1}


def test_lines_without_an_id_or_json_and_duplicates_are_counted(tmp_path):
  path = str(tmp_path / "f.jsonl.gz")
  with gzip.open(path, "wt") as f:
    f.write(json.dumps(good(1)) + "\n{not json\n" + json.dumps({"question_text": "x"}) + "\n")
    f.write(json.dumps(good(1)) + "\n")
  examples, report = data.read_examples(path, with_labels=False)
  assert [e.example_id for e in examples] == [1]
  assert report.records == 4
  assert report.skipped == {"not JSON": 1, "missing example_id": 1, "duplicate example_id": 1}
  assert any("line 2" in m for m in report.messages)


def test_mixed_id_types_is_an_error_naming_the_record(tmp_path):
  with pytest.raises(data.NqDataError, match=r"line 2 \(example_id 2\): field 'example_id': a "
                     r"str id but .*line 1 .* has a int id"):
    read(tmp_path, [good(1), good("2")])


def test_invalid_gzip_names_the_file(tmp_path):
  path = tmp_path / "bad.jsonl.gz"
  path.write_bytes(b"this is not gzip")
  with pytest.raises(data.NqDataError, match="bad.jsonl.gz: not a gzip file"):
    data.read_examples(str(path), True)
  whole = gzip.compress((json.dumps(good(1)) + "\n").encode() * 3)
  path.write_bytes(whole[:len(whole) - 20])       # truncated
  with pytest.raises(data.NqDataError, match="bad.jsonl.gz: invalid gzip data"):
    data.read_examples(str(path), True)
  with pytest.raises(FileNotFoundError, match="nothing-\\*.gz"):
    data.read_examples(str(tmp_path / "nothing-*.gz"), True)


def test_glob_of_shards_and_plain_jsonl(tmp_path):
  nf.write_jsonl_gz([good(1)], str(tmp_path / "nq-dev-00.jsonl.gz"))
  nf.write_jsonl_gz([good(2)], str(tmp_path / "nq-dev-01.jsonl.gz"))
  (tmp_path / "plain.jsonl").write_text(json.dumps(good(3)) + "\n")
  examples, _ = data.read_examples(str(tmp_path / "nq-dev-*.jsonl.gz"), True)
  assert [e.example_id for e in examples] == [1, 2]
  examples, _ = data.read_examples(str(tmp_path / "plain.jsonl"), True)
  assert [e.example_id for e in examples] == [3]


def test_simplified_format_has_the_same_tokens_and_spans_without_bytes(tmp_path):
  original = good(5)
  simplified = {
      "example_id": 5, "question_text": original["question_text"],
      "document_text": " ".join(t["token"] for t in original["document_tokens"]),
      "long_answer_candidates": [{k: c[k] for k in ("start_token", "end_token", "top_level")}
                                 for c in original["long_answer_candidates"]],
      "annotations": [{"annotation_id": 1, "yes_no_answer": "NONE",
                       "long_answer": {"start_token": 1, "end_token": 7, "candidate_index": 0},
                       "short_answers": [{"start_token": 5, "end_token": 6}]}]}
  _, (examples, _) = read(tmp_path, [original])
  _, (simple, _) = read(tmp_path, [simplified], name="s.jsonl.gz")
  a, b = examples[0], simple[0]
  assert a.tokens == b.tokens and a.is_html == b.is_html and not b.has_bytes
  assert [c.span.start_token for c in a.candidates] == [c.span.start_token for c in b.candidates]
  assert b.annotations[0].short_answers == [data.Span(5, 6)]
  assert b.span(5, 6).to_json() == {"start_token": 5, "end_token": 6, "start_byte": -1,
                                    "end_byte": -1}
