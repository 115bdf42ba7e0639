"""Synthetic NQ (synthetic_data/nq.py), both presets: the original format (byte offsets,
candidates, annotations), answers justified by the text, held-out families, unseen names,
lengths, determinism and pinned benchmark output, the demo files and their reuse."""

import collections
import dataclasses
import gzip
import json
import os
import re
import subprocess
import sys

import pytest

import hash_seeds

from synthetic_data import lexicon
from synthetic_data import nq
from synthetic_data import writer
from tasks.nq import data

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORD_KEYS = {"example_id", "question_text", "question_tokens", "document_title",
               "document_url", "document_html", "document_tokens", "long_answer_candidates",
               "annotations"}
SPAN_KEYS = {"start_byte", "end_byte", "start_token", "end_token"}
TAG_RE = re.compile(r"</?([A-Za-z0-9]+)>")
WORD_RE = re.compile(r"[^\W\d_]+")  # letter runs: JSON keys and url parts split too
SUFFIXES = {s.lower() for s in nq.COMPANY_SUFFIXES}  # "Works", "Motors": not invented words
STOPWORDS = {"was", "is", "the", "of", "a", "in", "on"}
# SHA-256 of json.dumps(generate_examples(3, seed=5, families=FAMILIES), sort_keys=True): the
# benchmark preset's records, unchanged since the generator had presets.
BENCHMARK_DIGEST = "7b69793d0d0f5b6252b6e41c38f8955de3cddb9fe2cf5935fb43bdf0686b152c"


@pytest.fixture(scope="module")
def train():
  return nq.generate_with_meta(45, seed=7)


@pytest.fixture(scope="module")
def held_out():
  return nq.generate_with_meta(40, seed=8, split="dev_unseen_templates", names="unseen",
                               families=nq.HELD_OUT_FAMILIES)


@pytest.fixture(scope="module")
def many():
  """Enough pages for length and answer-kind statistics."""
  return nq.generate_examples(200, seed=21)


@pytest.fixture(scope="module")
def short():
  """Short-preset records: train-like (1 annotation) and dev-like (5 annotations)."""
  return (nq.generate_with_meta(120, seed=11, preset="short")
          + nq.generate_with_meta(120, seed=12, split="dev", preset="short"))


def _title_words(record):
  return set(WORD_RE.findall(record["document_title"].lower())) - SUFFIXES


def _tokens_text(record):
  return " ".join(t["token"] for t in record["document_tokens"])


def _words_of(record, start, end):
  return [t["token"] for t in record["document_tokens"][start:end]]


def _read(path):
  with gzip.open(path, "rt", encoding="utf-8") as f:
    return [json.loads(line) for line in f]


def _gold_is_null(record):
  """The NQ rule: a long answer needs at least 2 non-null annotations."""
  return sum(a["long_answer"]["candidate_index"] >= 0 for a in record["annotations"]) < 2


def test_importing_and_generating_do_not_load_tensorflow(tmp_path):
  code = ("import sys; from synthetic_data import nq; "
          f"nq.ensure_demo_data({str(tmp_path)!r}, 2, 2, preset='short'); "
          "print('tensorflow' in sys.modules)")
  out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                       text=True, check=True)
  assert out.stdout.strip() == "False"


def test_interface():
  assert len(nq.FAMILIES) >= 5 and len(set(nq.FAMILIES)) == len(nq.FAMILIES)
  assert set(nq.TRAIN_FAMILIES) | set(nq.HELD_OUT_FAMILIES) == set(nq.FAMILIES)
  assert not set(nq.TRAIN_FAMILIES) & set(nq.HELD_OUT_FAMILIES)
  assert nq.SPLITS == ("train", "dev", "dev_unseen", "dev_unseen_templates",
                       "test_unseen_templates")
  assert nq.GENERATOR_VERSION == 1 and nq.PRESETS == ("benchmark", "short")


def test_the_task_reader_reads_every_record(train, held_out, short, tmp_path):
  for name, records in (("train", train), ("held", held_out), ("short", short)):
    path = str(tmp_path / f"{name}.jsonl.gz")
    writer.write_jsonl(path, [r for r, _ in records], compress=True)
    for with_labels in (True, False):
      examples, report = data.read_examples(path, with_labels=with_labels)
      assert len(examples) == len(records) == report.examples
      assert not report.skipped and not report.repaired, report.summary()


def test_records_have_the_original_format(train, held_out, short):
  labelled = ([(r, 1) for r, _ in train] + [(r, 5) for r, _ in held_out]
              + [(r, len(r["annotations"])) for r, _ in short])
  for record, annotations in labelled:
    assert set(record) == RECORD_KEYS
    assert isinstance(record["example_id"], int) and 0 < abs(record["example_id"]) < 2**63
    assert record["question_text"] == record["question_text"].lower()
    assert record["question_tokens"] == record["question_text"].split()
    assert record["document_url"].startswith("https://en.wikipedia.org//w/index.php?title=")
    assert len(record["annotations"]) == annotations in (1, 5)
    html = record["document_html"].encode("utf-8")
    tokens = record["document_tokens"]
    assert [t["token"] for t in tokens[:2]] == ["<HTML>", "<BODY>"]
    assert [t["token"] for t in tokens[-2:]] == ["</BODY>", "</HTML>"]
    previous = 0
    for token in tokens:
      assert html[token["start_byte"]:token["end_byte"]].decode("utf-8") == token["token"]
      assert html[previous:token["start_byte"]].strip() == b""  # a space or a newline
      assert token["html_token"] == bool(TAG_RE.fullmatch(token["token"]))
      assert token["html_token"] or re.fullmatch(r"\w+|[^\w\s]", token["token"])
      previous = token["end_byte"]
    assert previous == len(html)
    candidates = record["long_answer_candidates"]
    # Every <P>, <Ul>, <Li>, <Table> and <Tr> is a candidate, in document order.
    assert [c["start_token"] for c in candidates] == [
        i for i, t in enumerate(tokens) if t["token"] in ("<P>", "<Ul>", "<Li>", "<Table>", "<Tr>")]
    top = None
    for c in candidates:
      assert set(c) == SPAN_KEYS | {"top_level"}
      tag = TAG_RE.fullmatch(tokens[c["start_token"]]["token"]).group(1)
      assert tag in nq.CANDIDATE_TAGS
      assert tokens[c["end_token"] - 1]["token"] == f"</{tag}>"
      assert c["top_level"] == (tag not in ("Li", "Tr"))
      assert c["start_byte"] == tokens[c["start_token"]]["start_byte"]
      assert c["end_byte"] == tokens[c["end_token"] - 1]["end_byte"]
      if c["top_level"]:
        top = (tag, c)
      else:  # nested in the enclosing list or table
        assert top[0] == {"Li": "Ul", "Tr": "Table"}[tag]
        assert top[1]["start_token"] < c["start_token"] < c["end_token"] < top[1]["end_token"]
  records = [r for r, _ in train + held_out + short]
  ids = [r["example_id"] for r in records[:85]]
  assert len(set(ids)) == len(ids) and min(ids) < 0 < max(ids)
  # Non-ASCII names: byte offsets differ from character offsets on many pages.
  assert sum(len(r["document_html"].encode("utf-8")) != len(r["document_html"])
             for r in records) > len(records) // 3


def _check_annotation(record, annotation):
  la = annotation["long_answer"]
  assert annotation["yes_no_answer"] in ("YES", "NO", "NONE")
  if la["candidate_index"] < 0:
    assert la == {"start_byte": -1, "end_byte": -1, "start_token": -1, "end_token": -1,
                  "candidate_index": -1}
    assert annotation["short_answers"] == [] and annotation["yes_no_answer"] == "NONE"
    return
  candidate = record["long_answer_candidates"][la["candidate_index"]]
  assert {k: la[k] for k in SPAN_KEYS} == {k: candidate[k] for k in SPAN_KEYS}
  assert not (annotation["yes_no_answer"] != "NONE" and annotation["short_answers"])
  tokens = record["document_tokens"]
  for s in annotation["short_answers"]:
    assert la["start_token"] < s["start_token"] < s["end_token"] < la["end_token"]
    assert 1 <= s["end_token"] - s["start_token"] <= 3
    inside = tokens[s["start_token"]:s["end_token"]]
    assert not any(t["html_token"] for t in inside)
    assert (s["start_byte"], s["end_byte"]) == (inside[0]["start_byte"], inside[-1]["end_byte"])


def test_annotations_are_consistent(train, held_out, short):
  for record, _ in train + held_out + short:
    for annotation in record["annotations"]:
      _check_annotation(record, annotation)
    ids = [a["annotation_id"] for a in record["annotations"]]
    assert all(i > 0 for i in ids)


def test_dev_annotators_disagree_but_the_gold_rule_recovers_the_answer(short):
  dev = [r for r, _ in short if len(r["annotations"]) == 5]
  gold_null = [r for r in dev if _gold_is_null(r)]
  assert 0.15 * len(dev) <= len(gold_null) <= 0.35 * len(dev)
  one_vote, partial, dissent = 0, 0, 0
  for record in dev:
    answered = [a for a in record["annotations"] if a["long_answer"]["candidate_index"] >= 0]
    if _gold_is_null(record):
      one_vote += len(answered) == 1
      continue
    # At least 3 annotators agree on the long answer; the rest are null or give the same long
    # answer without the short one.
    assert len(answered) >= 3
    assert len({a["long_answer"]["candidate_index"] for a in answered}) == 1
    full = [a for a in answered if a["short_answers"] or a["yes_no_answer"] != "NONE"]
    dissent += len(answered) < 5
    partial += 0 < len(full) < len(answered)
  assert one_vote >= 3 and partial >= 3 and dissent >= 10


def test_same_arguments_give_identical_records():
  for preset in nq.PRESETS:
    first = nq.generate_examples(4, seed=3, split="dev", families=("lead", "almanac"),
                                 preset=preset)
    assert first == nq.generate_examples(4, seed=3, split="dev", families=("lead", "almanac"),
                                         preset=preset)
    other = nq.generate_examples(4, seed=4, split="dev", families=("lead", "almanac"),
                                 preset=preset)
    assert [r["question_text"] for r in first] != [r["question_text"] for r in other]


def test_records_do_not_depend_on_the_hash_seed_and_the_benchmark_output_is_pinned():
  code = ("import hashlib, json; from synthetic_data import nq; "
          "print(*(hashlib.sha256(json.dumps(r, sort_keys=True).encode()).hexdigest() for r in ("
          "nq.generate_examples(3, seed=5, families=nq.FAMILIES), "
          "nq.generate_examples(6, seed=5, families=nq.FAMILIES, preset='short'))))")
  (out,) = hash_seeds.outputs_under_hash_seeds(code)
  benchmark, short = out.split()
  assert benchmark == BENCHMARK_DIGEST and short != benchmark


def _regexes(family):
  """The family's fact templates as regexes over token text (entity slots: any words)."""
  out = []
  for skeleton in nq.template_skeletons(family):
    parts = [re.escape(p) for p in skeleton.strip("\x00 ").split("\x00")]
    out.append((skeleton, re.compile(r"[^.<>]{1,150}?".join(parts))))
  return out


def test_held_out_families_share_no_fact_template_with_train(train, held_out):
  train_text = [_tokens_text(r) for r, _ in train]
  held_text = [_tokens_text(r) for r, _ in held_out]
  for families, texts in ((nq.HELD_OUT_FAMILIES, train_text),
                          (nq.TRAIN_FAMILIES, held_text)):
    for family in families:
      for skeleton, regex in _regexes(family):
        for text in texts:
          match = regex.search(text)
          assert not match, (family, skeleton, match and match.group(0))
  # Each family's templates do occur in its own items (the check can fail).
  found = collections.Counter()
  for records in (train, held_out):
    for record, meta in records:
      text = _tokens_text(record)
      found[meta["family"]] += any(r.search(text) for _, r in _regexes(meta["family"]))
  assert set(found) == set(nq.FAMILIES) and min(found.values()) >= 5


def test_held_out_families_share_no_question_pattern_with_train():
  train_patterns = {p for f in nq.TRAIN_FAMILIES for p in nq.question_patterns(f)}
  held_patterns = {p for f in nq.HELD_OUT_FAMILIES for p in nq.question_patterns(f)}
  assert not train_patterns & held_patterns
  train_skeletons = {s for f in nq.TRAIN_FAMILIES for s in nq.template_skeletons(f)}
  held_skeletons = {s for f in nq.HELD_OUT_FAMILIES for s in nq.template_skeletons(f)}
  assert not train_skeletons & held_skeletons


def test_unseen_names_never_occur_in_train(train, held_out):
  unseen = lexicon.words_of(nq.UNSEEN_LEXICON)
  seen = lexicon.words_of(nq.LEXICON)
  assert not unseen & seen
  train_words = set()
  for record, _ in train:
    train_words |= set(WORD_RE.findall(json.dumps(record, ensure_ascii=False).lower()))
  assert not unseen & train_words
  for record, _ in held_out:
    words = set(WORD_RE.findall(json.dumps(record, ensure_ascii=False).lower()))
    assert not words & seen
    title = _title_words(record)
    assert title and title <= unseen


def test_unseen_names_change_only_the_names():
  seen = nq.generate_examples(12, seed=3, split="dev", preset="short")
  unseen = nq.generate_examples(12, seed=3, split="dev", names="unseen", preset="short")
  for a, b in zip(seen, unseen):
    assert a["document_title"] != b["document_title"] and a["example_id"] == b["example_id"]
    assert ([t["html_token"] for t in a["document_tokens"]]
            == [t["html_token"] for t in b["document_tokens"]])
    assert a["long_answer_candidates"] != b["long_answer_candidates"]  # other byte offsets
    assert ([(c["start_token"], c["end_token"]) for c in a["long_answer_candidates"]]
            == [(c["start_token"], c["end_token"]) for c in b["long_answer_candidates"]])


def test_answers_are_justified_by_the_text(train, held_out, short):
  for records in (train + held_out, short):
    kinds = collections.Counter()
    for record, meta in records:
      gold = record["annotations"] if len(record["annotations"]) == 1 else [
          a for a in record["annotations"] if a["long_answer"]["candidate_index"] >= 0
          and (a["short_answers"] or a["yes_no_answer"] != "NONE" or meta["kind"] == "long")]
      kind = meta["kind"]
      kinds[kind] += 1
      if kind == "null":
        assert len(record["annotations"]) == 5 or gold[0]["long_answer"]["candidate_index"] < 0
        continue
      annotation = gold[0]
      la = annotation["long_answer"]
      long_words = _words_of(record, la["start_token"], la["end_token"])
      long_text = " ".join(long_words).lower()
      tokens = [t["token"] for t in record["document_tokens"]]
      if kind == "long":  # the first paragraph of the section the question names
        assert long_words[0] == "<P>"
        before = tokens[:la["start_token"]]
        heading_start = len(before) - 1 - before[::-1].index("<H2>")
        assert tokens[heading_start + 1] == meta["label"].split()[0]
        continue
      relation_words = {w for text in (*meta["nouns"], meta["label"], meta.get("vp", ""))
                        for w in WORD_RE.findall(text.lower())} - STOPWORDS
      assert relation_words & set(WORD_RE.findall(long_text)), (record["question_text"],
                                                                long_text[:300])
      value = nq._TOKEN_RE.findall(meta["value"])
      hits = sum(tokens[i:i + len(value)] == value for i in range(len(tokens)))
      if kind == "short":
        (span,) = annotation["short_answers"]
        assert _words_of(record, span["start_token"], span["end_token"]) == value
        assert hits == 1 and " ".join(value).lower() not in record["question_text"]
        if long_words[0] == "<P>":
          assert record["document_title"].lower() in long_text
      else:  # yes/no: YES names the stated value, NO a value that is nowhere on the page
        yes = annotation["yes_no_answer"] == "YES"
        assert hits == 1 and (meta["asked"] == meta["value"]) == yes
        asked = nq._TOKEN_RE.findall(meta["asked"])
        assert meta["asked"].lower() in record["question_text"]
        assert yes or not any(tokens[i:i + len(asked)] == asked for i in range(len(tokens)))
    assert kinds["short"] >= 10 and kinds["null"] >= 10
  assert min(kinds.values()) >= 40  # short preset: every kind, about a quarter each


def test_benchmark_lengths_are_within_the_documented_bands(many):
  stats = nq.length_statistics(many)
  assert 3000 <= stats["document_tokens_median"] <= 4200, stats
  assert 6500 <= stats["document_tokens_p90"] <= 9800, stats
  assert 2500 <= stats["words_median"] <= 3300, stats
  assert 50 <= stats["candidates_median"] <= 150, stats
  kinds = stats["kinds"]
  assert 0.25 <= kinds["short"] <= 0.45 and 0.40 <= kinds["null"] <= 0.62, kinds
  assert 0.06 <= kinds["long"] <= 0.22 and kinds["yes_no"] <= 0.05, kinds


def test_short_preset_is_small_with_one_train_and_one_held_out_family(short):
  # About as long as the short demo pages it replaces (330 text words, 390 tokens a page).
  stats = nq.length_statistics([r for r, _ in short])
  assert 300 <= stats["words_mean"] <= 430 and stats["words_max"] <= 700, stats
  assert 420 <= stats["document_tokens_mean"] <= 620, stats
  assert 20 <= stats["candidates_median"] <= 45, stats
  assert all(0.15 <= share <= 0.35 for share in stats["kinds"].values()), stats
  assert {meta["family"] for _, meta in short} == {"infobox"}
  held = nq.generate_with_meta(40, seed=2, split="dev_unseen_templates", names="unseen",
                               families=("almanac",), preset="short")
  assert 300 <= nq.length_statistics([r for r, _ in held])["words_mean"] <= 430
  # Any family can still be asked for explicitly.
  assert {m["family"] for _, m in nq.generate_with_meta(
      6, seed=1, families=("lists",), preset="short")} == {"lists"}


def test_pages_have_nested_candidates_and_mostly_top_level_answers(many):
  nested, answers, top = 0, 0, 0
  early = 0
  for record in many:
    candidates = record["long_answer_candidates"]
    nested += any(not c["top_level"] for c in candidates)
    la = record["annotations"][0]["long_answer"]
    if la["candidate_index"] >= 0:
      answers += 1
      top += candidates[la["candidate_index"]]["top_level"]
      early += la["start_token"] < len(record["document_tokens"]) / 2
  assert nested == len(many)
  assert top >= 0.85 * answers and early >= 0.6 * answers


def test_background_prose_does_not_repeat_itself(many):
  for record in many[:40]:
    text = " ".join(t["token"] for t in record["document_tokens"] if not t["html_token"])
    sentences = [s.strip() for s in text.split(" . ") if len(s.split()) >= 6]
    repeats = len(sentences) - len(set(sentences))
    assert repeats <= 0.05 * len(sentences), record["document_title"]


def _mtimes(paths):
  return {k: os.stat(p).st_mtime_ns for k, p in paths.items()}


def test_ensure_demo_data_writes_and_reuses_the_five_splits(tmp_path):
  directory = str(tmp_path / "nqb")
  paths = nq.ensure_demo_data(directory, num_train=4, num_dev=3, seed=2)
  assert set(paths) == set(nq.SPLITS)
  for split, path in paths.items():
    records = _read(path)
    assert len(records) == (4 if split == "train" else 3)
    assert all(len(r["annotations"]) == (1 if split == "train" else 5) for r in records)
    examples, report = data.read_examples(path, with_labels=True)
    assert len(examples) == len(records) and not report.skipped
  unseen = lexicon.words_of(nq.UNSEEN_LEXICON)
  for split in ("dev_unseen", "dev_unseen_templates", "test_unseen_templates"):
    for record in _read(paths[split]):
      assert _title_words(record) <= unseen
  assert _read(paths["dev_unseen_templates"]) != _read(paths["test_unseen_templates"])
  ids = [r["example_id"] for path in paths.values() for r in _read(path)]
  assert len(set(ids)) == len(ids)  # no example id is in two splits
  mtimes = _mtimes(paths)
  assert nq.ensure_demo_data(directory, num_train=4, num_dev=3, seed=2) == paths
  assert _mtimes(paths) == mtimes
  nq.ensure_demo_data(directory, num_train=2, num_dev=3, seed=2)
  assert len(_read(paths["train"])) == 2
  assert not [name for name in os.listdir(directory) if name.endswith(".tmp")]


def test_the_preset_decides_the_files_and_their_reuse(tmp_path, monkeypatch):
  directory = str(tmp_path / "nq")
  marker = os.path.join(directory, nq.INFO_FILENAME)
  paths = nq.ensure_demo_data(directory, 6, 4, seed=1, preset="short")
  short = {split: _read(path) for split, path in paths.items()}
  # The short preset's splits: infobox pages, the held-out ones almanac pages (seed offsets
  # as in the benchmark preset).
  assert short["train"] == json.loads(json.dumps(nq.generate_examples(
      6, 1, "train", "seen", ("infobox",), preset="short")))
  assert short["test_unseen_templates"] == json.loads(json.dumps(nq.generate_examples(
      4, 1 + 5_000_011, "test_unseen_templates", "unseen", ("almanac",), preset="short")))
  with open(marker, encoding="utf-8") as f:
    assert json.load(f)["generator"] == "nq_short"
  mtimes = _mtimes(paths)
  assert nq.ensure_demo_data(directory, 6, 4, seed=1, preset="short") == paths
  assert _mtimes(paths) == mtimes
  # Asking for the other preset rewrites the folder, and back again.
  assert nq.ensure_demo_data(directory, 6, 4, seed=1) == paths
  benchmark = {split: _read(path) for split, path in paths.items()}
  assert all(benchmark[split] != short[split] for split in nq.SPLITS)
  assert sum(len(r["document_tokens"]) for r in benchmark["dev"]) > 3 * sum(
      len(r["document_tokens"]) for r in short["dev"])
  with open(marker, encoding="utf-8") as f:
    assert json.load(f)["generator"] == "nq_benchmark"  # as before presets existed
  nq.ensure_demo_data(directory, 6, 4, seed=1, preset="short")
  assert {split: _read(path) for split, path in paths.items()} == short
  # The preset's name is checked, not only what its knobs put in the info: a short preset with
  # the benchmark's families still rewrites a benchmark folder.
  monkeypatch.setitem(nq.PRESET_SETTINGS, "short", dataclasses.replace(
      nq.PRESET_SETTINGS["short"], train_families=nq.TRAIN_FAMILIES,
      held_out_families=nq.HELD_OUT_FAMILIES))
  nq.ensure_demo_data(directory, 6, 4, seed=1)
  nq.ensure_demo_data(directory, 6, 4, seed=1, preset="short")
  assert _read(paths["dev"]) != benchmark["dev"]


@pytest.mark.parametrize("kwargs, message", [
    ({"split": "other"}, "split"), ({"names": "other"}, "names"),
    ({"families": ("nope",)}, "unknown families"), ({"families": ()}, "families"),
    ({"families": "infobox"}, "families"), ({"num": -1}, "num"),
    ({"preset": "long"}, r"preset must be one of \('benchmark', 'short'\), got 'long'")])
def test_bad_arguments_raise_value_error(kwargs, message):
  args = {"num": 1, **kwargs}
  with pytest.raises(ValueError, match=message):
    nq.generate_examples(**args)


def test_bad_demo_arguments_raise_value_error(tmp_path):
  with pytest.raises(ValueError, match="num_train"):
    nq.ensure_demo_data(str(tmp_path), num_train=0, num_dev=1)
  with pytest.raises(ValueError, match="preset must be one of .*'demo'"):
    nq.ensure_demo_data(str(tmp_path), 1, 1, preset="demo")
  assert not os.listdir(tmp_path)
  with pytest.raises(ValueError, match="at least one"):
    nq.length_statistics([])


def test_simplified_keeps_the_token_indices(short):
  for record, _ in short[::6]:
    simple = nq.to_simplified(record)
    assert set(simple) == {"example_id", "question_text", "document_url", "document_text",
                           "long_answer_candidates", "annotations"}
    assert simple["document_text"].split(" ") == [t["token"] for t in record["document_tokens"]]
    assert simple["long_answer_candidates"] == [
        {k: c[k] for k in ("start_token", "end_token", "top_level")}
        for c in record["long_answer_candidates"]]
    for original, a in zip(record["annotations"], simple["annotations"]):
      assert a["annotation_id"] == original["annotation_id"]
      assert a["long_answer"] == {k: original["long_answer"][k]
                                  for k in ("start_token", "end_token", "candidate_index")}
      assert a["short_answers"] == [{"start_token": s["start_token"], "end_token": s["end_token"]}
                                    for s in original["short_answers"]]
      assert a["yes_no_answer"] == original["yes_no_answer"]
