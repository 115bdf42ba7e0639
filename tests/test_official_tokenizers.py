"""Tokenization as the official ETC fine-tuning code does it, for the four released checkpoints.

- WordPiece (etc_base_*): checked against a character-by-character BERT reference written here.
- SentencePiece (etc_large*): a tiny model laid out like the ETC-large one (<pad> 0, </s> 1,
  <s> 2, <unused_2>..<unused_63> at 3..64), written directly in the protobuf wire format.
- The tokenizer chosen from a checkpoint folder, and task features with SentencePiece ids.
"""

import os
import random
import unicodedata

import numpy as np
import pytest

import spm_proto

import nq_fixtures as nf
from etc_realformer.data import tokenization
from etc_realformer.data import vocab
from etc_realformer.data import vocab_learner
from etc_realformer.data.span_tokenization import OffsetTokenizer
from tasks.common import finetuning
from tasks.hotpotqa import features as hotpot_features
from tasks.nq import data as nq_data
from tasks.nq import features as nq_features

W = tokenization.SPM_WORD_START

# ----------------------------------------------------------- a BERT reference, char by char

_CJK = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2A6DF),
        (0x2A700, 0x2B73F), (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0x2F800, 0x2FA1F))


def _ref_is_punct(char):
  cp = ord(char)
  return (33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126
          or unicodedata.category(char).startswith("P"))


def _ref_basic(text, lower_case):
  """BERT's BasicTokenizer: clean, space CJK, split on whitespace, normalize, split punctuation."""
  cleaned = ""
  for char in text:
    category = unicodedata.category(char)
    if ord(char) in (0, 0xFFFD) or (category in ("Cc", "Cf") and char not in "\t\n\r"):
      continue
    cleaned += " " if char in " \t\n\r" or category == "Zs" else char
  spaced = "".join(f" {c} " if any(a <= ord(c) <= b for a, b in _CJK) else c for c in cleaned)
  tokens = []
  for token in spaced.split():
    if lower_case:
      token = "".join(c for c in unicodedata.normalize("NFD", token.lower())
                      if unicodedata.category(c) != "Mn")
    current = ""
    for char in token:
      if _ref_is_punct(char):
        tokens += [current, char] if current else [char]
        current = ""
      else:
        current += char
    if current:
      tokens.append(current)
  return tokens


def _ref_wordpiece(token, known, max_chars=200):
  if len(token) > max_chars:
    return ["[UNK]"]
  pieces, start = [], 0
  while start < len(token):
    for end in range(len(token), start, -1):
      piece = token[start:end] if start == 0 else "##" + token[start:end]
      if piece in known:
        pieces.append(piece)
        start = end
        break
    else:
      return ["[UNK]"]
  return pieces


_WP_WORDS = ["a", "##a", "b", "##b", "c", "##c", "e", "##e", "x", "##x", "stra", "##ß", "ß",
             "fi", "ﬁ", "##ne", "coop", "co", "##op", "£", "##5", "25", "##°", "°", "##c", "5",
             "σ", "##σ", "##ς", "ς", "##α", "d", "##d", "д", "##д", "日", "本", ".",
             ",", "'", "-", "`", "ह", "##ि", "hello", "##world", "world", "i", "##stanbul",
             "istanbul", "€", "×", "##×", "3", "##3", "😀"]


@pytest.fixture(name="wordpiece")
def fixture_wordpiece(tmp_path):
  path = str(tmp_path / "vocab.txt")
  vocab_learner.write_vocab(list(vocab.RESERVED_TOKENS) + _WP_WORDS, path)
  return tokenization.WordPieceTokenizer(path)


def _pieces(tok, text):
  return tok.id_to_token(tok.tokenize([text])[0])


@pytest.mark.parametrize("text,expected", [
    ("Straße", ["stra", "##ß", "##e"]),            # lower(), not case folding ("strasse")
    ("ﬁne", ["ﬁ", "##ne"]),                        # no compatibility normalization
    ("co\u00adop", ["coop"]),                      # soft hyphen (Cf) dropped inside the word
    ("hello\u200bworld", ["hello", "##world"]),    # zero-width space dropped, word kept whole
    ("a\x0cb", ["a", "##b"]),                      # control characters dropped
    ("a\u2028b a\u3000b", ["a", "b", "a", "b"]),   # line separator and ideographic space split
    ("£5 25°C 3×3", ["£", "##5", "25", "##°", "##c", "3", "##×", "##3"]),  # symbols stay in
    ("ΣΑΣ. Σ", ["σ", "##α", "##ς", ".", "σ"]),  # final sigma, decided in context
    ("İstanbul", ["istanbul"]),
    ("日本a", ["日", "本", "a"]),
    ("Д" * 60, ["д"] + ["##д"] * 59),             # 60 characters (120 bytes) are not too long
    ("x" * 200, ["x"] + ["##x"] * 199),
    ("x" * 201, ["[UNK]"]),                        # more than 200 characters
])
def test_wordpiece_follows_bert_uncased(wordpiece, text, expected):
  known = set(vocab.RESERVED_TOKENS) | set(_WP_WORDS)
  assert [p for t in _ref_basic(text, True) for p in _ref_wordpiece(t, known)] == expected
  assert _pieces(wordpiece, text) == expected


def test_wordpiece_matches_the_reference_on_random_text(wordpiece):
  rng = random.Random(7)
  alphabet = (list("abcxe ABCE.,'-`£°€×5ß") + ["\u00a0", "\u2009", "\u3000", "\u200b", "\u00ad",
              "\x00", "\ufffd", "\x0b", "\x1c", "\x85", "\u2028", "\u0301", "é", "Σ", "ς", "σ",
              "д", "Д", "日", "\uf900", "İ", "ﬁ", "\t", "\n", "\u1fef", "😀", "한", "ि", "ह"])
  known = set(vocab.RESERVED_TOKENS) | set(_WP_WORDS)
  texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 16))) for _ in range(3000)]
  got = wordpiece.tokenize(texts)
  offsets = OffsetTokenizer(wordpiece).tokenize_many(texts)
  for text, ids, pieces in zip(texts, got, offsets):
    expected = [p for t in _ref_basic(text, True) for p in _ref_wordpiece(t, known)]
    assert wordpiece.id_to_token(ids) == expected, repr(text)
    assert pieces.ids == ids, repr(text)
    words = [w for s, e in tokenization.basic_word_spans(text)
             for w in tokenization.basic_words(text[s:e], lower_case=False)]
    assert words == _ref_basic(text, False), repr(text)


# --------------------------------------------------------- a tiny ETC-like SentencePiece model

_NORMAL, _UNKNOWN, _CONTROL = 1, 2, 3
_SPECIALS = ([("<pad>", _CONTROL), ("</s>", _CONTROL), ("<s>", _CONTROL)]
             + [(f"<unused_{n}>", _CONTROL) for n in range(2, 64)]
             + [("<unk>", _UNKNOWN), ("<mask>", _CONTROL)])
_WORDS = [W + "The", W + "end", W + ".", ".", W + ",", ",", W + "5,", "5,", W + "5", "5",
          "00", W + "a", W + "Zo", W + "caf", W + "Ann", W + "was", W + "born", W + "in"]
_CHARS = [W] + sorted(set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                          "ëé'?()") - set(_WORDS))
_SPM_PIECES = _SPECIALS + [(p, _NORMAL) for p in _WORDS + _CHARS]


def _spm_model(pieces):
  """A unigram `ModelProto`: multi-character pieces score above single characters."""
  model = b""
  for i, (piece, kind) in enumerate(pieces):
    score = 0.0 if kind != _NORMAL else (-10.0 if len(piece) == 1 else -1.0 - 0.01 * i)
    model += spm_proto.field_bytes(1, spm_proto.field_bytes(1, piece) + spm_proto.field_float(2, score)
                          + spm_proto.field_int(3, kind))
  names = [p for p, _ in pieces]
  model += spm_proto.field_bytes(2, spm_proto.field_int(3, 1) + spm_proto.field_int(4, len(pieces))
                        + spm_proto.field_int(40, names.index("<unk>")) + spm_proto.field_int(41, 2)
                        + spm_proto.field_int(42, 1) + spm_proto.field_int(43, 0))
  model += spm_proto.field_bytes(3, spm_proto.field_bytes(1, "identity") + spm_proto.field_int(3, 1) + spm_proto.field_int(4, 1)
                        + spm_proto.field_int(5, 1))
  return model


def _write_model(directory, pieces=None, name="vocab_gpt_for_etc.model"):
  path = os.path.join(str(directory), name)
  with open(path, "wb") as f:
    f.write(_spm_model(pieces or _SPM_PIECES))
  return path


def pid(piece):
  return [p for p, _ in _SPM_PIECES].index(piece)


@pytest.fixture(name="spm_file")
def fixture_spm_file(tmp_path):
  return _write_model(tmp_path)


def test_etc_sentencepiece_special_ids(spm_file):
  tok = tokenization.tokenizer_for_vocab(spm_file)
  assert isinstance(tok, tokenization.SentencePieceTokenizer) and tok.kind == "sentencepiece"
  # As the official NQ converter: [CLS] = <unused_63>, [SEP] = <unused_2>, padding <pad>.
  assert tok.special_ids == {"pad": 0, "unk": 65, "cls": 64, "sep": 3, "mask": 66}
  assert tok.id_to_token([0, 1, 2, 3, 35, 40, 64]) == [
      "<pad>", "</s>", "<s>", "<unused_2>", "<unused_34>", "<unused_39>", "<unused_63>"]


def test_global_ids_of_the_official_converters():
  assert hotpot_features.global_ids_for("wordpiece") == hotpot_features.GlobalTokenIds(
      cls=101, sentence=1, question=3, paragraph=5)
  # HotpotQA with the SentencePiece model: <unused_39>, <unused_40>, <unused_42>; sentence 1.
  assert hotpot_features.global_ids_for("sentencepiece") == hotpot_features.GlobalTokenIds(
      cls=40, sentence=1, question=41, paragraph=43)
  assert nq_features.GLOBAL_QUESTION_ID == 35
  with pytest.raises(ValueError, match="'bpe'"):
    hotpot_features.global_ids_for("bpe")


def test_sentencepiece_mask_is_needed_only_for_pretraining(tmp_path):
  path = _write_model(tmp_path, [p for p in _SPM_PIECES if p[0] != "<mask>"], "no_mask.model")
  assert tokenization.tokenizer_for_vocab(path).mask_id is None
  with pytest.raises(ValueError, match=r"no_mask.model has no \[MASK\]"):
    tokenization.SentencePieceTokenizer(path)


def test_plain_and_split_punctuation_modes(spm_file):
  plain = tokenization.tokenizer_for_vocab(spm_file)
  split = tokenization.tokenizer_for_vocab(spm_file, split_punctuation=True)
  # Plain: SentencePiece on the whole text; "." follows "end" without a word start.
  assert plain.tokenize(["The end."]) == [[pid(W + "The"), pid(W + "end"), pid(".")]]
  assert plain.tokenize_words(["The end."]) == [[[pid(W + "The")], [pid(W + "end"), pid(".")]]]
  # Split punctuation: "The", "end", "." are encoded one by one, each starting a word.
  assert split.tokenize(["The end."]) == [[pid(W + "The"), pid(W + "end"), pid(W + ".")]]
  assert split.tokenize_words(["The end."]) == [[[pid(W + "The")], [pid(W + "end")],
                                                  [pid(W + ".")]]]
  # Case is kept; control characters go (BERT's basic cut without lower-casing).
  assert split.tokenize(["a\u200b5,"]) == [[pid(W + "a"), pid("5"), pid(W + ",")]]
  assert plain.signature != split.signature


def test_digit_comma_pieces_are_split(spm_file):
  tok = tokenization.tokenizer_for_vocab(spm_file)
  # "▁5," -> "▁5" ","; "5," (inside a word) -> "5" "," (no word start added).
  assert tok.id_to_token(tok.tokenize(["5, 500"])[0]) == [W + "5", ",", W + "5", "00"]
  assert tok.id_to_token(tok.tokenize(["a5,"])[0]) == [W + "a", "5", ","]


def test_offsets_map_pieces_back_to_the_text(spm_file):
  text = " Zoë's café, 5, ok."
  plain = OffsetTokenizer(tokenization.tokenizer_for_vocab(spm_file))
  pieces = plain.tokenize(text)
  assert pieces.ids == plain.tokenizer.tokenize([text])[0]
  # "5," became "5" ","; a lone word-start piece before "o" covers only whitespace: empty.
  assert [text[s:e] for s, e in zip(pieces.starts, pieces.ends)] == [
      "Zo", "ë", "'", "s", "caf", "é", ",", "5,", "5,", "", "o", "k", "."]
  assert plain.tokenizer.id_to_token(pieces.ids[7:10]) == [W + "5", ",", W]
  split = OffsetTokenizer(tokenization.tokenizer_for_vocab(spm_file, split_punctuation=True))
  pieces = split.tokenize(text)
  assert pieces.ids == split.tokenizer.tokenize([text])[0]
  assert pieces.text_span(text, 0, 1) == "Zoë"
  with pytest.raises(ValueError, match="split_punctuation"):
    split.tokenizer.tokenize_with_offsets([text])


# ------------------------------------------------------------------------ choosing the tokenizer


def _official_folder(path, vocab_names=(), config=True):
  os.makedirs(path, exist_ok=True)
  for name in ("model.ckpt.index", "model.ckpt.data-00000-of-00001"):
    open(os.path.join(path, name), "wb").close()
  if config:
    with open(os.path.join(path, "etc_config.json"), "w") as f:
      f.write("{}")
  for name in vocab_names:
    if name.endswith(".model"):
      _write_model(path, name=name)
    else:
      vocab_learner.write_vocab(list(vocab.RESERVED_TOKENS) + ["a"], os.path.join(path, name))
  return path


@pytest.mark.parametrize("name,kind", [("vocab.txt", "wordpiece"),
                                       ("vocab_bert_uncased_english.txt", "wordpiece"),
                                       ("vocab_gpt_for_etc.model", "sentencepiece")])
def test_vocab_from_checkpoint_folder(tmp_path, name, kind):
  folder = _official_folder(str(tmp_path / "etc"), [name])
  expected = os.path.join(folder, name)
  assert tokenization.vocab_from_checkpoint_folder(folder) == expected
  assert tokenization.vocab_from_checkpoint_folder(os.path.join(folder, "model.ckpt")) == expected
  assert tokenization.tokenizer_for_vocab(expected).kind == kind


def test_not_an_official_checkpoint_folder(tmp_path):
  assert tokenization.vocab_from_checkpoint_folder("") is None
  # This package's own checkpoints (an encoder prefix), or no etc_config.json: not official.
  run = _official_folder(str(tmp_path / "run"), ["vocab.txt"], config=False)
  assert tokenization.vocab_from_checkpoint_folder(os.path.join(run, "model.ckpt")) is None
  assert tokenization.vocab_from_checkpoint_folder(str(tmp_path / "run" / "encoder")) is None


def test_checkpoint_folder_errors_name_the_folder(tmp_path):
  empty = _official_folder(str(tmp_path / "empty"))
  with pytest.raises(FileNotFoundError, match=f"{empty} holds no vocabulary"):
    tokenization.vocab_from_checkpoint_folder(os.path.join(empty, "model.ckpt"))
  both = _official_folder(str(tmp_path / "both"), ["vocab.txt", "vocab_gpt_for_etc.model"])
  with pytest.raises(FileNotFoundError, match=f"{both} holds both"):
    tokenization.vocab_from_checkpoint_folder(both)


def test_tokenizer_for_vocab_errors(tmp_path, spm_file):
  missing = str(tmp_path / "absent.model")
  with pytest.raises(FileNotFoundError, match="absent.model"):
    tokenization.tokenizer_for_vocab(missing)
  wordpiece = _official_folder(str(tmp_path / "base"), ["vocab.txt"])
  with pytest.raises(ValueError, match="split_punctuation: only for a SentencePiece"):
    tokenization.tokenizer_for_vocab(os.path.join(wordpiece, "vocab.txt"), split_punctuation=True)
  moved = [(p, k) for p, k in _SPM_PIECES if p != "<pad>"] + [("<pad>", _CONTROL)]
  bad = _write_model(tmp_path, moved, "pad_last.model")
  with pytest.raises(ValueError, match="pad_last.model: the padding piece has id"):
    tokenization.tokenizer_for_vocab(bad)


@pytest.mark.parametrize("name,copied", [("vocab.txt", "vocab.txt"),
                                         ("vocab_gpt_for_etc.model", "vocab.model")])
def test_fine_tuning_takes_the_vocabulary_of_the_checkpoint(tmp_path, name, copied):
  folder = _official_folder(str(tmp_path / "etc"), [name])
  train = finetuning.TaskTrainConfig(train_file="train.json",
                                     init_checkpoint=os.path.join(folder, "model.ckpt"))
  output_dir = str(tmp_path / "out")
  os.makedirs(output_dir)
  path = finetuning.prepare_vocab(finetuning.vocab_source(train), train.learned_vocab_size,
                                  output_dir, texts=None)   # nothing is learned: texts would fail
  assert path == os.path.join(output_dir, copied)
  with open(path, "rb") as got, open(os.path.join(folder, name), "rb") as want:
    assert got.read() == want.read()
  assert finetuning.TaskTrainConfig.from_dict({"split_punctuation": True}).split_punctuation


# ------------------------------------------------------------------ task features with SPM ids


def test_nq_global_cls_is_the_tokenizers(spm_file):
  tok = OffsetTokenizer(tokenization.tokenizer_for_vocab(spm_file))
  tokens = ["<P>", "the", "capital", "</P>"]
  example = nq_data.parse_record(nf.record(1, "what is", tokens), with_labels=False, repairs=[])
  features = nq_features.convert_example(
      example, tok, nq_features.NqFeatureConfig(long_seq_len=32, global_seq_len=24,
                                                doc_stride=16, max_question_pieces=8),
      is_train=False)
  q_ids = tok.tokenizer.tokenize(["what is"])[0]
  global_ids = features[0]["global_token_ids"].tolist()
  # [CLS] (<unused_63>), Q + 1 question tokens, one candidate token (Google's: 1).
  assert global_ids[:3 + len(q_ids)] == [64] + [35] * (len(q_ids) + 1) + [1]
  assert np.array_equal(features[0]["token_ids"][1:1 + len(q_ids)], q_ids)


def test_an_export_keeps_its_sentencepiece_tokenizer(spm_file, tmp_path):
  from tasks.common import serving  # pylint: disable=g-import-not-at-top
  run_dir, export_dir = tmp_path / "run", tmp_path / "export"
  run_dir.mkdir()
  export_dir.mkdir()
  model = run_dir / "vocab.model"
  model.write_bytes(open(spm_file, "rb").read())
  (run_dir / serving.TOKENIZER_FILE).write_text('{"split_punctuation": true}')
  assert os.path.basename(serving.copy_vocabulary(str(model), str(export_dir))) == "vocab.model"
  tok = serving.export_tokenizer(str(export_dir)).tokenizer
  assert isinstance(tok, tokenization.SentencePieceTokenizer)
  assert tok.tokenize(["The end."]) == [[pid(W + "The"), pid(W + "end"), pid(W + ".")]]
