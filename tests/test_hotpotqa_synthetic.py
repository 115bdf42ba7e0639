"""Synthetic HotpotQA, both presets of the one generator: official format read back with no skips,
determinism (pinned digests of the benchmark preset), held-out template families that share no
phrasing with train, unseen names, answers justified by the text, each preset's length band and
families, the five demo splits, their reuse, and argument checks."""

import collections
import hashlib
import json
import os
import pathlib
import re
import string
import subprocess
import sys

import pytest

import hash_seeds

from synthetic_data import hotpotqa as gen
from synthetic_data import lexicon
from tasks.hotpotqa.data import read_examples

KEYS = {"_id", "question", "answer", "supporting_facts", "context", "type", "level"}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The bands documented in the module docstring and docs/synthetic_data/hotpotqa.md.
MEDIAN_BAND = (850, 1150)          # benchmark: words per item
P90_BAND = (1250, 1750)
SHORT_MEAN_BAND = (350, 600)       # short: about as long as the old demo items (435 words)
MONTH = "(" + "|".join(lexicon.MONTHS) + ")"
DATE_DAY_FIRST = re.compile(r"(\d{1,2})(?:st|nd|rd|th)? (?:of )?" + MONTH + r",? (\d{4})")
DATE_MONTH_FIRST = re.compile(MONTH + r" (\d{1,2})(?:st|nd|rd|th)?, (\d{4})")
DEMO_SIZES = {"num_train": 30, "num_dev": 20, "seed": 4}
SHORT = gen.PRESET_SETTINGS["short"]
# sha256 of the benchmark preset's demo files (DEMO_SIZES), as written before the presets (the info
# file: as `writer.DemoData` writes it for every generator).
BENCHMARK_DIGESTS = {
    "benchmark_train.json": "684e4d5fc504fc33cde4cc7e94d6dd290fdc3e33942ef1475c43cce2630a3184",
    "benchmark_dev.json": "00fb85fa266051aefe779db9b295c6867367ac73ac264f6bb81328a0b124865e",
    "benchmark_dev_unseen.json":
        "857378d4018d7ff33f2d2153f41f31dce02109506931d8c8f453ac4c241fded3",
    "benchmark_dev_unseen_templates.json":
        "5c11bd215285d52f5aa8609343fa26297c62cfecbf9e056e18d2a06bb41826ee",
    "benchmark_test_unseen_templates.json":
        "de2bdef63be6a654234effc14074f8dbee8143b8f4a239a7e170fed4c2d06a31",
    "benchmark_info.json": "04ba2ec039c2a00088f7e8ab8e365bdef7ec2552427c8431709a63bb5df303c4"}


@pytest.fixture(scope="module")
def by_family():
  """Items of each family alone (seen names for train families, unseen for held-out ones)."""
  out = {}
  for i, family in enumerate(gen.FAMILIES):
    held_out = family in gen.HELD_OUT_FAMILIES
    out[family] = gen.generate_examples(
        40, seed=100 + i, split="dev_unseen_templates" if held_out else "train",
        names="unseen" if held_out else "seen", families=(family,))
  return out


@pytest.fixture(scope="module")
def large():
  """200 train-family and 200 held-out-family items of each preset, for the length bands."""
  return {(preset, group): gen.generate_examples(
      200, seed=11 + held, split="test_unseen_templates" if held else "train",
      names="unseen" if held else "seen",
      families=gen.PRESET_SETTINGS[preset].held_out_families if held else None, preset=preset)
          for preset in gen.PRESETS for held, group in enumerate(("train", "held_out"))}


@pytest.fixture(scope="module", params=gen.PRESETS)
def demo(request, tmp_path_factory):
  """ensure_demo_data's paths and each split's items and lower-cased words, per preset."""
  paths = gen.ensure_demo_data(str(tmp_path_factory.mktemp(request.param)), **DEMO_SIZES,
                               preset=request.param)
  items, words = {}, {}
  for split in gen.SPLITS:
    text = pathlib.Path(paths[split]).read_text(encoding="utf-8")
    items[split] = json.loads(text)
    words[split] = set(re.findall(r"\w+", text.lower()))
  return {"preset": request.param, "paths": paths, "items": items, "words": words}


def _all(by_family, large=None):
  return ([item for family in gen.FAMILIES for item in by_family[family]]
          + [item for group in ("train", "held_out") for item in (large or {}).get(
              ("short", group), [])])


def _sentences(item):
  return {title: sentences for title, sentences in item["context"]}


def _support(item):
  paragraphs = _sentences(item)
  return [paragraphs[title][index] for title, index in item["supporting_facts"]]


def _text(items):
  """All context sentences of `items`, lower-cased, one per line."""
  return "\n".join(s.lower() for item in items for _, sentences in item["context"]
                   for s in sentences)


def _fragments(template, min_words):
  """The literal runs of a template once its slots are rendered empty (lower-cased, trimmed),
  those of at least `min_words` words."""
  slots = [name for _, name, _, _ in string.Formatter().parse(template) if name]
  rendered = template.format(**{name: "\x00" for name in slots})
  pieces = [piece.strip(" ,.;:()?'").lower() for piece in rendered.split("\x00")]
  return [piece for piece in pieces if len(piece.split()) >= min_words]


def _runs(families):
  """The four-word literal runs of the fact templates of `families`."""
  return {run for f in families for templates in gen.FACT_TEMPLATES[f].values()
          for t in templates for run in _fragments(t, 4)}


def _pattern(template):
  """A regular expression matching the template's renderings (each slot any text)."""
  return "".join(re.escape(literal) + ("(.+)" if slot else "")
                 for literal, slot, _, _ in string.Formatter().parse(template))


def _matches(question):
  """{(family, kind)} of every question template the question matches."""
  return {(family, kind) for family in gen.FAMILIES
          for kind, templates in gen.QUESTION_TEMPLATES[family].items()
          for t in templates if re.fullmatch(_pattern(t), question)}


# ----------------------------------------------------------------------------- format


def test_records_have_the_official_keys_and_structure(by_family, large):
  items = _all(by_family, large)
  for item in items:
    assert set(item) == KEYS
    assert re.fullmatch(r"[0-9a-f]{24}", item["_id"])
    assert item["question"].endswith("?") and item["answer"].strip()
    assert item["type"] in ("bridge", "comparison")
    assert item["level"] in ("easy", "medium", "hard")
    titles = [title for title, _ in item["context"]]
    assert len(set(titles)) == len(titles)
    assert 8 <= len(titles) <= gen.NUM_PARAGRAPHS
    facts = item["supporting_facts"]
    assert len(facts) == 2 and len({title for title, _ in facts}) == 2
    paragraphs = _sentences(item)
    for title, index in facts:
      assert isinstance(index, int) and 0 <= index < len(paragraphs[title])
    for _, sentences in item["context"]:
      assert 2 <= len(sentences) <= 13
      assert not sentences[0].startswith(" ")
      assert all(s.startswith(" ") and not s.startswith("  ") for s in sentences[1:])
      assert all(s.rstrip().endswith(".") for s in sentences)
  assert len({item["_id"] for item in items}) == len(items)


def test_the_task_reader_reads_every_split_with_no_skips_or_repairs(demo):
  for split in gen.SPLITS:
    for with_labels in (True, False):
      examples, report = read_examples(demo["paths"][split], with_labels=with_labels)
      assert len(examples) == report.records == len(demo["items"][split])
      assert not report.skipped and not report.repaired, (split, report.summary())
    assert all(e.answer and e.supporting_facts for e in
               read_examples(demo["paths"][split], with_labels=True)[0])


def test_question_types_answers_and_levels_are_mixed(large):
  for items in large.values():
    stats = gen.length_statistics(items)
    assert 0.7 <= stats["bridge_share"] <= 0.9           # about 80% bridge in the paper
    answers = collections.Counter(item["answer"] for item in items
                                  if item["answer"] in ("yes", "no"))
    assert answers["yes"] and answers["no"]
    assert {item["level"] for item in items} == {"easy", "medium", "hard"}


def test_text_has_non_ascii_letters_punctuation_and_a_moderate_vocabulary(large):
  for preset in gen.PRESETS:
    items = large[(preset, "train")]
    text = json.dumps(items, ensure_ascii=False)
    assert any(ord(c) > 127 and c.isalpha() for c in text)
    assert all(mark in text for mark in ("'", "-", ",", "(", ")"))
    # A small WordPiece vocabulary covers it (the names come from one fixed lexicon).
    assert 200 <= len(set(re.findall(r"\w+", _text(items)))) <= 1500, preset


# ----------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("preset", gen.PRESETS)
def test_same_arguments_give_identical_records_and_seeds_differ(preset):
  a = gen.generate_examples(8, seed=3, preset=preset)
  assert a == gen.generate_examples(8, seed=3, preset=preset)
  b = gen.generate_examples(8, seed=4, preset=preset)
  assert not {e["_id"] for e in a} & {e["_id"] for e in b}
  assert [e["question"] for e in a] != [e["question"] for e in b]
  # The split, the names and the preset are part of the id.
  for other in ({"split": "dev"}, {"names": "unseen"},
                {"preset": "benchmark" if preset == "short" else "short"}):
    c = gen.generate_examples(8, **dict({"seed": 3, "preset": preset}, **other))
    assert not {e["_id"] for e in a} & {e["_id"] for e in c}, other


def test_output_does_not_depend_on_the_hash_seed_and_the_benchmark_preset_is_pinned():
  code = ("import hashlib, json; from synthetic_data import hotpotqa as g; "
          "print(json.dumps([hashlib.sha256(json.dumps(g.generate_examples("
          "6, seed=2, families=g.FAMILIES, preset=p)).encode()).hexdigest() for p in g.PRESETS]))")
  digests = hash_seeds.outputs_under_hash_seeds(code)
  assert len(digests) == 1
  benchmark, short = json.loads(digests.pop())
  assert benchmark == "4414350172a7884e61e51ac4301bf6d3b4e554e3027558932b7f9a99b717a3dc"
  assert short != benchmark


def test_benchmark_demo_files_are_byte_identical_to_the_pinned_ones(demo):
  directory = os.path.dirname(demo["paths"]["train"])
  digests = {name: hashlib.sha256(pathlib.Path(directory, name).read_bytes()).hexdigest()
             for name in BENCHMARK_DIGESTS}
  if demo["preset"] == "benchmark":
    assert digests == BENCHMARK_DIGESTS
  else:   # same file names, other bytes
    assert not set(digests.values()) & set(BENCHMARK_DIGESTS.values())


def test_importing_does_not_load_tensorflow():
  code = "import sys, synthetic_data.hotpotqa; print('tensorflow' in sys.modules)"
  out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       check=True)
  assert out.stdout.strip() == "False"


# ----------------------------------------------------------------------------- families


def test_family_lists():
  assert len(gen.FAMILIES) >= 5 and len(set(gen.FAMILIES)) == len(gen.FAMILIES)
  assert set(gen.TRAIN_FAMILIES) | set(gen.HELD_OUT_FAMILIES) == set(gen.FAMILIES)
  assert not set(gen.TRAIN_FAMILIES) & set(gen.HELD_OUT_FAMILIES)
  assert set(gen.FACT_TEMPLATES) == set(gen.QUESTION_TEMPLATES) == set(gen.FAMILIES)
  for family in gen.FAMILIES:
    assert set(gen.QUESTION_TEMPLATES[family]) == set(gen.BRIDGE_KINDS + gen.COMPARISON_KINDS)
  assert set(gen.PRESET_SETTINGS) == set(gen.PRESETS)
  # The short preset: the first train family and the first held-out family only.
  assert SHORT.train_families == ("encyclopedic",) == gen.TRAIN_FAMILIES[:1]
  assert SHORT.held_out_families == ("archival",) == gen.HELD_OUT_FAMILIES[:1]
  assert gen.PRESET_SETTINGS["benchmark"].train_families == gen.TRAIN_FAMILIES


def test_every_template_has_a_distinctive_run_and_is_used(by_family):
  for family in gen.FAMILIES:
    text = _text(by_family[family])
    for name, templates in gen.FACT_TEMPLATES[family].items():
      for template in templates:
        runs = _fragments(template, 4)
        assert runs, (family, template)
        # Each template is rendered in its own family's items (so the checks below bite).
        assert any(run in text for run in runs), (family, name, template)
    for templates in gen.QUESTION_TEMPLATES[family].values():
      assert all(_fragments(template, 2) for template in templates), templates


def test_held_out_families_share_no_fact_phrasing_with_train_families(by_family):
  groups = {"train": gen.TRAIN_FAMILIES, "held_out": gen.HELD_OUT_FAMILIES}
  texts = {group: _text([item for f in families for item in by_family[f]])
           for group, families in groups.items()}
  runs = {group: _runs(families) for group, families in groups.items()}
  # No held-out fact template (slots removed) occurs in a train item, and the other way round.
  assert not [run for run in runs["held_out"] if run in texts["train"]]
  assert not [run for run in runs["train"] if run in texts["held_out"]]
  assert not runs["train"] & runs["held_out"]


def test_held_out_families_ask_their_questions_in_new_words(by_family):
  """No question of one group matches a question template of the other, and no run of three or
  more words of a template occurs in the other group's questions."""
  groups = {"train": gen.TRAIN_FAMILIES, "held_out": gen.HELD_OUT_FAMILIES}
  questions = {group: [item["question"] for f in families for item in by_family[f]]
               for group, families in groups.items()}
  for group, other in (("held_out", "train"), ("train", "held_out")):
    text = "\n".join(questions[other]).lower()
    for family in groups[group]:
      for templates in gen.QUESTION_TEMPLATES[family].values():
        for template in templates:
          pattern = _pattern(template)
          assert not any(re.fullmatch(pattern, q) for q in questions[other]), template
          for run in _fragments(template, 3):
            assert run not in text, (family, template, run)


def test_demo_splits_use_the_preset_families(demo):
  """Train-like splits are written by the preset's train families only, the *_unseen_templates
  ones by its held-out families only (fact phrasings and questions alike)."""
  settings = gen.PRESET_SETTINGS[demo["preset"]]
  for split, items in demo["items"].items():
    own = settings.held_out_families if split.endswith("unseen_templates") else (
        settings.train_families)
    text = _text(items)
    assert not any(run in text for run in _runs(gen.FAMILIES) - _runs(own)), split
    assert any(run in text for run in _runs(own)), split
    assert all({f for f, _ in _matches(item["question"])} <= set(own) for item in items), split
    assert {f for item in items for f, _ in _matches(item["question"])} == set(own), split


# ----------------------------------------------------------------------------- names


def _name_words(lex):
  """A lexicon's words without the affixes both lexicons share ("O'", "-on-Sea", ...)."""
  return lexicon.words_of(lex) - gen.NAME_AFFIX_WORDS


def test_unseen_lexicon_is_shaped_like_the_seen_one_and_shares_only_affixes():
  seen, unseen = gen.LEXICON, gen.UNSEEN_LEXICON
  assert list(unseen) == list(seen)
  assert {pool: len(names) for pool, names in unseen.items()} == {
      pool: len(names) for pool, names in seen.items()}
  assert lexicon.words_of(unseen) & lexicon.words_of(seen) <= gen.NAME_AFFIX_WORDS
  assert not set().union(*seen.values()) & set().union(*unseen.values())


def test_unseen_name_splits_use_no_train_name_and_dev_shares_train_names(demo):
  seen, unseen = _name_words(gen.LEXICON), _name_words(gen.UNSEEN_LEXICON)
  for split in ("train", "dev"):
    assert not unseen & demo["words"][split], split
  dev_names = seen & demo["words"]["dev"]
  assert len(dev_names & demo["words"]["train"]) >= 0.8 * len(dev_names) > 0
  for split in ("dev_unseen", "dev_unseen_templates", "test_unseen_templates"):
    assert not seen & demo["words"][split], split
    assert unseen & demo["words"][split], split
    for item in demo["items"][split]:
      for title, _ in item["context"]:
        pieces = {p.lower() for p in re.split(r"[\s'\-]+", title) if p}
        assert pieces & unseen and not pieces & seen, title


# ----------------------------------------------------------------------------- answers


def _first_date(sentence):
  """(year, month, day) of the first date written in any family's style."""
  found = []
  for match in DATE_DAY_FIRST.finditer(sentence):
    found.append((match.start(), (int(match.group(3)), lexicon.MONTHS.index(match.group(2)),
                                  int(match.group(1)))))
  for match in DATE_MONTH_FIRST.finditer(sentence):
    found.append((match.start(), (int(match.group(3)), lexicon.MONTHS.index(match.group(1)),
                                  int(match.group(2)))))
  assert found, sentence
  return min(found)[1]


def _words_of(sentence, vocabulary):
  """The members of `vocabulary` that occur as whole words in `sentence`."""
  return [word for word in vocabulary if re.search(r"(?<![\w'])" + re.escape(word) + r"\b",
                                                   sentence)]


def test_answers_are_justified_by_the_supporting_sentences(by_family, large):
  countries = sorted(set(gen.LEXICON["country"]) | set(gen.UNSEEN_LEXICON["country"]))
  kinds = collections.Counter()
  for item in _all(by_family, large):
    matched = {kind for _, kind in _matches(item["question"])}
    assert len(matched) == 1, item["question"]
    kind = matched.pop()
    kinds[kind] += 1
    support = _support(item)
    (first, _), (second, _) = item["supporting_facts"]
    answer = item["answer"]
    assert item["type"] == ("bridge" if kind in gen.BRIDGE_KINDS else "comparison")
    if item["type"] == "bridge":
      # The question names the first hop's title, whose supporting sentence names the second
      # hop's title, whose supporting sentence states the answer.
      assert first in item["question"] and second in support[0], item
      assert answer in support[1] and answer not in item["question"], item
      if kind == "birth_country":
        assert _words_of(support[1], countries) == [answer], item
      elif kind == "company_year":
        assert re.fullmatch(r"1[89]\d\d|20\d\d", answer), item
      continue
    # Comparisons name both titles; the first supporting fact is about the first-named one.
    assert first in item["question"] and second in item["question"], item
    assert item["question"].index(first) < item["question"].index(second) or (
        kind == "same_occupation"), item
    if kind == "town_country":
      found = [_words_of(s, countries) for s in support]
      assert all(len(f) == 1 for f in found), support
      assert answer == ("yes" if found[0] == found[1] else "no"), item
    elif kind == "same_occupation":
      jobs = [_words_of(s, gen.OCCUPATIONS) for s in support]
      assert all(len(j) == 1 for j in jobs), support
      assert answer == ("yes" if jobs[0] == jobs[1] else "no"), item
    else:
      dates = [_first_date(s) for s in support]
      assert first in support[0] and second in support[1], item
      assert dates[0] != dates[1]
      earlier = first if dates[0] < dates[1] else second
      if kind == "older":
        assert answer == ("yes" if earlier == first else "no"), item
      else:
        assert answer == earlier, item
  assert len(kinds) == len(gen.BRIDGE_KINDS + gen.COMPARISON_KINDS), kinds


def test_distractors_share_words_and_entities_with_the_question(by_family):
  items = _all(by_family)
  mentions = same_relation = 0
  for item in items:
    gold = {title for title, _ in item["supporting_facts"]}
    distractors = [(t, s) for t, s in item["context"] if t not in gold]
    if any(g in sentence for _, sentences in distractors for sentence in sentences
           for g in gold):
      mentions += 1
    question_words = {w for w in re.findall(r"[a-z]+", item["question"].lower()) if len(w) > 3}
    if any(len(question_words & set(re.findall(r"[a-z]+", " ".join(s).lower()))) >= 2
           for _, s in distractors):
      same_relation += 1
  assert mentions >= 0.25 * len(items)
  assert same_relation >= 0.8 * len(items)


# ----------------------------------------------------------------------------- lengths


def test_benchmark_lengths_match_the_documented_bands(large):
  for group in ("train", "held_out"):
    stats = gen.length_statistics(large[("benchmark", group)])
    assert MEDIAN_BAND[0] <= stats["words_median"] <= MEDIAN_BAND[1], (group, stats)
    assert P90_BAND[0] <= stats["words_p90"] <= P90_BAND[1], (group, stats)
    assert 3 <= stats["sentences_per_paragraph_median"] <= 5, (group, stats)
    assert stats["paragraphs_max"] == gen.NUM_PARAGRAPHS and stats["paragraphs_min"] >= 8
    assert stats["paragraphs_mean"] >= 9.9
    assert stats["supporting_facts_mean"] == 2


def test_short_preset_stays_small(large):
  for group in ("train", "held_out"):
    stats = gen.length_statistics(large[("short", group)])
    assert SHORT_MEAN_BAND[0] <= stats["words_mean"] <= SHORT_MEAN_BAND[1], (group, stats)
    assert stats["words_max"] <= 800, (group, stats)
    assert stats["paragraphs_min"] == stats["paragraphs_max"] == 2 + SHORT.distractors == 8
    assert stats["sentences_per_paragraph_median"] <= 4 and (
        stats["sentences_per_paragraph_max"] <= 8), (group, stats)
    assert stats["supporting_facts_mean"] == 2
    benchmark = gen.length_statistics(large[("benchmark", group)])
    assert stats["words_mean"] < 0.6 * benchmark["words_mean"], group


def test_length_statistics_counts_question_titles_and_sentences():
  record = {"question": "Is it so?", "answer": "yes", "type": "comparison",
            "supporting_facts": [["A b", 0]], "context": [["A b", ["One two.", " Three."]]]}
  stats = gen.length_statistics([record])
  assert stats["words_median"] == stats["words_max"] == 3 + 2 + 3
  assert stats["paragraphs_mean"] == 1 and stats["sentences_per_paragraph_max"] == 2


# ----------------------------------------------------------------------------- demo data


def test_ensure_demo_data_writes_the_five_splits(demo):
  paths, preset = demo["paths"], demo["preset"]
  assert tuple(paths) == gen.SPLITS
  seed = DEMO_SIZES["seed"]
  plan = gen.split_plan(DEMO_SIZES["num_train"], DEMO_SIZES["num_dev"], seed, preset)
  for split, (count, split_seed, names, families) in plan.items():
    assert os.path.basename(paths[split]) == gen.FILENAMES[split]
    assert split_seed == seed + gen.SEED_OFFSETS[split]
    assert names == ("seen" if split in ("train", "dev") else "unseen")
    assert demo["items"][split] == gen.generate_examples(count, split_seed, split, names,
                                                         families, preset)
  ids = [item["_id"] for items in demo["items"].values() for item in items]
  assert len(set(ids)) == len(ids)
  with open(os.path.join(os.path.dirname(paths["train"]), gen.INFO_FILENAME)) as f:
    info = json.load(f)
  assert info["generator"] == f"hotpotqa_{preset}"
  assert info["generator_version"] == gen.GENERATOR_VERSION


def test_demo_data_is_reused_only_for_the_same_arguments_preset_and_version(tmp_path):
  directory = str(tmp_path)
  first = gen.ensure_demo_data(directory, 6, 4, seed=1, preset="short")
  info_path = os.path.join(directory, gen.INFO_FILENAME)

  def snapshot():
    return [(os.stat(p).st_mtime_ns, hashlib.sha256(pathlib.Path(p).read_bytes()).hexdigest())
            for p in first.values()]

  def train():
    with open(first["train"], encoding="utf-8") as f:
      return json.load(f)

  before = snapshot()
  assert gen.ensure_demo_data(directory, 6, 4, seed=1, preset="short") == first
  assert snapshot() == before                       # same arguments: reused as they are
  # The other preset, same arguments and file names: written again, then back.
  assert gen.ensure_demo_data(directory, 6, 4, seed=1) == first
  assert train() == gen.generate_examples(6, seed=1)
  gen.ensure_demo_data(directory, 6, 4, seed=1, preset="short")
  assert train() == gen.generate_examples(6, seed=1, preset="short") != gen.generate_examples(
      6, seed=1)
  gen.ensure_demo_data(directory, 7, 4, seed=1, preset="short")
  assert len(train()) == 7                          # other arguments: written again
  # Files of an older generator version are rewritten.
  with open(info_path, encoding="utf-8") as f:
    info = json.load(f)
  with open(info_path, "w", encoding="utf-8") as f:
    json.dump(dict(info, generator_version=gen.GENERATOR_VERSION - 1), f)
  os.remove(first["dev"])
  gen.ensure_demo_data(directory, 7, 4, seed=1, preset="short")
  assert os.path.exists(first["dev"])
  with open(info_path, encoding="utf-8") as f:
    assert json.load(f) == info


def test_bad_arguments_raise_clear_errors(tmp_path):
  cases = [({"num": -1}, "num"), ({"num": 2.5}, "num"), ({"num": 1, "split": "test"}, "split"),
           ({"num": 1, "names": "other"}, "names"), ({"num": 1, "families": ()}, "families"),
           ({"num": 1, "families": "encyclopedic"}, "families"),
           ({"num": 1, "families": ("encyclopedic", "poetic")}, "poetic")]
  for kwargs, message in cases:
    with pytest.raises(ValueError, match=message):
      gen.generate_examples(**kwargs)
  with pytest.raises(ValueError, match="num_train"):
    gen.ensure_demo_data(str(tmp_path), -1, 2)
  with pytest.raises(ValueError, match="num_dev must be a positive integer"):
    gen.ensure_demo_data(str(tmp_path), 2, 0)
  # An unknown preset is refused, naming the valid ones, before anything is written.
  refused = re.escape(str(gen.PRESETS))
  for call in (lambda: gen.generate_examples(1, preset="demo"),
               lambda: gen.split_plan(2, 2, preset="long"),
               lambda: gen.ensure_demo_data(str(tmp_path / "x"), 2, 2, preset="long")):
    with pytest.raises(ValueError, match=refused):
      call()
  assert not os.path.exists(tmp_path / "x")
