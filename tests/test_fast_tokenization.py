"""The tensorflow-text fast path of WordPieceTokenizer gives exactly the reference's output.

The reference is the pure-Python tokenizer (`backend="python"`, checked against BERT's rules in
test_tokenization.py and test_official_tokenizers.py). Checked here: ids, word grouping and word
spans on random adversarial strings, long synthetic documents and the shipped vocabularies;
the per-character routing rule against the library on every code point; one test per
divergence, where the raw library differs and the fast path does not; the backend option.
"""

# pylint: disable=protected-access

import functools
import pickle
import random
import re
import sys

import numpy as np
import pytest

import etc_realformer  # pylint: disable=unused-import  # sets TF_USE_LEGACY_KERAS first
import tensorflow as tf  # pylint: disable=g-bad-import-order
import tensorflow_text as tf_text  # pylint: disable=g-bad-import-order

from etc_realformer.data import tokenization
from etc_realformer.data import vocab
from etc_realformer.data import vocab_learner
from etc_realformer.data.span_tokenization import OffsetTokenizer

SHIPPED_VOCABS = ("pretrained/tiny_english/vocab.txt", "etc_realformer/data/embedded/vocab.txt",
                  "tests/fixtures/official_etc/released_layout/vocab.txt",
                  "tests/fixtures/official_etc/variants/vocab.txt",
                  "tests/fixtures/official_features/nq/vocab.txt")

# Characters of every kind the two implementations could disagree on, and ordinary ones.
ADVERSARIAL = (
    list("abcdexyz ABCDEXYZ 0123456789 .,;:'\"-`#$%&()[]{}!?@^_~+=<>|/\\*") +
    list("éèêëàâäöøåüñçÉÖÅÜÑ") + ["e\u0301", "\u0301", "\u0308", "\u0345"] +     # accents
    ["\x00", "\x07", "\x0b", "\x0c", "\x1c", "\x7f", "\x85", "\u00ad", "\u200b", "\u200d",
     "\u2060", "\ufeff", "\ufffd", "\u0600"] +                                        # dropped
    ["\t", "\n", "\r", "\u00a0", "\u1680", "\u2009", "\u2028", "\u2029", "\u3000"] +  # spaces
    list("日本語中文\uf900\U00020000") + list("한국어\u1100\u1161") + ["\u115f", "\u3164"] +
    list("ΣσςΑΒΓαβγΐ") + list("İıIi") + list("ßẞﬁﬂĳŉ") +                               # case
    list("£€¥©®™°±×÷²³½¼ℂ℃№") + list("ＡＢａｂ０１，．") + list("–—‘’“”…·•") +    # symbols
    list("≠≮\u1fef\u0387\u037e") + ["\U0001d165", "\U0001d16d", "\u1b44", "\u302e"] +
    list("абвгдАБВГД") + list("العربية") + list("हिन्दी") + list("ไทย") +
    ["\U0001f600", "\U0001f44d\U0001f3fd", "\ue000", "\U000f0000", "\u0378", "\U0001b4e0",
     "\u1b4e", "\ud800", "\udc00"])

ENGLISH = ["the", "##s", "dog", "##gy", "un", "##aff", "##able", "cafe", "naive", "zoe",
           "hello", "world", "##ing", "a", "##a", "b", "##b", "straße", "ss", "fi", "##ne",
           "1921", "2004", "##5", "5", "x", "##x"]


def _normal_forms(chars, lower_case):
  """Every character the reference or the library makes of `chars`."""
  forms = set()
  for char in chars:
    if lower_case:
      forms.update(tokenization._reference_normalized(char, True))
    else:
      forms.add(char)
  normalizer = tf_text.FastBertNormalizer(lower_case_nfd_strip_accents=lower_case)
  encoded = [c.encode("utf-8") for c in chars if not 0xD800 <= ord(c[0]) <= 0xDFFF]
  for normalized in normalizer.normalize(tf.constant(encoded)).numpy():
    forms.update(normalized.decode("utf-8"))
  return sorted(c for c in forms if not c.isspace() and ord(c) >= 32 and c not in "\x7f\x85"
                and not 0xD800 <= ord(c) <= 0xDFFF)


def _write_wide_vocab(path, lower_case):
  """Reserved tokens, English words and every normal form of ADVERSARIAL (alone and with "##"),
  so that a different normalization shows as different ids, not as the same [UNK]."""
  chars = sorted({c for s in ADVERSARIAL for c in s})
  forms = _normal_forms(chars, lower_case)
  tokens = list(vocab.RESERVED_TOKENS) + ENGLISH + forms + ["##" + c for c in forms]
  tokens = list(dict.fromkeys(t for t in tokens if t and t == t.strip()))
  vocab_learner.write_vocab(tokens, path)
  return path


@pytest.fixture(name="wide", scope="module", params=[True, False], ids=["uncased", "cased"])
def fixture_wide(request, tmp_path_factory):
  """(fast tokenizer, reference tokenizer) on the wide vocabulary, lower-casing or not."""
  lower_case = request.param
  path = _write_wide_vocab(str(tmp_path_factory.mktemp("wide") / "vocab.txt"), lower_case)
  return (tokenization.WordPieceTokenizer(path, lower_case=lower_case,
                                          backend="tensorflow_text"),
          tokenization.WordPieceTokenizer(path, lower_case=lower_case, backend="python"))


def _random_texts(rng, n, alphabet, max_len=24):
  texts = []
  for _ in range(n):
    text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, max_len)))
    if rng.random() < 0.05:   # a long word: near, at and past the length limits
      text += rng.choice(alphabet).strip() * rng.choice([60, 66, 67, 100, 199, 200, 201, 250])
    texts.append(text)
  return texts


def _ascii_runs(text):
  """The runs of `text` between ASCII whitespace (what the fast path routes)."""
  return [run for run in re.split("[ \t\n\r]", text) if run]


def _assert_same(fast, ref, texts):
  """tokenize, tokenize_words, tokenize_with_word_spans and OffsetTokenizer agree."""
  assert fast.uses_fast_path and not ref.uses_fast_path
  spans_fast = fast.tokenize_with_word_spans(texts)
  spans_ref = ref.tokenize_with_word_spans(texts)
  pieces_fast = OffsetTokenizer(fast).tokenize_many(texts)
  pieces_ref = OffsetTokenizer(ref).tokenize_many(texts)   # the original word-cache path
  words_fast, words_ref = fast.tokenize_words(texts), ref.tokenize_words(texts)
  flat_fast, flat_ref = fast.tokenize(texts), ref.tokenize(texts)
  for k, text in enumerate(texts):
    expected = (pieces_ref[k].ids, pieces_ref[k].starts, pieces_ref[k].ends)
    assert (pieces_fast[k].ids, pieces_fast[k].starts, pieces_fast[k].ends) == expected, repr(text)
    assert tuple(spans_fast[k]) == tuple(spans_ref[k]) == expected, repr(text)
    assert words_fast[k] == words_ref[k], repr(text)
    assert flat_fast[k] == flat_ref[k] == expected[0], repr(text)


# ------------------------------------------------------------------- identical output


def test_random_adversarial_strings(wide):
  fast, ref = wide
  texts = _random_texts(random.Random(11), 3000, ADVERSARIAL)
  _assert_same(fast, ref, texts)
  # Not everything went to the reference (most runs of these texts hold a divergent character).
  library_runs = sum(len(_ascii_runs(t)) - len(fast._fast.reference_runs(t))
                     for t in texts)
  assert library_runs > 300


def test_random_strings_without_divergent_characters_use_the_library(wide):
  fast, ref = wide
  routing = tokenization._fast_path_routing(fast.lower_case)
  alphabet = [s for s in ADVERSARIAL if not any(routing.is_divergent(ord(c)) for c in s)]
  assert len(alphabet) > 150
  texts = _random_texts(random.Random(12), 2000, alphabet, max_len=40)
  _assert_same(fast, ref, texts)
  short = [t for t in texts if max(map(len, _ascii_runs(t)), default=0) <= 66]
  assert len(short) > 1500
  assert not any(fast._fast.reference_runs(t) for t in short)


def test_ascii_only_batches(wide):
  """All-ASCII batches skip the library's normalizer (Python lower-cases them)."""
  fast, ref = wide
  rng = random.Random(13)
  alphabet = [chr(c) for c in range(128)] + ["the ", "Dog", "UN", "aff"] * 8
  _assert_same(fast, ref, _random_texts(rng, 1500, alphabet))


@functools.lru_cache(maxsize=None)
def _documents():
  """Long realistic texts: benchmark-style NQ pages and WikiHop documents."""
  from synthetic_data import nq, wikihop  # pylint: disable=g-import-not-at-top
  pages = [nq.text_of(r) for r in nq.generate_examples(3, seed=4)]
  items = wikihop.generate_examples(2, seed=4)
  return tuple(pages + [s for item in items for s in item["supports"]])


@pytest.mark.parametrize("path", SHIPPED_VOCABS)
def test_shipped_vocabularies_on_long_documents(path):
  fast = tokenization.WordPieceTokenizer(path, backend="tensorflow_text")
  ref = tokenization.WordPieceTokenizer(path, backend="python")
  docs = list(_documents())
  assert sum(map(len, docs)) > 50_000
  texts = docs + _random_texts(random.Random(14), 300, ADVERSARIAL)
  # Words one by one, as the NQ converter passes them, and a repeated one (the text cache).
  texts += docs[0].split()[:2000] + ["Zoë", "Zoë"]
  _assert_same(fast, ref, texts)
  _assert_same(fast, ref, texts)   # again, from the caches


@pytest.mark.parametrize("max_chars", [1, 5, 100, 300])
def test_other_word_length_limits(tmp_path, max_chars):
  path = _write_wide_vocab(str(tmp_path / "vocab.txt"), True)
  fast = tokenization.WordPieceTokenizer(path, max_chars_per_word=max_chars,
                                         backend="tensorflow_text")
  ref = tokenization.WordPieceTokenizer(path, max_chars_per_word=max_chars, backend="python")
  texts = _random_texts(random.Random(max_chars), 300, ADVERSARIAL)
  texts += ["x" * n + " " + "ø" * n + " " + "한" * (n // 3) for n in range(max_chars - 2,
                                                                           max_chars + 3)]
  _assert_same(fast, ref, texts)


def test_vocabulary_oddities(tmp_path):
  """Duplicates (the first id wins), empty lines, "##" alone and a token holding a space (the
  library would match it across two words) do not change the ids."""
  tokens = (list(vocab.RESERVED_TOKENS) + ["a", "##b", "b", "a", "##b", "", "##", "a b", "ab",
                                           "##ab", "c\u200bd", "c", "##d", "é", "e"])
  path = str(tmp_path / "vocab.txt")
  with open(path, "w", encoding="utf-8") as f:
    f.write("\n".join(tokens) + "\n")
  fast = tokenization.WordPieceTokenizer(path, backend="tensorflow_text")
  ref = tokenization.WordPieceTokenizer(path, backend="python")
  texts = ["a b ab abab a\tb", "cd c\u200bd é e É", "## # a##b", "ab " * 50]
  _assert_same(fast, ref, texts)
  assert fast.tokenize(["a b"]) == [[104, 106]]


def test_results_are_fresh_lists(wide):
  """Cached results are copied: changing a result does not change the next one."""
  fast, _ = wide
  for method in (fast.tokenize, fast.tokenize_words, fast.tokenize_with_word_spans):
    first = method(["abc", "abc"])
    expected = repr(first)
    changed = first[0][0] if method == fast.tokenize_with_word_spans else first[0]
    changed.append(7)
    assert repr(method(["abc", "abc"])) == expected


# ----------------------------------------------------- the routing rule against the library


@pytest.mark.parametrize("lower_case", [True, False])
def test_every_code_point_normalizes_alike_unless_divergent(lower_case):
  """The library's normalizer gives every non-divergent code point the reference's form."""
  routing = tokenization._fast_path_routing(lower_case)
  chars = [chr(cp) for cp in range(sys.maxunicode + 1) if not routing.is_divergent(cp)]
  normalizer = tf_text.FastBertNormalizer(lower_case_nfd_strip_accents=lower_case)
  got = normalizer.normalize(tf.constant([c.encode("utf-8") for c in chars])).numpy()
  spaces = set(tokenization._char_tables().whitespace)
  for char, normalized in zip(chars, got):
    normalized = normalized.decode("utf-8")
    if ord(char) in spaces:
      assert normalized.isspace(), hex(ord(char))
    else:
      expected = tokenization._reference_normalized(char, lower_case)
      assert normalized == expected, hex(ord(char))
      assert len(expected) <= routing.expansion


@pytest.mark.parametrize("lower_case", [True, False])
def test_every_code_point_cuts_alike_unless_divergent(tmp_path, lower_case):
  """Every non-divergent character of the BMP (and every 29th beyond) in contexts: same pieces,
  words and spans. (A small vocabulary: most words are [UNK]; the normalization itself is
  checked above.)"""
  path = str(tmp_path / "vocab.txt")
  letters = "abcdefghijklmnopqrstuvwxyz0123456789"
  vocab_learner.write_vocab(list(vocab.RESERVED_TOKENS) + list(letters)
                            + ["##" + c for c in letters], path)
  fast = tokenization.WordPieceTokenizer(path, lower_case=lower_case, backend="tensorflow_text")
  ref = tokenization.WordPieceTokenizer(path, lower_case=lower_case, backend="python")
  routing = tokenization._fast_path_routing(lower_case)
  chars = [chr(cp) for cp in list(range(0x10000)) + list(range(0x10000, sys.maxunicode + 1, 29))
           if not routing.is_divergent(cp)]
  contexts = [f"a{c}b {c}ab ab{c} {c} {c}{c} A{c}{c}B a.{c}.b" for c in chars]
  texts = [" ".join(contexts[i:i + 100]) for i in range(0, len(contexts), 100)]
  got = fast.tokenize_with_word_spans(texts)
  assert not any(fast._fast.reference_runs(t) for t in texts)
  expected = ref.tokenize_with_word_spans(texts)
  for text, g, e in zip(texts, got, expected):
    if tuple(g) != tuple(e):   # find the character
      for context in text.split(" "):
        assert tuple(fast.tokenize_with_word_spans([context])[0]) == tuple(
            ref.tokenize_with_word_spans([context])[0]), repr(context)


def test_routing_table_follows_the_rule():
  for lower_case in (True, False):
    routing = tokenization._fast_path_routing(lower_case)
    for cp in list(range(0x3000)) + list(range(0x3000, sys.maxunicode + 1, 101)):
      reason = tokenization.fast_path_divergence(chr(cp), lower_case)
      assert routing.is_divergent(cp) == (reason is not None), hex(cp)
      assert reason is None or reason in tokenization.DIVERGENCES
  with pytest.raises(ValueError, match="single character"):
    tokenization.fast_path_divergence("ab")


# ---------------------------------------------------------------- each divergence, routed


def _tokens(*extra):
  return list(vocab.RESERVED_TOKENS) + ["a", "##a", "b", "##b", "x", "##x", "="] + list(extra)


def _raw_library(tokens, text, lower_case=True, max_bytes=800):
  """The library on its own: (ids, words' [start, end) characters of every piece)."""
  library = tf_text.FastBertTokenizer(vocab=tokens, max_bytes_per_word=max_bytes,
                                      token_out_type=tf.int64,
                                      lower_case_nfd_strip_accents=lower_case)
  ids, starts, ends = (t.numpy()[0] for t in library.tokenize_with_offsets(
      tf.constant([text.encode("utf-8")])))
  chars_before = np.cumsum([0] + [len(c.encode("utf-8")) for c in text])
  to_char = {int(b): k for k, b in enumerate(chars_before)}
  starts = [to_char[int(b)] for b in starts]
  ends = [to_char[int(b)] for b in ends]
  heads = [k for k, i in enumerate(ids) if not tokens[i].startswith("##")] + [len(ids)]
  spans = []
  for first, stop in zip(heads[:-1], heads[1:]):
    spans += [(starts[first], ends[stop - 1])] * (stop - first)
  return ids.tolist(), spans


# (reason, text, extra vocabulary, lower_case, max_bytes_per_word of the raw library)
CASES = [
    ("surrogate", "a\ud800b", [], True, 800),
    ("unassigned", "a\u1b4eb", ["\u1b4e"], True, 800),   # punctuation in newer Unicode
    ("dropped", "a\x00b", [], True, 800),                  # NUL: the library splits the word
    ("dropped", "ab\u00ad", [], True, 800),                # soft hyphen: inside the span there
    ("dropped", "a\u200bb", [], False, 800),               # cased: the library splits the word
    ("combining_mark", "\u0301ab", [], True, 800),         # the span starts after the mark
    ("capital_sigma", "\u0391\u03a3", ["\u03b1", "##\u03c2", "##\u03c3"], True, 800),
    ("ignorable_letter", "a\u115fb", ["a\u115fb"], True, 800),
    ("case_folding", "\u00df", ["\u00df", "s", "##s"], True, 800),
    ("compatibility", "x\u00b2", ["##\u00b2", "##2"], True, 800),
    ("reordering", "\U0001d165\u1b44", ["\U0001d165", "\u1b44", "##\U0001d165", "##\u1b44"],
     True, 800),
    ("role_change", "a\u2260b", [], True, 800),            # NFD: "=" and a combining mark
]


@pytest.mark.parametrize("reason,text,extra,lower_case,max_bytes", CASES,
                         ids=[f"{c[0]}-{k}" for k, c in enumerate(CASES)])
def test_each_divergence_is_routed(tmp_path, reason, text, extra, lower_case, max_bytes):
  tokens = _tokens(*extra)
  path = str(tmp_path / "vocab.txt")
  vocab_learner.write_vocab(tokens, path)
  fast = tokenization.WordPieceTokenizer(path, lower_case=lower_case, backend="tensorflow_text")
  ref = tokenization.WordPieceTokenizer(path, lower_case=lower_case, backend="python")
  assert reason in {tokenization.fast_path_divergence(c, lower_case) for c in text}
  expected = ref.tokenize_with_word_spans([text])[0]
  expected = (expected[0], list(zip(expected[1], expected[2])))
  if reason == "surrogate":
    with pytest.raises(UnicodeEncodeError):
      _raw_library(tokens, text, lower_case, max_bytes)
  else:
    assert _raw_library(tokens, text, lower_case, max_bytes) != expected
  got = fast.tokenize_with_word_spans([text])[0]
  assert (got[0], list(zip(got[1], got[2]))) == expected
  _assert_same(fast, ref, [text, f"b {text} a", text + text])


@pytest.mark.parametrize("text", ["\u00f8" * 150, "\ud55c" * 70])
def test_long_runs_are_routed(tmp_path, text):
  """The library limits UTF-8 bytes per word, the reference characters after normalizing:
  150 "ø" (300 bytes) are not too long for the reference, 70 Hangul syllables (210 letters
  once decomposed, 630 bytes) are. Runs longer than 200 // 3 characters go to the reference."""
  tokens = _tokens("\u00f8", "##\u00f8", "\u1112", "##\u1112", "##\u1161", "##\u11ab")
  path = str(tmp_path / "vocab.txt")
  vocab_learner.write_vocab(tokens, path)
  fast = tokenization.WordPieceTokenizer(path, backend="tensorflow_text")
  ref = tokenization.WordPieceTokenizer(path, backend="python")
  assert fast._fast.max_run == 66
  expected = ref.tokenize([text])[0]
  limit = 200 if text[0] == "\u00f8" else 800   # BERT's characters / 4 bytes for each
  assert _raw_library(tokens, text, max_bytes=limit)[0] != expected
  assert fast.tokenize([text]) == [expected]
  _assert_same(fast, ref, [text, "a " + text[:66] + " b", "a " + text[:67] + " b"])


# ------------------------------------------------------------------------ the option


def test_backend_option_and_signature(tmp_path):
  path = str(tmp_path / "vocab.txt")
  vocab_learner.write_vocab(_tokens(), path)
  python = tokenization.WordPieceTokenizer(path, backend="python")
  auto = tokenization.WordPieceTokenizer(path)
  fast = tokenization.WordPieceTokenizer(path, backend="tensorflow_text")
  # Conversions stay reusable: the fingerprint does not see the backend.
  assert python.signature == auto.signature == fast.signature == {
      "kind": "wordpiece", "lower_case": True, "max_chars_per_word": 200}
  assert not python.has_word_spans and auto.has_word_spans and fast.uses_fast_path
  with pytest.raises(ValueError, match="backend must be one of"):
    tokenization.WordPieceTokenizer(path, backend="tf")
  with pytest.raises(TypeError, match="single string"):
    fast.tokenize("a b")
  with pytest.raises(TypeError, match="single string"):
    fast.tokenize_with_word_spans("a b")
  # "auto" starts in Python and sets the library up after 100,000 characters.
  assert auto.tokenize(["a b"] * 10) == python.tokenize(["a b"] * 10)
  assert not auto.uses_fast_path
  text = "ab ba " * 20_000
  assert auto.tokenize([text]) == python.tokenize([text]) and auto.uses_fast_path
  # A pickled copy drops the TensorFlow objects and builds its own.
  copy = pickle.loads(pickle.dumps(fast))
  assert not copy.uses_fast_path and copy.tokenize(["ab a"]) == fast.tokenize(["ab a"])
  assert copy.uses_fast_path


def test_a_token_the_library_refuses(tmp_path):
  path = str(tmp_path / "vocab.txt")
  vocab_learner.write_vocab(_tokens("x" * 300), path)
  with pytest.raises(ValueError, match="more than 256 UTF-8 bytes"):
    tokenization.WordPieceTokenizer(path, backend="tensorflow_text")
  auto = tokenization.WordPieceTokenizer(path)
  text = "ab " * 50_000 + "x" * 300
  assert auto.tokenize([text]) == tokenization.WordPieceTokenizer(
      path, backend="python").tokenize([text])
  assert not auto.uses_fast_path


def test_a_library_that_changed_is_not_used(tmp_path, monkeypatch, caplog):
  """If the installed library normalizes some character differently from the version the rule
  was checked against, "auto" tokenizes in Python and "tensorflow_text" refuses."""
  path = str(tmp_path / "vocab.txt")
  vocab_learner.write_vocab(_tokens(), path)
  monkeypatch.setattr(tokenization, "_check_library_normalizer",
                      lambda lower_case: "U+00E9 becomes 'x', not 'e'")
  with pytest.raises(RuntimeError, match="U\\+00E9 becomes"):
    tokenization.WordPieceTokenizer(path, backend="tensorflow_text")
  auto = tokenization.WordPieceTokenizer(path)
  text = "ab " * 50_000
  assert auto.tokenize([text]) == tokenization.WordPieceTokenizer(
      path, backend="python").tokenize([text])
  assert not auto.uses_fast_path
  assert "tokenizing in Python" in caplog.text


# ------------------------------------------------------------ the tables' cache on disk


def test_code_point_tables_from_the_disk_cache_equal_the_computed_ones(tmp_path, monkeypatch):
  monkeypatch.setenv(tokenization.CACHE_ENV, str(tmp_path))
  cached = {
      "char_tables": (tokenization._char_tables, (), tokenization._compute_char_tables),
      "fast_path_routing_cased": (tokenization._fast_path_routing, (False,),
                                  tokenization._compute_routing),
      "library_check_cased": (tokenization._check_library_normalizer, (False,),
                              tokenization._compute_library_check)}
  try:
    for name, (function, args, compute) in cached.items():
      expected = compute(*args)
      function.cache_clear()
      assert function(*args) == expected, name   # computed and written
      files = list((tmp_path / "unicode_tables").glob(f"{name}-*.json"))
      assert len(files) == 1, name
      function.cache_clear()
      assert function(*args) == expected, name   # read back
      files[0].write_text('{"truncated": ')      # a broken file is recomputed and rewritten
      function.cache_clear()
      assert function(*args) == expected, name
  finally:
    for function, _, _ in cached.values():
      function.cache_clear()
