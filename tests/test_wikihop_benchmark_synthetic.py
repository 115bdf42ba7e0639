"""Benchmark-style synthetic WikiHop data: format, determinism, held-out template families,
unseen names, justified answers, lengths and the demo files."""

import collections
import json
import os
import re
import statistics
import subprocess
import sys

import pytest

import hash_seeds

from synthetic_data import lexicon, writer
from synthetic_data import wikihop as base
from synthetic_data import wikihop_benchmark as bench
from tasks.wikihop.data import read_examples

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEYS = {"id", "query", "candidates", "supports", "answer"}
# A capitalised (possibly multi-word) name, optionally after "the" (rivers).
NAME = r"(?:the )?[A-Z][a-z]+(?: [A-Z][a-z]+)*"
SLOT = re.compile(r"\{[A-Za-z0-9_]+\}")


@pytest.fixture(scope="module")
def train():
  return bench.generate_examples(60, seed=5, split="train")


@pytest.fixture(scope="module")
def dev():
  return bench.generate_examples(40, seed=5 + base.DEV_SEED_OFFSET, split="dev")


@pytest.fixture(scope="module")
def held_out():
  return bench.generate_examples(60, seed=7, split="dev_unseen_templates", names="unseen",
                                 families=bench.HELD_OUT_FAMILIES)


@pytest.fixture(scope="module")
def by_family():
  """{family: 30 dev items written in that family only}."""
  return {family: bench.generate_examples(30, seed=11 + i, split="dev", families=[family])
          for i, family in enumerate(bench.FAMILIES)}


@pytest.fixture(scope="module")
def many():
  """200 train items for the length and baseline statistics."""
  return bench.generate_examples(200, seed=21)


# ----------------------------------------------------------------------------- helpers


def _query(item):
  relation, subject = item["query"].split(" ", 1)
  return relation, subject


def _has(text, name):
  """Whole-word, case-insensitive mention."""
  words = r"\s+".join(re.escape(w) for w in name.split())
  return re.search(r"(?<!\w)" + words + r"(?!\w)", text, re.IGNORECASE) is not None


def _strip_the(name):
  return name[4:] if name.lower().startswith("the ") else name


def _fact_regex(template):
  """A regex for a fact template: named groups s and o, pronouns, years and dates."""
  slots = {"{s}": f"(?P<s>{NAME})", "{o}": f"(?P<o>{NAME})", "{t}": r"(?<![A-Za-z] )",
           "{P}": "(?:He|She|It)", "{p}": "(?:he|she|it)", "{pos}": "(?:his|her|its)",
           "{y}": r"\d{4}", "{date}": r"[^.]+?"}
  parts = re.split(r"(\{[A-Za-z]+\})", template)
  return re.compile("".join(slots[p] if p in slots else re.escape(p) for p in parts))


def _fact_patterns():
  """(regex, relation, uses the topic) for every fact template of every family."""
  return [(_fact_regex(template), relation, template.startswith("{t}"))
          for family in bench.FAMILIES
          for (relation, _), templates in bench.FACT_TEMPLATES[family].items()
          for template in templates]


FACT_PATTERNS = _fact_patterns()


def _facts(item):
  """{(subject, relation): objects} stated in the supports (lower case). Infobox fields are
  about the document's topic, named by its first sentence."""
  facts = collections.defaultdict(set)
  for doc in item["supports"]:
    header = doc.split(". ", 1)[0]
    for pattern, relation, topical in FACT_PATTERNS:
      for m in pattern.finditer(doc):
        subject = header if topical else m.group("s")
        facts[(_strip_the(subject).lower(), relation)].add(_strip_the(m.group("o")).lower())
  return facts


def _derive(facts, subject, relation, depth=3):
  """Objects of a relation for a subject: stated, or through a chain of stated facts."""
  values = set(facts.get((subject, relation), ()))
  if depth:
    for (chain_relation, _), (first, second) in base.TWO_HOP_CHAINS.items():
      if chain_relation == relation:
        for bridge in _derive(facts, subject, first, depth - 1):
          values |= _derive(facts, bridge, second, depth - 1)
  return values


def _fragments(family):
  """The fixed phrasing of a family's fact templates: the text between slots (lower case),
  kept when it has two words or more or is an infobox field ("citizenship:")."""
  out = set()
  for templates in bench.FACT_TEMPLATES[family].values():
    for template in templates:
      for part in SLOT.split(template):
        part = part.strip(" .,").lower()
        if len(part.split()) >= 2 or part.endswith(":"):
          out.add(part)
  return out


def _phrases(families):
  return set().union(*[_fragments(f) for f in families])


def _text(item):
  return " ".join(item["supports"]).lower()


def _template_words():
  """Every lower-case word of the module's templates and word lists."""
  texts = []
  for family in bench.FAMILIES:
    for table in (bench.FACT_TEMPLATES, bench.NEAR_MISS_TEMPLATES, bench.NOISE_TEMPLATES):
      for templates in table[family].values():
        texts.extend(templates)
    texts.extend(bench.LIST_TEMPLATES[family])
  for table in (bench.FILLER_TEMPLATES, bench.INFOBOX_FIELDS):
    for templates in table.values():
      texts.extend(templates)
  texts.extend(bench.GENERIC_FILLER)
  for words in bench._WORDS.values():
    for value in (words.values() if isinstance(words, dict) else [words]):
      texts.extend(value)
  texts.extend(bench.MONTHS)
  return {w for text in texts for w in re.findall(r"[a-z]+", SLOT.sub(" ", text).lower())}


# ----------------------------------------------------------------------------- format


def test_importing_does_not_load_tensorflow(tmp_path):
  code = ("import sys; from synthetic_data import wikihop_benchmark as g; "
          f"g.ensure_demo_data({str(tmp_path)!r}, 3, 2, seed=1); "
          "print('tensorflow' in sys.modules)")
  out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                       text=True, check=True)
  assert out.stdout.strip() == "False"


def test_the_public_interface():
  assert bench.GENERATOR_VERSION == 1
  assert len(bench.FAMILIES) >= 5 and len(set(bench.FAMILIES)) == len(bench.FAMILIES)
  assert bench.TRAIN_FAMILIES + bench.HELD_OUT_FAMILIES == bench.FAMILIES
  assert bench.TRAIN_FAMILIES and bench.HELD_OUT_FAMILIES
  assert bench.SPLITS == ("train", "dev", "dev_unseen", "dev_unseen_templates",
                          "test_unseen_templates")
  for family in bench.FAMILIES:
    assert set(bench.FACT_TEMPLATES[family]) == set(bench.FACT_KEYS)


def test_items_have_the_official_fields_and_no_family_id(train, dev, held_out):
  for split, items in (("train", train), ("dev", dev), ("dev_unseen_templates", held_out)):
    ids = [item["id"] for item in items]
    assert ids[:2] == [f"WH_{split}_0", f"WH_{split}_1"] and len(set(ids)) == len(ids)
    for item in items:
      assert set(item) == (KEYS if split == "train" else KEYS | {"annotations"})
      assert all(isinstance(item[k], str) for k in ("id", "query", "answer"))
      assert all(isinstance(s, str) and s.strip() for s in item["supports"])
      if split != "train":
        assert all(isinstance(a, list) and all(isinstance(x, str) for x in a)
                   for a in item["annotations"])
      relation, subject = _query(item)
      assert item["query"] == item["query"].lower() and relation in base.RELATIONS
      assert any(_has(s, subject) for s in item["supports"])
      candidates = item["candidates"]
      assert len(set(candidates)) == len(candidates) and 2 <= len(candidates)
      assert all(c == c.lower() == c.strip() and c for c in candidates)
      assert item["answer"] in candidates


def test_the_task_reader_reads_every_split_without_skips_or_repairs(tmp_path, train, dev,
                                                                    held_out):
  for name, items in (("train", train), ("dev", dev), ("held_out", held_out)):
    path = writer.write_json(str(tmp_path / f"{name}.json"), items)
    for with_labels in (True, False):
      examples, report = read_examples(path, with_labels=with_labels)
      assert report.examples == len(items) == len(examples)
      assert not report.skipped and not report.repaired, report.summary()
    assert [e.answer for e in examples] == [i["answer"] for i in items]
    assert all(e.label >= 0 for e in examples)


def test_every_relation_and_family_occurs(by_family, many):
  assert {_query(i)[0] for i in many} == set(base.RELATIONS)
  for family, items in by_family.items():
    text = " ".join(_text(i) for i in items)
    assert sum(p in text for p in _fragments(family)) >= 8, family


def test_documents_do_not_repeat_a_sentence(by_family):
  for items in by_family.values():
    for item in items:
      for doc in item["supports"]:
        sentences = [s for s in re.split(r"(?<=\.)\s+", doc) if s]
        assert len(set(sentences)) == len(sentences), doc


# ----------------------------------------------------------------------------- determinism


def test_same_arguments_give_identical_items():
  a = bench.generate_examples(8, seed=3, split="dev", families=bench.FAMILIES)
  assert json.dumps(a) == json.dumps(
      bench.generate_examples(8, seed=3, split="dev", families=bench.FAMILIES))
  b = bench.generate_examples(8, seed=4, split="dev", families=bench.FAMILIES)
  assert sum(x["supports"] == y["supports"] for x, y in zip(a, b)) == 0


def test_items_do_not_depend_on_the_process_hash_seed():
  code = ("import hashlib, json; from synthetic_data import wikihop_benchmark as g; "
          "items = g.generate_examples(10, seed=9, split='dev_unseen', names='unseen', "
          "families=g.FAMILIES); print(hashlib.sha256(json.dumps(items).encode()).hexdigest())")
  digests = hash_seeds.outputs_under_hash_seeds(code)
  assert len(digests) == 1


# ----------------------------------------------------------------------------- families


def test_held_out_phrasing_never_occurs_in_train_families(train, dev, by_family, held_out):
  """No fact phrase of a held-out family occurs in a train-family item and vice versa."""
  held_phrases, train_phrases = _phrases(bench.HELD_OUT_FAMILIES), _phrases(bench.TRAIN_FAMILIES)
  assert len(held_phrases) >= 30 and len(train_phrases) >= 30
  assert not held_phrases & train_phrases
  train_items = train + dev + [i for f in bench.TRAIN_FAMILIES for i in by_family[f]]
  held_items = held_out + [i for f in bench.HELD_OUT_FAMILIES for i in by_family[f]]
  for item in train_items:
    text = _text(item)
    assert not [p for p in held_phrases if p in text], item["id"]
  for item in held_items:
    text = _text(item)
    assert not [p for p in train_phrases if p in text], item["id"]


def test_fact_phrasing_never_occurs_outside_fact_sentences():
  """Background prose, lists and infobox fields state no fact of any family, and the
  distractors of one side of the split use no fact phrase of the other side."""
  everywhere = [t for table in (bench.FILLER_TEMPLATES, bench.INFOBOX_FIELDS)
                for templates in table.values() for t in templates]
  everywhere += list(bench.GENERIC_FILLER)
  everywhere += [t for family in bench.FAMILIES for t in bench.LIST_TEMPLATES[family]]
  all_phrases = _phrases(bench.FAMILIES)
  for template in everywhere:
    text = template.lower()
    assert not [p for p in all_phrases if p in text], template
  for side, other in ((bench.TRAIN_FAMILIES, bench.HELD_OUT_FAMILIES),
                      (bench.HELD_OUT_FAMILIES, bench.TRAIN_FAMILIES)):
    phrases = _phrases(other)
    for family in side:
      for table in (bench.NEAR_MISS_TEMPLATES, bench.NOISE_TEMPLATES):
        for templates in table[family].values():
          for template in templates:
            assert not [p for p in phrases if p in template.lower()], template


def test_every_family_renders_every_fact_template():
  """Each fact template renders with the slots it uses and is read back by its regex."""
  rng = bench.random.Random(0)
  world = base._World(rng, base.LEXICON)
  for family in bench.FAMILIES:
    for (relation, kind), templates in bench.FACT_TEMPLATES[family].items():
      subject = world.new(kind)
      obj = world.new(base._object_kind(relation, kind))
      for template in templates:
        text = bench._render(rng, template, subject, obj)
        m = _fact_regex(template).search(text)
        assert m and _strip_the(m.group("o")) == _strip_the(obj.ref()), (template, text)
        if not template.startswith("{t}"):
          assert _strip_the(m.group("s")) == _strip_the(subject.ref()), (template, text)


def test_distractor_sentences_state_no_fact():
  """Near misses, plain distractors and lists, rendered with every kind of name (company names
  end in words like "Works"), match no fact pattern of any family."""
  rng = bench.random.Random(1)
  world = base._World(rng, base.LEXICON)
  kinds = ("person", "town", "region", "country", "company", "water")
  entities = {kind: [world.new(kind) for _ in range(12)] for kind in kinds}
  rendered = []
  for family in bench.FAMILIES:
    for (relation, kind), templates in bench.NEAR_MISS_TEMPLATES[family].items():
      for template in templates:
        for subject, obj in zip(entities[kind], entities[base._object_kind(relation, kind)]):
          rendered.append(bench._render(rng, template, subject, obj))
    for (group, kind), templates in bench.NOISE_TEMPLATES[family].items():
      topics = {"agent": entities["person"] + entities["company"], "water": entities["water"],
                "place": entities["town"] + entities["region"] + entities["country"]}[group]
      objects = [e for k in kinds for e in entities[k]] if kind == "any" else entities[kind]
      for template in templates:
        for topic, obj in zip(topics, objects):
          rendered.append(bench._render(rng, template, topic, obj))
    for template in bench.LIST_TEMPLATES[family]:
      for kind in kinds:
        rendered.append(bench._render(rng, template, extra={"list": bench._name_list(
            entities[kind][:4])}))
  for text in rendered:
    for pattern, _, _ in FACT_PATTERNS:
      assert not pattern.search(text), (pattern.pattern, text)
  # Infobox distractor fields use other field names than the facts.
  fields = {t[len("{t}"):].split(":")[0] for templates in bench.FACT_TEMPLATES["infobox"].values()
            for t in templates}
  assert "Citizenship" in fields
  for text in rendered:
    assert ":" not in text or text.split(":")[0] not in fields, text


# ----------------------------------------------------------------------------- names


def test_unseen_names_share_no_word_with_the_train_lexicon(train, held_out):
  seen_words = lexicon.words_of(base.LEXICON)
  unseen_words = lexicon.words_of(base.UNSEEN_LEXICON)
  shared = {"lake", "river"} | {w.lower() for w in base.COMPANY_SUFFIXES}
  for item in held_out:
    for name in [_query(item)[1]] + item["candidates"]:
      assert not set(name.split()) & seen_words, name
      assert set(name.split()) <= unseen_words | shared, name
  train_words = {w for i in train for w in re.findall(r"[a-z]+", " ".join(i["supports"]).lower())}
  assert not train_words & unseen_words
  # The template words are no name words, so a name never reads as prose and vice versa.
  assert not _template_words() & (seen_words | unseen_words)


# ----------------------------------------------------------------------------- answers


def test_stated_facts_give_exactly_the_answer(by_family, held_out):
  hops = collections.Counter()
  for item in held_out + [i for items in by_family.values() for i in items]:
    relation, subject = _query(item)
    facts = _facts(item)
    assert _derive(facts, subject, relation) == {item["answer"]}, item["id"]
    hops["direct" if item["answer"] in facts.get((subject, relation), ()) else "bridge"] += 1
  share = hops["bridge"] / sum(hops.values())
  assert 0.2 <= share <= 0.5, hops


def test_distractors_are_values_of_the_same_relation_for_other_subjects(by_family):
  with_confuser = total = 0
  for items in by_family.values():
    for item in items:
      relation, subject = _query(item)
      facts = _facts(item)
      subjects = {s for s, _ in facts} - {subject}
      values = set().union(*[_derive(facts, s, relation) for s in subjects] or [set()])
      with_confuser += bool(values & (set(item["candidates"]) - {item["answer"]}))
      total += 1
  assert with_confuser / total > 0.85


def test_most_mentioned_candidate_is_a_weak_baseline(many):
  accuracy = statistics.mean(bench.most_mentioned_candidate(i) == i["answer"] for i in many)
  assert 0.15 <= accuracy <= 0.45, accuracy
  mentioned = statistics.mean(bench.count_mentions(c, i["supports"]) > 0
                              for i in many for c in i["candidates"])
  assert mentioned > 0.9
  several = statistics.mean(sum(bench.count_mentions(c, [doc]) > 0 for doc in i["supports"]) > 1
                            for i in many for c in i["candidates"])
  assert several > 0.3


# ----------------------------------------------------------------------------- lengths


def test_lengths_match_the_published_distribution(many):
  """Welbl et al. 2018: supports median 11, tokens per support median 91, candidates median 14;
  words per item here: median 1,000-1,400, p90 2,000-3,000, a tail past 3,000."""
  stats = bench.length_statistics(many)
  assert 1000 <= stats["words_median"] <= 1400, stats
  assert 2000 <= stats["words_p90"] <= 3000, stats
  assert stats["words_max"] > 3000, stats
  assert 9 <= stats["supports_median"] <= 13 and stats["supports_min"] >= 3, stats
  assert 70 <= stats["words_per_support_median"] <= 110, stats
  assert 11 <= stats["candidates_median"] <= 17 and stats["candidates_min"] == 2, stats
  assert stats["candidates_max"] <= bench.MAX_CANDIDATES


def test_held_out_families_have_similar_lengths(held_out):
  stats = bench.length_statistics(held_out)
  assert 800 <= stats["words_median"] <= 1600, stats


# ----------------------------------------------------------------------------- files


def test_ensure_demo_data_writes_the_five_splits_and_reuses_them(tmp_path):
  directory = str(tmp_path / "demo")
  paths = bench.ensure_demo_data(directory, 6, 4, seed=2)
  assert list(paths) == list(bench.SPLITS)
  assert sorted(os.listdir(directory)) == sorted(
      [os.path.basename(p) for p in paths.values()] + [bench.INFO_FILENAME])
  items = {}
  for split, path in paths.items():
    with open(path, encoding="utf-8") as f:
      items[split] = json.load(f)
    assert len(items[split]) == (6 if split == "train" else 4)
    assert all(i["id"].startswith(f"WH_{split}_") for i in items[split])
  assert items["dev_unseen_templates"] == bench.generate_examples(
      4, seed=2 + bench.SPLIT_SETUP["dev_unseen_templates"][0], split="dev_unseen_templates",
      names="unseen", families=bench.HELD_OUT_FAMILIES)
  assert items["train"] == bench.generate_examples(6, seed=2)
  held = _phrases(bench.HELD_OUT_FAMILIES)
  for split in ("dev_unseen_templates", "test_unseen_templates"):
    assert items[split] != items["dev_unseen"]
    assert all(any(p in _text(i) for p in held) for i in items[split])
  mtimes = {k: os.stat(p).st_mtime_ns for k, p in paths.items()}
  assert bench.ensure_demo_data(directory, 6, 4, seed=2) == paths
  assert {k: os.stat(p).st_mtime_ns for k, p in paths.items()} == mtimes
  os.remove(paths["test_unseen_templates"])
  bench.ensure_demo_data(directory, 6, 4, seed=2)
  assert os.path.exists(paths["test_unseen_templates"])
  bench.ensure_demo_data(directory, 6, 3, seed=2)
  with open(paths["dev"], encoding="utf-8") as f:
    assert len(json.load(f)) == 3


@pytest.mark.parametrize("kwargs,message", [
    (dict(num=2, split="test"), "split must be one of"),
    (dict(num=2, names="other"), "names must be one of"),
    (dict(num=2, families=["lead", "poem"]), "families must be"),
    (dict(num=2, families=[]), "families must be"),
    (dict(num=2, families=["lead", "lead"]), "families must be"),
    (dict(num=2, families="lead"), "families must be"),
    (dict(num=-1), "num must be"),
])
def test_bad_arguments_raise(kwargs, message):
  with pytest.raises(ValueError, match=message):
    bench.generate_examples(**kwargs)


def test_bad_demo_sizes_and_empty_statistics_raise(tmp_path):
  with pytest.raises(ValueError, match="num_train"):
    bench.ensure_demo_data(str(tmp_path), 0, 3)
  with pytest.raises(ValueError, match="num_dev"):
    bench.ensure_demo_data(str(tmp_path), 3, -2)
  with pytest.raises(ValueError, match="at least one record"):
    bench.length_statistics([])
