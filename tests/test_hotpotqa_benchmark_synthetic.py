"""Benchmark-style synthetic HotpotQA: official format read back with no skips, determinism,
held-out template families that share no phrasing with train, unseen names, answers justified by
the text, lengths within the documented bands, the five demo splits and argument checks."""

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

from synthetic_data import hotpotqa as small
from synthetic_data import hotpotqa_benchmark as bench
from synthetic_data import lexicon
from tasks.hotpotqa.data import read_examples

KEYS = {"_id", "question", "answer", "supporting_facts", "context", "type", "level"}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The bands documented in the module docstring and docs/synthetic_data/hotpotqa.md.
MEDIAN_BAND = (850, 1150)
P90_BAND = (1250, 1750)
MONTH = "(" + "|".join(lexicon.MONTHS) + ")"
DATE_DAY_FIRST = re.compile(r"(\d{1,2})(?:st|nd|rd|th)? (?:of )?" + MONTH + r",? (\d{4})")
DATE_MONTH_FIRST = re.compile(MONTH + r" (\d{1,2})(?:st|nd|rd|th)?, (\d{4})")
DEMO_SIZES = {"num_train": 30, "num_dev": 20, "seed": 4}


@pytest.fixture(scope="module")
def by_family():
  """Items of each family alone (seen names for train families, unseen for held-out ones)."""
  out = {}
  for i, family in enumerate(bench.FAMILIES):
    held_out = family in bench.HELD_OUT_FAMILIES
    out[family] = bench.generate_examples(
        40, seed=100 + i, split="dev_unseen_templates" if held_out else "train",
        names="unseen" if held_out else "seen", families=(family,))
  return out


@pytest.fixture(scope="module")
def large():
  """200 train-family and 200 held-out-family items, for the length bands."""
  return {"train": bench.generate_examples(200, seed=11),
          "held_out": bench.generate_examples(200, seed=12, split="test_unseen_templates",
                                              names="unseen",
                                              families=bench.HELD_OUT_FAMILIES)}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
  """ensure_demo_data's paths and each split's items and lower-cased words."""
  paths = bench.ensure_demo_data(str(tmp_path_factory.mktemp("bench")), **DEMO_SIZES)
  items, words = {}, {}
  for split in bench.SPLITS:
    text = pathlib.Path(paths[split]).read_text(encoding="utf-8")
    items[split] = json.loads(text)
    words[split] = set(re.findall(r"\w+", text.lower()))
  return {"paths": paths, "items": items, "words": words}


def _all(by_family):
  return [item for family in bench.FAMILIES for item in by_family[family]]


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


# ----------------------------------------------------------------------------- format


def test_records_have_the_official_keys_and_structure(by_family):
  items = _all(by_family)
  for item in items:
    assert set(item) == KEYS
    assert re.fullmatch(r"[0-9a-f]{24}", item["_id"])
    assert item["question"].endswith("?") and item["answer"].strip()
    assert item["type"] in ("bridge", "comparison")
    assert item["level"] in ("easy", "medium", "hard")
    titles = [title for title, _ in item["context"]]
    assert len(set(titles)) == len(titles)
    assert 8 <= len(titles) <= bench.NUM_PARAGRAPHS
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
  for split in bench.SPLITS:
    for with_labels in (True, False):
      examples, report = read_examples(demo["paths"][split], with_labels=with_labels)
      assert len(examples) == report.records == len(demo["items"][split])
      assert not report.skipped and not report.repaired, (split, report.summary())
    assert all(e.answer and e.supporting_facts for e in
               read_examples(demo["paths"][split], with_labels=True)[0])


def test_question_types_answers_and_levels_are_mixed(large):
  for items in large.values():
    stats = bench.length_statistics(items)
    assert 0.7 <= stats["bridge_share"] <= 0.9           # about 80% bridge in the paper
    answers = collections.Counter(item["answer"] for item in items
                                  if item["answer"] in ("yes", "no"))
    assert answers["yes"] and answers["no"]
    assert {item["level"] for item in items} == {"easy", "medium", "hard"}


# ----------------------------------------------------------------------------- determinism


def test_same_arguments_give_identical_records_and_seeds_differ():
  a = bench.generate_examples(8, seed=3)
  assert a == bench.generate_examples(8, seed=3)
  b = bench.generate_examples(8, seed=4)
  assert not {e["_id"] for e in a} & {e["_id"] for e in b}
  assert [e["question"] for e in a] != [e["question"] for e in b]
  # The split is part of the id: the same seed in two splits gives different ids.
  c = bench.generate_examples(8, seed=3, split="dev")
  assert not {e["_id"] for e in a} & {e["_id"] for e in c}


def test_output_does_not_depend_on_the_hash_seed():
  code = ("import hashlib, json; from synthetic_data import hotpotqa_benchmark as g; "
          "r = g.generate_examples(6, seed=2, families=g.FAMILIES); "
          "print(hashlib.sha256(json.dumps(r).encode()).hexdigest())")
  digests = hash_seeds.outputs_under_hash_seeds(code)
  assert len(digests) == 1


def test_importing_does_not_load_tensorflow():
  code = "import sys, synthetic_data.hotpotqa_benchmark; print('tensorflow' in sys.modules)"
  out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       check=True)
  assert out.stdout.strip() == "False"


# ----------------------------------------------------------------------------- families


def test_family_lists():
  assert len(bench.FAMILIES) >= 5 and len(set(bench.FAMILIES)) == len(bench.FAMILIES)
  assert set(bench.TRAIN_FAMILIES) | set(bench.HELD_OUT_FAMILIES) == set(bench.FAMILIES)
  assert not set(bench.TRAIN_FAMILIES) & set(bench.HELD_OUT_FAMILIES)
  assert set(bench.FACT_TEMPLATES) == set(bench.QUESTION_TEMPLATES) == set(bench.FAMILIES)
  for family in bench.FAMILIES:
    assert set(bench.QUESTION_TEMPLATES[family]) == set(bench.BRIDGE_KINDS +
                                                         bench.COMPARISON_KINDS)


def test_every_template_has_a_distinctive_run_and_is_used(by_family):
  for family in bench.FAMILIES:
    text = _text(by_family[family])
    for name, templates in bench.FACT_TEMPLATES[family].items():
      for template in templates:
        runs = _fragments(template, 4)
        assert runs, (family, template)
        # Each template is rendered in its own family's items (so the checks below bite).
        assert any(run in text for run in runs), (family, name, template)
    for templates in bench.QUESTION_TEMPLATES[family].values():
      assert all(_fragments(template, 2) for template in templates), templates


def test_held_out_families_share_no_fact_phrasing_with_train_families(by_family):
  groups = {"train": bench.TRAIN_FAMILIES, "held_out": bench.HELD_OUT_FAMILIES}
  texts = {group: _text([item for f in families for item in by_family[f]])
           for group, families in groups.items()}
  runs = {group: {run for f in families for templates in bench.FACT_TEMPLATES[f].values()
                  for template in templates for run in _fragments(template, 4)}
          for group, families in groups.items()}
  # No held-out fact template (slots removed) occurs in a train item, and the other way round.
  assert not [run for run in runs["held_out"] if run in texts["train"]]
  assert not [run for run in runs["train"] if run in texts["held_out"]]
  assert not runs["train"] & runs["held_out"]


def test_held_out_families_ask_their_questions_in_new_words(by_family):
  """No question of one group matches a question template of the other, and no run of three or
  more words of a template occurs in the other group's questions."""
  groups = {"train": bench.TRAIN_FAMILIES, "held_out": bench.HELD_OUT_FAMILIES}
  questions = {group: [item["question"] for f in families for item in by_family[f]]
               for group, families in groups.items()}
  for group, other in (("held_out", "train"), ("train", "held_out")):
    text = "\n".join(questions[other]).lower()
    for family in groups[group]:
      for templates in bench.QUESTION_TEMPLATES[family].values():
        for template in templates:
          pattern = _pattern(template)
          assert not any(re.fullmatch(pattern, q) for q in questions[other]), template
          for run in _fragments(template, 3):
            assert run not in text, (family, template, run)


def test_demo_splits_use_the_right_families(demo):
  """Train-like splits contain train phrasings only, the *_unseen_templates ones held-out."""
  held_runs = [run for f in bench.HELD_OUT_FAMILIES
               for templates in bench.FACT_TEMPLATES[f].values() for t in templates
               for run in _fragments(t, 4)]
  train_runs = [run for f in bench.TRAIN_FAMILIES
                for templates in bench.FACT_TEMPLATES[f].values() for t in templates
                for run in _fragments(t, 4)]
  for split, items in demo["items"].items():
    text = _text(items)
    unseen_templates = split.endswith("unseen_templates")
    assert not any(run in text for run in (train_runs if unseen_templates else held_runs)), split
    assert any(run in text for run in (held_runs if unseen_templates else train_runs)), split


# ----------------------------------------------------------------------------- names


def _name_words(lex):
  return lexicon.words_of(lex) - small.NAME_AFFIX_WORDS


def test_unseen_name_splits_use_no_train_name(demo):
  seen, unseen = _name_words(small.LEXICON), _name_words(small.UNSEEN_LEXICON)
  for split in ("train", "dev"):
    assert not unseen & demo["words"][split], split
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


def _pattern(template):
  """A regular expression matching the template's renderings (each slot any text)."""
  return "".join(re.escape(literal) + ("(.+)" if slot else "")
                 for literal, slot, _, _ in string.Formatter().parse(template))


def _kind(question):
  """The question kind, found by matching every family's question templates."""
  for family in bench.FAMILIES:
    for kind, templates in bench.QUESTION_TEMPLATES[family].items():
      for template in templates:
        if re.fullmatch(_pattern(template), question):
          return kind
  raise AssertionError(f"no template matches {question!r}")


def test_answers_are_justified_by_the_supporting_sentences(by_family):
  countries = sorted(set(small.LEXICON["country"]) | set(small.UNSEEN_LEXICON["country"]))
  kinds = collections.Counter()
  for item in _all(by_family):
    kind = _kind(item["question"])
    kinds[kind] += 1
    support = _support(item)
    (first, _), (second, _) = item["supporting_facts"]
    answer = item["answer"]
    assert item["type"] == ("bridge" if kind in bench.BRIDGE_KINDS else "comparison")
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
      jobs = [_words_of(s, small.OCCUPATIONS) for s in support]
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
  assert len(kinds) == len(bench.BRIDGE_KINDS + bench.COMPARISON_KINDS), kinds


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


def test_lengths_match_the_documented_bands(large):
  for group, items in large.items():
    stats = bench.length_statistics(items)
    assert MEDIAN_BAND[0] <= stats["words_median"] <= MEDIAN_BAND[1], (group, stats)
    assert P90_BAND[0] <= stats["words_p90"] <= P90_BAND[1], (group, stats)
    assert 3 <= stats["sentences_per_paragraph_median"] <= 5, (group, stats)
    assert stats["paragraphs_max"] == bench.NUM_PARAGRAPHS and stats["paragraphs_min"] >= 8
    assert stats["paragraphs_mean"] >= 9.9
    assert stats["supporting_facts_mean"] == 2


def test_length_statistics_counts_question_titles_and_sentences():
  record = {"question": "Is it so?", "answer": "yes", "type": "comparison",
            "supporting_facts": [["A b", 0]], "context": [["A b", ["One two.", " Three."]]]}
  stats = bench.length_statistics([record])
  assert stats["words_median"] == stats["words_max"] == 3 + 2 + 3
  assert stats["paragraphs_mean"] == 1 and stats["sentences_per_paragraph_max"] == 2


# ----------------------------------------------------------------------------- demo data


def test_ensure_demo_data_writes_the_five_splits_and_reuses_them(demo, tmp_path):
  paths = demo["paths"]
  assert set(paths) == set(bench.SPLITS)
  seed = DEMO_SIZES["seed"]
  for split in bench.SPLITS:
    filename, split_seed, names, families = bench.split_settings(split, seed)
    assert os.path.basename(paths[split]) == filename
    count = DEMO_SIZES["num_train"] if split == "train" else DEMO_SIZES["num_dev"]
    assert demo["items"][split] == bench.generate_examples(count, split_seed, split, names,
                                                           families)
  ids = [item["_id"] for items in demo["items"].values() for item in items]
  assert len(set(ids)) == len(ids)

  directory = str(tmp_path)
  first = bench.ensure_demo_data(directory, 6, 4, seed=1)

  def snapshot():
    return [(os.stat(p).st_mtime_ns, hashlib.sha256(pathlib.Path(p).read_bytes()).hexdigest())
            for p in first.values()]

  before = snapshot()
  assert bench.ensure_demo_data(directory, 6, 4, seed=1) == first
  assert snapshot() == before                       # same arguments: reused as they are
  bench.ensure_demo_data(directory, 7, 4, seed=1)
  with open(first["train"], encoding="utf-8") as f:  # other arguments: written again
    assert len(json.load(f)) == 7


def test_bad_arguments_raise_clear_errors(tmp_path):
  cases = [({"num": -1}, "num"), ({"num": 2.5}, "num"), ({"num": 1, "split": "test"}, "split"),
           ({"num": 1, "names": "other"}, "names"), ({"num": 1, "families": ()}, "families"),
           ({"num": 1, "families": "encyclopedic"}, "families"),
           ({"num": 1, "families": ("encyclopedic", "poetic")}, "poetic")]
  for kwargs, message in cases:
    with pytest.raises(ValueError, match=message):
      bench.generate_examples(**kwargs)
  with pytest.raises(ValueError, match="num_train"):
    bench.ensure_demo_data(str(tmp_path), -1, 2)
  with pytest.raises(ValueError, match="split"):
    bench.split_settings("valid")
