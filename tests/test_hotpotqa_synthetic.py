"""Synthetic HotpotQA data: official format, determinism, answers in supporting sentences,
and the splits about unseen entities (names that never occur in train)."""

import collections
import hashlib
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from synthetic_data import hotpotqa as synthetic
from synthetic_data import lexicon
from tasks.hotpotqa.data import read_examples

KEYS = {"_id", "question", "answer", "supporting_facts", "context", "type", "level"}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPLITS = ("train", "dev", "dev_unseen", "test_unseen")
UNSEEN_SPLITS = ("dev_unseen", "test_unseen")


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
  paths = synthetic.ensure_demo_data(directory, 20, 10, seed=2)
  train_path, dev_path = paths["train"], paths["dev"]
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
  assert synthetic.ensure_demo_data(directory, 20, 10, seed=2) == paths
  assert snapshot() == before                       # same arguments: reused as they are
  assert synthetic.ensure_demo_data(directory, 50, 30, seed=9) == paths
  with open(train_path, encoding="utf-8") as f:    # other arguments: written again
    assert json.load(f) == synthetic.generate_examples(50, seed=9)


# ----------------------------------------------------------------------------- unseen entities

DEMO_SIZES = {"num_train": 200, "num_dev": 30, "seed": 3}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
  """ensure_demo_data's paths and each split's items and lower-cased words (whole file text)."""
  paths = synthetic.ensure_demo_data(str(tmp_path_factory.mktemp("demo")), **DEMO_SIZES)
  items, words = {}, {}
  for split in SPLITS:
    text = pathlib.Path(paths[split]).read_text(encoding="utf-8")
    items[split] = json.loads(text)
    words[split] = set(re.findall(r"\w+", text.lower()))
  return {"paths": paths, "items": items, "words": words}


def _name_words(lex):
  """A lexicon's words without the affixes both lexicons share ("O'", "-on-Sea", ...)."""
  return lexicon.words_of(lex) - synthetic.NAME_AFFIX_WORDS


def test_importing_does_not_load_tensorflow():
  code = "import sys, synthetic_data.hotpotqa; print('tensorflow' in sys.modules)"
  out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                       text=True, check=True)
  assert out.stdout.strip() == "False"


def test_demo_data_has_the_unseen_splits_with_their_file_names(demo):
  paths = demo["paths"]
  assert set(paths) == set(SPLITS)
  assert os.path.basename(paths["dev_unseen"]) == synthetic.DEV_UNSEEN_FILENAME
  assert os.path.basename(paths["test_unseen"]) == synthetic.TEST_UNSEEN_FILENAME
  assert len({os.path.dirname(p) for p in paths.values()}) == 1
  for split in UNSEEN_SPLITS:
    assert len(demo["items"][split]) == DEMO_SIZES["num_dev"]
  with open(os.path.join(os.path.dirname(paths["train"]), synthetic.INFO_FILENAME)) as f:
    info = json.load(f)
  seed = DEMO_SIZES["seed"]
  assert info["generator_version"] == synthetic.GENERATOR_VERSION >= 2
  assert info["dev_unseen_seed"] == seed + synthetic.UNSEEN_DEV_SEED_OFFSET
  assert info["test_unseen_seed"] == seed + synthetic.UNSEEN_TEST_SEED_OFFSET


def test_unseen_splits_are_in_the_official_format(demo):
  checks = (test_items_have_the_official_keys_and_types, test_ten_paragraphs_with_unique_titles,
            test_supporting_facts_point_at_two_gold_paragraphs,
            test_span_answers_occur_in_a_supporting_sentence, test_sentence_spacing_and_lengths)
  for split in UNSEEN_SPLITS:
    for check in checks:
      check(demo["items"][split])
    examples, report = read_examples(demo["paths"][split], with_labels=True)
    assert len(examples) == report.records == DEMO_SIZES["num_dev"]
    assert not report.skipped and not report.repaired, report.summary()
  # Both answer kinds and both question types occur in a split this small.
  items = demo["items"]["dev_unseen"] + demo["items"]["test_unseen"]
  assert {item["type"] for item in items} == {"bridge", "comparison"}
  assert any(item["answer"] in ("yes", "no") for item in items)
  assert any(item["answer"] not in ("yes", "no") for item in items)


def test_unseen_splits_are_deterministic_and_distinct(demo):
  seed, num_dev = DEMO_SIZES["seed"], DEMO_SIZES["num_dev"]
  offsets = {"dev_unseen": synthetic.UNSEEN_DEV_SEED_OFFSET,
             "test_unseen": synthetic.UNSEEN_TEST_SEED_OFFSET}
  for split, offset in offsets.items():
    again = synthetic.generate_examples(num_dev, seed + offset, names="unseen")
    assert demo["items"][split] == again
    assert again == synthetic.generate_examples(num_dev, seed + offset, names="unseen")
  ids = {split: {item["_id"] for item in demo["items"][split]} for split in SPLITS}
  for i, a in enumerate(SPLITS):
    for b in SPLITS[i + 1:]:
      assert not ids[a] & ids[b], (a, b)
  # The same seed under the two lexicons: different names, different ids.
  seen, unseen = (synthetic.generate_examples(5, seed=1, names=n) for n in ("seen", "unseen"))
  assert not {e["_id"] for e in seen} & {e["_id"] for e in unseen}
  with pytest.raises(ValueError, match="names"):
    synthetic.generate_examples(1, names="other")


def test_unseen_lexicon_is_shaped_like_the_seen_one_and_shares_only_affixes():
  seen, unseen = synthetic.LEXICON, synthetic.UNSEEN_LEXICON
  assert list(unseen) == list(seen)
  assert {pool: len(names) for pool, names in unseen.items()} == {
      pool: len(names) for pool, names in seen.items()}
  assert lexicon.words_of(unseen) & lexicon.words_of(seen) <= synthetic.NAME_AFFIX_WORDS
  assert not set().union(*seen.values()) & set().union(*unseen.values())


def test_unseen_names_never_occur_in_train(demo):
  unseen_words = _name_words(synthetic.UNSEEN_LEXICON)
  assert not unseen_words & demo["words"]["train"]
  assert not unseen_words & demo["words"]["dev"]
  # Every name word of the unseen splits is an unseen one: none comes from the seen lexicon
  # (people, towns, countries, rivers, companies, prizes and products alike).
  seen_words = _name_words(synthetic.LEXICON)
  for split in UNSEEN_SPLITS:
    words = demo["words"][split]
    assert not seen_words & words, split
    assert len(unseen_words & words) >= len(unseen_words) // 2, split
    for item in demo["items"][split]:
      for title, _ in item["context"]:
        pieces = {piece.lower() for piece in re.split(r"[\s'\-]+", title) if piece}
        assert pieces & unseen_words, title
        assert not pieces & seen_words, title


def test_seen_dev_shares_names_with_train(demo):
  seen_words = _name_words(synthetic.LEXICON)
  dev_names = seen_words & demo["words"]["dev"]
  assert not _name_words(synthetic.UNSEEN_LEXICON) & demo["words"]["dev"]
  assert len(dev_names & demo["words"]["train"]) >= 0.9 * len(dev_names) > 0


def test_train_and_dev_bytes_did_not_change_with_the_unseen_splits(tmp_path):
  # sha256 of the files written before the unseen splits existed (generator version 1).
  paths = synthetic.ensure_demo_data(str(tmp_path), 20, 10, seed=2)
  digests = {split: hashlib.sha256(pathlib.Path(paths[split]).read_bytes()).hexdigest()
             for split in ("train", "dev")}
  assert digests == {
      "train": "4161d00e6c1a510f729700edb84d2197d3f815e332ac210dfe38964cb029882e",
      "dev": "69e5b9ca07002049ffcd97e9c98e78204b4ce8f5e23ffc7529bada1de0e2b907"}
  assert synthetic.generate_examples(3, seed=2) == synthetic.generate_examples(3, 2, "seen")


def test_demo_data_of_an_older_generator_version_is_rewritten(tmp_path):
  directory = str(tmp_path)
  paths = synthetic.ensure_demo_data(directory, 6, 4, seed=1)
  info_path = os.path.join(directory, synthetic.INFO_FILENAME)
  with open(info_path, encoding="utf-8") as f:
    info = json.load(f)
  old = {key: info[key] for key in ("num_train", "num_dev", "seed", "dev_seed")}
  old["generator_version"] = 1               # what version 1 wrote: no unseen splits
  with open(info_path, "w", encoding="utf-8") as f:
    json.dump(old, f)
  for split in UNSEEN_SPLITS:
    os.remove(paths[split])
  assert synthetic.ensure_demo_data(directory, 6, 4, seed=1) == paths
  assert all(os.path.exists(p) for p in paths.values())
  with open(info_path, encoding="utf-8") as f:
    assert json.load(f) == info
