"""Synthetic NQ data: byte offsets, candidates, annotations, learnability, files on disk."""

import collections
import gzip
import json
import os
import re
import subprocess
import sys

import pytest

from synthetic_data import lexicon
from synthetic_data import nq as synthetic

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORD_KEYS = {"example_id", "question_text", "question_tokens", "document_title",
               "document_url", "document_html", "document_tokens", "long_answer_candidates",
               "annotations"}
SPAN_KEYS = {"start_byte", "end_byte", "start_token", "end_token"}
STOPWORDS = {"what", "which", "when", "where", "does", "have", "with", "from", "about", "that"}
TAG_RE = re.compile(r"</?([A-Za-z0-9]+)>")


@pytest.fixture(scope="module")
def train():
  return synthetic.generate_examples(200, seed=11)


@pytest.fixture(scope="module")
def dev():
  return synthetic.generate_examples(120, seed=11 + synthetic.DEV_SEED_OFFSET,
                                     num_annotations=synthetic.NUM_DEV_ANNOTATIONS)


def _kind(annotation):
  if annotation["long_answer"]["candidate_index"] < 0:
    return "null"
  if annotation["yes_no_answer"] != "NONE":
    return "yes_no"
  return "short" if annotation["short_answers"] else "long"


def _words(example, start, end):
  return [t["token"] for t in example["document_tokens"][start:end]]


def _gold_is_null(example):
  """The NQ rule: a long answer needs at least 2 non-null annotations."""
  return sum(a["long_answer"]["candidate_index"] >= 0 for a in example["annotations"]) < 2


def test_importing_does_not_load_tensorflow():
  code = "import sys, synthetic_data.nq; print('tensorflow' in sys.modules)"
  out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                       text=True, check=True)
  assert out.stdout.strip() == "False"


def test_records_have_the_original_keys_and_types(train):
  for ex in train:
    assert set(ex) == RECORD_KEYS
    assert isinstance(ex["example_id"], int) and 0 < abs(ex["example_id"]) < 2**63
    assert ex["question_text"] == ex["question_text"].lower()
    assert ex["question_tokens"] == ex["question_text"].split()
    assert ex["document_title"].lower() in ex["question_text"]
    assert ex["document_url"].startswith("https://en.wikipedia.org//w/index.php?title=")
    assert len(ex["annotations"]) == 1
    json.dumps(ex)  # serialisable as is
  ids = [ex["example_id"] for ex in train]
  assert len(set(ids)) == len(ids)
  assert any(i < 0 for i in ids) and any(i > 0 for i in ids)


def test_token_bytes_slice_the_utf8_html(train):
  for ex in train:
    data = ex["document_html"].encode("utf-8")
    previous_end = 0
    for token in ex["document_tokens"]:
      start, end = token["start_byte"], token["end_byte"]
      assert data[start:end].decode("utf-8") == token["token"]
      assert start < end and start >= previous_end
      assert data[previous_end:start].strip() == b""  # only a space or a newline between
      previous_end = end
    assert previous_end == len(data)
    assert b"\n" in data and b" " in data
  # Non-ASCII names: byte offsets differ from character offsets.
  differ = [ex for ex in train if len(ex["document_html"].encode("utf-8"))
            != len(ex["document_html"])]
  assert len(differ) > len(train) // 2


def test_tokens_are_single_tags_words_or_punctuation(train):
  for ex in train:
    tokens = ex["document_tokens"]
    assert [t["token"] for t in tokens[:2]] == ["<HTML>", "<BODY>"]
    assert [t["token"] for t in tokens[-2:]] == ["</BODY>", "</HTML>"]
    for token in tokens:
      text = token["token"]
      assert token["html_token"] == bool(TAG_RE.fullmatch(text)), text
      if not token["html_token"]:
        assert re.fullmatch(r"\w+|[^\w\s]", text), text


def test_candidates_match_their_tags_and_nesting(train):
  for ex in train:
    tokens, candidates = ex["document_tokens"], ex["long_answer_candidates"]
    starts = [c["start_token"] for c in candidates]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    opening = [i for i, t in enumerate(tokens)
               if t["token"] in ("<P>", "<Ul>", "<Li>", "<Table>", "<Tr>")]
    assert starts == opening  # every such element is a candidate, in document order
    top = None
    for c in candidates:
      assert set(c) == SPAN_KEYS | {"top_level"}
      first, last = tokens[c["start_token"]], tokens[c["end_token"] - 1]
      assert c["start_byte"] == first["start_byte"] and c["end_byte"] == last["end_byte"]
      tag = TAG_RE.fullmatch(first["token"]).group(1)
      assert last["token"] == f"</{tag}>"
      inner = [t["token"] for t in tokens[c["start_token"] + 1:c["end_token"] - 1]]
      assert inner.count(f"<{tag}>") == inner.count(f"</{tag}>") == 0
      assert c["top_level"] == (tag not in ("Li", "Tr"))
      if c["top_level"]:
        top = (tag, c)
      else:
        parent_tag, parent = top
        assert parent_tag == {"Li": "Ul", "Tr": "Table"}[tag]
        assert parent["start_token"] < c["start_token"] < c["end_token"] < parent["end_token"]
    # The <HTML>, <BODY> and <H1> tokens lie outside every top-level candidate.
    covered = {i for c in candidates if c["top_level"]
               for i in range(c["start_token"], c["end_token"])}
    for i, token in enumerate(tokens):
      if token["token"] in ("<HTML>", "<BODY>", "<H1>", "</H1>", "</BODY>", "</HTML>"):
        assert i not in covered


def _check_annotation(ex, annotation):
  la = annotation["long_answer"]
  assert annotation["yes_no_answer"] in ("YES", "NO", "NONE")
  if la["candidate_index"] < 0:
    assert la == {"start_byte": -1, "end_byte": -1, "start_token": -1, "end_token": -1,
                  "candidate_index": -1}
    assert annotation["short_answers"] == [] and annotation["yes_no_answer"] == "NONE"
    return
  candidate = ex["long_answer_candidates"][la["candidate_index"]]
  assert {k: la[k] for k in SPAN_KEYS} == {k: candidate[k] for k in SPAN_KEYS}
  if annotation["yes_no_answer"] != "NONE":
    assert annotation["short_answers"] == []
  tokens = ex["document_tokens"]
  for short in annotation["short_answers"]:
    assert la["start_token"] < short["start_token"] < short["end_token"] < la["end_token"]
    assert 1 <= short["end_token"] - short["start_token"] <= 3
    inside = tokens[short["start_token"]:short["end_token"]]
    assert not any(t["html_token"] for t in inside)
    assert short["start_byte"] == inside[0]["start_byte"]
    assert short["end_byte"] == inside[-1]["end_byte"]


def test_annotations_are_consistent(train, dev):
  for ex in train + dev:
    for annotation in ex["annotations"]:
      _check_annotation(ex, annotation)


def test_questions_are_learnable_from_the_long_answer(train):
  located = collections.Counter()
  for ex in train:
    annotation = ex["annotations"][0]
    kind, la = _kind(annotation), annotation["long_answer"]
    question = set(ex["question_tokens"]) - set(ex["document_title"].lower().split())
    doc_words = {t["token"].lower() for t in ex["document_tokens"]}
    if kind == "long":
      assert ex["document_tokens"][la["start_token"]]["token"] == "<P>"
    if kind not in ("short", "yes_no"):
      continue
    long_words = {w.lower() for w in _words(ex, la["start_token"], la["end_token"])}
    keywords = {w for w in question if len(w) >= 4 and w not in STOPWORDS}
    assert keywords & long_words, (ex["question_text"], long_words)
    located[ex["document_tokens"][la["start_token"]]["token"]] += 1
    if kind == "short":
      span = annotation["short_answers"][0]
      answer = _words(ex, span["start_token"], span["end_token"])
      all_words = [t["token"] for t in ex["document_tokens"]]
      hits = sum(all_words[i:i + len(answer)] == answer for i in range(len(all_words)))
      assert hits == 1  # stated exactly once on the page
      assert " ".join(answer).lower() not in ex["question_text"]
    elif annotation["yes_no_answer"] == "NO":  # the wrong value is not on the page
      assert any(w.strip(",") not in doc_words for w in question)
  # Facts are answered from paragraphs, table rows and list items (nested candidates).
  assert set(located) == {"<P>", "<Tr>", "<Li>"}
  assert min(located.values()) >= 10


def test_kinds_are_balanced_and_answers_move_around(train):
  kinds = collections.Counter(_kind(ex["annotations"][0]) for ex in train)
  assert kinds == {"short": 50, "yes_no": 50, "long": 50, "null": 50}
  yes_no = collections.Counter(ex["annotations"][0]["yes_no_answer"] for ex in train)
  assert 15 <= yes_no["YES"] <= 35 and 15 <= yes_no["NO"] <= 35
  positions = [ex["annotations"][0]["long_answer"]["start_token"]
               / len(ex["document_tokens"]) for ex in train
               if ex["annotations"][0]["long_answer"]["start_token"] >= 0]
  assert sum(p < 0.3 for p in positions) >= 20 and sum(p > 0.6 for p in positions) >= 20


def test_document_lengths_and_the_paragraph_knob(train):
  lengths = [len(ex["document_tokens"]) for ex in train]
  assert 200 <= min(lengths) and max(lengths) <= 800
  assert 300 <= sum(lengths) / len(lengths) <= 550
  longer = synthetic.generate_examples(30, seed=11, doc_paragraphs=16)
  assert (sum(len(ex["document_tokens"]) for ex in longer) / 30
          > 1.4 * sum(lengths) / len(lengths))
  assert all(sum(t["token"] == "<P>" for t in ex["document_tokens"]) >= 14 for ex in longer)


def test_dev_annotators_disagree_but_the_gold_rule_recovers_the_answer(dev):
  ids = [a["annotation_id"] for ex in dev for a in ex["annotations"]]
  assert len(set(ids)) == len(ids) and all(i > 0 for i in ids)
  gold_null = [ex for ex in dev if _gold_is_null(ex)]
  assert 0.15 * len(dev) <= len(gold_null) <= 0.35 * len(dev)
  one_vote, partial, dissent = 0, 0, 0
  for ex in dev:
    annotations = ex["annotations"]
    assert len(annotations) == 5
    answered = [a for a in annotations if a["long_answer"]["candidate_index"] >= 0]
    if _gold_is_null(ex):
      one_vote += len(answered) == 1
      continue
    # Answerable: at least 3 annotators agree on the long answer; the rest are null or give
    # the same long answer without the short one.
    assert len({a["long_answer"]["candidate_index"] for a in answered}) == 1
    full = [a for a in answered if a["short_answers"] or a["yes_no_answer"] != "NONE"]
    dissent += len(answered) < 5
    partial += 0 < len(full) < len(answered)
    assert len(answered) >= 3
  assert one_vote >= 3 and partial >= 3 and dissent >= 10


def test_same_arguments_give_identical_examples():
  assert synthetic.generate_examples(15, seed=3) == synthetic.generate_examples(15, seed=3)
  assert (synthetic.generate_examples(8, seed=3, num_annotations=5)
          == synthetic.generate_examples(8, seed=3, num_annotations=5))
  other = synthetic.generate_examples(15, seed=4)
  assert ([ex["question_text"] for ex in other]
          != [ex["question_text"] for ex in synthetic.generate_examples(15, seed=3)])


def test_simplified_keeps_the_token_indices(train):
  for ex in train[:50]:
    simple = synthetic.to_simplified(ex)
    assert set(simple) == {"example_id", "question_text", "document_url", "document_text",
                           "long_answer_candidates", "annotations"}
    assert simple["document_text"].split(" ") == [t["token"] for t in ex["document_tokens"]]
    assert simple["long_answer_candidates"] == [
        {"start_token": c["start_token"], "end_token": c["end_token"],
         "top_level": c["top_level"]} for c in ex["long_answer_candidates"]]
    for original, a in zip(ex["annotations"], simple["annotations"]):
      assert a["annotation_id"] == original["annotation_id"]
      assert set(a["long_answer"]) == {"start_token", "end_token", "candidate_index"}
      assert a["long_answer"]["start_token"] == original["long_answer"]["start_token"]
      assert a["short_answers"] == [{"start_token": s["start_token"], "end_token": s["end_token"]}
                                    for s in original["short_answers"]]
      assert a["yes_no_answer"] == original["yes_no_answer"]


def _read(path):
  with gzip.open(path, "rt", encoding="utf-8") as f:
    return [json.loads(line) for line in f]


def test_write_jsonl_gz_is_atomic_and_reproducible(tmp_path):
  records = synthetic.generate_examples(3, seed=1)
  first = str(tmp_path / "a" / "b" / "x.jsonl.gz")
  second = str(tmp_path / "y.jsonl.gz")
  assert synthetic.write_jsonl_gz(records, first) == first
  synthetic.write_jsonl_gz(records, second)
  assert _read(first) == records
  with open(first, "rb") as f, open(second, "rb") as g:
    assert f.read() == g.read()
  assert not os.path.exists(first + ".tmp")


def test_write_dataset_and_ensure_demo_data(tmp_path):
  directory = str(tmp_path / "nq")
  paths = synthetic.ensure_demo_data(directory, num_train=12, num_dev=6, seed=2)
  assert paths == {"train": os.path.join(directory, "nq-train.jsonl.gz"),
                   "dev": os.path.join(directory, "nq-dev.jsonl.gz"),
                   "train_simplified": os.path.join(directory, "nq-train-simplified.jsonl.gz"),
                   "dev_unseen": os.path.join(directory, "nq-dev-unseen.jsonl.gz"),
                   "test_unseen": os.path.join(directory, "nq-test-unseen.jsonl.gz")}
  train, dev, simple = (_read(paths[k]) for k in ("train", "dev", "train_simplified"))
  assert train == synthetic.generate_examples(12, seed=2)
  assert len(dev) == 6 and all(len(ex["annotations"]) == 5 for ex in dev)
  assert not {ex["example_id"] for ex in train} & {ex["example_id"] for ex in dev}
  assert [s["document_text"].split(" ") for s in simple] == [
      [t["token"] for t in ex["document_tokens"]] for ex in train]
  assert os.path.exists(os.path.join(directory, synthetic.INFO_FILENAME))

  mtimes = {k: os.stat(p).st_mtime_ns for k, p in paths.items()}
  assert synthetic.ensure_demo_data(directory, num_train=12, num_dev=6, seed=2) == paths
  assert {k: os.stat(p).st_mtime_ns for k, p in paths.items()} == mtimes

  synthetic.ensure_demo_data(directory, num_train=5, num_dev=6, seed=2)  # other arguments
  assert len(_read(paths["train"])) == 5
  assert not [name for name in os.listdir(directory) if name.endswith(".tmp")]


# ----------------------------------------------------------------------------- unseen entities

UNSEEN_SIZES = {"num_train": 60, "num_dev": 12, "seed": 4}
WORD_RE = re.compile(r"[^\W\d_]+")  # letter runs: JSON keys and url parts split too


@pytest.fixture(scope="module")
def demo_files(tmp_path_factory):
  directory = str(tmp_path_factory.mktemp("nq_unseen"))
  return synthetic.ensure_demo_data(directory, **UNSEEN_SIZES)


def _file_words(path):
  """Every lower-case letter run of a file's decompressed text, keys and values alike."""
  with gzip.open(path, "rt", encoding="utf-8") as f:
    return set(WORD_RE.findall(f.read().lower()))


def test_unseen_splits_are_written_in_the_dev_format(demo_files, tmp_path):
  directory = os.path.dirname(demo_files["train"])
  assert demo_files["dev_unseen"] == os.path.join(directory, "nq-dev-unseen.jsonl.gz")
  assert demo_files["test_unseen"] == os.path.join(directory, "nq-test-unseen.jsonl.gz")
  seed, num_dev = UNSEEN_SIZES["seed"], UNSEEN_SIZES["num_dev"]
  splits = {}
  for split, offset in (("dev_unseen", synthetic.UNSEEN_DEV_SEED_OFFSET),
                        ("test_unseen", synthetic.UNSEEN_TEST_SEED_OFFSET)):
    records = _read(demo_files[split])
    assert records == synthetic.generate_examples(
        num_dev, seed + offset, synthetic.NUM_DEV_ANNOTATIONS, names="unseen")
    assert len(records) == num_dev
    for ex in records:
      assert set(ex) == RECORD_KEYS and len(ex["annotations"]) == 5
      data = ex["document_html"].encode("utf-8")
      for token in ex["document_tokens"]:
        assert data[token["start_byte"]:token["end_byte"]].decode("utf-8") == token["token"]
      for annotation in ex["annotations"]:
        _check_annotation(ex, annotation)
    splits[split] = records
  assert ([ex["question_text"] for ex in splits["dev_unseen"]]
          != [ex["question_text"] for ex in splits["test_unseen"]])
  ids = [ex["example_id"] for path in demo_files.values() if "simplified" not in path
         for ex in _read(path)]
  assert len(set(ids)) == len(ids)  # no example id is in two splits
  # Deterministic: the same arguments write the same bytes in another folder.
  again = synthetic.write_dataset(str(tmp_path / "again"), **UNSEEN_SIZES)
  for split in ("dev_unseen", "test_unseen"):
    with open(demo_files[split], "rb") as f, open(again[split], "rb") as g:
      assert f.read() == g.read()


def test_unseen_names_never_occur_in_train(demo_files):
  unseen_words = lexicon.words_of(synthetic.UNSEEN_LEXICON)
  seen_words = lexicon.words_of(synthetic.LEXICON)
  train_words = _file_words(demo_files["train"]) | _file_words(demo_files["train_simplified"])
  assert not unseen_words & train_words
  assert not unseen_words & seen_words
  for split in ("dev_unseen", "test_unseen"):
    words = _file_words(demo_files[split])
    assert len(words & unseen_words) >= 100 and not words & seen_words
    for ex in _read(demo_files[split]):  # every page is about an unseen entity
      name_words = set(WORD_RE.findall(ex["document_title"].lower())) - train_words
      assert name_words and name_words <= unseen_words


def test_seen_dev_shares_names_with_train(demo_files):
  seen_words = lexicon.words_of(synthetic.LEXICON)
  train_words = _file_words(demo_files["train"])
  dev_names = _file_words(demo_files["dev"]) & seen_words
  assert len(dev_names & train_words) >= 0.8 * len(dev_names) > 50
  titles = [set(WORD_RE.findall(ex["document_title"].lower())) for ex in _read(demo_files["dev"])]
  assert sum(bool(words & seen_words & train_words) for words in titles) >= len(titles) // 2


def test_unseen_names_change_only_the_names():
  seen = synthetic.generate_examples(12, seed=3, num_annotations=5)
  unseen = synthetic.generate_examples(12, seed=3, num_annotations=5, names="unseen")
  assert seen == synthetic.generate_examples(12, seed=3, num_annotations=5, names="seen")
  for a, b in zip(seen, unseen):
    assert a["document_title"] != b["document_title"]
    assert a["example_id"] == b["example_id"]
    assert ([t["html_token"] for t in a["document_tokens"]]
            == [t["html_token"] for t in b["document_tokens"]])
    assert ([{k: c[k] for k in ("start_token", "end_token")} for c in a["long_answer_candidates"]]
            == [{k: c[k] for k in ("start_token", "end_token")}
                for c in b["long_answer_candidates"]])
  with pytest.raises(ValueError, match="names"):
    synthetic.generate_examples(1, seed=3, names="other")


def test_unseen_splits_and_the_info_file_replace_old_demo_data(tmp_path):
  directory = str(tmp_path / "nq")
  paths = synthetic.ensure_demo_data(directory, num_train=4, num_dev=4, seed=1)
  marker = os.path.join(directory, synthetic.INFO_FILENAME)
  with open(marker, encoding="utf-8") as f:
    info = json.load(f)
  assert info["generator_version"] == synthetic.GENERATOR_VERSION >= 2
  # A folder written before the unseen splits existed (version 1, no such files) is rewritten.
  os.remove(paths["dev_unseen"])
  os.remove(paths["test_unseen"])
  with open(marker, "w", encoding="utf-8") as f:
    json.dump({**info, "generator_version": 1}, f)
  assert synthetic.ensure_demo_data(directory, num_train=4, num_dev=4, seed=1) == paths
  assert all(os.path.exists(p) for p in paths.values())
  with open(marker, encoding="utf-8") as f:
    assert json.load(f) == info


def test_unseen_generation_does_not_load_tensorflow(tmp_path):
  code = ("import sys; from synthetic_data import nq; "
          f"nq.ensure_demo_data({str(tmp_path)!r}, 2, 2, seed=0); "
          "print('tensorflow' in sys.modules)")
  out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                       text=True, check=True)
  assert out.stdout.strip() == "False"
