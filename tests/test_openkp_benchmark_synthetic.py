"""Benchmark-style synthetic OpenKP: format, determinism, held-out families, names, lengths."""

import json
import os
import re
import statistics
import subprocess
import sys

import pytest

import hash_seeds

from synthetic_data import lexicon
from synthetic_data import openkp as small
from synthetic_data import openkp_benchmark as bench
from tasks.openkp.baselines import top_ngrams
from tasks.openkp.data import read_pages

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORD_KEYS = ["url", "text", "VDOM", "KeyPhrases"]
ELEMENT_KEYS = {"Id", "text", "feature", "start_idx", "end_idx"}
TEXT_RE = re.compile(r"[A-Za-z0-9]+( [A-Za-z0-9]+)*")
HEADING = bench.FEATURE_NAMES.index("has_heading")
BOLD = bench.FEATURE_NAMES.index("is_bold")
SLOT_RE = re.compile(r"\{[a-z]+\}")
# The bands the module docstring and docs/synthetic_data/openkp.md document.
MEDIAN_BAND = (700, 900)
P90_BAND = (1400, 2000)


@pytest.fixture(scope="module")
def train():
  return bench.generate_examples(48, seed=3)


@pytest.fixture(scope="module")
def held_out():
  return bench.generate_examples(48, seed=3, split="dev_unseen_templates", names="unseen",
                                 families=bench.HELD_OUT_FAMILIES)


@pytest.fixture(scope="module")
def many():
  """Enough pages for length and baseline statistics: train families, then held-out ones."""
  return (bench.generate_examples(300, seed=11),
          bench.generate_examples(300, seed=12, split="test_unseen_templates", names="unseen",
                                  families=bench.HELD_OUT_FAMILIES))


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
  directory = str(tmp_path_factory.mktemp("openkp_benchmark"))
  return directory, bench.ensure_demo_data(directory, num_train=30, num_dev=12, seed=5)


def _elements(page):
  return json.loads(page["VDOM"])


def _lower(words):
  return [w.lower() for w in words]


def _count(words, phrase):
  """How often the phrase occurs in the words as consecutive words (case-insensitive)."""
  words, phrase = _lower(words), _lower(phrase)
  n = len(phrase)
  return sum(words[i:i + n] == phrase for i in range(len(words) - n + 1))


def _f1(predicted, references, k=3):
  refs = {" ".join(r) for r in references}
  preds = []
  for p in predicted:
    if " ".join(p) not in preds:
      preds.append(" ".join(p))
  hits = sum(p in refs for p in preds[:k])
  return 0.0 if not hits else 2 * (hits / k) * (hits / len(refs)) / (hits / k + hits / len(refs))


def _cue_baseline(page, k=3):
  """N-grams of heading and bold elements, ranked by how often they occur on the page."""
  words = _lower(page["text"].split(" "))
  scores = {}
  for element in _elements(page):
    if element["feature"][HEADING] != 1 and element["feature"][BOLD] != 1:
      continue
    inside = words[element["start_idx"]:element["end_idx"]]
    for n in range(1, 4):
      for i in range(len(inside) - n + 1):
        gram = tuple(inside[i:i + n])
        if gram[0] in small.STOPWORDS or gram[-1] in small.STOPWORDS or gram in scores:
          continue
        scores[gram] = _count(words, gram) * (1 + 0.5 * n)
  return [list(g) for g in sorted(scores, key=lambda g: -scores[g])[:k]]


def _signature(template):
  """The longest run of literal words of a template (its entity slots removed), lower-case."""
  fragments = [f.split() for f in SLOT_RE.split(template.lower())]
  return " ".join(max(fragments, key=len))


def _texts(pages):
  return [" " + page["text"].lower() + " " for page in pages]


# ----------------------------------------------------------------------------- interface


def test_public_interface():
  assert bench.GENERATOR_VERSION == 1
  assert len(bench.FAMILIES) >= 5 and len(set(bench.FAMILIES)) == len(bench.FAMILIES)
  assert bench.TRAIN_FAMILIES + bench.HELD_OUT_FAMILIES == bench.FAMILIES
  assert bench.TRAIN_FAMILIES and bench.HELD_OUT_FAMILIES
  assert bench.SPLITS == ("train", "dev", "dev_unseen", "dev_unseen_templates",
                          "test_unseen_templates")


def test_importing_and_generating_do_not_load_tensorflow(tmp_path):
  code = ("import sys, synthetic_data.openkp_benchmark as g; g.generate_examples(2); "
          f"g.ensure_demo_data({str(tmp_path)!r}, 2, 2); print('tensorflow' in sys.modules)")
  out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       check=True)
  assert out.stdout.strip() == "False"


def test_bad_arguments_raise_value_error():
  for kwargs, message in (({"split": "test"}, "split"), ({"names": "other"}, "names"),
                          ({"families": ()}, "families"), ({"families": ("poems",)}, "poems"),
                          ({"families": "news"}, "families")):
    with pytest.raises(ValueError, match=message):
      bench.generate_examples(1, **kwargs)
  with pytest.raises(ValueError, match="num"):
    bench.generate_examples(-1)
  with pytest.raises(ValueError, match="num_train"):
    bench.ensure_demo_data("unused", 0, 1)
  with pytest.raises(ValueError, match="num_dev"):
    bench.ensure_demo_data("unused", 1, 0)
  with pytest.raises(ValueError, match="family"):
    bench.family_templates("poems")
  with pytest.raises(ValueError):
    bench.length_statistics([])
  assert bench.generate_examples(0) == []


# ----------------------------------------------------------------------------- format


def test_records_are_in_the_official_format(train, held_out):
  for page in train + held_out:
    assert list(page) == RECORD_KEYS
    assert page["url"].startswith("http://")
    assert TEXT_RE.fullmatch(page["text"])
    words = page["text"].split(" ")
    elements = _elements(page)
    assert 20 <= len(elements) <= bench.MAX_ELEMENTS
    position, ids, previous_y = 0, [], 0.0
    for element in elements:
      assert set(element) == ELEMENT_KEYS
      assert element["start_idx"] == position < element["end_idx"]
      assert element["text"] == " ".join(words[element["start_idx"]:element["end_idx"]])
      position = element["end_idx"]
      ids.append(element["Id"])
      feature = element["feature"]
      assert len(feature) == 20 and all(type(v) is float for v in feature)
      for offset in (0, 10):
        box = dict(zip(bench.FEATURE_NAMES[:10], feature[offset:offset + 10]))
        assert 0 <= box["x"] and 50 <= box["width"] and box["x"] + box["width"] <= 1200
        assert 10 <= box["height"] <= 200 and 10 <= box["font_size"] <= 40
        assert all(box[f] in (0.0, 1.0) for f in ("is_block", "is_inline", "has_heading",
                                                   "is_leaf", "is_bold"))
      assert feature[2] >= previous_y  # reading order runs down the page
      previous_y = feature[2]
    assert position == len(words)
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
  assert len({p["url"] for p in train + held_out}) == len(train) + len(held_out)


def test_files_are_read_by_the_task_without_skips_or_repairs(demo):
  _, paths = demo
  for split, path in paths.items():
    pages, report = read_pages(path, with_labels=True)
    expected = 30 if split == "train" else 12
    assert len(pages) == expected, split
    assert not report.skipped and not report.repaired, report.messages
    assert all(page.key_phrases for page in pages)


# ----------------------------------------------------------------------------- determinism


def test_deterministic_and_seeds_differ(train):
  assert bench.generate_examples(48, seed=3) == train
  assert bench.generate_examples(5, seed=3) == train[:5]
  other = bench.generate_examples(5, seed=4)
  assert [p["text"] for p in other] != [p["text"] for p in train[:5]]


def test_independent_of_hash_seed():
  code = ("import hashlib, json, synthetic_data.openkp_benchmark as g; "
          "r = g.generate_examples(4, seed=9, families=g.FAMILIES); "
          "print(hashlib.sha256(json.dumps(r).encode()).hexdigest())")
  digests = hash_seeds.outputs_under_hash_seeds(code)
  assert len(digests) == 1


# ----------------------------------------------------------------------------- families


def test_family_templates_are_distinct_and_long_enough():
  signatures = {}
  for family in bench.FAMILIES:
    for template in bench.family_templates(family):
      signature = _signature(template)
      assert len(signature.split()) >= 3, template
      signatures.setdefault(signature, []).append(family)
  shared = {s: f for s, f in signatures.items() if len(set(f)) > 1}
  assert not shared


def test_held_out_families_share_no_template_with_train(train, held_out):
  held_signatures = [_signature(t) for f in bench.HELD_OUT_FAMILIES
                     for t in bench.family_templates(f)]
  train_signatures = [_signature(t) for f in bench.TRAIN_FAMILIES
                      for t in bench.family_templates(f)]
  train_texts, held_texts = _texts(train), _texts(held_out)
  for signature in held_signatures:
    assert not any(f" {signature} " in text for text in train_texts), signature
  for signature in train_signatures:
    assert not any(f" {signature} " in text for text in held_texts), signature
  # The check has teeth: each split does use its own families' templates.
  assert sum(any(f" {s} " in t for t in held_texts) for s in held_signatures) >= 0.5 * len(
      held_signatures)
  assert sum(any(f" {s} " in t for t in train_texts) for s in train_signatures) >= 0.5 * len(
      train_signatures)


def test_families_are_all_used(train, held_out):
  """Every family's mention wording occurs in the split that draws from it."""
  for pages, families in ((train, bench.TRAIN_FAMILIES), (held_out, bench.HELD_OUT_FAMILIES)):
    texts = _texts(pages)
    for family in families:
      signatures = [_signature(t) for t in bench.MENTIONS[family]]
      assert any(f" {s} " in t for s in signatures for t in texts), family


# ----------------------------------------------------------------------------- names


def test_english_words_are_no_names():
  """Template words never collide with an invented name of either lexicon."""
  names = lexicon.words_of(small.LEXICON) | lexicon.words_of(small.UNSEEN_LEXICON)
  words = bench.english_words()
  assert len(words) > 500 and not set(words) & names


def test_unseen_names_are_disjoint_from_train(train, held_out, demo):
  _, paths = demo
  unseen_words = lexicon.words_of(small.UNSEEN_LEXICON)
  seen_words = lexicon.words_of(small.LEXICON)
  assert not unseen_words & seen_words
  with open(paths["train"], encoding="utf-8") as f:
    demo_train = [json.loads(line) for line in f]
  train_words = {w.lower() for p in train + demo_train for w in p["text"].split(" ")}
  assert not unseen_words & train_words
  for split in ("dev_unseen", "dev_unseen_templates", "test_unseen_templates"):
    with open(paths[split], encoding="utf-8") as f:
      pages = [json.loads(line) for line in f]
    words = {w.lower() for p in pages for w in p["text"].split(" ")}
    assert not seen_words & words and unseen_words & words, split
  held_words = {w.lower() for p in held_out for w in p["text"].split(" ")}
  assert not seen_words & held_words


# ----------------------------------------------------------------------------- key phrases


def test_key_phrases_are_justified_by_the_text(train, held_out):
  cued = 0
  lengths = []
  for page in train + held_out:
    phrases = page["KeyPhrases"]
    assert 1 <= len(phrases) <= 3 and len({" ".join(p) for p in phrases}) == len(phrases)
    words = page["text"].split(" ")
    elements = _elements(page)
    marked = [words[e["start_idx"]:e["end_idx"]] for e in elements
              if e["feature"][HEADING] == 1 or e["feature"][BOLD] == 1]
    for phrase in phrases:
      assert phrase == _lower(phrase) and all(phrase)
      lengths.append(len(phrase))
      # Google's converter finds a key phrase inside one element, never across two.
      assert any(_count(words[e["start_idx"]:e["end_idx"]], phrase) for e in elements)
      assert _count(words, phrase) >= 2, (phrase, page["url"])  # the page keeps returning to it
      cued += any(_count(m, phrase) for m in marked)
  total = len(lengths)
  assert 0.8 * total <= cued < total  # most carry a cue; a few carry none
  assert max(lengths) <= 5 and sum(n <= 3 for n in lengths) >= 0.9 * total


def test_baselines(many):
  """Frequent n-grams stay weak (the real data's is about 0.3 F1@3); cues carry signal."""
  for pages in many:
    frequent = statistics.mean(_f1(top_ngrams(p["text"].split(" "), 3), p["KeyPhrases"])
                               for p in pages)
    cue = statistics.mean(_f1(_cue_baseline(p), p["KeyPhrases"]) for p in pages)
    first = statistics.mean(_f1([[w.lower()] for w in p["text"].split(" ")[:3]],
                                p["KeyPhrases"]) for p in pages)
    print(f"\nfrequent n-grams F1@3 {frequent:.3f}  cue {cue:.3f}  first words {first:.3f}")
    assert 0.1 <= frequent <= 0.4
    assert cue > frequent + 0.1
    assert first < 0.05


# ----------------------------------------------------------------------------- lengths


def test_lengths_match_the_targets(many):
  for pages in many:
    stats = bench.length_statistics(pages)
    print(f"\n{stats}")
    assert MEDIAN_BAND[0] <= stats["words_median"] <= MEDIAN_BAND[1], stats
    assert P90_BAND[0] <= stats["words_p90"] <= P90_BAND[1], stats
    assert stats["words_min"] >= 200 and stats["words_max"] <= bench.MAX_WORDS + 400
    assert 1 == stats["keyphrases_min"] and stats["keyphrases_max"] == 3
    assert 1.5 <= stats["keyphrases_mean"] <= 2.2
    assert stats["keyphrase_words_max"] <= 5
    assert stats["elements_max"] <= bench.MAX_ELEMENTS


# ----------------------------------------------------------------------------- files


def test_ensure_demo_data_writes_five_splits_and_reuses_them(demo):
  directory, paths = demo
  assert sorted(paths) == sorted(bench.SPLITS)
  assert sorted(os.listdir(directory)) == sorted(list(bench.SPLIT_FILENAMES.values())
                                                 + [bench.INFO_FILENAME])
  expected = {"train": (30, 5, "seen", bench.TRAIN_FAMILIES),
              "dev": (12, 5 + bench.SEED_OFFSETS["dev"], "seen", bench.TRAIN_FAMILIES),
              "dev_unseen": (12, 5 + bench.SEED_OFFSETS["dev_unseen"], "unseen",
                             bench.TRAIN_FAMILIES),
              "dev_unseen_templates": (12, 5 + bench.SEED_OFFSETS["dev_unseen_templates"],
                                       "unseen", bench.HELD_OUT_FAMILIES),
              "test_unseen_templates": (12, 5 + bench.SEED_OFFSETS["test_unseen_templates"],
                                        "unseen", bench.HELD_OUT_FAMILIES)}
  texts = {}
  for split, (num, seed, names, families) in expected.items():
    with open(paths[split], encoding="utf-8") as f:
      records = [json.loads(line) for line in f]
    if split in ("train", "dev_unseen_templates"):  # the costly comparison, for two splits
      assert records == bench.generate_examples(num, seed, split, names, families)
    assert len(records) == num
    texts[split] = {r["text"] for r in records}
  for split in texts:
    for other in texts:
      assert split == other or not texts[split] & texts[other]
  old = 1_000_000_000
  for path in paths.values():
    os.utime(path, (old, old))
  assert bench.ensure_demo_data(directory, num_train=30, num_dev=12, seed=5) == paths
  assert all(os.stat(p).st_mtime == old for p in paths.values())


def test_ensure_demo_data_rewrites_on_other_arguments(tmp_path):
  directory = str(tmp_path)
  paths = bench.ensure_demo_data(directory, num_train=3, num_dev=2, seed=1)
  bench.ensure_demo_data(directory, num_train=3, num_dev=1, seed=1)
  with open(paths["test_unseen_templates"], encoding="utf-8") as f:
    assert len(f.readlines()) == 1
  os.remove(paths["dev"])
  bench.ensure_demo_data(directory, num_train=3, num_dev=1, seed=1)
  assert os.path.exists(paths["dev"])
  assert not [n for n in os.listdir(directory) if n.endswith(".tmp")]
