"""OpenKP reader, metric and baselines on hand-made pages."""

import json

import pytest

import openkp_fixtures as of
from tasks.openkp import baselines
from tasks.openkp import decode
from tasks.openkp import metrics
from tasks.openkp.data import OpenKpDataError, read_pages


def _page(tmp_path, **changes):
  (page,), report = read_pages(of.write_lines(tmp_path, [of.raw_page(**changes)]), True)
  return page, report


def test_reads_a_page(tmp_path):
  page, report = _page(tmp_path)
  assert page.words == of.TEXT.split(" ")
  assert [(e.start, e.end) for e in page.elements] == [(0, 2), (2, 4), (4, 11), (11, 15)]
  assert page.elements[1].features[6] == 1 and page.key_phrases == [["solar", "kettle"],
                                                                    ["camping"]]
  assert not report.skipped and not report.repaired


def test_vdom_repairs_keep_the_page(tmp_path):
  vdom = [of.element(0, 2, 4), {"start_idx": 4, "end_idx": 9, "feature": [1.0] * 3},
          of.element(2, 6, 12), of.element(3, 7, 9), of.element(4, 13, 99)]
  page, report = _page(tmp_path, VDOM=json.dumps(vdom))
  # Words 0-1 get a plain element; [6, 12) is cut to start after [2, 4)'s growth... every word
  # belongs to exactly one element and the last element reaches the end of the text.
  assert [(e.start, e.end) for e in page.elements] == [(0, 2), (2, 6), (6, 13), (13, 15)]
  assert page.elements[0].features == [0.0] * 20
  assert report.repaired == {"bad VDOM element": 2}
  assert "line 1 (url http://example.com/kettle): field 'VDOM[1].feature'" in report.messages[0]
  page, report = _page(tmp_path, VDOM="{not json")
  assert [(e.start, e.end) for e in page.elements] == [(0, 15)]
  assert report.repaired == {"VDOM not JSON": 1}


def test_training_skips_and_prediction_keeps(tmp_path):
  records = [of.raw_page(url="a"), of.raw_page(url="b", KeyPhrases=[]),
             of.raw_page(url="c", KeyPhrases=[["x"], "y"]), of.raw_page(url="d", text=""),
             "not json", of.raw_page(url="a", KeyPhrases=[["now"]]), {"text": "no url"}]
  path = of.write_lines(tmp_path, records)
  pages, report = read_pages(path, with_labels=True)
  assert [p.url for p in pages] == ["a"] and pages[0].key_phrases == [["now"]]
  assert report.skipped == {"no key phrases": 1, "malformed KeyPhrases": 1, "missing text": 1,
                            "not JSON": 1, "missing field": 1}
  assert report.repaired == {"duplicate url (the last record wins)": 1}
  assert any(m.startswith(f"{path}: line 2 (url b): field 'KeyPhrases'")
             for m in report.messages)
  pages, report = read_pages(path, with_labels=False)
  assert [p.url for p in pages] == ["a", "b", "c", "d"]
  assert pages[3].words == [] and pages[2].key_phrases is None
  with pytest.raises(OpenKpDataError, match="no usable page"):
    read_pages(of.write_lines(tmp_path, ["[]"], "bad.jsonl"), with_labels=False)
  with pytest.raises(FileNotFoundError):
    read_pages(str(tmp_path / "missing.jsonl"), with_labels=False)


def test_metric_by_hand(tmp_path):
  reference = [{"url": "u1", "KeyPhrases": [["Solar", "Kettle"], ["camping"], []]},
               {"url": "u2", "KeyPhrases": [["a"], ["b"]]},
               {"url": "u2", "KeyPhrases": [["x"]]}]         # the last line of u2 wins
  prediction = [{"url": "u1", "KeyPhrases": [["camping"], ["solar", "KETTLE"], ["camping"],
                                             ["best"], ["now"], ["solar", "kettle"]]},
                {"url": "u2", "KeyPhrases": ["x", ["a"]]},   # a plain string scores 0
                {"url": "u3", "KeyPhrases": [["x"]]}]
  scores = metrics.evaluate(reference, prediction)
  # u1: predictions (deduplicated) camping, solar kettle, best, now; reference of size 2.
  #   @1: tp 1 -> P 1, R .5, F1 2/3; @3: tp 2 -> P 2/3, R 1, F1 .8; @5: tp 2 -> P .4, R 1,
  #   F1 4/7.  u2: reference {x}; "x" as a string is "x" character-joined = "x" ... a
  #   one-letter string joins to itself, so use the ranked list: x, a -> @1 tp 1.
  u1 = {"P@1": 1.0, "R@1": 0.5, "F1@1": 2 / 3, "P@3": 2 / 3, "R@3": 1.0, "F1@3": 0.8,
        "P@5": 0.4, "R@5": 1.0, "F1@5": 4 / 7}
  u2 = {"P@1": 1.0, "R@1": 1.0, "F1@1": 1.0, "P@3": 1 / 3, "R@3": 1.0, "F1@3": 0.5,
        "P@5": 0.2, "R@5": 1.0, "F1@5": 1 / 3}
  for key in u1:
    assert scores[key] == pytest.approx((u1[key] + u2[key]) / 2), key
  assert (scores["pages"], scores["missing"], scores["extra"]) == (2, 0, 1)
  # A multi-letter plain string is joined letter by letter and never matches.
  assert metrics.normalize_phrases(["solar kettle", ["Solar", "Kettle"]]) == [
      "s o l a r   k e t t l e", "solar kettle"]
  missing = metrics.evaluate(reference, prediction[:1])
  assert missing["missing"] == 1 and missing["F1@1"] == pytest.approx(u1["F1@1"] / 2)
  path = of.write_lines(tmp_path, reference, "ref.jsonl")
  assert metrics.evaluate(path, prediction) == scores
  with pytest.raises(ValueError, match="url 'u0' has no key phrases"):
    metrics.evaluate([{"url": "u0", "KeyPhrases": []}] + reference, prediction)
  skipped = metrics.evaluate([{"url": "u0", "KeyPhrases": [[""]]}] + reference, prediction,
                             skip_empty_references=True)
  assert skipped["skipped_empty"] == 1 and skipped["F1@3"] == pytest.approx(scores["F1@3"])
  with pytest.raises(ValueError, match="line 1: field 'url'"):
    metrics.evaluate([{"KeyPhrases": [["a"]]}], prediction)


def test_baselines(tmp_path):
  page, _ = _page(tmp_path)
  assert baselines.first_words([page])[page.url] == [["Home"], ["About"], ["Solar"],
                                                     ["Kettle"], ["the"]]
  top = baselines.frequent_ngrams([page])[page.url]
  # solar x3; then "solar kettle" and "kettle" x2, the earlier start first.
  assert top[:3] == [["solar"], ["solar", "kettle"], ["kettle"]]
  assert decode.prediction_lines([page], {}) == [{"url": page.url, "KeyPhrases": []}]
