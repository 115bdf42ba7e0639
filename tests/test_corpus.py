"""Corpus reading (plain text, JSON Lines, gzip, globs, skip report) and the synthetic corpus."""

import collections
import gzip
import json
import os
import re

import pytest

from etc_realformer.data import corpus
from etc_realformer.data import synthetic_corpus
from etc_realformer.data.corpus import CorpusReport, Document, read_corpus, split_sentences

BAD_TEXT = "missing or non-string 'text' field"


# ----------------------------------------------------------------------------- split_sentences


@pytest.mark.parametrize("text, expected", [
    ("The cat sat. The dog ran! Did it? Yes.",
     ["The cat sat.", "The dog ran!", "Did it?", "Yes."]),
    # Abbreviations, initials and dotted acronyms do not end a sentence.
    ("Mr. Smith met Dr. Jones. They spoke.", ["Mr. Smith met Dr. Jones.", "They spoke."]),
    ("J. R. R. Tolkien wrote it. Mrs. Dalloway did not.",
     ["J. R. R. Tolkien wrote it.", "Mrs. Dalloway did not."]),
    ("Use a fruit, e.g. Apples or pears, i.e. Fresh ones. Done.",
     ["Use a fruit, e.g. Apples or pears, i.e. Fresh ones.", "Done."]),
    ("He moved to the U.S. Later he left. Prof. X agreed.",
     ["He moved to the U.S. Later he left.", "Prof. X agreed."]),
    ("It opens on Jan. 5 every year. Come.", ["It opens on Jan. 5 every year.", "Come."]),
    # Decimals never split; a digit after ". " does.
    ("Pi is 3.14 or so. It is 2.72 for e.", ["Pi is 3.14 or so.", "It is 2.72 for e."]),
    ("We waited. 10 people came.", ["We waited.", "10 people came."]),
    # Quotes: closing quote stays with its sentence; an opening quote starts one.
    ('She said "Stop." Then she left. "Why?" he asked.',
     ['She said "Stop."', "Then she left.", '"Why?" he asked.']),
    ("Wait... What?! No.", ["Wait...", "What?!", "No."]),
    # No split when a lower-case word follows, nor without whitespace.
    ("He said hi. and left.Then went home.", ["He said hi. and left.Then went home."]),
    # Newlines are boundaries; whitespace is stripped and collapsed; empty pieces dropped.
    ("first line\nsecond line. Third part.\r\n\n   \n  last   one  ",
     ["first line", "second line.", "Third part.", "last one"]),
    ("", []),
    ("  \n\t\n", []),
])
def test_split_sentences(text, expected):
  assert split_sentences(text) == expected


# ----------------------------------------------------------------------------- helpers


def _write(path, data):
  path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
  return str(path)


def _messages(report):
  """(file base name, line, reason) of each kept skip message."""
  out = []
  for message in report.examples:
    match = re.match(r"^(.*):(\d+): (.*?)(?: \(.*\))?$", message)
    assert match, message
    out.append((os.path.basename(match.group(1)), int(match.group(2)), match.group(3)))
  return out


# ----------------------------------------------------------------------------- plain text

PLAIN = (b"First doc sentence one.\n"      # 1
         b"First doc  sentence two.\r\n"   # 2 (CRLF, double space)
         b"\n"                             # 3
         b"\n"                             # 4
         b"  \t \n"                        # 5 whitespace only: blank
         b"Second\x01doc\twith control. \n"  # 6
         b"\n"                             # 7
         b"Third doc.\n"                   # 8
         b"Bad \xff\xfe bytes here.\n"     # 9 invalid UTF-8: skipped, document goes on
         b"Third doc, second line.")       # 10 (no final newline)


def test_plain_text_documents_and_ids(tmp_path):
  path = _write(tmp_path / "c.txt", PLAIN)
  report = CorpusReport()
  docs = list(read_corpus(path, report))
  assert docs == [
      Document("c.txt:1", ["First doc sentence one.", "First doc sentence two."]),
      Document("c.txt:6", ["Second doc with control."]),
      Document("c.txt:8", ["Third doc.", "Third doc, second line."]),
  ]
  assert (report.files, report.documents, report.sentences) == (1, 3, 5)
  assert report.skipped == collections.Counter({"invalid utf-8": 1})
  assert _messages(report) == [("c.txt", 9, "invalid utf-8")]


def test_byte_order_mark_is_dropped(tmp_path):
  path = _write(tmp_path / "bom.txt", b"\xef\xbb\xbfFirst.\nSecond.\n")
  assert list(read_corpus(path)) == [Document("bom.txt:1", ["First.", "Second."])]
  path = _write(tmp_path / "bom.jsonl", b'\xef\xbb\xbf{"text": "First."}\n')
  assert list(read_corpus(path)) == [Document("bom.jsonl:1", ["First."])]


def test_plain_text_min_sentences(tmp_path):
  path = _write(tmp_path / "c.txt", PLAIN)
  report = CorpusReport()
  docs = list(read_corpus(path, report, min_sentences=2))
  assert [d.doc_id for d in docs] == ["c.txt:1", "c.txt:8"]
  assert report.skipped == collections.Counter({"invalid utf-8": 1, "too few sentences": 1})
  assert _messages(report) == [("c.txt", 6, "too few sentences"), ("c.txt", 9, "invalid utf-8")]
  assert report.documents == 2 and report.sentences == 4


# ----------------------------------------------------------------------------- JSON Lines

JSONL_LINES = [
    b'{"text": "Good one. Second sentence.", "id": "a"}',   # 1 good, id used
    b'{"text": "broken',                                     # 2 invalid json
    b'{"title": "no text here"}',                            # 3 missing field
    b'{"text": 5}',                                          # 4 non-string text
    b'{"text": "   "}',                                      # 5 empty
    b'{"text": "caf\xe9 au lait."}',                         # 6 invalid UTF-8 (latin-1 byte)
    b"",                                                     # 7 blank: ignored
    b'{"text": "Another good. Line two\\nline three"}',      # 8 good, no id
    b'[1, 2]',                                               # 9 not an object
    b'{"text": "Bell\\u0007 rings.\\tTab here.", "id": 7}',  # 10 control char, integer id
]


def test_jsonl_skips_are_counted_and_named(tmp_path):
  path = _write(tmp_path / "data.jsonl", b"\n".join(JSONL_LINES) + b"\n")
  report = CorpusReport()
  docs = list(read_corpus(path, report))
  assert docs == [
      Document("data.jsonl:a", ["Good one.", "Second sentence."]),
      Document("data.jsonl:8", ["Another good.", "Line two", "line three"]),
      Document("data.jsonl:7", ["Bell rings.", "Tab here."]),
  ]
  assert report.skipped == collections.Counter({
      "invalid json": 1, BAD_TEXT: 3, "empty document": 1, "invalid utf-8": 1})
  assert _messages(report) == [
      ("data.jsonl", 2, "invalid json"),
      ("data.jsonl", 3, BAD_TEXT),
      ("data.jsonl", 4, BAD_TEXT),
      ("data.jsonl", 5, "empty document"),
      ("data.jsonl", 6, "invalid utf-8"),
      ("data.jsonl", 9, BAD_TEXT),
  ]
  assert (report.files, report.documents, report.sentences) == (1, 3, 7)
  assert report.total_skipped == 6

  as_dict = report.to_dict()
  assert json.loads(json.dumps(as_dict)) == as_dict
  assert as_dict["skipped"] == {"empty document": 1, "invalid json": 1, "invalid utf-8": 1,
                                BAD_TEXT: 3}
  assert as_dict["documents"] == 3 and len(as_dict["examples"]) == 6
  summary = report.summary()
  assert "3 document(s)" in summary and "6 skipped" in summary
  assert "3 x " + BAD_TEXT in summary
  assert "data.jsonl:6: invalid utf-8" in summary


def test_jsonl_too_few_sentences_and_dot_json(tmp_path):
  path = _write(tmp_path / "d.json", '{"text": "Only one."}\n{"text": "One. Two."}\n')
  report = CorpusReport()
  docs = list(read_corpus(path, report, min_sentences=2))
  assert docs == [Document("d.json:2", ["One.", "Two."])]
  assert report.skipped == collections.Counter({"too few sentences": 1})
  assert _messages(report) == [("d.json", 1, "too few sentences")]


def test_report_accumulates_and_bounds_examples(tmp_path):
  bad = _write(tmp_path / "bad.jsonl", "not json\n" * 25)
  good = _write(tmp_path / "good.txt", "A.\n\nB.\n")
  report = CorpusReport()
  assert list(read_corpus(bad, report)) == []
  assert len(list(read_corpus(good, report))) == 2
  assert report.skipped["invalid json"] == 25
  assert len(report.examples) == corpus.MAX_EXAMPLES
  assert _messages(report)[-1] == ("bad.jsonl", 20, "invalid json")
  assert (report.files, report.documents, report.sentences) == (2, 2, 2)
  # Without a report, reading still works (an internal one is used).
  assert [d.doc_id for d in read_corpus(good)] == ["good.txt:1", "good.txt:3"]


# ----------------------------------------------------------------------------- globs and gzip


def test_glob_expansion_sorted_and_missing_pattern(tmp_path):
  _write(tmp_path / "b.txt", "B one.\n")
  _write(tmp_path / "a.txt", "A one.\n\nA two.\n")
  _write(tmp_path / "c.jsonl", '{"text": "C one."}\n')
  (tmp_path / "dir.txt").mkdir()  # a directory matching the pattern is not a corpus file
  docs = list(read_corpus(str(tmp_path / "*.txt")))
  assert [d.doc_id for d in docs] == ["a.txt:1", "a.txt:3", "b.txt:1"]
  # Several paths keep their order; a file named twice is read once.
  report = CorpusReport()
  docs = list(read_corpus([tmp_path / "c.jsonl", str(tmp_path / "?.txt"),
                           str(tmp_path / "a.txt")], report))
  assert [d.doc_id for d in docs] == ["c.jsonl:1", "a.txt:1", "a.txt:3", "b.txt:1"]
  assert report.files == 3
  # Missing inputs fail at call time, naming the pattern or file.
  with pytest.raises(FileNotFoundError, match=r"\*\.nomatch"):
    read_corpus([str(tmp_path / "a.txt"), str(tmp_path / "*.nomatch")])
  with pytest.raises(FileNotFoundError, match="missing.txt"):
    read_corpus(str(tmp_path / "missing.txt"))


def test_gzip_round_trip(tmp_path):
  text = "One here.\nTwo here.\n\n\nThree here.\n"
  _write(tmp_path / "c.txt", text)
  with gzip.open(tmp_path / "c.txt.gz", "wb") as f:
    f.write(text.encode("utf-8"))
  jsonl = b"\n".join(JSONL_LINES) + b"\n"
  _write(tmp_path / "data.jsonl", jsonl)
  with gzip.open(tmp_path / "data.jsonl.gz", "wb") as f:
    f.write(jsonl)
  for name in ("c.txt", "data.jsonl"):
    plain_report, gz_report = CorpusReport(), CorpusReport()
    plain = list(read_corpus(str(tmp_path / name), plain_report))
    gz = list(read_corpus(str(tmp_path / (name + ".gz")), gz_report))
    assert [d.sentences for d in gz] == [d.sentences for d in plain] and plain
    # Same ids apart from the ".gz" in the file name.
    assert [d.doc_id.replace(".gz:", ":") for d in gz] == [d.doc_id for d in plain]
    assert gz_report.skipped == plain_report.skipped
  assert [d.doc_id for d in read_corpus(str(tmp_path / "c.txt.gz"))] == ["c.txt.gz:1",
                                                                          "c.txt.gz:5"]


def test_truncated_gzip_is_reported_not_raised(tmp_path):
  with gzip.open(tmp_path / "full.txt.gz", "wb") as f:
    f.write(("Sentence number one is here.\n" * 2000).encode("utf-8"))
  data = (tmp_path / "full.txt.gz").read_bytes()
  path = _write(tmp_path / "cut.txt.gz", data[:len(data) // 2])
  report = CorpusReport()
  list(read_corpus(path, report))
  assert report.skipped["unreadable file"] == 1


# ----------------------------------------------------------------------------- synthetic corpus


def test_synthetic_is_deterministic(tmp_path):
  assert synthetic_corpus.generate_documents(40, seed=1) == (
      synthetic_corpus.generate_documents(40, seed=1))
  assert synthetic_corpus.generate_documents(40, seed=1) != (
      synthetic_corpus.generate_documents(40, seed=2))
  for fmt in synthetic_corpus.FORMATS:
    for name in ("x", "y"):
      synthetic_corpus.write_corpus(str(tmp_path / f"{name}1.{fmt}"), 40, seed=1, format=fmt)
    synthetic_corpus.write_corpus(str(tmp_path / f"z2.{fmt}"), 40, seed=2, format=fmt)
    one = (tmp_path / f"x1.{fmt}").read_bytes()
    assert one == (tmp_path / f"y1.{fmt}").read_bytes()
    assert one != (tmp_path / f"z2.{fmt}").read_bytes()
  # Gzip output is reproducible too (no timestamp in the header).
  for name in ("g1", "g2"):
    synthetic_corpus.write_corpus(str(tmp_path / f"{name}.txt.gz"), 10, seed=4)
  data = (tmp_path / "g1.txt.gz").read_bytes()
  assert data == (tmp_path / "g2.txt.gz").read_bytes()
  assert data[4:8] == b"\0\0\0\0"  # header mtime
  with pytest.raises(ValueError, match="format"):
    synthetic_corpus.write_corpus(str(tmp_path / "bad"), 3, format="csv")


def test_synthetic_shape_and_vocabulary():
  docs = synthetic_corpus.generate_documents()
  assert len(docs) == synthetic_corpus.DEFAULT_NUM_DOCUMENTS == 400
  words = collections.Counter()
  mentions = 0
  for doc in docs:
    assert 6 <= len(doc) <= 20
    name = doc[0].split()[5]  # "this is a story about NAME and ..."
    assert name in synthetic_corpus.NAMES
    mentions += sum(name in s.split() for s in doc[1:])
    for sentence in doc:
      tokens = sentence.split()
      assert 6 <= len(tokens) <= 20, sentence
      assert sentence == sentence.lower() and "\n" not in sentence
      assert tokens[-1] in (".", "?")
      words.update(tokens)
  assert 600 <= len(words) <= 1200, len(words)
  # The document's character recurs in a good share of its sentences.
  assert mentions / sum(len(d) - 1 for d in docs) > 0.3
  # Articles agree with the next word; after will/can/not comes the verb's base form, after
  # the character's name alone its third-person form.
  # Same for "the NOUN VERB" when neither word could be read as another part of speech.
  bases, thirds, singulars, plurals = set(), set(), set(), set()
  for lexicon in synthetic_corpus._LEXICONS.values():  # pylint: disable=protected-access
    bases.update(base for base, _ in lexicon.verbs)
    thirds.update(third for _, third in lexicon.verbs)
    singulars.update(singular for singular, _ in lexicon.nouns)
    plurals.update(plural for _, plural in lexicon.nouns)
  verbs, nouns = bases | thirds, singulars | plurals
  only_singular, only_plural = singulars - plurals - verbs, plurals - singulars - verbs
  checked = collections.Counter()
  for doc in docs:
    name = doc[0].split()[5]
    for sentence in doc:
      tokens = sentence.split()
      for prev, word, nxt in zip(["<s>"] + tokens, tokens, tokens[1:]):
        if word in ("a", "an"):
          assert (word == "an") == (nxt[0] in "aeiou"), sentence
          checked["article"] += 1
        elif word in ("will", "can", "not") and nxt in verbs:
          assert nxt in bases, sentence
          checked["auxiliary"] += 1
        elif word == name and prev in ("<s>", ",", "that") and nxt in verbs:
          assert nxt in thirds, sentence
          checked["name"] += 1
        elif prev == "the" and nxt in verbs - nouns and word in only_singular:
          assert nxt in thirds, sentence
          checked["singular"] += 1
        elif prev == "the" and nxt in verbs - nouns and word in only_plural:
          assert nxt in bases, sentence
          checked["plural"] += 1
  assert min(checked.values()) > 100 and len(checked) == 5, checked
  # Different documents get different topics: a topic's nouns cluster in few documents.
  docs_with = collections.Counter(w for d in docs for w in set(" ".join(d).split()))
  assert docs_with["the"] > 0.9 * len(docs)
  assert docs_with["guitar"] < 0.3 * len(docs) and docs_with["whale"] < 0.3 * len(docs)


@pytest.mark.parametrize("fmt, name", [("text", "corpus.txt"), ("jsonl", "corpus.jsonl")])
def test_synthetic_round_trip_through_read_corpus(tmp_path, fmt, name):
  expected = synthetic_corpus.generate_documents(30, seed=3)
  path = synthetic_corpus.write_corpus(str(tmp_path / "sub" / name), 30, seed=3, format=fmt)
  report = CorpusReport()
  docs = list(read_corpus(path, report))
  assert [d.sentences for d in docs] == expected
  assert report.total_skipped == 0 and report.documents == 30
  if fmt == "text":
    starts, line = [], 1
    for doc in expected:
      starts.append(f"{name}:{line}")
      line += len(doc) + 1
    assert [d.doc_id for d in docs] == starts
  else:
    assert [d.doc_id for d in docs] == [f"{name}:doc{i:05d}" for i in range(30)]


def test_ensure_default_corpus(tmp_path):
  directory = str(tmp_path / "data")
  path = synthetic_corpus.ensure_default_corpus(directory)
  assert path == os.path.join(directory, "embedded_corpus.txt")
  expected = synthetic_corpus.generate_documents(synthetic_corpus.DEFAULT_NUM_DOCUMENTS, 0)
  assert [d.sentences for d in read_corpus(path)] == expected
  # An existing file is left alone.
  with open(path, "w", encoding="utf-8") as f:
    f.write("Kept.\n")
  assert synthetic_corpus.ensure_default_corpus(directory) == path
  with open(path, encoding="utf-8") as f:
    assert f.read() == "Kept.\n"
