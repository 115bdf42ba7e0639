"""Tests of the WordPiece / SentencePiece tokenizers, the vocab learner and its CLI."""

import os
import random

import pytest

import spm_proto

import etc_realformer  # pylint: disable=unused-import  # sets TF_USE_LEGACY_KERAS first
from etc_realformer import learn_vocab
from etc_realformer.data import corpus
from etc_realformer.data import tokenization
from etc_realformer.data import vocab
from etc_realformer.data import vocab_learner

WORDS = ["un", "##aff", "##able", "dogs", "dog", "the", "run", "##s", "##ning", ".", ",",
         "cafe", "a", "##b"]


@pytest.fixture(name="vocab_file")
def fixture_vocab_file(tmp_path):
  path = str(tmp_path / "vocab.txt")
  vocab_learner.write_vocab(list(vocab.RESERVED_TOKENS) + WORDS, path)
  return path


def _id(token):
  return len(vocab.RESERVED_TOKENS) + WORDS.index(token)


def _ids(*tokens):
  return [_id(t) for t in tokens]


# ----------------------------------------------------------------------------- WordPiece


def test_wordpiece_special_ids(vocab_file):
  tok = tokenization.load_tokenizer(vocab_file=vocab_file)
  assert isinstance(tok, tokenization.WordPieceTokenizer)
  assert isinstance(tok, tokenization.Tokenizer)
  assert tok.vocab_size == len(vocab.RESERVED_TOKENS) + len(WORDS)
  assert (tok.pad_id, tok.unk_id, tok.cls_id, tok.sep_id, tok.mask_id) == (
      vocab.PAD_ID, vocab.UNK_ID, vocab.CLS_ID, vocab.SEP_ID, vocab.MASK_ID)


def test_wordpiece_special_ids_follow_the_vocab_file(tmp_path):
  """Special ids come from the token strings, not from fixed positions."""
  path = str(tmp_path / "shuffled.txt")
  vocab_learner.write_vocab(["dogs", "[MASK]", "[SEP]", "[CLS]", "[UNK]", "[PAD]", "un"], path)
  tok = tokenization.WordPieceTokenizer(path)
  assert (tok.pad_id, tok.unk_id, tok.cls_id, tok.sep_id, tok.mask_id) == (5, 4, 3, 2, 1)
  assert tok.tokenize_words(["dogs un cat"]) == [[[0], [6], [4]]]


def test_wordpiece_tokenize_words_exact_ids(vocab_file):
  tok = tokenization.WordPieceTokenizer(vocab_file)
  got = tok.tokenize_words(["Unaffable dogs", "the dogs running, the dog runs.", "", "   "])
  assert got == [
      [_ids("un", "##aff", "##able"), _ids("dogs")],
      [_ids("the"), _ids("dogs"), _ids("run", "##ning"), _ids(","), _ids("the"), _ids("dog"),
       _ids("run", "##s"), _ids(".")],
      [],
      [],
  ]
  assert tok.tokenize(["Unaffable dogs."]) == [_ids("un", "##aff", "##able", "dogs", ".")]
  assert tok.id_to_token(tok.tokenize(["Unaffable"])[0]) == ["un", "##aff", "##able"]


def test_wordpiece_lower_casing_and_accents(vocab_file):
  lower = tokenization.WordPieceTokenizer(vocab_file, lower_case=True)
  assert lower.tokenize_words(["THE Dogs Café"]) == [[_ids("the"), _ids("dogs"), _ids("cafe")]]
  cased = tokenization.WordPieceTokenizer(vocab_file, lower_case=False)
  assert cased.tokenize_words(["THE dogs"]) == [[[vocab.UNK_ID], _ids("dogs")]]


def test_wordpiece_unknown_word_is_one_unk(vocab_file):
  tok = tokenization.WordPieceTokenizer(vocab_file)
  # "dogx": "dog" matches but "##x" does not, so the whole word becomes [UNK].
  assert tok.tokenize_words(["zebra dogx ab"]) == [
      [[vocab.UNK_ID], [vocab.UNK_ID], _ids("a", "##b")]]


def test_wordpiece_batches_keep_order(vocab_file):
  tok = tokenization.WordPieceTokenizer(vocab_file, batch_size=3)
  texts = [("the dog " * (i % 4)).strip() or "dogs" for i in range(10)]
  expected = [[[_id("dogs")]] if i % 4 == 0 else [_ids("the"), _ids("dog")] * (i % 4)
              for i in range(10)]
  assert tok.tokenize_words(texts) == expected
  assert tok.tokenize_words([]) == []


def test_wordpiece_rejects_a_bare_string(vocab_file):
  tok = tokenization.WordPieceTokenizer(vocab_file)
  with pytest.raises(TypeError, match="single string"):
    tok.tokenize_words("the dog")


def test_wordpiece_detokenize_round_trip(vocab_file):
  tok = tokenization.WordPieceTokenizer(vocab_file)
  for text in ["unaffable dogs", "the dog running", "the dogs , a ab ."]:
    assert tok.detokenize(tok.tokenize([text])[0]) == text
  ids = [vocab.CLS_ID] + tok.tokenize(["the dogs"])[0] + [vocab.SEP_ID, vocab.PAD_ID]
  assert tok.detokenize(ids) == "[CLS] the dogs [SEP]"
  with pytest.raises(ValueError, match="outside"):
    tok.detokenize([tok.vocab_size])


def test_wordpiece_max_chars_per_word(vocab_file):
  # Google's ETC code allows 200 characters per word; BERT's original code 100.
  assert tokenization.WordPieceTokenizer(vocab_file).tokenize(["a" + "b" * 149]) == [
      _ids("a") + _ids("##b") * 149]
  bert = tokenization.WordPieceTokenizer(vocab_file, max_chars_per_word=100)
  assert bert.tokenize(["a" + "b" * 99, "a" + "b" * 100]) == [_ids("a") + _ids("##b") * 99,
                                                              [vocab.UNK_ID]]


def test_wordpiece_missing_file(tmp_path):
  missing = str(tmp_path / "nope.txt")
  with pytest.raises(FileNotFoundError, match="nope.txt"):
    tokenization.WordPieceTokenizer(missing)


@pytest.mark.parametrize("token", ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
def test_wordpiece_missing_special_token(tmp_path, token):
  path = str(tmp_path / "bad_vocab.txt")
  vocab_learner.write_vocab([t for t in vocab.RESERVED_TOKENS if t != token] + WORDS, path)
  with pytest.raises(ValueError) as err:
    tokenization.WordPieceTokenizer(path)
  assert "bad_vocab.txt" in str(err.value) and token in str(err.value)


def test_load_tokenizer_needs_exactly_one_source(vocab_file):
  with pytest.raises(ValueError, match="exactly one"):
    tokenization.load_tokenizer()
  with pytest.raises(ValueError, match="exactly one"):
    tokenization.load_tokenizer(vocab_file=vocab_file, spm_model_file=vocab_file)


# ------------------------------------------------------------------------- SentencePiece
# A SentencePiece model is a serialized `ModelProto`; a tiny unigram model is written here
# directly in the protobuf wire format, so no SentencePiece trainer is needed.

_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED = 1, 2, 3, 4
_SPM_SPECIALS = [("<pad>", _CONTROL), ("<unk>", _UNKNOWN), ("<s>", _CONTROL),
                 ("</s>", _CONTROL), ("[CLS]", _USER_DEFINED), ("[SEP]", _USER_DEFINED),
                 ("[MASK]", _USER_DEFINED)]
_SPM_PIECES = ["\u2581un", "aff", "able", "\u2581dogs", "\u2581the", "\u2581dog", "s",
               "\u2581", "."] + list("abcdefghijklmnopqrtuvwxyz")


def _spm_model(specials):
  """Bytes of a unigram `ModelProto` with `specials` first, then `_SPM_PIECES`."""
  pieces = list(specials) + [(p, _NORMAL) for p in _SPM_PIECES]
  model = b""
  for i, (piece, piece_type) in enumerate(pieces):
    score = 0.0 if piece_type != _NORMAL else (-10.0 if len(piece) == 1 else -1.0 - 0.01 * i)
    model += spm_proto.field_bytes(1, spm_proto.field_bytes(1, piece) + spm_proto.field_float(2, score)
                          + spm_proto.field_int(3, piece_type))
  names = [p for p, _ in pieces]
  # TrainerSpec: model_type UNIGRAM, vocab_size, unk/bos/eos/pad ids.
  model += spm_proto.field_bytes(2, spm_proto.field_int(3, 1) + spm_proto.field_int(4, len(pieces))
                        + spm_proto.field_int(40, names.index("<unk>"))
                        + spm_proto.field_int(41, names.index("<s>")) + spm_proto.field_int(42, names.index("</s>"))
                        + spm_proto.field_int(43, names.index("<pad>") if "<pad>" in names else 0))
  # NormalizerSpec: identity, add a dummy prefix, collapse and escape whitespace.
  model += spm_proto.field_bytes(3, spm_proto.field_bytes(1, "identity") + spm_proto.field_int(3, 1) + spm_proto.field_int(4, 1)
                        + spm_proto.field_int(5, 1))
  return model


def _write_spm(tmp_path, specials, name="tiny.model"):
  path = str(tmp_path / name)
  with open(path, "wb") as f:
    f.write(_spm_model(specials))
  return path


def test_sentencepiece_words_and_special_ids(tmp_path):
  tok = tokenization.load_tokenizer(spm_model_file=_write_spm(tmp_path, _SPM_SPECIALS))
  assert isinstance(tok, tokenization.SentencePieceTokenizer)
  assert tok.vocab_size == len(_SPM_SPECIALS) + len(_SPM_PIECES)
  assert (tok.pad_id, tok.unk_id, tok.cls_id, tok.sep_id, tok.mask_id) == (0, 1, 4, 5, 6)

  def pid(piece):
    return len(_SPM_SPECIALS) + _SPM_PIECES.index(piece)

  got = tok.tokenize_words(["unaffable dogs", "the dog. [MASK]", ""])
  assert got == [
      [[pid("\u2581un"), pid("aff"), pid("able")], [pid("\u2581dogs")]],
      [[pid("\u2581the")], [pid("\u2581dog"), pid(".")], [pid("\u2581"), tok.mask_id]],
      [],
  ]
  assert tok.tokenize(["unaffable dogs"]) == [[pid("\u2581un"), pid("aff"), pid("able"),
                                               pid("\u2581dogs")]]
  assert tok.id_to_token([pid("aff"), tok.mask_id]) == ["aff", "[MASK]"]
  assert tok.detokenize(tok.tokenize(["the unaffable dogs."])[0] + [tok.pad_id]) == (
      "the unaffable dogs.")


def test_sentencepiece_split_punctuation(tmp_path):
  path = _write_spm(tmp_path, _SPM_SPECIALS)
  plain = tokenization.load_tokenizer(spm_model_file=path)
  split = tokenization.load_tokenizer(spm_model_file=path, split_punctuation=True)

  def pid(piece):
    return len(_SPM_SPECIALS) + _SPM_PIECES.index(piece)

  # Plain: "." continues the word "dog."; split: "." is a word, encoded with a word start.
  assert plain.tokenize_words(["the dog."]) == [[[pid("\u2581the")], [pid("\u2581dog"),
                                                                      pid(".")]]]
  assert split.tokenize_words(["the dog."]) == [[[pid("\u2581the")], [pid("\u2581dog")],
                                                  [pid("\u2581"), pid(".")]]]
  assert (plain.cuts_words_first, split.cuts_words_first) == (False, True)


def test_sentencepiece_missing_mask_and_file(tmp_path):
  no_mask = [s for s in _SPM_SPECIALS if s[0] != "[MASK]"]
  with pytest.raises(ValueError, match=r"\[MASK\].*user symbol"):
    tokenization.SentencePieceTokenizer(_write_spm(tmp_path, no_mask))
  with pytest.raises(FileNotFoundError, match="absent.model"):
    tokenization.SentencePieceTokenizer(str(tmp_path / "absent.model"))


# --------------------------------------------------------------------------- vocab learner

_SYLLABLES = ["ka", "ro", "mi", "te", "su", "lan", "dor", "pe", "qua", "zi", "ble", "tion"]


def _sentences(n, seed=0):
  """`n` sentences over a Zipf-distributed made-up vocabulary, capitalized, with punctuation."""
  rng = random.Random(seed)
  words = ["".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 4))) for _ in range(400)]
  words[:3] = ["the", "and", "lantern"]
  weights = [1.0 / (i + 1) for i in range(len(words))]
  return [" ".join(rng.choices(words, weights, k=rng.randint(4, 16))).capitalize()
          + rng.choice([".", "!", "?", ", yes."]) for _ in range(n)]


def test_learn_wordpiece_vocab(tmp_path):
  sentences = _sentences(400)
  learned = vocab_learner.learn_wordpiece_vocab(iter(sentences), vocab_size=300, batch_size=64)
  assert learned[:len(vocab.RESERVED_TOKENS)] == list(vocab.RESERVED_TOKENS)
  assert len(set(learned)) == len(learned)
  assert len(vocab.RESERVED_TOKENS) < len(learned) <= 300
  assert {"the", "and", "lantern", ".", "!", "k", "##a"} <= set(learned)
  assert "The" not in learned  # lower-cased

  path = str(tmp_path / "learned.txt")
  vocab_learner.write_vocab(learned, path)
  tok = tokenization.WordPieceTokenizer(path)
  ids = tok.tokenize(sentences)
  assert all(ids) and vocab.UNK_ID not in {i for row in ids for i in row}
  assert tok.tokenize_words(["The lantern"]) == [[[learned.index("the")],
                                                  [learned.index("lantern")]]]


def test_learn_wordpiece_vocab_small_target_keeps_all_characters():
  sentences = _sentences(100, seed=1) + ["Zébra xylophone jq wv"]
  learned = vocab_learner.learn_wordpiece_vocab(sentences, vocab_size=140)
  assert learned[:len(vocab.RESERVED_TOKENS)] == list(vocab.RESERVED_TOKENS)
  for char in "zebraxylophonjqwv":
    assert char in learned and "##" + char in learned


def test_learn_wordpiece_vocab_errors():
  with pytest.raises(ValueError, match="reserved"):
    vocab_learner.learn_wordpiece_vocab(["a b c"], vocab_size=50)
  with pytest.raises(ValueError, match="no words"):
    vocab_learner.learn_wordpiece_vocab(["", "  "], vocab_size=200)


def test_write_read_vocab_round_trip(tmp_path):
  tokens = list(vocab.RESERVED_TOKENS) + ["héllo", "##x", "日本", "."]
  path = str(tmp_path / "sub" / "vocab.txt")
  vocab_learner.write_vocab(tokens, path)
  assert vocab_learner.read_vocab(path) == tokens
  with open(path, encoding="utf-8") as f:
    assert f.read() == "\n".join(tokens) + "\n"
  assert os.listdir(os.path.dirname(path)) == ["vocab.txt"]  # no temporary file left
  with pytest.raises(ValueError, match="cannot be written"):
    vocab_learner.write_vocab(["a\nb"], path)
  assert vocab_learner.read_vocab(path) == tokens  # a failed write leaves the old file
  with pytest.raises(FileNotFoundError):
    vocab_learner.read_vocab(str(tmp_path / "missing.txt"))


def test_learn_vocab_cli(tmp_path, capsys):
  sentences = _sentences(120, seed=2)
  corpus_dir = tmp_path / "corpus"
  corpus_dir.mkdir()
  for part in range(2):
    docs = [sentences[i:i + 10] for i in range(part * 60, part * 60 + 60, 10)]
    (corpus_dir / f"part{part}.txt").write_text("\n\n".join("\n".join(d) for d in docs) + "\n",
                                                encoding="utf-8")
  output = str(tmp_path / "out" / "vocab.txt")
  report = corpus.CorpusReport()
  tokens = learn_vocab.learn_vocab([str(corpus_dir / "*.txt")], output, vocab_size=250,
                                   progress_every=50, report=report)
  printed = capsys.readouterr().out
  assert "read 100 sentences" in printed
  assert "read 120 sentences; wrote" in printed
  assert report.summary() in printed
  assert (report.documents, report.sentences) == (12, 120)
  assert vocab_learner.read_vocab(output) == tokens
  assert tokens[:len(vocab.RESERVED_TOKENS)] == list(vocab.RESERVED_TOKENS)
  tok = tokenization.load_tokenizer(vocab_file=output)
  assert vocab.UNK_ID not in {i for row in tok.tokenize(sentences) for i in row}
