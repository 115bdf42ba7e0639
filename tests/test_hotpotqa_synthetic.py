"""Synthetic HotpotQA data: official format, determinism, answers in supporting sentences."""

import collections
import json
import os
import pathlib
import re

import pytest

from synthetic_data import hotpotqa as synthetic

KEYS = {"_id", "question", "answer", "supporting_facts", "context", "type", "level"}


@pytest.fixture(scope="module")
def examples():
  return synthetic.generate_examples(200, seed=7)


def _sentences(item):
  return {title: sentences for title, sentences in item["context"]}


def test_same_seed_gives_identical_output():
  assert synthetic.generate_examples(30, seed=3) == synthetic.generate_examples(30, seed=3)


def test_different_seeds_give_different_examples():
  a = synthetic.generate_examples(30, seed=3)
  b = synthetic.generate_examples(30, seed=4)
  assert not {e["_id"] for e in a} & {e["_id"] for e in b}
  assert [e["question"] for e in a] != [e["question"] for e in b]


def test_items_have_the_official_keys_and_types(examples):
  for item in examples:
    assert set(item) == KEYS
    assert isinstance(item["_id"], str) and re.fullmatch(r"[0-9a-f]{24}", item["_id"])
    assert isinstance(item["question"], str) and item["question"].endswith("?")
    assert isinstance(item["answer"], str) and item["answer"].strip()
    assert item["type"] in ("bridge", "comparison")
    assert item["level"] in ("easy", "medium", "hard")
    for fact in item["supporting_facts"]:
      assert isinstance(fact, list) and len(fact) == 2
      assert isinstance(fact[0], str) and isinstance(fact[1], int)
    for paragraph in item["context"]:
      assert isinstance(paragraph, list) and len(paragraph) == 2
      title, sentences = paragraph
      assert isinstance(title, str) and isinstance(sentences, list)
      assert all(isinstance(s, str) for s in sentences)
  assert len({item["_id"] for item in examples}) == len(examples)


def test_ten_paragraphs_with_unique_titles(examples):
  for item in examples:
    titles = [title for title, _ in item["context"]]
    assert len(titles) == synthetic.NUM_PARAGRAPHS
    assert len(set(titles)) == len(titles)


def test_supporting_facts_point_at_two_gold_paragraphs(examples):
  for item in examples:
    paragraphs = _sentences(item)
    for title, index in item["supporting_facts"]:
      assert title in paragraphs
      assert 0 <= index < len(paragraphs[title])
    assert len({title for title, _ in item["supporting_facts"]}) == 2


def test_span_answers_occur_in_a_supporting_sentence(examples):
  for item in examples:
    if item["answer"] in ("yes", "no"):
      continue
    paragraphs = _sentences(item)
    support = [paragraphs[title][index] for title, index in item["supporting_facts"]]
    assert any(item["answer"] in sentence for sentence in support), item


def test_sentence_spacing_and_lengths(examples):
  for item in examples:
    for _, sentences in item["context"]:
      assert 3 <= len(sentences) <= 6
      assert not sentences[0].startswith(" ")
      for sentence in sentences[1:]:
        assert sentence.startswith(" ") and not sentence.startswith("  ")
      for sentence in sentences:
        assert 6 <= len(sentence.split()) <= 25, sentence
        assert sentence.rstrip().endswith(".")


def test_types_and_answers_are_balanced(examples):
  types = collections.Counter(item["type"] for item in examples)
  assert types["bridge"] and types["comparison"]
  answers = collections.Counter(
      item["answer"] if item["answer"] in ("yes", "no") else "span" for item in examples)
  assert answers["yes"] and answers["no"] and answers["span"]
  yes_share = answers["yes"] / (answers["yes"] + answers["no"])
  assert 0.35 <= yes_share <= 0.65
  assert {item["level"] for item in examples} == {"easy", "medium", "hard"}


def test_text_exercises_non_ascii_and_punctuation(examples):
  text = json.dumps(examples, ensure_ascii=False)
  assert any(ord(c) > 127 and c.isalpha() for c in text)
  for mark in ("'", "-", ",", "(", ")"):
    assert mark in text


def test_vocabulary_stays_moderate():
  words = set()
  for item in synthetic.generate_examples(300, seed=1):
    for _, sentences in item["context"]:
      for sentence in sentences:
        words.update(re.findall(r"\w+", sentence))
  assert 200 <= len(words) <= 1500


def test_write_dataset_round_trip(tmp_path):
  path = str(tmp_path / "data" / "synthetic.json")
  assert synthetic.write_dataset(path, 25, seed=5) == path
  with open(path, encoding="utf-8") as f:
    assert json.load(f) == synthetic.generate_examples(25, seed=5)
  with open(path, encoding="utf-8") as f:
    assert "\\u" not in f.read()  # non-ASCII letters are written as UTF-8, not escaped


def test_ensure_demo_data_reuses_files_only_for_the_same_arguments(tmp_path):
  directory = str(tmp_path)
  train_path, dev_path = synthetic.ensure_demo_data(directory, 20, 10, seed=2)
  assert os.path.basename(train_path) == synthetic.TRAIN_FILENAME
  assert os.path.basename(dev_path) == synthetic.DEV_FILENAME
  with open(train_path, encoding="utf-8") as f:
    train = json.load(f)
  with open(dev_path, encoding="utf-8") as f:
    dev = json.load(f)
  assert len(train) == 20 and len(dev) == 10
  assert not {e["_id"] for e in train} & {e["_id"] for e in dev}

  def snapshot():
    return [(os.stat(p).st_mtime_ns, pathlib.Path(p).read_bytes()) for p in (train_path, dev_path)]

  before = snapshot()
  assert synthetic.ensure_demo_data(directory, 20, 10, seed=2) == (train_path, dev_path)
  assert snapshot() == before                       # same arguments: reused as they are
  assert synthetic.ensure_demo_data(directory, 50, 30, seed=9) == (train_path, dev_path)
  with open(train_path, encoding="utf-8") as f:    # other arguments: written again
    assert json.load(f) == synthetic.generate_examples(50, seed=9)
