"""Synthetic WikiHop data, one generator in two presets: format, determinism, held-out template
families, unseen names, justified answers, lengths, the demo files and their reuse."""

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

from synthetic_data import lexicon, writer
from synthetic_data import wikihop as synthetic
from tasks.wikihop.data import read_examples

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEYS = {"id", "query", "candidates", "supports", "answer"}
# A capitalised (possibly multi-word) name, optionally after "the" (rivers).
NAME = r"(?:the )?[A-Z][a-z]+(?: [A-Z][a-z]+)*"
SLOT = re.compile(r"\{[A-Za-z0-9_]+\}")
SHORT = synthetic.PRESET_SETTINGS["short"]


@pytest.fixture(scope="module")
def train():
  return synthetic.generate_examples(60, seed=5, split="train")


@pytest.fixture(scope="module")
def dev():
  return synthetic.generate_examples(40, seed=5 + synthetic.DEV_SEED_OFFSET, split="dev")


@pytest.fixture(scope="module")
def held_out():
  return synthetic.generate_examples(60, seed=7, split="dev_unseen_templates", names="unseen",
                                     families=synthetic.HELD_OUT_FAMILIES)


@pytest.fixture(scope="module")
def by_family():
  """{family: 30 dev items written in that family only}."""
  return {family: synthetic.generate_examples(30, seed=11 + i, split="dev", families=[family])
          for i, family in enumerate(synthetic.FAMILIES)}


@pytest.fixture(scope="module")
def many():
  """200 train items for the length and baseline statistics."""
  return synthetic.generate_examples(200, seed=21)


@pytest.fixture(scope="module")
def short():
  """The short preset: {"train": 300 items (its train family), "held_out": 150 items (its
  held-out family, unseen names)}."""
  return {"train": synthetic.generate_examples(300, seed=5, preset="short"),
          "held_out": synthetic.generate_examples(
              150, seed=7, split="dev_unseen_templates", names="unseen",
              families=SHORT.held_out_families, preset="short")}


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


FACT_PATTERNS = [(_fact_regex(template), relation, template.startswith("{t}"))
                 for family in synthetic.FAMILIES
                 for (relation, _), templates in synthetic.FACT_TEMPLATES[family].items()
                 for template in templates]


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
    for (chain_relation, _), (first, second) in synthetic.TWO_HOP_CHAINS.items():
      if chain_relation == relation:
        for bridge in _derive(facts, subject, first, depth - 1):
          values |= _derive(facts, bridge, second, depth - 1)
  return values


def _fragments(family):
  """The fixed phrasing of a family's fact templates: the text between slots (lower case),
  kept when it has two words or more or is an infobox field ("citizenship:")."""
  out = set()
  for templates in synthetic.FACT_TEMPLATES[family].values():
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


def _words(text):
  return set(re.findall(r"[a-z]+", text.lower()))


def _template_words():
  """Every lower-case word of the module's templates and word lists."""
  texts = []
  for family in synthetic.FAMILIES:
    for table in (synthetic.FACT_TEMPLATES, synthetic.NEAR_MISS_TEMPLATES,
                  synthetic.NOISE_TEMPLATES):
      for templates in table[family].values():
        texts.extend(templates)
    texts.extend(synthetic.LIST_TEMPLATES[family])
  for table in (synthetic.FILLER_TEMPLATES, synthetic.INFOBOX_FIELDS):
    for templates in table.values():
      texts.extend(templates)
  texts.extend(synthetic.GENERIC_FILLER)
  for words in synthetic._WORDS.values():
    for value in (words.values() if isinstance(words, dict) else [words]):
      texts.extend(value)
  texts.extend(synthetic.MONTHS)
  return {w for text in texts for w in _words(SLOT.sub(" ", text))}


def _assert_official(items, split):
  """The official fields and types; queries, candidates and answers as readers expect them."""
  ids = [item["id"] for item in items]
  assert ids[:2] == [f"WH_{split}_0", f"WH_{split}_1"] and len(set(ids)) == len(ids)
  for item in items:
    assert set(item) == (KEYS if split == "train" else KEYS | {"annotations"})
    assert all(isinstance(item[k], str) for k in ("id", "query", "answer"))
    assert all(isinstance(s, str) and s.strip() for s in item["supports"])
    assert len(item["supports"]) >= synthetic.MIN_SUPPORTS
    if split != "train":
      assert all(isinstance(a, list) and all(isinstance(x, str) for x in a)
                 for a in item["annotations"])
    relation, subject = _query(item)
    assert item["query"] == item["query"].lower() and relation in synthetic.RELATIONS
    assert any(_has(s, subject) for s in item["supports"])
    candidates = item["candidates"]
    assert len(set(candidates)) == len(candidates) and 2 <= len(candidates)
    assert all(c == c.lower() == c.strip() and c for c in candidates)
    assert item["answer"] in candidates


def _digests(paths):
  out = {}
  for split, path in paths.items():
    with open(path, "rb") as f:
      out[split] = hashlib.sha256(f.read()).hexdigest()
  return out


def _load(paths):
  out = {}
  for split, path in paths.items():
    with open(path, encoding="utf-8") as f:
      out[split] = json.load(f)
  return out


# ----------------------------------------------------------------------------- format


def test_generating_does_not_load_tensorflow(tmp_path):
  code = ("import sys; from synthetic_data import wikihop as g; "
          f"g.ensure_demo_data({str(tmp_path / 'b')!r}, 3, 2, seed=1); "
          f"g.ensure_demo_data({str(tmp_path / 's')!r}, 3, 2, seed=1, preset='short'); "
          "print('tensorflow' in sys.modules)")
  out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                       text=True, check=True)
  assert out.stdout.strip() == "False"


def test_the_public_interface():
  assert synthetic.GENERATOR_VERSION == 1
  assert synthetic.PRESETS == ("benchmark", "short") == tuple(synthetic.PRESET_SETTINGS)
  assert len(synthetic.FAMILIES) >= 5 and len(set(synthetic.FAMILIES)) == len(synthetic.FAMILIES)
  assert synthetic.TRAIN_FAMILIES + synthetic.HELD_OUT_FAMILIES == synthetic.FAMILIES
  assert synthetic.TRAIN_FAMILIES and synthetic.HELD_OUT_FAMILIES
  assert synthetic.SPLITS == ("train", "dev", "dev_unseen", "dev_unseen_templates",
                              "test_unseen_templates")
  for family in synthetic.FAMILIES:
    assert set(synthetic.FACT_TEMPLATES[family]) == set(synthetic.FACT_KEYS)
  benchmark = synthetic.PRESET_SETTINGS["benchmark"]
  assert (benchmark.train_families, benchmark.held_out_families) == (
      synthetic.TRAIN_FAMILIES, synthetic.HELD_OUT_FAMILIES)
  # The short preset: the first train family and the first held-out family.
  assert (SHORT.train_families, SHORT.held_out_families) == (("lead",), ("stub",))


def test_items_have_the_official_fields(train, dev, held_out, short):
  _assert_official(train, "train")
  _assert_official(dev, "dev")
  _assert_official(held_out, "dev_unseen_templates")
  _assert_official(short["train"], "train")
  _assert_official(short["held_out"], "dev_unseen_templates")


def test_the_task_reader_reads_every_split_without_skips_or_repairs(tmp_path, train, dev,
                                                                    held_out, short):
  for name, items in (("train", train), ("dev", dev), ("held_out", held_out),
                      ("short", short["train"]), ("short_held_out", short["held_out"])):
    path = writer.write_json(str(tmp_path / f"{name}.json"), items)
    for with_labels in (True, False):
      examples, report = read_examples(path, with_labels=with_labels)
      assert report.examples == len(items) == len(examples)
      assert not report.skipped and not report.repaired, report.summary()
    assert [e.answer for e in examples] == [i["answer"] for i in items]
    assert all(e.label >= 0 for e in examples)


def test_every_relation_and_family_occurs(by_family, many, short):
  assert {_query(i)[0] for i in many} == set(synthetic.RELATIONS)
  assert {_query(i)[0] for i in short["train"]} == set(synthetic.RELATIONS)
  for family, items in by_family.items():
    text = " ".join(_text(i) for i in items)
    assert sum(p in text for p in _fragments(family)) >= 8, family


def test_documents_do_not_repeat_a_sentence(by_family, short):
  for items in list(by_family.values()) + [short["train"]]:
    for item in items:
      for doc in item["supports"]:
        sentences = [s for s in re.split(r"(?<=\.)\s+", doc) if s]
        assert len(set(sentences)) == len(sentences), doc


def test_names_are_capitalised_in_the_supports_and_some_have_two_words(short):
  items = short["train"]
  assert sum(" " in _query(i)[1] for i in items) > 50
  for item in items[:100]:
    text = " ".join(item["supports"])
    for name in [_query(item)[1]] + item["candidates"]:
      for m in re.finditer(r"(?<!\w)" + re.escape(name) + r"(?!\w)", text, re.IGNORECASE):
        assert m.group(0) == " ".join(w.capitalize() for w in name.split()), m.group(0)


def test_the_answer_is_anywhere_in_the_candidate_list(many, short):
  for items in (many, short["train"]):
    first = statistics.mean(i["candidates"].index(i["answer"]) == 0 for i in items)
    expected = statistics.mean(1 / len(i["candidates"]) for i in items)
    assert abs(first - expected) < 0.08
    relative = statistics.mean(i["candidates"].index(i["answer"]) / (len(i["candidates"]) - 1)
                               for i in items)
    assert 0.4 < relative < 0.6


# ----------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("preset", synthetic.PRESETS)
def test_same_arguments_give_identical_items(preset):
  a = synthetic.generate_examples(8, seed=3, split="dev", families=synthetic.FAMILIES,
                                  preset=preset)
  assert json.dumps(a) == json.dumps(synthetic.generate_examples(
      8, seed=3, split="dev", families=synthetic.FAMILIES, preset=preset))
  b = synthetic.generate_examples(8, seed=4, split="dev", families=synthetic.FAMILIES,
                                  preset=preset)
  assert sum(x["supports"] == y["supports"] for x, y in zip(a, b)) == 0


def test_items_and_names_do_not_depend_on_the_process_hash_seed():
  code = ("import hashlib, json; from synthetic_data import wikihop as g; "
          "data = [g.LEXICON, g.UNSEEN_LEXICON] + [g.generate_examples("
          "10, seed=9, split='dev_unseen', names='unseen', families=g.FAMILIES, preset=p) "
          "for p in g.PRESETS]; "
          "print(hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest())")
  assert len(hash_seeds.outputs_under_hash_seeds(code)) == 1


def test_benchmark_output_is_pinned(tmp_path):
  """The sha256 of the benchmark preset's items and demo files as the benchmark-only generator
  wrote them before the presets (measured results depend on these bytes), and of the info file
  all four generators write (`writer.DemoData`)."""
  items = synthetic.generate_examples(8, seed=3, split="dev", families=synthetic.FAMILIES)
  assert hashlib.sha256(json.dumps(items, sort_keys=True).encode()).hexdigest() == (
      "4bd8d5fa5424e3878087f9224f6be9985af707f2d8a4e3e160d8912d41590af2")
  paths = synthetic.ensure_demo_data(str(tmp_path), 6, 4, seed=2)
  paths["info"] = os.path.join(str(tmp_path), synthetic.INFO_FILENAME)
  assert _digests(paths) == {
      "train": "33caab52c5d3295dce245a3aa9bce1afa47ebe4f3d2c9f970013f10a41e836d6",
      "dev": "4ef1625b17eeb1ec239ee5ef7c9accc52c364e30649b26d8aed00c75ef261966",
      "dev_unseen": "d7d48443c68da3cecab0db0d2293d53e6249b50203ba0bd4a189df31649800bb",
      "dev_unseen_templates": "7cfd4d0487272eba99ec888d012717a45099262d5352f1138789804fa4cb90da",
      "test_unseen_templates":
          "b6c9b98cc8d763db368ed58a1667f279d23cb745086604151e4de7f948994cdc",
      "info": "c4db146ca92265916685c21b2248d0c8d853fcc57741006502391cbfc55f92a3"}


# ----------------------------------------------------------------------------- families


def test_held_out_phrasing_never_occurs_in_train_families(train, dev, by_family, held_out):
  """No fact phrase of a held-out family occurs in a train-family item and vice versa."""
  held_phrases = _phrases(synthetic.HELD_OUT_FAMILIES)
  train_phrases = _phrases(synthetic.TRAIN_FAMILIES)
  assert len(held_phrases) >= 30 and len(train_phrases) >= 30
  assert not held_phrases & train_phrases
  train_items = train + dev + [i for f in synthetic.TRAIN_FAMILIES for i in by_family[f]]
  held_items = held_out + [i for f in synthetic.HELD_OUT_FAMILIES for i in by_family[f]]
  for item in train_items:
    assert not [p for p in held_phrases if p in _text(item)], item["id"]
  for item in held_items:
    assert not [p for p in train_phrases if p in _text(item)], item["id"]


def test_the_short_preset_writes_only_its_two_families(short):
  """Short train items are in "lead" only, short held-out items in "stub" only: every item uses
  its family's phrasing and none of the phrases that only other families use."""
  for items, family in ((short["train"], "lead"), (short["held_out"], "stub")):
    own = _fragments(family)
    others = _phrases(f for f in synthetic.FAMILIES if f != family) - own
    for item in items:
      text = _text(item)
      assert any(p in text for p in own), item["id"]
      assert not [p for p in others if p in text], item["id"]
  # An explicit `families` is honoured by the short preset too.
  items = synthetic.generate_examples(20, seed=1, families=["chronicle"], preset="short")
  assert all(any(p in _text(i) for p in _fragments("chronicle")) for i in items)


def test_fact_phrasing_never_occurs_outside_fact_sentences():
  """Background prose, lists and infobox fields state no fact of any family, and the
  distractors of one side of the split use no fact phrase of the other side."""
  everywhere = [t for table in (synthetic.FILLER_TEMPLATES, synthetic.INFOBOX_FIELDS)
                for templates in table.values() for t in templates]
  everywhere += list(synthetic.GENERIC_FILLER)
  everywhere += [t for family in synthetic.FAMILIES for t in synthetic.LIST_TEMPLATES[family]]
  all_phrases = _phrases(synthetic.FAMILIES)
  for template in everywhere:
    assert not [p for p in all_phrases if p in template.lower()], template
  for side, other in ((synthetic.TRAIN_FAMILIES, synthetic.HELD_OUT_FAMILIES),
                      (synthetic.HELD_OUT_FAMILIES, synthetic.TRAIN_FAMILIES)):
    phrases = _phrases(other)
    for family in side:
      for table in (synthetic.NEAR_MISS_TEMPLATES, synthetic.NOISE_TEMPLATES):
        for templates in table[family].values():
          for template in templates:
            assert not [p for p in phrases if p in template.lower()], template


def test_every_family_renders_every_fact_template():
  """Each fact template renders with the slots it uses and is read back by its regex."""
  rng = synthetic.random.Random(0)
  world = synthetic._World(rng, synthetic.LEXICON)
  for family in synthetic.FAMILIES:
    for (relation, kind), templates in synthetic.FACT_TEMPLATES[family].items():
      subject = world.new(kind)
      obj = world.new(synthetic._object_kind(relation, kind))
      for template in templates:
        text = synthetic._render(rng, template, subject, obj)
        m = _fact_regex(template).search(text)
        assert m and _strip_the(m.group("o")) == _strip_the(obj.ref()), (template, text)
        if not template.startswith("{t}"):
          assert _strip_the(m.group("s")) == _strip_the(subject.ref()), (template, text)


def test_distractor_sentences_state_no_fact():
  """Near misses, plain distractors and lists, rendered with every kind of name (company names
  end in words like "Works"), match no fact pattern of any family."""
  rng = synthetic.random.Random(1)
  world = synthetic._World(rng, synthetic.LEXICON)
  entities = {kind: [world.new(kind) for _ in range(12)] for kind in synthetic.KINDS}
  render = synthetic._render
  rendered = []
  for family in synthetic.FAMILIES:
    for (relation, kind), templates in synthetic.NEAR_MISS_TEMPLATES[family].items():
      objects = entities[synthetic._object_kind(relation, kind)]
      rendered += [render(rng, t, s, o) for t in templates for s, o in zip(entities[kind], objects)]
    for (group, kind), templates in synthetic.NOISE_TEMPLATES[family].items():
      topics = {"agent": entities["person"] + entities["company"], "water": entities["water"],
                "place": entities["town"] + entities["region"] + entities["country"]}[group]
      objects = ([e for k in synthetic.KINDS for e in entities[k]] if kind == "any"
                 else entities[kind])
      rendered += [render(rng, t, s, o) for t in templates for s, o in zip(topics, objects)]
    for template in synthetic.LIST_TEMPLATES[family]:
      rendered += [render(rng, template, extra={"list": synthetic._name_list(entities[k][:4])})
                   for k in synthetic.KINDS]
  for text in rendered:
    for pattern, _, _ in FACT_PATTERNS:
      assert not pattern.search(text), (pattern.pattern, text)
  # Infobox distractor fields use other field names than the facts.
  fields = {t[len("{t}"):].split(":")[0]
            for templates in synthetic.FACT_TEMPLATES["infobox"].values() for t in templates}
  assert "Citizenship" in fields
  for text in rendered:
    assert ":" not in text or text.split(":")[0] not in fields, text


# ----------------------------------------------------------------------------- names


def test_the_unseen_lexicon_is_shaped_like_the_seen_one_and_shares_no_word():
  seen, unseen = synthetic.LEXICON, synthetic.UNSEEN_LEXICON
  assert list(unseen) == list(seen)
  assert {k: len(v) for k, v in unseen.items()} == {k: len(v) for k, v in seen.items()}
  assert not lexicon.words_of(unseen) & lexicon.words_of(seen)
  # The template words are no name words (every one is reserved), so a name never reads as
  # prose and vice versa.
  assert _template_words() <= synthetic._template_words()
  assert not synthetic._template_words() & (lexicon.words_of(seen) | lexicon.words_of(unseen))
  # Building the unseen lexicon left LEXICON as its own seed makes it.
  assert seen == lexicon.build_lexicon(synthetic._LEXICON_SEED, synthetic._SOUNDS,
                                       synthetic._POOLS, max_length=10,
                                       reserved=synthetic._template_words())
  assert synthetic.LEXICONS == {"seen": seen, "unseen": unseen}


def test_unseen_names_share_no_word_with_the_train_lexicon(train, held_out, short):
  seen_words = lexicon.words_of(synthetic.LEXICON)
  unseen_words = lexicon.words_of(synthetic.UNSEEN_LEXICON)
  shared = {"lake", "river"} | {w.lower() for w in synthetic.COMPANY_SUFFIXES}
  for item in held_out + short["held_out"]:
    for name in [_query(item)[1]] + item["candidates"]:
      assert not set(name.split()) & seen_words, name
      assert set(name.split()) <= unseen_words | shared, name
      assert set(name.split()) & unseen_words, name
  for items in (train, short["train"]):
    assert not {w for i in items for w in _words(" ".join(i["supports"]))} & unseen_words


def test_the_seen_dev_shares_names_with_train(short):
  """dev names entities from the train lexicon: nearly all its name words occur in train."""
  train_words = {w for i in short["train"] for w in _words(" ".join(i["supports"]))}
  dev = synthetic.generate_examples(150, seed=synthetic.DEV_SEED_OFFSET, split="dev",
                                    preset="short")
  seen_words = lexicon.words_of(synthetic.LEXICON)
  dev_names = {w for item in dev for name in [_query(item)[1]] + item["candidates"]
               for w in name.split()} & seen_words
  assert len(dev_names) > 150
  assert len(dev_names - train_words) / len(dev_names) < 0.1


# ----------------------------------------------------------------------------- answers


def test_stated_facts_give_exactly_the_answer(by_family, held_out, short):
  for items in ([i for f in by_family.values() for i in f] + held_out, short["train"],
                short["held_out"]):
    hops = collections.Counter()
    for item in items:
      relation, subject = _query(item)
      facts = _facts(item)
      assert _derive(facts, subject, relation) == {item["answer"]}, item["id"]
      hops["direct" if item["answer"] in facts.get((subject, relation), ()) else "bridge"] += 1
    assert 0.2 <= hops["bridge"] / sum(hops.values()) <= 0.5, hops


def test_distractors_are_values_of_the_same_relation_for_other_subjects(by_family, short):
  for items, least in ([i for f in by_family.values() for i in f], 0.85), (short["train"], 0.8):
    with_confuser = 0
    for item in items:
      relation, subject = _query(item)
      facts = _facts(item)
      subjects = {s for s, _ in facts} - {subject}
      values = set().union(*[_derive(facts, s, relation) for s in subjects] or [set()])
      with_confuser += bool(values & (set(item["candidates"]) - {item["answer"]}))
    assert with_confuser / len(items) > least


def test_count_mentions_and_the_most_mentioned_candidate():
  item = {"candidates": ["ann", "anna", "bo lund", "cara"],
          "supports": ["Anna met ANNA and anna. Annabel and Joanne stayed.",
                       "Bo Lund saw Cara. Bo Lund left; Bo Lundgren stayed."]}
  assert [synthetic.count_mentions(c, item["supports"]) for c in item["candidates"]] == [
      0, 3, 2, 1]
  assert synthetic.most_mentioned_candidate(item) == "anna"
  item["candidates"] = ["ann", "cara"]
  assert synthetic.most_mentioned_candidate(item) == "cara"  # "ann" is never a whole word
  # Ties go to the earliest candidate.
  supports = ["Dax and Eli met. Eli and Dax left.", "Fen stayed."]
  for candidates, best in ((["fen", "dax", "eli"], "dax"), (["fen", "eli", "dax"], "eli"),
                           (["gus", "hal"], "gus")):
    assert synthetic.most_mentioned_candidate(
        {"candidates": candidates, "supports": supports}) == best


def test_most_mentioned_candidate_is_a_weak_baseline(many, short):
  for items in (many, short["train"]):
    accuracy = statistics.mean(synthetic.most_mentioned_candidate(i) == i["answer"]
                               for i in items)
    assert 0.15 <= accuracy <= 0.45, accuracy
    mentioned = statistics.mean(synthetic.count_mentions(c, i["supports"]) > 0
                                for i in items for c in i["candidates"])
    assert mentioned > 0.9
  several = statistics.mean(
      sum(synthetic.count_mentions(c, [doc]) > 0 for doc in i["supports"]) > 1
      for i in many for c in i["candidates"])
  assert several > 0.3


# ----------------------------------------------------------------------------- lengths


def test_lengths_match_the_published_distribution(many):
  """Welbl et al. 2018: supports median 11, tokens per support median 91, candidates median 14;
  words per item here: median 1,000-1,400, p90 2,000-3,000, a tail past 3,000."""
  stats = synthetic.length_statistics(many)
  assert 1000 <= stats["words_median"] <= 1400, stats
  assert 2000 <= stats["words_p90"] <= 3000, stats
  assert stats["words_max"] > 3000, stats
  assert 9 <= stats["supports_median"] <= 13 and stats["supports_min"] >= 3, stats
  assert 70 <= stats["words_per_support_median"] <= 110, stats
  assert 11 <= stats["candidates_median"] <= 17 and stats["candidates_min"] == 2, stats
  assert stats["candidates_max"] <= synthetic.MAX_CANDIDATES


def test_held_out_families_have_similar_lengths(held_out):
  stats = synthetic.length_statistics(held_out)
  assert 800 <= stats["words_median"] <= 1600, stats


def test_the_short_preset_stays_small(short):
  """About as long as the former short demo generator's items (mean 91 words, 5.5 supports,
  7.3 candidates): fast tests train on it."""
  for items in short.values():
    stats = synthetic.length_statistics(items)
    assert 75 <= stats["words_mean"] <= 120, stats
    assert stats["words_p90"] <= 200 and stats["words_max"] <= 450, stats
    assert 3 <= stats["supports_median"] <= 6 and stats["supports_max"] <= 15, stats
    assert stats["words_per_support_median"] <= 25, stats
    assert 3 <= stats["candidates_median"] <= 6, stats
    assert stats["candidates_max"] <= SHORT.max_candidates


# ----------------------------------------------------------------------------- files


def test_ensure_demo_data_writes_the_five_splits_and_reuses_them(tmp_path):
  directory = str(tmp_path / "demo")
  paths = synthetic.ensure_demo_data(directory, 6, 4, seed=2)
  assert list(paths) == list(synthetic.SPLITS)
  assert sorted(os.listdir(directory)) == sorted(
      [os.path.basename(p) for p in paths.values()] + [synthetic.INFO_FILENAME])
  items = _load(paths)
  for split, records in items.items():
    assert len(records) == (6 if split == "train" else 4)
    assert all(i["id"].startswith(f"WH_{split}_") for i in records)
  assert items["dev_unseen_templates"] == synthetic.generate_examples(
      4, seed=2 + synthetic.SEED_OFFSETS["dev_unseen_templates"], split="dev_unseen_templates",
      names="unseen", families=synthetic.HELD_OUT_FAMILIES)
  assert items["train"] == synthetic.generate_examples(6, seed=2)
  held = _phrases(synthetic.HELD_OUT_FAMILIES)
  for split in ("dev_unseen_templates", "test_unseen_templates"):
    assert items[split] != items["dev_unseen"]
    assert all(any(p in _text(i) for p in held) for i in items[split])
  mtimes = {k: os.stat(p).st_mtime_ns for k, p in paths.items()}
  assert synthetic.ensure_demo_data(directory, 6, 4, seed=2) == paths
  assert {k: os.stat(p).st_mtime_ns for k, p in paths.items()} == mtimes
  os.remove(paths["test_unseen_templates"])
  synthetic.ensure_demo_data(directory, 6, 4, seed=2)
  assert os.path.exists(paths["test_unseen_templates"])
  synthetic.ensure_demo_data(directory, 6, 3, seed=2)
  assert len(_load(paths)["dev"]) == 3


def test_the_preset_is_part_of_the_reuse_check(tmp_path):
  """A folder written with one preset is rewritten when the other is asked for, and reused when
  the same one is asked for again."""
  directory = str(tmp_path)
  paths = synthetic.ensure_demo_data(directory, 6, 4, seed=2)
  benchmark = _load(paths)
  assert synthetic.ensure_demo_data(directory, 6, 4, seed=2, preset="short") == paths
  short = _load(paths)
  for split, (num, split_seed, names, families) in synthetic.split_plan(
      6, 4, 2, "short").items():
    held_out = split in ("dev_unseen_templates", "test_unseen_templates")
    assert families == (SHORT.held_out_families if held_out else SHORT.train_families)
    assert short[split] == synthetic.generate_examples(
        num, split_seed, split, names, families, preset="short"), split
    assert short[split] != benchmark[split]
  with open(os.path.join(directory, synthetic.INFO_FILENAME), encoding="utf-8") as f:
    info = json.load(f)
  assert (info["generator"], info["train_families"], info["held_out_families"]) == (
      "wikihop_short", ["lead"], ["stub"])
  mtimes = {k: os.stat(p).st_mtime_ns for k, p in paths.items()}
  synthetic.ensure_demo_data(directory, 6, 4, seed=2, preset="short")
  assert {k: os.stat(p).st_mtime_ns for k, p in paths.items()} == mtimes
  synthetic.ensure_demo_data(directory, 6, 4, seed=2)
  assert _load(paths) == benchmark
  # Training on every family changes the train split only.
  synthetic.ensure_demo_data(directory, 6, 4, seed=2, train_families=synthetic.FAMILIES,
                             preset="short")
  every = _load(paths)
  assert every["train"] == synthetic.generate_examples(6, 2, families=synthetic.FAMILIES,
                                                       preset="short")
  assert every["train"] != short["train"] and every["dev"] == short["dev"]


@pytest.mark.parametrize("kwargs,message", [
    (dict(num=2, split="test"), "split must be one of"),
    (dict(num=2, names="other"), "names must be one of"),
    (dict(num=2, families=["lead", "poem"]), "families must be"),
    (dict(num=2, families=[]), "families must be"),
    (dict(num=2, families=["lead", "lead"]), "families must be"),
    (dict(num=2, families="lead"), "families must be"),
    (dict(num=-1), "num must be"),
    (dict(num=2, preset="long"), r"preset must be one of \('benchmark', 'short'\), got 'long'"),
])
def test_bad_arguments_raise(kwargs, message):
  with pytest.raises(ValueError, match=message):
    synthetic.generate_examples(**kwargs)


def test_bad_demo_arguments_and_empty_statistics_raise(tmp_path):
  with pytest.raises(ValueError, match="num_train"):
    synthetic.ensure_demo_data(str(tmp_path), 0, 3)
  with pytest.raises(ValueError, match="num_dev"):
    synthetic.ensure_demo_data(str(tmp_path), 3, -2)
  with pytest.raises(ValueError, match="preset must be one of .*'benchmark', 'short'"):
    synthetic.ensure_demo_data(str(tmp_path), 3, 2, preset="demo")
  assert not os.listdir(tmp_path)
  with pytest.raises(ValueError, match="at least one record"):
    synthetic.length_statistics([])


def test_spread_is_the_one_summary_of_every_generator():
  # Ten values: the nearest-rank p90 is the 9th smallest; the median of an even count is the
  # mean of the middle two.
  assert writer.spread("words", [10, 1, 9, 2, 8, 3, 7, 4, 6, 5]) == {
      "words_mean": 5.5, "words_median": 5.5, "words_p90": 9, "words_min": 1, "words_max": 10}
  assert writer.spread("x", [4]) == {"x_mean": 4, "x_median": 4, "x_p90": 4, "x_min": 4,
                                     "x_max": 4}
