"""Synthetic OpenKP, one generator in two presets: format, determinism, the benchmark preset's
pinned output, template families, names, key phrases, lengths, the short preset, files."""

import hashlib
import json
import os
import re
import statistics
import subprocess
import sys

import pytest

import hash_seeds

from synthetic_data import lexicon
from synthetic_data import openkp as g
from tasks.openkp.baselines import STOPWORDS, top_ngrams
from tasks.openkp.data import read_pages

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORD_KEYS = ["url", "text", "VDOM", "KeyPhrases"]
ELEMENT_KEYS = {"Id", "text", "feature", "start_idx", "end_idx"}
TEXT_RE = re.compile(r"[A-Za-z0-9]+( [A-Za-z0-9]+)*")
HEADING = g.FEATURE_NAMES.index("has_heading")
BOLD = g.FEATURE_NAMES.index("is_bold")
SLOT_RE = re.compile(r"\{[a-z]+\}")
# The bands the module docstring and docs/synthetic_data/openkp.md document (300 pages).
MEDIAN_BAND = (700, 900)
P90_BAND = (1400, 2000)
# The short preset (fast tests train on it): about as long as the earlier short demo pages
# (mean 416 words, 808 word pieces), measured mean 380 words (925 pieces).
SHORT_MEAN_BAND = (320, 450)
SHORT_MEDIAN_BAND = (310, 430)
SHORT_P90_BAND = (400, 580)

# Digests of the benchmark output from before the presets (sha256 of the lexicons and records
# as JSON with sorted keys, and of the files of `ensure_demo_data(dir, 30, 12, seed=5)`; its info
# file as `writer.DemoData` writes it for every generator).
LEXICON_SHA256 = "0a17458481204b3ab4f4d087a95a43c553a12d5909d3a408e9874ce9ca2b2baa"
UNSEEN_LEXICON_SHA256 = "72ddc68951e0d3343e72c0d547f90fcef031d6041483dc7c4f5fff9be20cada8"
TRAIN_SHA256 = "f941059ccb34425a162403b1072c7322644bfca88c3dbe7457f927ebd9bf6620"
HELD_OUT_SHA256 = "3d5db4c71bb76f6772bf71ee169cd62202b392239690d61ea5cc929ebb4ff282"
DEMO_SHA256 = {
    "OpenKPBenchmarkTrain.jsonl":
        "ff59898c8e5ee5fc2f0a6369bef573cf243b240dbd94ad91e089e4225f468589",
    "OpenKPBenchmarkDev.jsonl": "f6a45d77e6b4a01a25bd55abf9fb29716dc5e3f1b651813eca30437fa74b48b3",
    "OpenKPBenchmarkDevUnseen.jsonl":
        "1fc71b5cbadf6e3dc5a2ce1be04f1502504ba01988d55cb37810a98561577d79",
    "OpenKPBenchmarkDevUnseenTemplates.jsonl":
        "f43666c33f337d89443edf81a86158327fc9e3742d1633d21cb075358ad75953",
    "OpenKPBenchmarkTestUnseenTemplates.jsonl":
        "7f5716dc7a33fbc2ac45d7acfd69124e8f25a20fdba53a229914836b76a14c98",
    "OpenKPBenchmarkInfo.json": "e6b21cd88e3f775071127e82b6bfaa3d8770e240c74a9a9be7734368bdd7167b",
}


@pytest.fixture(scope="module")
def train():
  return g.generate_examples(48, seed=3)


@pytest.fixture(scope="module")
def held_out():
  return g.generate_examples(48, seed=3, split="dev_unseen_templates", names="unseen",
                             families=g.HELD_OUT_FAMILIES)


@pytest.fixture(scope="module")
def many():
  """Enough pages for length and baseline statistics: train families, then held-out ones."""
  return (g.generate_examples(300, seed=11),
          g.generate_examples(300, seed=12, split="test_unseen_templates", names="unseen",
                              families=g.HELD_OUT_FAMILIES))


@pytest.fixture(scope="module")
def short():
  """The short preset: its train family's pages, then its held-out family's (unseen names)."""
  return (g.generate_examples(300, seed=7, preset="short"),
          g.generate_examples(150, seed=8, split="dev_unseen_templates", names="unseen",
                              families=g.PRESET_SETTINGS["short"].held_out_families,
                              preset="short"))


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
  directory = str(tmp_path_factory.mktemp("openkp_demo"))
  return directory, g.ensure_demo_data(directory, num_train=30, num_dev=12, seed=5)


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
        if gram[0] in STOPWORDS or gram[-1] in STOPWORDS or gram in scores:
          continue
        scores[gram] = _count(words, gram) * (1 + 0.5 * n)
  return [list(gram) for gram in sorted(scores, key=lambda gram: -scores[gram])[:k]]


def _signature(template):
  """The longest run of literal words of a template (its entity slots removed), lower-case."""
  fragments = [f.split() for f in SLOT_RE.split(template.lower())]
  return " ".join(max(fragments, key=len))


def _texts(pages):
  return [" " + page["text"].lower() + " " for page in pages]


def _words(pages):
  return {w.lower() for page in pages for w in page["text"].split(" ")}


def _read_jsonl(path):
  with open(path, encoding="utf-8") as f:
    return [json.loads(line) for line in f]


def _sha256(data):
  return hashlib.sha256(data).hexdigest()


# ----------------------------------------------------------------------------- interface


def test_public_interface():
  assert g.GENERATOR_VERSION == 1
  assert len(g.FAMILIES) >= 5 and len(set(g.FAMILIES)) == len(g.FAMILIES)
  assert g.TRAIN_FAMILIES + g.HELD_OUT_FAMILIES == g.FAMILIES
  assert g.TRAIN_FAMILIES and g.HELD_OUT_FAMILIES
  assert g.SPLITS == ("train", "dev", "dev_unseen", "dev_unseen_templates",
                      "test_unseen_templates")
  assert g.PRESETS == ("benchmark", "short")
  assert g.PRESET_SETTINGS["benchmark"] == g.Preset(
      g.MEDIAN_WORDS, g.SIGMA_WORDS, g.MIN_WORDS, g.MAX_WORDS, g.TRAIN_FAMILIES,
      g.HELD_OUT_FAMILIES)
  assert len(g.FEATURE_NAMES) == 20 and g.FEATURE_NAMES[10:] == tuple(
      "parent_" + n for n in g.FEATURE_NAMES[:10])


def test_importing_and_generating_do_not_load_tensorflow(tmp_path):
  code = ("import sys, synthetic_data.openkp as g; g.generate_examples(2); "
          "g.generate_examples(2, preset='short', names='unseen'); "
          f"g.ensure_demo_data({str(tmp_path)!r}, 2, 2); "
          f"g.ensure_demo_data({str(tmp_path)!r}, 2, 2, preset='short'); "
          "print('tensorflow' in sys.modules)")
  out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       check=True)
  assert out.stdout.strip() == "False"


def test_bad_arguments_raise_value_error(tmp_path):
  for kwargs, message in (({"split": "test"}, "split"), ({"names": "other"}, "names"),
                          ({"families": ()}, "families"), ({"families": ("poems",)}, "poems"),
                          ({"families": "news"}, "families"),
                          ({"preset": "long"}, r"preset .*'benchmark', 'short'.*'long'")):
    with pytest.raises(ValueError, match=message):
      g.generate_examples(1, **kwargs)
  with pytest.raises(ValueError, match="num"):
    g.generate_examples(-1)
  with pytest.raises(ValueError, match="num_train"):
    g.ensure_demo_data("unused", 0, 1)
  with pytest.raises(ValueError, match="num_dev"):
    g.ensure_demo_data("unused", 1, 0)
  with pytest.raises(ValueError, match="preset"):
    g.ensure_demo_data(str(tmp_path), 1, 1, preset="demo")
  assert not os.listdir(tmp_path)  # refused before writing anything
  with pytest.raises(ValueError, match="family"):
    g.family_templates("poems")
  with pytest.raises(ValueError):
    g.length_statistics([])
  assert g.generate_examples(0) == [] == g.generate_examples(0, preset="short")


# ----------------------------------------------------------------------------- format


def _check_format(pages):
  for page in pages:
    assert list(page) == RECORD_KEYS
    assert page["url"].startswith("http://")
    assert TEXT_RE.fullmatch(page["text"])
    words = page["text"].split(" ")
    elements = _elements(page)
    assert 20 <= len(elements) <= g.MAX_ELEMENTS
    position, ids, previous_y = 0, [], 0.0
    for element in elements:
      assert set(element) == ELEMENT_KEYS
      assert all(type(element[k]) is int for k in ("Id", "start_idx", "end_idx"))
      assert element["start_idx"] == position < element["end_idx"]
      assert element["text"] == " ".join(words[element["start_idx"]:element["end_idx"]])
      position = element["end_idx"]
      ids.append(element["Id"])
      feature = element["feature"]
      assert len(feature) == 20 and all(type(v) is float for v in feature)
      for offset in (0, 10):
        box = dict(zip(g.FEATURE_NAMES[:10], feature[offset:offset + 10]))
        assert 0 <= box["x"] and 50 <= box["width"] and box["x"] + box["width"] <= 1200
        assert 10 <= box["height"] <= 200 and 10 <= box["font_size"] <= 40
        assert all(box[f] in (0.0, 1.0) for f in ("is_block", "is_inline", "has_heading",
                                                   "is_leaf", "is_bold"))
      assert feature[2] >= previous_y  # reading order runs down the page
      previous_y = feature[2]
    assert position == len(words)
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
  assert len({p["url"] for p in pages}) == len(pages)


def test_records_are_in_the_official_format(train, held_out, short):
  _check_format(train + held_out)
  _check_format(short[0] + short[1])


def test_files_are_read_by_the_task_without_skips_or_repairs(demo):
  _, paths = demo
  for split, path in paths.items():
    pages, report = read_pages(path, with_labels=True)
    expected = 30 if split == "train" else 12
    assert len(pages) == expected, split
    assert not report.skipped and not report.repaired, report.messages
    assert all(page.key_phrases for page in pages)


# ----------------------------------------------------------------------------- determinism


def test_deterministic_and_seeds_differ(train, short):
  assert g.generate_examples(48, seed=3) == train
  assert g.generate_examples(5, seed=3) == train[:5]
  other = g.generate_examples(5, seed=4)
  assert [p["text"] for p in other] != [p["text"] for p in train[:5]]
  assert g.generate_examples(5, seed=7, preset="short") == short[0][:5]
  assert {p["text"] for p in short[0][:5]}.isdisjoint(
      p["text"] for p in g.generate_examples(5, seed=7, families=("news",)))


def test_independent_of_hash_seed():
  code = ("import hashlib, json, synthetic_data.openkp as g; "
          "r = [g.generate_examples(4, seed=9, families=g.FAMILIES, preset=p) "
          "for p in g.PRESETS]; print(hashlib.sha256(json.dumps(r).encode()).hexdigest())")
  digests = hash_seeds.outputs_under_hash_seeds(code)
  assert len(digests) == 1


def test_the_benchmark_preset_is_unchanged(train, held_out, demo):
  """Byte for byte the pages (and names) written before the presets."""
  for lex, digest in ((g.LEXICON, LEXICON_SHA256), (g.UNSEEN_LEXICON, UNSEEN_LEXICON_SHA256)):
    assert _sha256(json.dumps(lex, sort_keys=True).encode("utf-8")) == digest
  for pages, digest in ((train, TRAIN_SHA256), (held_out, HELD_OUT_SHA256)):
    assert _sha256(json.dumps(pages, sort_keys=True).encode("utf-8")) == digest
  directory, _ = demo
  files = {}
  for name in sorted(os.listdir(directory)):
    with open(os.path.join(directory, name), "rb") as f:
      files[name] = _sha256(f.read())
  assert files == DEMO_SHA256
  assert g.generate_examples(3, seed=3, preset="benchmark") == train[:3]


# ----------------------------------------------------------------------------- families


def test_family_templates_are_distinct_and_long_enough():
  signatures = {}
  for family in g.FAMILIES:
    for template in g.family_templates(family):
      signature = _signature(template)
      assert len(signature.split()) >= 3, template
      signatures.setdefault(signature, []).append(family)
  shared = {s: f for s, f in signatures.items() if len(set(f)) > 1}
  assert not shared


def test_held_out_families_share_no_template_with_train(train, held_out):
  held_signatures = [_signature(t) for f in g.HELD_OUT_FAMILIES for t in g.family_templates(f)]
  train_signatures = [_signature(t) for f in g.TRAIN_FAMILIES for t in g.family_templates(f)]
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


def _families_used(pages):
  """The families whose mention wording occurs in the pages."""
  texts = _texts(pages)
  return {family for family in g.FAMILIES
          if any(f" {_signature(t)} " in text for t in g.MENTIONS[family] for text in texts)}


def test_families_are_all_used(train, held_out):
  """Every family's mention wording occurs in the split that draws from it, and no other's."""
  assert _families_used(train) == set(g.TRAIN_FAMILIES)
  assert _families_used(held_out) == set(g.HELD_OUT_FAMILIES)


def test_the_short_preset_draws_from_one_train_and_one_held_out_family(short):
  knobs = g.PRESET_SETTINGS["short"]
  assert knobs.train_families == g.TRAIN_FAMILIES[:1] == ("news",)
  assert knobs.held_out_families == g.HELD_OUT_FAMILIES[:1] == ("encyclopedia",)
  assert _families_used(short[0]) == {"news"}
  assert _families_used(short[1]) == {"encyclopedia"}
  # Families named explicitly win over the preset's.
  assert _families_used(g.generate_examples(6, seed=1, families=("blog",), preset="short")) == {
      "blog"}


# ----------------------------------------------------------------------------- names


def test_english_words_are_no_names(many, short):
  """Template words never collide with an invented name, and they are every other word."""
  names = lexicon.words_of(g.LEXICON) | lexicon.words_of(g.UNSEEN_LEXICON)
  words = set(g.english_words())
  assert len(words) > 500 and not words & names
  on_pages = _words(many[0] + many[1] + short[0] + short[1])
  assert {w for w in on_pages - names - words if not w.isdigit()} == set()


def test_unseen_lexicon_is_shaped_like_the_seen_one():
  seen, unseen = g.LEXICON, g.UNSEEN_LEXICON
  assert g.LEXICONS == {"seen": seen, "unseen": unseen}
  assert list(unseen) == list(seen)
  for pool, words in unseen.items():
    assert len(words) == len(seen[pool]) == len(set(words))
    assert all(w.isascii() and w.isalpha() for w in words)
    assert {w[:1].isupper() for w in words} == {w[:1].isupper() for w in seen[pool]}
  assert not lexicon.words_of(unseen) & lexicon.words_of(seen)


def test_unseen_names_are_disjoint_from_train(train, held_out, short, demo):
  _, paths = demo
  unseen_words = lexicon.words_of(g.UNSEEN_LEXICON)
  seen_words = lexicon.words_of(g.LEXICON)
  train_words = _words(train + short[0] + _read_jsonl(paths["train"]))
  assert not unseen_words & train_words
  unseen_pages = [held_out, short[1]] + [_read_jsonl(paths[split]) for split in (
      "dev_unseen", "dev_unseen_templates", "test_unseen_templates")]
  for pages in unseen_pages:
    assert not seen_words & _words(pages) and unseen_words & _words(pages)
    phrases = [p for page in pages for p in page["KeyPhrases"]]
    named = [p for p in phrases if set(p) & unseen_words]
    assert len(named) >= 0.7 * len(phrases)  # the rest are English (e.g. "bike repair shops")


def test_seen_dev_shares_names_with_train(many):
  """The comparison split: dev's key phrases name entities whose words train has seen."""
  seen_words = lexicon.words_of(g.LEXICON)
  train_words = _words(many[0])
  dev = g.generate_examples(60, seed=11 + g.SEED_OFFSETS["dev"], split="dev")
  named = [set(p) & seen_words for page in dev for p in page["KeyPhrases"]
           if set(p) & seen_words]
  assert len(named) >= 0.7 * sum(len(page["KeyPhrases"]) for page in dev)
  assert sum(words <= train_words for words in named) >= 0.9 * len(named)


# ----------------------------------------------------------------------------- key phrases


def _check_key_phrases(pages):
  cued = other_case = capitals = 0
  lengths = []
  for page in pages:
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
    text = f" {page['text']} "
    other_case += any(f" {' '.join(p)} " not in text for p in phrases)
    capitals += any(len(w) > 2 and w.isupper() and w.isalpha() for w in words)
  total = len(lengths)
  assert 0.8 * total <= cued < total  # most carry a cue; a few carry none
  assert max(lengths) <= 5 and sum(n <= 3 for n in lengths) >= 0.9 * total
  # Titles, headings and names are capitalised, so the text's case often differs from the
  # lower-case key phrases; some pages write menus, headings or bold spans in capitals.
  assert other_case >= 0.5 * len(pages)
  assert 0.1 * len(pages) <= capitals <= 0.8 * len(pages)


def test_key_phrases_are_justified_by_the_text(train, held_out, short):
  _check_key_phrases(train + held_out)
  _check_key_phrases(short[0] + short[1])


def test_baselines(many, short):
  """Frequent n-grams stay weak (the real data's is about 0.3 F1@3); cues carry signal."""
  for pages, margin in ((many[0], 0.1), (many[1], 0.1), (short[0], 0.0), (short[1], 0.0)):
    frequent = statistics.mean(_f1(top_ngrams(p["text"].split(" "), 3), p["KeyPhrases"])
                               for p in pages)
    cue = statistics.mean(_f1(_cue_baseline(p), p["KeyPhrases"]) for p in pages)
    first = statistics.mean(_f1([[w.lower()] for w in p["text"].split(" ")[:3]],
                                p["KeyPhrases"]) for p in pages)
    print(f"\nfrequent n-grams F1@3 {frequent:.3f}  cue {cue:.3f}  first words {first:.3f}")
    assert 0.1 <= frequent <= 0.4
    assert cue > frequent + margin
    assert first < 0.05


# ----------------------------------------------------------------------------- lengths


def test_lengths_match_the_targets(many):
  for pages in many:
    stats = g.length_statistics(pages)
    print(f"\n{stats}")
    assert MEDIAN_BAND[0] <= stats["words_median"] <= MEDIAN_BAND[1], stats
    assert P90_BAND[0] <= stats["words_p90"] <= P90_BAND[1], stats
    assert stats["words_min"] >= 200 and stats["words_max"] <= g.MAX_WORDS + 400
    assert 1 == stats["keyphrases_min"] and stats["keyphrases_max"] == 3
    assert 1.5 <= stats["keyphrases_mean"] <= 2.2
    assert stats["keyphrase_words_max"] <= 5
    assert stats["elements_max"] <= g.MAX_ELEMENTS


def test_the_short_preset_stays_short(short, many):
  """About as long as the earlier short demo pages, and well under the benchmark's."""
  for pages, long_pages in zip(short, many):
    stats = g.length_statistics(pages)
    print(f"\n{stats}")
    assert SHORT_MEAN_BAND[0] <= stats["words_mean"] <= SHORT_MEAN_BAND[1], stats
    assert SHORT_MEDIAN_BAND[0] <= stats["words_median"] <= SHORT_MEDIAN_BAND[1], stats
    assert SHORT_P90_BAND[0] <= stats["words_p90"] <= SHORT_P90_BAND[1], stats
    assert 180 <= stats["words_min"] and stats["words_max"] <= 850
    assert stats["elements_max"] <= 80 and 1.5 <= stats["keyphrases_mean"] <= 2.2
    assert stats["words_mean"] < 0.5 * g.length_statistics(long_pages)["words_mean"]


# ----------------------------------------------------------------------------- files


def test_ensure_demo_data_writes_five_splits_and_reuses_them(demo):
  directory, paths = demo
  assert sorted(paths) == sorted(g.SPLITS)
  assert sorted(os.listdir(directory)) == sorted(list(g.FILENAMES.values())
                                                 + [g.INFO_FILENAME])
  expected = {"train": (30, 5, "seen", g.TRAIN_FAMILIES),
              "dev": (12, 5 + g.SEED_OFFSETS["dev"], "seen", g.TRAIN_FAMILIES),
              "dev_unseen": (12, 5 + g.SEED_OFFSETS["dev_unseen"], "unseen", g.TRAIN_FAMILIES),
              "dev_unseen_templates": (12, 5 + g.SEED_OFFSETS["dev_unseen_templates"],
                                       "unseen", g.HELD_OUT_FAMILIES),
              "test_unseen_templates": (12, 5 + g.SEED_OFFSETS["test_unseen_templates"],
                                        "unseen", g.HELD_OUT_FAMILIES)}
  texts = {}
  for split, (num, seed, names, families) in expected.items():
    records = _read_jsonl(paths[split])
    if split in ("train", "dev_unseen_templates"):  # the costly comparison, for two splits
      assert records == g.generate_examples(num, seed, split, names, families)
    assert len(records) == num
    texts[split] = {r["text"] for r in records}
  for split in texts:
    for other in texts:
      assert split == other or not texts[split] & texts[other]
  old = 1_000_000_000
  for path in paths.values():
    os.utime(path, (old, old))
  assert g.ensure_demo_data(directory, num_train=30, num_dev=12, seed=5) == paths
  assert all(os.stat(p).st_mtime == old for p in paths.values())


def test_ensure_demo_data_rewrites_on_other_arguments(tmp_path):
  directory = str(tmp_path)
  paths = g.ensure_demo_data(directory, num_train=3, num_dev=2, seed=1)
  g.ensure_demo_data(directory, num_train=3, num_dev=1, seed=1)
  assert len(_read_jsonl(paths["test_unseen_templates"])) == 1
  os.remove(paths["dev"])
  g.ensure_demo_data(directory, num_train=3, num_dev=1, seed=1)
  assert os.path.exists(paths["dev"])
  assert not [n for n in os.listdir(directory) if n.endswith(".tmp")]


def _file_bytes(paths):
  out = {}
  for split, path in paths.items():
    with open(path, "rb") as f:
      out[split] = f.read()
  return out


def test_the_preset_is_part_of_the_reuse_check(tmp_path):
  """A directory written with one preset is rewritten when asked for the other."""
  directory = str(tmp_path)
  paths = g.ensure_demo_data(directory, 6, 3, seed=2)
  benchmark = _file_bytes(paths)
  assert g.ensure_demo_data(directory, 6, 3, seed=2, preset="short") == paths
  with open(os.path.join(directory, g.INFO_FILENAME), encoding="utf-8") as f:
    info = json.load(f)
  assert (info["generator"], info["train_families"], info["held_out_families"]) == (
      "openkp_short", ["news"], ["encyclopedia"])
  expected = {"train": ("seen", ("news",)), "dev_unseen": ("unseen", ("news",)),
              "test_unseen_templates": ("unseen", ("encyclopedia",))}
  for split, (names, families) in expected.items():
    num = 6 if split == "train" else 3
    assert _read_jsonl(paths[split]) == g.generate_examples(
        num, 2 + g.SEED_OFFSETS[split], split, names, families, preset="short"), split
  for split, path in paths.items():
    pages, report = read_pages(path, with_labels=True)
    assert len(pages) == (6 if split == "train" else 3) and not report.skipped, split
  # The same preset again: reused; the other one: rewritten, as it was before.
  old = 1_000_000_000
  for path in paths.values():
    os.utime(path, (old, old))
  g.ensure_demo_data(directory, 6, 3, seed=2, preset="short")
  assert all(os.stat(p).st_mtime == old for p in paths.values())
  g.ensure_demo_data(directory, 6, 3, seed=2)
  assert _file_bytes(paths) == benchmark
