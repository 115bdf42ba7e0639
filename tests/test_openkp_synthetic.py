"""Synthetic OpenKP data: the official format, visual cues, baselines, rates, files on disk."""

import hashlib
import json
import os
import re
import statistics
import subprocess
import sys

import pytest

from synthetic_data import lexicon
from synthetic_data import openkp as synthetic
from tasks.openkp.data import read_pages

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORD_KEYS = ["url", "text", "VDOM", "KeyPhrases"]
ELEMENT_KEYS = {"Id", "text", "feature", "start_idx", "end_idx"}
TEXT_RE = re.compile(r"[A-Za-z0-9]+( [A-Za-z0-9]+)*")
FLAGS = ("is_block", "is_inline", "has_heading", "is_leaf", "is_bold")
HEADING = synthetic.FEATURE_NAMES.index("has_heading")
BOLD = synthetic.FEATURE_NAMES.index("is_bold")


@pytest.fixture(scope="module")
def train():
  return synthetic.generate_pages(120, seed=7)


@pytest.fixture(scope="module")
def dev():
  return synthetic.generate_pages(200, seed=7 + synthetic.DEV_SEED_OFFSET)


# ----------------------------------------------------------------------------- reference scorer


def _phrase(words):
  """A phrase's words lower-cased and joined by one space."""
  return " ".join(w.lower() for w in words).strip()


def _unique(phrases):
  """Non-empty phrases as strings, first occurrence kept, in order."""
  out = []
  for words in phrases:
    phrase = _phrase(words)
    if phrase and phrase not in out:
      out.append(phrase)
  return out


def f1_at_k(predictions, references, k):
  """F1@k of one page; None when the page has no reference phrase."""
  references = _unique(references)
  if not references:
    return None
  hits = sum(p in references for p in _unique(predictions)[:k])
  precision, recall = hits / k, hits / len(references)
  return 0.0 if hits == 0 else 2 * precision * recall / (precision + recall)


def mean_f1(pages, predict, k):
  """Mean F1@k over the pages with references."""
  scores = [f1_at_k(predict(page), page["KeyPhrases"], k) for page in pages]
  return statistics.mean(s for s in scores if s is not None)


def test_reference_scorer():
  refs = [["Solar", "Kettle"], ["brenholt"], ["solar", "kettle"]]  # 2 distinct phrases
  preds = [["solar", "KETTLE"], ["solar", "kettle"], [], ["home"], ["brenholt"]]
  assert f1_at_k(preds, refs, 1) == pytest.approx(2 * 1 * 0.5 / 1.5)  # P=1, R=1/2
  assert f1_at_k(preds, refs, 3) == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))  # P=2/3, R=1
  assert f1_at_k([["home"]], refs, 3) == 0.0
  assert f1_at_k([["brenholt"]], refs, 5) == pytest.approx(2 * 0.2 * 0.5 / 0.7)  # P=1/5
  assert f1_at_k(preds, [], 3) is None and f1_at_k(preds, [[]], 3) is None
  pages = [{"KeyPhrases": [["a"]]}, {"KeyPhrases": []}, {"KeyPhrases": [["b"]]}]
  assert mean_f1(pages, lambda page: [["a"]], 1) == 0.5


# ----------------------------------------------------------------------------- helpers


def _elements(page):
  return json.loads(page["VDOM"])


def _occurs(words, phrase):
  """Whether the phrase occurs in the words as consecutive words, ignoring case."""
  words, phrase = [w.lower() for w in words], [w.lower() for w in phrase]
  n = len(phrase)
  return any(words[i:i + n] == phrase for i in range(len(words) - n + 1))


def _cue_baseline(page, k=5):
  """N-grams of heading and bold elements, ranked by how often they occur in the text."""
  words = [w.lower() for w in page["text"].split(" ")]
  counts = {}
  for element in _elements(page):
    feature = element["feature"]
    if feature[HEADING] != 1 and feature[BOLD] != 1:
      continue
    inside = words[element["start_idx"]:element["end_idx"]]
    for n in range(1, 6):
      for i in range(len(inside) - n + 1):
        gram = tuple(inside[i:i + n])
        if gram[0] in synthetic.STOPWORDS or gram[-1] in synthetic.STOPWORDS:
          continue
        if gram not in counts:
          hits = sum(tuple(words[j:j + n]) == gram for j in range(len(words) - n + 1))
          counts[gram] = hits * (1 + 0.3 * n)
  return [list(g) for g in sorted(counts, key=lambda g: -counts[g])[:k]]


# ----------------------------------------------------------------------------- format


def test_importing_does_not_load_tensorflow():
  code = ("import sys, synthetic_data.openkp as s; s.generate_pages(2); "
          "print('tensorflow' in sys.modules)")
  out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       check=True)
  assert out.stdout.strip() == "False"


def test_public_constants():
  assert synthetic.GENERATOR_VERSION == 1 and synthetic.DEV_SEED_OFFSET == 1_000_003
  assert synthetic.TRAIN_FILENAME == "OpenKPTrain.jsonl"
  assert synthetic.DEV_FILENAME == "OpenKPDev.jsonl"
  names = synthetic.FEATURE_NAMES
  assert isinstance(names, tuple) and len(names) == 20
  assert names[:10] == ("x", "width", "y", "height", "is_block", "is_inline", "has_heading",
                        "is_leaf", "font_size", "is_bold")
  assert names[10:] == tuple("parent_" + n for n in names[:10])
  assert isinstance(synthetic.STOPWORDS, frozenset)
  assert all(w == w.lower() for w in synthetic.STOPWORDS)
  assert {"the", "of", "and", "to", "is"} <= synthetic.STOPWORDS


def test_records_have_the_official_keys_and_types(train):
  for page in train:
    assert list(page) == RECORD_KEYS
    assert isinstance(page["url"], str) and page["url"].startswith("http://")
    assert TEXT_RE.fullmatch(page["text"]), page["text"][:80]
    assert 150 <= len(page["text"].split(" ")) <= 700
    assert isinstance(page["VDOM"], str)
    assert isinstance(json.loads(page["VDOM"]), list)
    json.dumps(page)
  assert len({page["url"] for page in train}) == len(train)


def test_elements_tile_the_words_in_order(train):
  for page in train:
    words = page["text"].split(" ")
    elements = _elements(page)
    assert 15 <= len(elements) <= 80 and len(elements) <= 512
    position = 0
    ids = []
    for element in elements:
      assert set(element) == ELEMENT_KEYS
      assert all(isinstance(element[key], int) for key in ("Id", "start_idx", "end_idx"))
      assert element["start_idx"] == position < element["end_idx"]
      assert element["text"] == " ".join(words[element["start_idx"]:element["end_idx"]])
      position = element["end_idx"]
      ids.append(element["Id"])
    assert position == len(words)
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


def test_features_are_plausible(train):
  for page in train:
    previous_y = 0.0
    for element in _elements(page):
      feature = element["feature"]
      assert len(feature) == 20 and all(type(v) is float for v in feature)
      for offset in (0, 10):
        box = dict(zip(synthetic.FEATURE_NAMES[:10], feature[offset:offset + 10]))
        assert 0 <= box["x"] <= 1200 and 50 <= box["width"] <= 1200
        assert box["x"] + box["width"] <= 1200
        assert box["y"] >= 0 and 10 <= box["height"] <= 200
        assert 10 <= box["font_size"] <= 40
        assert all(box[flag] in (0.0, 1.0) for flag in FLAGS)
      assert feature[2] >= previous_y  # reading order runs down the page
      previous_y = feature[2]


def test_page_layout(train):
  """Navigation first (inline, small, never a key phrase), then a bold title heading."""
  for page in train:
    elements = _elements(page)
    home = elements[1]  # the first menu word
    assert home["text"] in ("Home", "HOME") and home["end_idx"] - home["start_idx"] == 1
    assert home["feature"][4:6] == [0.0, 1.0] and home["feature"][8] <= 14  # inline, small
    title = next(e for e in elements if e["feature"][HEADING] == 1)
    assert title["feature"][BOLD] == 1 and title["feature"][8] >= 28
    assert elements[-1]["feature"][8] <= 12  # footer
    first = [w.lower() for w in page["text"].split(" ")[:5]]
    for phrase in page["KeyPhrases"]:
      assert not _occurs(first, phrase)


def test_key_phrases(train, dev):
  lengths = []
  for page in train + dev:
    phrases = page["KeyPhrases"]
    assert isinstance(phrases, list) and 1 <= len(phrases) <= 3
    words = page["text"].split(" ")
    for phrase in phrases:
      assert isinstance(phrase, list) and all(isinstance(w, str) and w for w in phrase)
      assert phrase == [w.lower() for w in phrase]
      assert _occurs(words, phrase), (phrase, page["url"])
      lengths.append(len(phrase))
    assert len({_phrase(p) for p in phrases}) == len(phrases)
  assert min(lengths) == 1 and max(lengths) <= 5
  assert sum(n <= 3 for n in lengths) >= 0.9 * len(lengths)
  assert sum(n == 1 for n in lengths) >= 0.15 * len(lengths)


def test_case_varies(train):
  """Key phrases appear in another case than in KeyPhrases; some pages use capitals."""
  other_case = shouting = 0
  for page in train:
    text = " " + page["text"] + " "
    if any(" " + " ".join(p) + " " not in text for p in page["KeyPhrases"]):
      other_case += 1
    if any(len(w) > 2 and w.isupper() and w.isalpha() for w in page["text"].split(" ")):
      shouting += 1
  assert other_case >= 0.5 * len(train)
  assert 0.1 * len(train) <= shouting <= 0.8 * len(train)


def test_vocabulary_is_shared_by_train_and_dev(train, dev):
  """One fixed lexicon: dev words are nearly all seen in train (a small vocabulary suffices)."""
  train_words = {w.lower() for page in train for w in page["text"].split(" ")}
  dev_words = {w.lower() for page in dev for w in page["text"].split(" ")}
  assert len(dev_words - train_words) <= 0.1 * len(dev_words)
  assert len(train_words) < 2000


def test_same_seed_same_pages_and_train_dev_differ(train, dev):
  assert synthetic.generate_pages(120, seed=7) == train
  assert synthetic.generate_pages(10, seed=7) == train[:10]
  other = synthetic.generate_pages(20, seed=8)
  assert [p["text"] for p in other] != [p["text"] for p in train[:20]]
  assert not {p["url"] for p in train} & {p["url"] for p in dev}
  assert not {p["text"] for p in train} & {p["text"] for p in dev}


# ----------------------------------------------------------------------------- learnability


def test_key_phrases_carry_visual_cues(dev):
  cued = plain_bold = 0
  for page in dev:
    words = page["text"].split(" ")
    marked = [words[e["start_idx"]:e["end_idx"]] for e in _elements(page)
              if e["feature"][HEADING] == 1 or e["feature"][BOLD] == 1]
    if all(any(_occurs(m, phrase) for m in marked) for phrase in page["KeyPhrases"]):
      cued += 1
    # Not trivial: bold spans that are not key phrases.
    keys = {_phrase(p) for p in page["KeyPhrases"]}
    if any(_phrase(m) not in keys for m in marked[1:] if len(m) <= 5):
      plain_bold += 1
  assert cued >= 0.8 * len(dev)
  assert cued < len(dev)  # a few pages give no visual cue for some key phrase
  assert plain_bold >= 0.5 * len(dev)


def test_baselines(dev):
  scores = {}
  for name, predict in (("first five words", synthetic.first_words_baseline),
                        ("frequent n-grams", synthetic.frequent_ngrams_baseline),
                        ("heading/bold cue (test heuristic)", _cue_baseline)):
    scores[name] = [mean_f1(dev, predict, k) for k in (1, 3, 5)]
    print(f"\n{name}: F1@1 {scores[name][0]:.3f}  F1@3 {scores[name][1]:.3f}  "
          f"F1@5 {scores[name][2]:.3f}", end="")
  print()
  assert scores["first five words"][1] < 0.05
  assert 0.03 <= scores["frequent n-grams"][1] <= 0.35
  # Visual cues carry signal that frequency alone misses.
  assert scores["heading/bold cue (test heuristic)"][1] > scores["frequent n-grams"][1] + 0.1


def test_first_words_baseline():
  page = {"text": "Brel News HOME About Contact Shop Blog"}
  assert synthetic.first_words_baseline(page) == [
      ["brel"], ["news"], ["home"], ["about"], ["contact"]]
  assert synthetic.first_words_baseline(page, k=2) == [["brel"], ["news"]]


def test_frequent_ngrams_baseline():
  page = {"text": "The Kettle of the kettle and the Solar Kettle is a solar kettle to the"}
  # kettle x4; "solar" and "solar kettle" x2 (tie: earlier start, then shorter); "the kettle"
  # x2 starts before them. N-grams of stopwords only ("the", "of the") never count.
  assert synthetic.frequent_ngrams_baseline(page, k=4) == [
      ["kettle"], ["the", "kettle"], ["solar"], ["solar", "kettle"]]
  assert synthetic.frequent_ngrams_baseline(page, k=6, max_n=1) == [
      ["kettle"], ["solar"]]
  top = synthetic.frequent_ngrams_baseline(page, k=20)
  assert ["kettle", "of"] in top and ["the"] not in top and ["of", "the"] not in top
  assert ["the", "kettle", "of"] in top and ["kettle", "of", "the"] in top
  assert len(synthetic.frequent_ngrams_baseline(page)) == 5


# ----------------------------------------------------------------------------- parameters


def test_empty_rate_clears_key_phrases_only():
  base = synthetic.generate_pages(300, seed=5)
  pages = synthetic.generate_pages(300, seed=5, empty_rate=0.2)
  empty = [i for i, p in enumerate(pages) if p["KeyPhrases"] == []]
  assert 30 <= len(empty) <= 90
  for page, original in zip(pages, base):
    assert page["text"] == original["text"] and page["url"] == original["url"]
    assert page["KeyPhrases"] in ([], original["KeyPhrases"])
  assert all(p["KeyPhrases"] for p in base)
  assert all(p["KeyPhrases"] == [] for p in synthetic.generate_pages(5, seed=5, empty_rate=1.0))


def test_duplicate_rate_repeats_earlier_urls_with_other_pages():
  base = synthetic.generate_pages(300, seed=5)
  pages = synthetic.generate_pages(300, seed=5, duplicate_rate=0.2)
  seen = {}
  repeats = 0
  for page, original in zip(pages, base):
    assert page["text"] == original["text"] and page["KeyPhrases"] == original["KeyPhrases"]
    if page["url"] in seen:
      repeats += 1
      assert page["text"] != seen[page["url"]]["text"]
    else:
      assert page["url"] == original["url"]
    seen[page["url"]] = page
  assert 30 <= repeats <= 90
  # Last record wins: the mapping keeps the later page.
  last = {p["url"]: p for p in pages}
  assert len(last) == 300 - repeats
  assert len({p["url"] for p in base}) == 300


def test_max_words_and_argument_checks():
  pages = synthetic.generate_pages(60, seed=2, max_words=250)
  assert all(150 <= len(p["text"].split(" ")) <= 250 for p in pages)
  assert all(p["KeyPhrases"] for p in pages)
  with pytest.raises(ValueError):
    synthetic.generate_pages(1, max_words=100)
  with pytest.raises(ValueError):
    synthetic.generate_pages(1, empty_rate=1.5)
  with pytest.raises(ValueError):
    synthetic.generate_pages(1, duplicate_rate=-0.1)


# ----------------------------------------------------------------------------- files


def _read_jsonl(path):
  with open(path, encoding="utf-8") as f:
    return [json.loads(line) for line in f]


def test_write_dataset_and_ensure_demo_data(tmp_path):
  directory = str(tmp_path / "openkp")
  paths = synthetic.ensure_demo_data(directory, num_train=12, num_dev=8, seed=3)
  assert paths == {"train": os.path.join(directory, synthetic.TRAIN_FILENAME),
                   "dev": os.path.join(directory, synthetic.DEV_FILENAME),
                   "dev_unseen": os.path.join(directory, synthetic.DEV_UNSEEN_FILENAME),
                   "test_unseen": os.path.join(directory, synthetic.TEST_UNSEEN_FILENAME)}
  assert _read_jsonl(paths["train"]) == synthetic.generate_pages(12, seed=3)
  assert _read_jsonl(paths["dev"]) == synthetic.generate_pages(
      8, seed=3 + synthetic.DEV_SEED_OFFSET)
  with open(os.path.join(directory, synthetic.INFO_FILENAME), encoding="utf-8") as f:
    info = json.load(f)
  assert info["generator_version"] == synthetic.GENERATOR_VERSION
  assert (info["num_train"], info["num_dev"], info["seed"]) == (12, 8, 3)
  assert sorted(os.listdir(directory)) == sorted(
      [synthetic.TRAIN_FILENAME, synthetic.DEV_FILENAME, synthetic.DEV_UNSEEN_FILENAME,
       synthetic.TEST_UNSEEN_FILENAME, synthetic.INFO_FILENAME])

  # Same arguments: the files are reused, not rewritten.
  old = 1_000_000_000
  for path in paths.values():
    os.utime(path, (old, old))
  assert synthetic.ensure_demo_data(directory, num_train=12, num_dev=8, seed=3) == paths
  assert all(os.stat(p).st_mtime == old for p in paths.values())
  # Other arguments: rewritten.
  synthetic.ensure_demo_data(directory, num_train=12, num_dev=5, seed=3)
  assert len(_read_jsonl(paths["dev"])) == 5
  assert os.stat(paths["dev"]).st_mtime != old
  # A missing file is rewritten too.
  os.remove(paths["train"])
  synthetic.ensure_demo_data(directory, num_train=12, num_dev=5, seed=3)
  assert len(_read_jsonl(paths["train"])) == 12


def test_write_dataset_overwrites_atomically(tmp_path):
  directory = str(tmp_path)
  paths = synthetic.write_dataset(directory, num_train=3, num_dev=2, seed=1)
  paths_again = synthetic.write_dataset(directory, num_train=4, num_dev=2, seed=1)
  assert paths == paths_again
  assert len(_read_jsonl(paths["train"])) == 4
  assert not [name for name in os.listdir(directory) if name.endswith(".tmp")]


# ----------------------------------------------------------------------------- unseen entities

# sha256 of LEXICON (JSON, keys sorted) and of the train and dev files of
# `ensure_demo_data(..., num_train=12, num_dev=8, seed=3)`, from before the unseen splits: the
# measured demo results depend on these pages, so adding splits must not change them.
LEXICON_SHA256 = "0a17458481204b3ab4f4d087a95a43c553a12d5909d3a408e9874ce9ca2b2baa"
SMALL_FILES_SHA256 = {
    "train": "bd592709fed4a211ef8a8a563b502ebb637e19350e8543f6761fd3c40f46f775",
    "dev": "d2bd3c66f92dcdb67b09bd776ab27e67cac675f23b1047abbcb047a0995435d5"}
UNSEEN_SPLITS = ("dev_unseen", "test_unseen")


@pytest.fixture(scope="module")
def dev_unseen():
  return synthetic.generate_pages(200, seed=7 + synthetic.UNSEEN_DEV_SEED_OFFSET, names="unseen")


@pytest.fixture(scope="module")
def unseen_test():
  return synthetic.generate_pages(120, seed=7 + synthetic.UNSEEN_TEST_SEED_OFFSET,
                                  names="unseen")


@pytest.fixture(scope="module")
def demo_files(tmp_path_factory):
  """A small dataset on disk: split name -> its records, read back from the files."""
  directory = str(tmp_path_factory.mktemp("openkp_unseen"))
  paths = synthetic.ensure_demo_data(directory, num_train=300, num_dev=60, seed=4)
  return paths, {split: _read_jsonl(path) for split, path in paths.items()}


def _lower_words(pages):
  """Every word of the pages' texts, lower-case."""
  return {w.lower() for page in pages for w in page["text"].split(" ")}


def _sha256(path):
  with open(path, "rb") as f:
    return hashlib.sha256(f.read()).hexdigest()


def test_unseen_generation_does_not_load_tensorflow(tmp_path):
  code = ("import sys, synthetic_data.openkp as s; s.generate_pages(2, names='unseen'); "
          f"s.ensure_demo_data({str(tmp_path)!r}, 2, 2); print('tensorflow' in sys.modules)")
  out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       check=True)
  assert out.stdout.strip() == "False"


def test_unseen_splits_leave_lexicon_train_and_dev_unchanged(tmp_path):
  dumped = json.dumps(synthetic.LEXICON, sort_keys=True).encode("utf-8")
  assert hashlib.sha256(dumped).hexdigest() == LEXICON_SHA256
  paths = synthetic.ensure_demo_data(str(tmp_path), num_train=12, num_dev=8, seed=3)
  assert {split: _sha256(paths[split]) for split in ("train", "dev")} == SMALL_FILES_SHA256
  # "seen" is the default.
  assert synthetic.generate_pages(5, seed=3, names="seen") == synthetic.generate_pages(5, seed=3)


def test_unseen_lexicon_is_shaped_like_the_seen_one():
  seen, unseen = synthetic.LEXICON, synthetic.UNSEEN_LEXICON
  assert synthetic.LEXICONS == {"seen": seen, "unseen": unseen}
  assert list(unseen) == list(seen)
  for pool, words in unseen.items():
    assert len(words) == len(seen[pool]) == len(set(words))
    assert all(w.isascii() and w.isalpha() for w in words)
    assert {w[:1].isupper() for w in words} == {w[:1].isupper() for w in seen[pool]}
  assert not lexicon.words_of(unseen) & lexicon.words_of(seen)
  assert not lexicon.words_of(unseen) & synthetic._english_words()
  with pytest.raises(ValueError):
    synthetic.generate_pages(1, names="other")


def test_unseen_pages_are_in_the_official_format(dev_unseen, unseen_test):
  # The same checks as for train and dev.
  for pages in (dev_unseen, unseen_test):
    test_records_have_the_official_keys_and_types(pages)
    test_elements_tile_the_words_in_order(pages)
    test_features_are_plausible(pages)
    test_page_layout(pages)
    test_case_varies(pages)
  test_key_phrases(dev_unseen, unseen_test)
  test_key_phrases_carry_visual_cues(dev_unseen)


def test_unseen_files_are_read_by_the_task(demo_files):
  paths, records = demo_files
  for split in UNSEEN_SPLITS:
    assert len(records[split]) == 60
    assert all(list(page) == RECORD_KEYS for page in records[split])
    pages, report = read_pages(paths[split], with_labels=True)
    assert len(pages) == 60 and not report.skipped and not report.repaired, report.messages
    assert all(page.key_phrases for page in pages)


def test_unseen_splits_are_deterministic_and_differ(demo_files, tmp_path):
  paths, records = demo_files
  assert records["dev_unseen"] == synthetic.generate_pages(
      60, seed=4 + synthetic.UNSEEN_DEV_SEED_OFFSET, names="unseen")
  assert records["test_unseen"] == synthetic.generate_pages(
      60, seed=4 + synthetic.UNSEEN_TEST_SEED_OFFSET, names="unseen")
  again = synthetic.write_dataset(str(tmp_path), num_train=300, num_dev=60, seed=4)
  assert {split: _sha256(p) for split, p in again.items()} == {
      split: _sha256(p) for split, p in paths.items()}
  texts = {split: {page["text"] for page in pages} for split, pages in records.items()}
  urls = {split: {page["url"] for page in pages} for split, pages in records.items()}
  for split in UNSEEN_SPLITS:
    for other in records:
      if other != split:
        assert not texts[split] & texts[other] and not urls[split] & urls[other]


def test_unseen_names_never_occur_in_train(demo_files, dev_unseen, unseen_test):
  _, records = demo_files
  unseen_words = lexicon.words_of(synthetic.UNSEEN_LEXICON)
  seen_words = lexicon.words_of(synthetic.LEXICON)
  train_words = _lower_words(records["train"])
  assert not unseen_words & train_words
  assert not unseen_words & _lower_words(records["dev"])
  for pages in (records["dev_unseen"], records["test_unseen"], dev_unseen, unseen_test):
    words = _lower_words(pages)
    assert not seen_words & words  # no seen name either
    assert len(unseen_words & words) >= 0.25 * len(unseen_words)
    assert all(set(page["text"].lower().split(" ")) & unseen_words for page in pages)
    phrases = [p for page in pages for p in page["KeyPhrases"]]
    named = [set(p) & unseen_words for p in phrases if set(p) & unseen_words]
    assert len(named) >= 0.7 * len(phrases)  # the rest are English (e.g. "solar kettle")


def test_seen_dev_shares_names_with_train(demo_files, train, dev, dev_unseen):
  """The comparison split: dev's key phrases name entities whose words train has seen."""
  _, records = demo_files
  seen_words = lexicon.words_of(synthetic.LEXICON)
  for train_pages, dev_pages in ((records["train"], records["dev"]), (train, dev)):
    train_words = _lower_words(train_pages)
    named = [set(p) & seen_words for page in dev_pages for p in page["KeyPhrases"]
             if set(p) & seen_words]
    assert len(named) >= 0.7 * sum(len(page["KeyPhrases"]) for page in dev_pages)
    assert sum(words <= train_words for words in named) >= 0.9 * len(named)
  # Every name-word of the unseen split is new to train.
  train_words = _lower_words(train)
  unseen_names = [set(p) & lexicon.words_of(synthetic.UNSEEN_LEXICON)
                  for page in dev_unseen for p in page["KeyPhrases"]]
  assert all(not words & train_words for words in unseen_names)


def test_old_demo_directories_are_regenerated(tmp_path):
  """A directory written before the unseen splits (no unseen files, old info) is rewritten."""
  directory = str(tmp_path)
  paths = synthetic.write_dataset(directory, num_train=6, num_dev=4, seed=2)
  info_path = os.path.join(directory, synthetic.INFO_FILENAME)
  with open(info_path, encoding="utf-8") as f:
    info = json.load(f)
  assert info["unseen_dev_seed"] == 2 + synthetic.UNSEEN_DEV_SEED_OFFSET
  assert info["unseen_test_seed"] == 2 + synthetic.UNSEEN_TEST_SEED_OFFSET
  old_info = {key: info[key] for key in ("generator_version", "num_train", "num_dev", "seed",
                                         "dev_seed")}
  with open(info_path, "w", encoding="utf-8") as f:
    json.dump(old_info, f)
  for split in UNSEEN_SPLITS:
    os.remove(paths[split])
  assert synthetic.ensure_demo_data(directory, num_train=6, num_dev=4, seed=2) == paths
  assert all(os.path.exists(p) for p in paths.values())
  with open(info_path, encoding="utf-8") as f:
    assert json.load(f) == info
  # A missing unseen file alone is rewritten too.
  os.remove(paths["test_unseen"])
  synthetic.ensure_demo_data(directory, num_train=6, num_dev=4, seed=2)
  assert len(_read_jsonl(paths["test_unseen"])) == 4
