"""Synthetic WikiHop data: official format, determinism, justified answers, a weak baseline."""

import collections
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
from synthetic_data import wikihop as synthetic

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEYS = {"id", "query", "candidates", "supports", "answer"}
# A capitalised (possibly multi-word) name, optionally after "the" (rivers).
NAME = r"(?:the )?[A-Z][a-z]+(?: [A-Z][a-z]+)*"


@pytest.fixture(scope="module")
def train():
  return synthetic.generate_examples(300, seed=5, split="train")


@pytest.fixture(scope="module")
def dev():
  return synthetic.generate_examples(300, seed=5 + synthetic.DEV_SEED_OFFSET, split="dev")


@pytest.fixture(scope="module")
def many():
  return synthetic.generate_examples(500, seed=21)


# ----------------------------------------------------------------------------- helpers


def _sentences(item):
  return [s for doc in item["supports"] for s in re.split(r"(?<=\.)\s+", doc) if s]


def _has(text, name):
  """Whole-word, case-insensitive mention."""
  words = r"\s+".join(re.escape(w) for w in name.split())
  return re.search(r"(?<!\w)" + words + r"(?!\w)", text, re.IGNORECASE) is not None


def _query(item):
  relation, subject = item["query"].split(" ", 1)
  return relation, subject


def _strip_the(name):
  return name[4:] if name.lower().startswith("the ") else name


def _justification(item):
  """"single" if a sentence names subject and answer, "two" if a bridge links them, else None.

  A bridge is a name in a sentence about the subject that starts a sentence naming the answer.
  """
  _, subject = _query(item)
  answer = item["answer"]
  sentences = _sentences(item)
  if any(_has(s, subject) and _has(s, answer) for s in sentences):
    return "single"
  for s in sentences:
    if not _has(s, subject):
      continue
    for name in re.findall(NAME, s):
      bridge = _strip_the(name)
      if bridge.lower() == subject or _has(bridge, subject):
        continue
      for other in sentences:
        if _strip_the(other).lower().startswith(bridge.lower() + " ") and _has(other, answer):
          return "two"
  return None


def _fact_patterns():
  """(regex, relation) for every fact template, with named subject and object groups."""
  patterns = []
  for (relation, _), templates in synthetic.FACT_TEMPLATES.items():
    for template in templates:
      parts = re.split(r"(\{[so]\})", template)
      regex = "".join(f"(?P<{p[1]}>{NAME})" if p in ("{s}", "{o}") else re.escape(p)
                      for p in parts)
      patterns.append((re.compile(regex), relation))
  return patterns


FACT_PATTERNS = _fact_patterns()


def _facts(item):
  """{(subject, relation)} -> set of objects stated in the supports (lower case)."""
  facts = collections.defaultdict(set)
  for sentence in _sentences(item):
    for pattern, relation in FACT_PATTERNS:
      m = pattern.fullmatch(sentence)
      if m:
        s, o = (_strip_the(m.group(g)).lower() for g in ("s", "o"))
        facts[(s, relation)].add(o)
  return facts


def _derive(facts, subject, relation, depth=3):
  """Objects of a relation for a subject: stated, or through a chain of stated facts."""
  values = set(facts.get((subject, relation), ()))
  if depth:
    for (chain_relation, _), (first, second) in synthetic.TWO_HOP_CHAINS.items():
      if chain_relation == relation:
        for bridge in _derive(facts, subject, first, depth - 1):
          values |= _derive(facts, bridge, second, depth - 1)
  return values


# ----------------------------------------------------------------------------- format


def test_importing_does_not_load_tensorflow():
  code = "import sys, synthetic_data.wikihop; print('tensorflow' in sys.modules)"
  out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                       text=True, check=True)
  assert out.stdout.strip() == "False"


def test_items_have_the_official_fields_and_types(train, dev):
  for split, items in (("train", train), ("dev", dev)):
    for item in items:
      assert set(item) == (KEYS | {"annotations"} if split == "dev" else KEYS)
      assert isinstance(item["id"], str)
      assert isinstance(item["query"], str)
      assert isinstance(item["answer"], str)
      assert isinstance(item["candidates"], list)
      assert all(isinstance(c, str) for c in item["candidates"])
      assert isinstance(item["supports"], list)
      assert all(isinstance(s, str) and s.strip() for s in item["supports"])
      if split == "dev":
        assert isinstance(item["annotations"], list)
        assert all(isinstance(a, list) and all(isinstance(x, str) for x in a)
                   for a in item["annotations"])


def test_ids_are_unique_with_the_split_prefix(train, dev):
  for split, items in (("train", train), ("dev", dev)):
    ids = [item["id"] for item in items]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(rf"WH_{split}_\d+", i) for i in ids)
  assert [item["id"] for item in dev[:3]] == ["WH_dev_0", "WH_dev_1", "WH_dev_2"]


def test_query_is_a_known_relation_and_a_lower_case_subject(train):
  relations = set()
  for item in train:
    assert item["query"] == item["query"].lower() == item["query"].strip()
    relation, subject = _query(item)
    assert relation in synthetic.RELATIONS
    assert re.fullmatch(r"[a-z]+(?:_[a-z]+)*", relation)
    assert subject and subject == subject.strip() and "  " not in subject
    assert any(_has(s, subject) for s in item["supports"])
    relations.add(relation)
  assert len(synthetic.RELATIONS) >= 6
  assert relations == set(synthetic.RELATIONS)


def test_candidates_are_distinct_lower_case_and_contain_the_answer(train, dev):
  for item in train + dev:
    candidates = item["candidates"]
    assert len(set(candidates)) == len(candidates)
    assert 2 <= len(candidates) <= 40
    for c in candidates:
      assert c == c.lower() == c.strip() and c
    assert item["answer"] in candidates
    assert item["answer"] == item["answer"].lower()


def test_max_candidates_is_respected():
  for limit in (2, 6):
    items = synthetic.generate_examples(150, seed=2, max_candidates=limit)
    counts = [len(item["candidates"]) for item in items]
    assert max(counts) <= limit and min(counts) == 2
  assert {len(i["candidates"]) for i in synthetic.generate_examples(20, max_candidates=2)} == {2}


def test_supports_are_short_wiki_like_documents(many):
  words = []
  for item in many:
    assert 2 <= len(item["supports"]) <= synthetic.MAX_SUPPORTS
    for doc in item["supports"]:
      sentences = re.split(r"(?<=\.)\s+", doc)
      assert 1 <= len(sentences) <= synthetic.MAX_SENTENCES, doc
      for s in sentences:
        assert s[0].isupper() and s.endswith("."), s
    words.append(sum(len(doc.split()) for doc in item["supports"]))
  assert statistics.median(words) < 100
  assert sum(w < 150 for w in words) / len(words) >= 0.85
  assert max(words) <= synthetic.MAX_WORDS + 20
  assert any(w > 250 for w in words)  # a few long items exercise truncation


def test_some_names_have_two_words_capitalised_in_the_supports(many):
  multi_candidates = [c for item in many for c in item["candidates"] if " " in c]
  multi_subjects = [_query(item)[1] for item in many if " " in _query(item)[1]]
  assert len(multi_candidates) > 100 and len(multi_subjects) > 50
  for item in many[:100]:
    text = " ".join(item["supports"])
    for name in [_query(item)[1]] + item["candidates"]:
      for m in re.finditer(r"(?<!\w)" + re.escape(name) + r"(?!\w)", text, re.IGNORECASE):
        assert m.group(0) == " ".join(w.capitalize() for w in name.split()), m.group(0)


def test_dev_has_annotations_and_train_has_none(train, dev):
  assert all("annotations" not in item for item in train)
  assert all("annotations" in item for item in dev)


# ----------------------------------------------------------------------------- determinism


def test_same_arguments_give_identical_items():
  a = synthetic.generate_examples(40, seed=3, split="dev", max_candidates=12)
  b = synthetic.generate_examples(40, seed=3, split="dev", max_candidates=12)
  assert a == b
  assert json.dumps(a) == json.dumps(b)


def digests_across_hash_seeds(code):
  return hash_seeds.outputs_under_hash_seeds(code)


def test_items_do_not_depend_on_the_process_hash_seed():
  code = ("import hashlib, json; from synthetic_data import wikihop as synthetic; "
          "items = synthetic.generate_examples(60, seed=9, split='dev'); "
          "print(hashlib.sha256(json.dumps(items).encode()).hexdigest())")
  assert len(digests_across_hash_seeds(code)) == 1


def test_different_seeds_give_different_items():
  a = synthetic.generate_examples(40, seed=3)
  b = synthetic.generate_examples(40, seed=4)
  assert [i["query"] for i in a] != [i["query"] for i in b]
  assert sum(x["supports"] == y["supports"] for x, y in zip(a, b)) == 0


def test_train_and_dev_differ(train, dev):
  assert not {i["id"] for i in train} & {i["id"] for i in dev}
  assert not {json.dumps(i["supports"]) for i in train} & {json.dumps(i["supports"]) for i in dev}
  assert [i["query"] for i in train] != [i["query"] for i in dev]


def test_the_lexicon_is_shared_by_every_seed(train, dev):
  """Names come from one fixed lexicon, so dev's words are (nearly all) seen in train."""
  def vocabulary(items):
    return {w for i in items for doc in i["supports"] for w in re.findall(r"[a-z]+", doc.lower())}
  train_words, dev_words = vocabulary(train), vocabulary(dev)
  assert len(dev_words - train_words) / len(dev_words) < 0.05


# ----------------------------------------------------------------------------- answers


def test_every_answer_is_justified_by_the_supports(dev):
  kinds = collections.Counter(_justification(item) for item in dev)
  assert kinds[None] == 0, kinds
  assert 0.15 <= kinds["two"] / len(dev) <= 0.45, kinds  # two_hop_rate = 0.3


def test_stated_facts_give_exactly_the_answer(dev, many):
  for item in dev + many:
    relation, subject = _query(item)
    facts = _facts(item)
    assert _derive(facts, subject, relation) == {item["answer"]}, item


def test_distractors_are_values_of_the_same_relation_for_other_subjects(dev):
  with_confuser = 0
  for item in dev:
    relation, subject = _query(item)
    facts = _facts(item)
    subjects = {s for s, _ in facts} - {subject}
    values = set().union(*[_derive(facts, s, relation) for s in subjects] or [set()])
    with_confuser += bool(values & (set(item["candidates"]) - {item["answer"]}))
  assert with_confuser / len(dev) > 0.9


@pytest.mark.parametrize("rate", [0.0, 1.0])
def test_two_hop_rate_controls_direct_statements(rate):
  items = synthetic.generate_examples(120, seed=8, two_hop_rate=rate)
  kinds = collections.Counter(_justification(item) for item in items)
  if rate == 0.0:
    assert kinds == {"single": len(items)}
  else:
    assert kinds == {"two": len(items)}
  for item in items:
    relation, subject = _query(item)
    facts = _facts(item)
    assert bool(facts.get((subject, relation))) == (rate == 0.0)
    assert _derive(facts, subject, relation) == {item["answer"]}


# ----------------------------------------------------------------------------- baseline


def test_most_mentioned_candidate_counts_whole_words_case_insensitively():
  item = {"candidates": ["ann", "anna", "bo lund", "cara"],
          "supports": ["Anna met ANNA and anna. Annabel and Joanne stayed.",
                       "Bo Lund saw Cara. Bo Lund left; Bo Lundgren stayed."]}
  assert [synthetic.count_mentions(c, item["supports"]) for c in item["candidates"]] == [
      0, 3, 2, 1]
  assert synthetic.most_mentioned_candidate(item) == "anna"
  item["candidates"] = ["ann", "cara"]
  assert synthetic.most_mentioned_candidate(item) == "cara"  # "ann" is never a whole word


def test_most_mentioned_candidate_breaks_ties_by_candidate_order():
  supports = ["Dax and Eli met. Eli and Dax left.", "Fen stayed."]
  assert synthetic.most_mentioned_candidate(
      {"candidates": ["fen", "dax", "eli"], "supports": supports}) == "dax"
  assert synthetic.most_mentioned_candidate(
      {"candidates": ["fen", "eli", "dax"], "supports": supports}) == "eli"
  assert synthetic.most_mentioned_candidate(
      {"candidates": ["gus", "hal"], "supports": supports}) == "gus"  # all zero


def test_most_mentioned_baseline_is_weak_on_dev():
  items = synthetic.generate_examples(300, seed=synthetic.DEV_SEED_OFFSET, split="dev")
  accuracy = statistics.mean(
      synthetic.most_mentioned_candidate(item) == item["answer"] for item in items)
  assert 0.15 <= accuracy <= 0.6, accuracy
  more = 0
  for item in items:
    counts = {c: synthetic.count_mentions(c, item["supports"]) for c in item["candidates"]}
    answer_count = counts.pop(item["answer"])
    more += any(n > answer_count for n in counts.values())
  assert more / len(items) >= 0.4


# ----------------------------------------------------------------------------- candidates


def test_candidate_counts_are_skewed_small_with_a_few_large(many):
  counts = [len(item["candidates"]) for item in many]
  assert min(counts) == 2 and max(counts) <= 40
  assert any(n >= 30 for n in counts)
  assert sum(n <= 12 for n in counts) / len(counts) >= 0.8
  assert collections.Counter(counts).most_common(1)[0][0] <= 4


def test_the_answer_is_anywhere_in_the_candidate_list(many):
  first = statistics.mean(item["candidates"].index(item["answer"]) == 0 for item in many)
  expected = statistics.mean(1 / len(item["candidates"]) for item in many)
  assert abs(first - expected) < 0.08
  relative = statistics.mean(item["candidates"].index(item["answer"]) /
                             (len(item["candidates"]) - 1) for item in many)
  assert 0.4 < relative < 0.6


def test_nearly_all_candidates_are_mentioned(many):
  mentioned = total = 0
  for item in many:
    assert synthetic.count_mentions(item["answer"], item["supports"]) > 0
    for c in item["candidates"]:
      total += 1
      mentioned += synthetic.count_mentions(c, item["supports"]) > 0
  assert 0.9 <= mentioned / total < 1.0


# ----------------------------------------------------------------------------- files


def test_write_dataset_round_trips_through_json(tmp_path):
  paths = synthetic.write_dataset(str(tmp_path / "data"), 12, 7, seed=4, max_candidates=9)
  assert set(paths) == {"train", "dev"}
  assert os.path.basename(paths["train"]) == synthetic.TRAIN_FILENAME
  assert os.path.basename(paths["dev"]) == synthetic.DEV_FILENAME
  with open(paths["train"], encoding="utf-8") as f:
    train = json.load(f)
  with open(paths["dev"], encoding="utf-8") as f:
    dev = json.load(f)
  assert train == synthetic.generate_examples(12, seed=4, split="train", max_candidates=9)
  assert dev == synthetic.generate_examples(7, seed=4 + synthetic.DEV_SEED_OFFSET, split="dev",
                                            max_candidates=9)
  with open(tmp_path / "data" / synthetic.INFO_FILENAME, encoding="utf-8") as f:
    info = json.load(f)
  assert info["generator_version"] == synthetic.GENERATOR_VERSION
  assert (info["num_train"], info["num_dev"], info["seed"]) == (12, 7, 4)
  assert sorted(os.listdir(tmp_path / "data")) == sorted(
      [synthetic.TRAIN_FILENAME, synthetic.DEV_FILENAME, synthetic.INFO_FILENAME])


def test_ensure_demo_data_reuses_matching_files(tmp_path):
  directory = str(tmp_path)
  paths = synthetic.ensure_demo_data(directory, 10, 5, seed=1)
  mtimes = {k: os.stat(p).st_mtime_ns for k, p in paths.items()}
  again = synthetic.ensure_demo_data(directory, 10, 5, seed=1)
  assert again == paths
  assert {k: os.stat(p).st_mtime_ns for k, p in again.items()} == mtimes
  with open(paths["dev"], encoding="utf-8") as f:
    assert len(json.load(f)) == 5
  # Other sizes or a missing file regenerate.
  synthetic.ensure_demo_data(directory, 10, 6, seed=1)
  with open(paths["dev"], encoding="utf-8") as f:
    assert len(json.load(f)) == 6
  os.remove(paths["train"])
  synthetic.ensure_demo_data(directory, 10, 6, seed=1)
  with open(paths["train"], encoding="utf-8") as f:
    assert json.load(f) == synthetic.generate_examples(10, seed=1)


def test_bad_arguments_raise():
  with pytest.raises(ValueError):
    synthetic.generate_examples(2, split="test")
  with pytest.raises(ValueError):
    synthetic.generate_examples(2, max_candidates=1)
  with pytest.raises(ValueError):
    synthetic.generate_examples(2, two_hop_rate=1.5)


# ----------------------------------------------------------------------------- unseen entities

UNSEEN_SPLITS = {"dev_unseen": synthetic.UNSEEN_DEV_SEED_OFFSET,
                 "test_unseen": synthetic.UNSEEN_TEST_SEED_OFFSET}


def _words(text):
  """The lower-case words of a text (as in `test_the_lexicon_is_shared_by_every_seed`)."""
  return set(re.findall(r"[a-z]+", text.lower()))


def _item_words(items):
  return {w for item in items for text in [item["query"]] + item["candidates"] + item["supports"]
          for w in _words(text)}


DEMO_SIZES = (600, 150)  # train, dev (and each unseen split)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
  """Files of `ensure_demo_data` (seed 0): {split: (path, raw text, items)}."""
  directory = str(tmp_path_factory.mktemp("demo"))
  files = {}
  for split, path in synthetic.ensure_demo_data(directory, *DEMO_SIZES, seed=0).items():
    with open(path, encoding="utf-8") as f:
      text = f.read()
    files[split] = (path, text, json.loads(text))
  return files


def _assert_official_items(items, split):
  """The checks of the format and answer tests above, for one evaluation split."""
  ids = [item["id"] for item in items]
  assert len(set(ids)) == len(ids) and ids[:2] == [f"WH_{split}_0", f"WH_{split}_1"]
  assert all(re.fullmatch(rf"WH_{split}_\d+", i) for i in ids)
  kinds = collections.Counter()
  for item in items:
    assert set(item) == KEYS | {"annotations"}
    assert all(isinstance(item[k], str) for k in ("id", "query", "answer"))
    assert all(isinstance(a, list) and all(isinstance(x, str) for x in a)
               for a in item["annotations"])
    assert 2 <= len(item["supports"]) <= synthetic.MAX_SUPPORTS
    assert all(isinstance(s, str) and s.strip() for s in item["supports"])
    relation, subject = _query(item)
    assert item["query"] == item["query"].lower() and relation in synthetic.RELATIONS
    assert any(_has(s, subject) for s in item["supports"])
    candidates = item["candidates"]
    assert len(set(candidates)) == len(candidates) and 2 <= len(candidates) <= 40
    assert all(c == c.lower() == c.strip() and c for c in candidates)
    assert item["answer"] in candidates
    assert _derive(_facts(item), subject, relation) == {item["answer"]}, item
    kinds[_justification(item)] += 1
  assert kinds[None] == 0, kinds
  assert 0.15 <= kinds["two"] / len(items) <= 0.45, kinds


def test_ensure_demo_data_writes_the_unseen_splits(demo):
  assert set(demo) == {"train", "dev", "dev_unseen", "test_unseen"}
  assert os.path.basename(demo["dev_unseen"][0]) == synthetic.DEV_UNSEEN_FILENAME
  assert os.path.basename(demo["test_unseen"][0]) == synthetic.TEST_UNSEEN_FILENAME
  assert (synthetic.DEV_UNSEEN_FILENAME, synthetic.TEST_UNSEEN_FILENAME) == (
      "dev_unseen.json", "test_unseen.json")
  directory = os.path.dirname(demo["train"][0])
  assert sorted(os.listdir(directory)) == sorted(
      [synthetic.TRAIN_FILENAME, synthetic.DEV_FILENAME, synthetic.DEV_UNSEEN_FILENAME,
       synthetic.TEST_UNSEEN_FILENAME, synthetic.INFO_FILENAME])
  with open(os.path.join(directory, synthetic.INFO_FILENAME), encoding="utf-8") as f:
    info = json.load(f)
  assert info["generator_version"] == synthetic.GENERATOR_VERSION >= 2
  assert info["splits"] == ["train", "dev", "dev_unseen", "test_unseen"]
  assert info["dev_unseen_seed"] == synthetic.UNSEEN_DEV_SEED_OFFSET
  assert info["test_unseen_seed"] == synthetic.UNSEEN_TEST_SEED_OFFSET
  for split, offset in UNSEEN_SPLITS.items():
    assert demo[split][2] == synthetic.generate_examples(DEMO_SIZES[1], seed=offset, split=split,
                                                         names="unseen")


def test_the_unseen_splits_leave_train_and_dev_unchanged(demo, tmp_path):
  """Train and dev are byte for byte the files written without the unseen splits."""
  paths = synthetic.write_dataset(str(tmp_path), *DEMO_SIZES, seed=0)
  for split in ("train", "dev"):
    with open(paths[split], encoding="utf-8") as f:
      assert f.read() == demo[split][1]
  assert demo["dev"][2] == synthetic.generate_examples(
      DEMO_SIZES[1], seed=synthetic.DEV_SEED_OFFSET, split="dev")


def test_train_and_dev_bytes_are_those_of_generator_version_1(tmp_path):
  """The sha256 of train and dev as generator version 1 wrote them (before the unseen splits):
  measured demo results depend on these files."""
  paths = synthetic.ensure_demo_data(str(tmp_path), 40, 20, seed=3)
  digests = {}
  for split in ("train", "dev"):
    with open(paths[split], "rb") as f:
      digests[split] = hashlib.sha256(f.read()).hexdigest()
  assert digests == {
      "train": "d3a206d28b03dfa40874bb40bfb2f630caa46c818d6440efe21e2fcd98a16496",
      "dev": "678a92d540b83ad9d388c944744c419761e0dec90a133f7067fad23cb15c24a9"}


def test_old_demo_folders_are_regenerated_with_the_unseen_splits(tmp_path):
  directory = str(tmp_path)
  synthetic.write_dataset(directory, 10, 5, seed=1)  # train and dev only
  paths = synthetic.ensure_demo_data(directory, 10, 5, seed=1)
  assert set(paths) == {"train", "dev", "dev_unseen", "test_unseen"}
  with open(paths["test_unseen"], encoding="utf-8") as f:
    assert json.load(f) == synthetic.generate_examples(
        5, seed=1 + synthetic.UNSEEN_TEST_SEED_OFFSET, split="test_unseen", names="unseen")
  mtimes = {k: os.stat(p).st_mtime_ns for k, p in paths.items()}
  assert synthetic.ensure_demo_data(directory, 10, 5, seed=1) == paths
  assert {k: os.stat(p).st_mtime_ns for k, p in paths.items()} == mtimes
  os.remove(paths["dev_unseen"])
  synthetic.ensure_demo_data(directory, 10, 5, seed=1)
  assert os.path.exists(paths["dev_unseen"])


def test_unseen_splits_are_in_the_official_format(demo):
  for split in UNSEEN_SPLITS:
    _assert_official_items(demo[split][2], split)
  _assert_official_items(demo["dev"][2], "dev")  # the comparison split passes the same checks


def test_unseen_splits_are_deterministic_and_differ():
  a = synthetic.generate_examples(30, seed=3, split="dev_unseen", names="unseen")
  assert a == synthetic.generate_examples(30, seed=3, split="dev_unseen", names="unseen")
  b = synthetic.generate_examples(30, seed=4, split="dev_unseen", names="unseen")
  assert sum(x["supports"] == y["supports"] for x, y in zip(a, b)) == 0
  # Only the names change with `names`: the same seed gives the same shapes of items.
  seen = synthetic.generate_examples(30, seed=3, split="dev_unseen")
  assert [_query(i)[0] for i in a] == [_query(i)[0] for i in seen]
  assert [len(i["candidates"]) for i in a] == [len(i["candidates"]) for i in seen]
  assert [i["query"] for i in a] != [i["query"] for i in seen]


def test_unseen_names_do_not_depend_on_the_process_hash_seed():
  code = ("import hashlib, json; from synthetic_data import wikihop as synthetic; "
          "items = synthetic.generate_examples(20, seed=9, split='test_unseen', names='unseen'); "
          "data = [synthetic.UNSEEN_LEXICON, items]; "
          "print(hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest())")
  assert len(digests_across_hash_seeds(code)) == 1


def test_the_unseen_lexicon_is_shaped_like_the_seen_one_and_shares_no_word():
  seen, unseen = synthetic.LEXICON, synthetic.UNSEEN_LEXICON
  assert list(unseen) == list(seen)
  assert {k: len(v) for k, v in unseen.items()} == {k: len(v) for k, v in seen.items()}
  assert not lexicon.words_of(unseen) & lexicon.words_of(seen)
  assert not lexicon.words_of(unseen) & synthetic._template_words()
  # Building the unseen lexicon left LEXICON as its own seed makes it.
  assert seen == lexicon.build_lexicon(synthetic._LEXICON_SEED, synthetic._SOUNDS,
                                       synthetic._POOLS, max_length=10,
                                       reserved=synthetic._template_words())
  assert synthetic.LEXICONS == {"seen": seen, "unseen": unseen}


def test_no_word_of_an_unseen_name_occurs_in_train(demo):
  train_words = _words(demo["train"][1])
  unseen_words = lexicon.words_of(synthetic.UNSEEN_LEXICON)
  assert not unseen_words & train_words
  seen_words = lexicon.words_of(synthetic.LEXICON)
  for split in UNSEEN_SPLITS:
    items = demo[split][2]
    words = _item_words(items)
    assert not words & seen_words
    assert len(words & unseen_words) / len(unseen_words) > 0.9  # the unseen names are used
    # Every word of a candidate or subject is an unseen name word or a shared English one.
    shared = {"lake", "river"} | {w.lower() for w in synthetic.COMPANY_SUFFIXES}
    for item in items:
      for name in [_query(item)[1]] + item["candidates"]:
        assert set(name.split()) <= unseen_words | shared, name
        assert set(name.split()) & unseen_words, name


def test_the_seen_dev_keeps_sharing_names_with_train(demo):
  train_words = _words(demo["train"][1])
  seen_words = lexicon.words_of(synthetic.LEXICON)
  dev_names = {w for item in demo["dev"][2] for name in [_query(item)[1]] + item["candidates"]
               for w in name.split()} & seen_words
  assert len(dev_names) > 250
  assert len(dev_names - train_words) / len(dev_names) < 0.05
  assert not _item_words(demo["dev"][2]) & lexicon.words_of(synthetic.UNSEEN_LEXICON)


def test_generating_unseen_splits_does_not_load_tensorflow(tmp_path):
  code = ("import sys; from synthetic_data import wikihop; "
          f"wikihop.ensure_demo_data({str(tmp_path)!r}, 4, 3, seed=2); "
          "print('tensorflow' in sys.modules)")
  out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                       text=True, check=True)
  assert out.stdout.strip() == "False"
  assert os.path.exists(tmp_path / synthetic.TEST_UNSEEN_FILENAME)


def test_bad_names_raise():
  with pytest.raises(ValueError):
    synthetic.generate_examples(2, names="other")
  with pytest.raises(ValueError):
    synthetic.generate_examples(2, split="test_seen")
