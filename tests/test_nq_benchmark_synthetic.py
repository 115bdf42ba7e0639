"""Benchmark-style synthetic NQ: format, determinism, held-out families, names, lengths."""

import collections
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
from synthetic_data import nq_benchmark as bench
from tasks.nq import data

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORD_KEYS = {"example_id", "question_text", "question_tokens", "document_title",
               "document_url", "document_html", "document_tokens", "long_answer_candidates",
               "annotations"}
TAG_RE = re.compile(r"</?([A-Za-z0-9]+)>")
WORD_RE = re.compile(r"[^\W\d_]+")
SUFFIXES = {s.lower() for s in nq.COMPANY_SUFFIXES}  # "Works", "Motors": not invented words


def _title_words(record):
  return set(WORD_RE.findall(record["document_title"].lower())) - SUFFIXES
STOPWORDS = {"was", "is", "the", "of", "a", "in", "on"}


@pytest.fixture(scope="module")
def train():
  return bench.generate_with_meta(45, seed=7)


@pytest.fixture(scope="module")
def held_out():
  return bench.generate_with_meta(40, seed=8, split="dev_unseen_templates", names="unseen",
                                  families=bench.HELD_OUT_FAMILIES)


@pytest.fixture(scope="module")
def many():
  """Enough pages for length and answer-kind statistics."""
  return bench.generate_examples(200, seed=21)


def _tokens_text(record):
  return " ".join(t["token"] for t in record["document_tokens"])


def _write(records, path):
  nq.write_jsonl_gz(records, str(path))
  return str(path)


def _read(path):
  with gzip.open(path, "rt", encoding="utf-8") as f:
    return [json.loads(line) for line in f]


def test_importing_does_not_load_tensorflow():
  code = "import sys, synthetic_data.nq_benchmark; print('tensorflow' in sys.modules)"
  out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                       text=True, check=True)
  assert out.stdout.strip() == "False"


def test_interface():
  assert len(bench.FAMILIES) >= 5 and len(set(bench.FAMILIES)) == len(bench.FAMILIES)
  assert set(bench.TRAIN_FAMILIES) | set(bench.HELD_OUT_FAMILIES) == set(bench.FAMILIES)
  assert not set(bench.TRAIN_FAMILIES) & set(bench.HELD_OUT_FAMILIES)
  assert bench.SPLITS == ("train", "dev", "dev_unseen", "dev_unseen_templates",
                          "test_unseen_templates")
  assert bench.GENERATOR_VERSION == 1


def test_the_task_reader_reads_every_record(train, held_out, tmp_path):
  for name, records in (("train", train), ("held", held_out)):
    path = _write([r for r, _ in records], tmp_path / f"{name}.jsonl.gz")
    for with_labels in (True, False):
      examples, report = data.read_examples(path, with_labels=with_labels)
      assert len(examples) == len(records) == report.examples
      assert not report.skipped and not report.repaired, report.summary()


def test_records_have_the_original_format(train, held_out):
  labelled = [(r, 1) for r, _ in train] + [(r, 5) for r, _ in held_out]
  for record, annotations in labelled:
    assert set(record) == RECORD_KEYS
    assert record["question_text"] == record["question_text"].lower()
    assert record["question_tokens"] == record["question_text"].split()
    assert len(record["annotations"]) == annotations
    html = record["document_html"].encode("utf-8")
    previous = 0
    for token in record["document_tokens"]:
      assert html[token["start_byte"]:token["end_byte"]].decode("utf-8") == token["token"]
      assert html[previous:token["start_byte"]].strip() == b""
      assert token["html_token"] == bool(TAG_RE.fullmatch(token["token"]))
      previous = token["end_byte"]
    assert previous == len(html)
    tokens = record["document_tokens"]
    for c in record["long_answer_candidates"]:
      tag = TAG_RE.fullmatch(tokens[c["start_token"]]["token"]).group(1)
      assert tag in nq.CANDIDATE_TAGS
      assert tokens[c["end_token"] - 1]["token"] == f"</{tag}>"
      assert c["top_level"] == (tag not in ("Li", "Tr"))
      assert c["start_byte"] == tokens[c["start_token"]]["start_byte"]
      assert c["end_byte"] == tokens[c["end_token"] - 1]["end_byte"]
  ids = [r["example_id"] for r, _ in train + held_out]
  assert len(set(ids)) == len(ids)


def test_same_arguments_give_identical_records():
  first = bench.generate_examples(4, seed=3, split="dev", families=("lead", "almanac"))
  assert first == bench.generate_examples(4, seed=3, split="dev", families=("lead", "almanac"))
  other = bench.generate_examples(4, seed=4, split="dev", families=("lead", "almanac"))
  assert [r["question_text"] for r in first] != [r["question_text"] for r in other]


def test_records_do_not_depend_on_the_hash_seed():
  code = ("import hashlib, json; from synthetic_data import nq_benchmark as b; "
          "r = b.generate_examples(3, seed=5, families=b.FAMILIES); "
          "print(hashlib.sha256(json.dumps(r).encode()).hexdigest())")
  outs = hash_seeds.outputs_under_hash_seeds(code)
  assert len(outs) == 1


def _regexes(family):
  """The family's fact templates as regexes over token text (entity slots: any words)."""
  out = []
  for skeleton in bench.template_skeletons(family):
    parts = [re.escape(p) for p in skeleton.strip("\x00 ").split("\x00")]
    out.append((skeleton, re.compile(r"[^.<>]{1,150}?".join(parts))))
  return out


def test_held_out_families_share_no_fact_template_with_train(train, held_out):
  train_text = [_tokens_text(r) for r, _ in train]
  held_text = [_tokens_text(r) for r, _ in held_out]
  for families, texts in ((bench.HELD_OUT_FAMILIES, train_text),
                          (bench.TRAIN_FAMILIES, held_text)):
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
  assert set(found) == set(bench.FAMILIES) and min(found.values()) >= 5


def test_held_out_families_share_no_question_pattern_with_train():
  train_patterns = {p for f in bench.TRAIN_FAMILIES for p in bench.question_patterns(f)}
  held_patterns = {p for f in bench.HELD_OUT_FAMILIES for p in bench.question_patterns(f)}
  assert not train_patterns & held_patterns
  train_skeletons = {s for f in bench.TRAIN_FAMILIES for s in bench.template_skeletons(f)}
  held_skeletons = {s for f in bench.HELD_OUT_FAMILIES for s in bench.template_skeletons(f)}
  assert not train_skeletons & held_skeletons


def test_unseen_names_never_occur_in_train(train, held_out):
  unseen = lexicon.words_of(nq.UNSEEN_LEXICON)
  seen = lexicon.words_of(nq.LEXICON)
  train_words = set()
  for record, _ in train:
    train_words |= set(WORD_RE.findall(json.dumps(record, ensure_ascii=False).lower()))
  assert not unseen & train_words
  for record, _ in held_out:
    words = set(WORD_RE.findall(json.dumps(record, ensure_ascii=False).lower()))
    assert not words & seen
    title = _title_words(record)
    assert title and title <= unseen


def _words_of(record, start, end):
  return [t["token"] for t in record["document_tokens"][start:end]]


def test_answers_are_justified_by_the_text(train, held_out):
  kinds = collections.Counter()
  for record, meta in train + held_out:
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
    if kind == "long":
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
      (short,) = annotation["short_answers"]
      assert _words_of(record, short["start_token"], short["end_token"]) == value
      assert la["start_token"] < short["start_token"] < short["end_token"] < la["end_token"]
      assert hits == 1
      if long_words[0] == "<P>":
        assert record["document_title"].lower() in long_text
    else:  # yes/no: YES names the stated value, NO a value that is nowhere on the page
      yes = annotation["yes_no_answer"] == "YES"
      assert hits == 1 and (meta["asked"] == meta["value"]) == yes
      asked = nq._TOKEN_RE.findall(meta["asked"])
      assert meta["asked"].lower() in record["question_text"]
      assert yes or not any(tokens[i:i + len(asked)] == asked for i in range(len(tokens)))
  assert kinds["short"] >= 10 and kinds["null"] >= 10


def test_lengths_are_within_the_documented_bands(many):
  stats = bench.length_statistics(many)
  tokens, words, candidates = stats["document_tokens"], stats["words"], stats["candidates"]
  assert 3000 <= tokens["median"] <= 4200, stats
  assert 6500 <= tokens["p90"] <= 9800, stats
  assert 2500 <= words["median"] <= 3300, stats
  assert 50 <= candidates["median"] <= 150, stats
  kinds = stats["kinds"]
  assert 0.25 <= kinds["short"] <= 0.45 and 0.40 <= kinds["null"] <= 0.62, kinds
  assert 0.06 <= kinds["long"] <= 0.22 and kinds["yes_no"] <= 0.05, kinds


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


def test_ensure_demo_data_writes_and_reuses_the_five_splits(tmp_path):
  directory = str(tmp_path / "nqb")
  paths = bench.ensure_demo_data(directory, num_train=4, num_dev=3, seed=2)
  assert set(paths) == set(bench.SPLITS)
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
  mtimes = {k: os.stat(p).st_mtime_ns for k, p in paths.items()}
  assert bench.ensure_demo_data(directory, num_train=4, num_dev=3, seed=2) == paths
  assert {k: os.stat(p).st_mtime_ns for k, p in paths.items()} == mtimes
  bench.ensure_demo_data(directory, num_train=2, num_dev=3, seed=2)
  assert len(_read(paths["train"])) == 2


@pytest.mark.parametrize("kwargs, message", [
    ({"split": "other"}, "split"), ({"names": "other"}, "names"),
    ({"families": ("nope",)}, "unknown families"), ({"families": ()}, "families"),
    ({"families": "infobox"}, "families"), ({"num": -1}, "num")])
def test_bad_arguments_raise_value_error(kwargs, message):
  args = {"num": 1, **kwargs}
  with pytest.raises(ValueError, match=message):
    bench.generate_examples(**args)


def test_bad_demo_sizes_raise_value_error(tmp_path):
  with pytest.raises(ValueError, match="num_train"):
    bench.ensure_demo_data(str(tmp_path), num_train=0, num_dev=1)
  with pytest.raises(ValueError, match="at least one"):
    bench.length_statistics([])
