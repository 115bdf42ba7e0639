"""WordPiece and SentencePiece tokenizers behind one interface, cutting text as the official ETC
fine-tuning code does (docs/tokenizers.md).

Both tokenizers keep the grouping of pieces into words, which whole-word masking needs:

  tok = load_tokenizer(vocab_file="vocab.txt")
  tok.tokenize_words(["Unaffable dogs"])   # [[[id(un), id(##aff), id(##able)], [id(dogs)]]]
  tok.tokenize(["Unaffable dogs"])         # [[id(un), id(##aff), id(##able), id(dogs)]]

The three ways Google's released ETC checkpoints tokenize:

  WordPieceTokenizer(vocab.txt)                       BERT uncased: basic cut, lower-case, strip
                                                      accents, greedy WordPiece with "##"
  SentencePieceTokenizer(*.model)                     SentencePiece on the whole text
  SentencePieceTokenizer(*.model, split_punctuation)  BERT's basic cut (case kept), then
                                                      SentencePiece on every word

The "basic cut" is BERT's BasicTokenizer: control characters are dropped, whitespace separates
words, every punctuation character and every CJK ideograph is a word of its own.
`tokenizer_for_vocab` picks the tokenizer from the vocabulary file's name and
`vocab_from_checkpoint_folder` finds the vocabulary beside an official checkpoint.
"""

import abc
import dataclasses
import functools
import os
import re
import sys
import unicodedata
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

import etc_realformer  # pylint: disable=unused-import  # sets TF_USE_LEGACY_KERAS first
import tensorflow as tf  # pylint: disable=g-bad-import-order
import tensorflow_text as tf_text  # pylint: disable=g-bad-import-order

from etc_realformer.data import vocab
from etc_realformer.data import vocab_learner

# SentencePiece marks the start of a word (a piece preceded by whitespace) with this character.
SPM_WORD_START = "\u2581"
# WordPiece marks a piece that continues the previous one with this prefix.
WORDPIECE_CONTINUATION = "##"
# Longer words (in characters, after normalization) become one [UNK]. The official ETC code
# uses 200 (BERT's original tokenizer 100).
MAX_CHARS_PER_WORD = 200

# The pieces the official NQ converter uses as [CLS] and [SEP] with the RoBERTa SentencePiece
# model of the ETC-large checkpoints, which has no [CLS] / [SEP] pieces.
ETC_SPM_CLS_PIECE = "<unused_63>"
ETC_SPM_SEP_PIECE = "<unused_2>"

# Vocabulary file names in a released checkpoint folder, in order of preference.
WORDPIECE_VOCAB_NAMES = ("vocab.txt", "vocab_bert_uncased_english.txt")
SENTENCEPIECE_MODEL_NAME = "vocab_gpt_for_etc.model"
OFFICIAL_CHECKPOINT_PREFIX = "model.ckpt"
OFFICIAL_CONFIG_NAME = "etc_config.json"

DEFAULT_BATCH_SIZE = 256
_MAX_CACHED_WORDS = 1 << 20
_SIGMA = "\u03a3"   # Greek capital sigma: the one character Python lower-cases by context

# The CJK ideograph blocks BERT's basic tokenizer puts spaces around, as [first, last] ranges.
_CJK_RANGES = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2A6DF),
               (0x2A700, 0x2B73F), (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0x2F800, 0x2FA1F))


# ------------------------------------------------------------------------ BERT's basic cut


def _is_bert_punctuation(cp: int, category: str) -> bool:
  """Non-alphanumeric ASCII symbols and every Unicode P* character."""
  return (33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126
          or category.startswith("P"))


@dataclasses.dataclass(frozen=True)
class _CharTables:
  """Code points by their role in the basic cut (lists of ints)."""
  dropped: List[int]       # NUL, U+FFFD and control/format characters other than \t \n \r
  whitespace: List[int]    # separate words
  punctuation: List[int]   # a word of their own
  marks: List[int]         # Mn: removed with the accents when lower-casing


@functools.lru_cache(maxsize=None)
def _char_tables() -> _CharTables:
  dropped, whitespace, punctuation, marks = [], [], [], []
  for cp in range(sys.maxunicode + 1):
    char = chr(cp)
    category = unicodedata.category(char)
    if cp in (0, 0xFFFD) or (category in ("Cc", "Cf") and char not in "\t\n\r"):
      dropped.append(cp)
    elif char in " \t\n\r" or category == "Zs" or char.isspace():
      whitespace.append(cp)   # isspace: U+2028/U+2029, on which BERT's str.split() cuts too
    elif _is_bert_punctuation(cp, category):
      punctuation.append(cp)
    elif category == "Mn":
      marks.append(cp)
  return _CharTables(dropped, whitespace, punctuation, marks)


def _class_body(code_points: Sequence[int]) -> str:
  """The inside of a regex character class matching `code_points` (sorted ints)."""
  parts, i = [], 0
  while i < len(code_points):
    j = i
    while j + 1 < len(code_points) and code_points[j + 1] == code_points[j] + 1:
      j += 1
    first, last = code_points[i], code_points[j]
    parts.append(f"\\U{first:08x}" if first == last else f"\\U{first:08x}-\\U{last:08x}")
    i = j + 1
  return "".join(parts)


@functools.lru_cache(maxsize=None)
def _patterns() -> Dict[str, re.Pattern]:
  """Compiled regexes of the basic cut, built once."""
  tables = _char_tables()
  cjk = "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in _CJK_RANGES)
  punct, dropped = _class_body(tables.punctuation), _class_body(tables.dropped)
  word_char = f"[^{_class_body(tables.whitespace)}{punct}{cjk}{dropped}]"
  return {
      # A punctuation character, a CJK ideograph, or a run of other word characters that
      # dropped characters do not interrupt ("a<U+200B>b" is one word, as in BERT).
      "word": re.compile(f"[{punct}{cjk}]|{word_char}(?:[{dropped}]*{word_char})*"),
      "punct_split": re.compile(f"[{punct}]|[^{punct}]+"),
      # What BERT lower-cases as one string: a run between whitespace and CJK ideographs.
      "lowered_unit": re.compile(f"[^{_class_body(tables.whitespace)}{cjk}]+"),
  }


@functools.lru_cache(maxsize=None)
def _translate_tables() -> Tuple[Dict[int, None], Dict[int, None]]:
  """str.translate tables deleting (dropped characters, combining marks)."""
  tables = _char_tables()
  return dict.fromkeys(tables.dropped), dict.fromkeys(tables.marks)


def basic_word_spans(text: str) -> List[Tuple[int, int]]:
  """[start, end) character offsets of the words of BERT's basic cut of `text`."""
  return [match.span() for match in _patterns()["word"].finditer(text)]


def _sigma_forms(text: str) -> Dict[int, str]:
  """Position of every capital sigma in `text` -> the lower-case form BERT gives it.

  Lower-casing is per character except for sigma, which becomes final "\u03c2" or "\u03c3"
  depending on its neighbours in the string BERT lower-cases (the whitespace-separated token,
  dropped characters removed), which can be wider than its word ("Σ" in "dΣ.e").
  """
  dropped = _translate_tables()[0]
  forms = {}
  for unit in _patterns()["lowered_unit"].finditer(text):
    if _SIGMA not in unit.group():
      continue
    kept = [(unit.start() + k, c) for k, c in enumerate(unit.group()) if ord(c) not in dropped]
    token = "".join(c for _, c in kept)
    lowered = token.lower()
    for i, (position, char) in enumerate(kept):
      if char == _SIGMA:
        forms[position] = lowered[len(token[:i].lower())]
  return forms


def basic_word_texts(text: str, spans: Sequence[Tuple[int, int]], lower_case: bool
                     ) -> List[str]:
  """The raw words text[start:end] of `spans`; when lower-casing, a capital sigma is replaced
  by the form its context gives it, so that every word can be normalized on its own."""
  words = [text[s:e] for s, e in spans]
  if not lower_case or _SIGMA not in text:
    return words
  forms = _sigma_forms(text)
  return ["".join(forms.get(s + k, c) for k, c in enumerate(word)) if _SIGMA in word else word
          for word, (s, _) in zip(words, spans)]


def basic_words(word: str, lower_case: bool) -> List[str]:
  """The tokens BERT's basic tokenizer makes of one word of `basic_word_spans`.

  Dropped characters are removed; with `lower_case` the word is lower-cased, decomposed (NFD)
  and stripped of combining marks, then cut again at punctuation (normalization can create
  some). Usually a list of one token; empty when nothing is left.
  """
  dropped, marks = _translate_tables()
  word = word.translate(dropped)
  if not lower_case:
    return [word] if word else []
  word = unicodedata.normalize("NFD", word.lower()).translate(marks)
  return _patterns()["punct_split"].findall(word)


# ----------------------------------------------------------------------------- interface


def _split_rows(values: list, splits: np.ndarray) -> list:
  """`values` cut at the row splits (`RaggedTensor.to_list` is far slower)."""
  splits = splits.tolist()
  return [values[start:end] for start, end in zip(splits[:-1], splits[1:])]


def _check_texts(texts) -> List[str]:
  """Returns `texts` as a list of str; rejects a bare string (it would iterate characters)."""
  if isinstance(texts, (str, bytes)):
    raise TypeError("expected a list of texts, got a single string; wrap it in a list")
  return [t.decode("utf-8") if isinstance(t, bytes) else str(t) for t in texts]


class Tokenizer(abc.ABC):
  """Common interface of the tokenizers.

  Attributes:
    kind: "wordpiece" or "sentencepiece".
    vocab_size: Number of ids; every id produced is in `[0, vocab_size)`.
    pad_id: Id of the padding token.
    unk_id: Id of the unknown token.
    cls_id: Id of the `[CLS]` token.
    sep_id: Id of the `[SEP]` token.
    mask_id: Id of the `[MASK]` token (None for a SentencePiece model loaded without one).
    cuts_words_first: True when a text tokenizes as the concatenation of its basic-cut words
      (`basic_word_spans`), so word pieces can be cached per word.
    batch_size: Number of texts sent to TensorFlow per call.
  """

  kind: str
  vocab_size: int
  pad_id: int
  unk_id: int
  cls_id: int
  sep_id: int
  mask_id: Optional[int]
  cuts_words_first: bool = True

  def __init__(self, batch_size: int = DEFAULT_BATCH_SIZE):
    if batch_size < 1:
      raise ValueError(f"batch_size must be positive, got {batch_size}")
    self.batch_size = batch_size

  @property
  def special_ids(self) -> dict:
    """The special ids by name (pad, unk, cls, sep, mask)."""
    return {"pad": self.pad_id, "unk": self.unk_id, "cls": self.cls_id, "sep": self.sep_id,
            "mask": self.mask_id}

  @property
  @abc.abstractmethod
  def signature(self) -> dict:
    """What the ids depend on besides the vocabulary file (for conversion fingerprints)."""

  def tokenize_words(self, texts: Sequence[str]) -> List[List[List[int]]]:
    """Tokenizes texts, keeping the pieces of each word together.

    Args:
      texts: The texts (a list of str, not a single str).

    Returns:
      For every text, for every word, the piece ids of that word. Words that produce no pieces
      are dropped, so every inner list is non-empty.
    """
    texts = _check_texts(texts)
    result = []
    for start in range(0, len(texts), self.batch_size):
      result.extend(self._tokenize_words_batch(texts[start:start + self.batch_size]))
    return result

  def tokenize(self, texts: Sequence[str]) -> List[List[int]]:
    """Tokenizes texts into flat lists of piece ids, one list per text."""
    return [[piece for word in words for piece in word] for words in self.tokenize_words(texts)]

  def word_texts(self, text: str, spans: Sequence[Tuple[int, int]]) -> List[str]:
    """The words of `text` at `spans` (basic-cut words), as `tokenize_words` should see them."""
    return [text[s:e] for s, e in spans]

  @abc.abstractmethod
  def _tokenize_words_batch(self, texts: List[str]) -> List[List[List[int]]]:
    """`tokenize_words` for one batch of at most `batch_size` texts."""

  @abc.abstractmethod
  def id_to_token(self, ids: Sequence[int]) -> List[str]:
    """The piece strings of `ids`."""

  @abc.abstractmethod
  def detokenize(self, ids: Sequence[int]) -> str:
    """Best-effort text of a sequence of ids (padding is dropped)."""

  def _check_ids(self, ids: Sequence[int]) -> List[int]:
    ids = [int(i) for i in np.asarray(ids).reshape([-1])]
    for i in ids:
      if not 0 <= i < self.vocab_size:
        raise ValueError(f"id {i} is outside the vocabulary [0, {self.vocab_size})")
    return ids


# ----------------------------------------------------------------------------- WordPiece


class WordPieceTokenizer(Tokenizer):
  """BERT tokenization: the basic cut (lower-cased, accents stripped) and greedy WordPiece.

  Every token of the basic cut is matched longest-prefix-first against the vocabulary, the
  pieces after the first carrying "##"; a token with no match for some part, or longer than
  `max_chars_per_word` characters, becomes one [UNK]. The ids are the line numbers of the
  vocab file (BERT format, one token per line). The special ids are looked up by their token
  strings `[PAD] [UNK] [CLS] [SEP] [MASK]`.
  """

  kind = "wordpiece"

  def __init__(self, vocab_file: str, lower_case: bool = True,
               batch_size: int = DEFAULT_BATCH_SIZE,
               max_chars_per_word: int = MAX_CHARS_PER_WORD):
    """Loads the vocabulary.

    Args:
      vocab_file: Path of the vocab file, one token per line.
      lower_case: Lower-case and strip accents (an uncased vocabulary).
      batch_size: Number of texts per call.
      max_chars_per_word: Longer tokens become [UNK].

    Raises:
      FileNotFoundError: If `vocab_file` does not exist.
      ValueError: If the vocabulary lacks one of the special tokens.
    """
    super().__init__(batch_size)
    self.vocab_file = vocab_file
    self.lower_case = lower_case
    self.max_chars_per_word = max_chars_per_word
    self._tokens = vocab_learner.read_vocab(vocab_file)
    self.vocab_size = len(self._tokens)
    # The first occurrence of a duplicated token wins, as in BERT's `load_vocab`.
    self._token_to_id = {}
    for i, token in enumerate(self._tokens):
      self._token_to_id.setdefault(token, i)
    for name, token in (("pad", "[PAD]"), ("unk", "[UNK]"), ("cls", "[CLS]"), ("sep", "[SEP]"),
                        ("mask", "[MASK]")):
      if token not in self._token_to_id:
        raise ValueError(f"vocab file {vocab_file} has no {token} token")
      setattr(self, f"{name}_id", self._token_to_id[token])
    # raw word of the basic cut -> pieces of each of its tokens (tuples, never mutated)
    self._cache: Dict[str, Tuple[Tuple[int, ...], ...]] = {}

  @property
  def signature(self) -> dict:
    return {"kind": self.kind, "lower_case": self.lower_case,
            "max_chars_per_word": self.max_chars_per_word}

  def _wordpiece(self, token: str) -> Tuple[int, ...]:
    """Greedy longest-match-first pieces of one basic token."""
    if len(token) > self.max_chars_per_word:
      return (self.unk_id,)
    pieces, start = [], 0
    while start < len(token):
      end = len(token)
      while end > start:
        piece = token[start:end] if start == 0 else WORDPIECE_CONTINUATION + token[start:end]
        if piece in self._token_to_id:
          pieces.append(self._token_to_id[piece])
          break
        end -= 1
      else:
        return (self.unk_id,)   # some part matches no vocabulary entry: the whole word
      start = end
    return tuple(pieces)

  def _word(self, word: str) -> Tuple[Tuple[int, ...], ...]:
    """Pieces of every token of one raw word of the basic cut (cached)."""
    cached = self._cache.get(word)
    if cached is None:
      if len(self._cache) >= _MAX_CACHED_WORDS:
        self._cache.clear()
      cached = tuple(self._wordpiece(t) for t in basic_words(word, self.lower_case))
      self._cache[word] = cached
    return cached

  def word_texts(self, text, spans):
    return basic_word_texts(text, spans, self.lower_case)

  def _tokenize_words_batch(self, texts):
    return [[list(pieces) for word in self.word_texts(text, basic_word_spans(text))
             for pieces in self._word(word)] for text in texts]

  def token_to_id(self, token: str) -> int:
    """The id of `token`, or `unk_id` when it is not in the vocabulary."""
    return self._token_to_id.get(token, self.unk_id)

  def id_to_token(self, ids):
    return [self._tokens[i] for i in self._check_ids(ids)]

  def detokenize(self, ids):
    words = []
    for token in self.id_to_token([i for i in self._check_ids(ids) if i != self.pad_id]):
      if token.startswith(WORDPIECE_CONTINUATION) and words:
        words[-1] += token[len(WORDPIECE_CONTINUATION):]
      else:
        words.append(token)
    return " ".join(words)


# ------------------------------------------------------------------------- SentencePiece


def _char_offsets(text: str, byte_offsets: np.ndarray) -> np.ndarray:
  """UTF-8 byte offsets into `text` -> character offsets (same shape)."""
  if text.isascii():
    return byte_offsets
  data = np.frombuffer(text.encode("utf-8"), np.uint8)
  starts = (data & 0xC0) != 0x80                                  # [bytes] a character starts
  chars_before = np.concatenate([[0], np.cumsum(starts)])         # [bytes + 1]
  return chars_before[byte_offsets]


def _is_digit_comma(piece: str) -> bool:
  """A piece like "5," or "\u258119,", which the official code splits before the comma."""
  return len(piece) > 1 and piece[-1] == "," and piece[-2].isdigit()


class SentencePieceTokenizer(Tokenizer):
  """SentencePiece tokenization with `tensorflow_text.SentencepieceTokenizer`.

  As in the official ETC code (its ALBERT-derived `encode_pieces`), a piece ending in a digit
  and a comma ("\u25811995,") is re-encoded without the comma, and the comma added as a piece
  of its own.

  Plain mode encodes whole texts; a word starts at every piece that begins with "\u2581"
  (SentencePiece's whitespace marker) and holds the pieces up to the next such piece. With
  `split_punctuation` the text is first cut into words by BERT's basic cut (case kept, as the
  `etc_large_split_punctuation` checkpoint expects) and every word is encoded on its own.

  Special pieces: `<unk>`/`[UNK]`; padding `[PAD]`/`<pad>`; `[CLS]`, else `<unused_63>`;
  `[SEP]`, else `<unused_2>` (the last two are what the official NQ converter uses with the
  ETC-large model); `[MASK]`/`<mask>`.
  """

  kind = "sentencepiece"

  def __init__(self, model_file: str, batch_size: int = DEFAULT_BATCH_SIZE,
               split_punctuation: bool = False, require_mask: bool = True):
    """Loads the model.

    Args:
      model_file: Path of the serialized SentencePiece model (`*.model`).
      batch_size: Number of texts per TensorFlow call.
      split_punctuation: Cut words with BERT's basic cut before SentencePiece.
      require_mask: A model without a mask piece is an error (masked-LM pretraining needs it);
        fine-tuning passes False.

    Raises:
      FileNotFoundError: If `model_file` does not exist.
      ValueError: If the model lacks one of the special pieces.
    """
    super().__init__(batch_size)
    self.model_file = model_file
    self.split_punctuation = split_punctuation
    self.cuts_words_first = split_punctuation
    if not os.path.isfile(model_file):
      raise FileNotFoundError(f"SentencePiece model file not found: {model_file}")
    with open(model_file, "rb") as f:
      model = f.read()
    self._spm = tf_text.SentencepieceTokenizer(model=model, out_type=tf.int32)
    self.vocab_size = int(self._spm.vocab_size())
    self._pieces = [p.decode("utf-8") for p in
                    self._spm.id_to_string(tf.range(self.vocab_size)).numpy().tolist()]
    self._starts_word = np.array([p.startswith(SPM_WORD_START) for p in self._pieces], bool)
    self._digit_comma = np.array([_is_digit_comma(p) for p in self._pieces], bool)
    self._piece_to_id = {}
    for i, piece in enumerate(self._pieces):
      self._piece_to_id.setdefault(piece, i)
    self._set_special_ids(require_mask)
    self._split_cache: Dict[int, List[int]] = {}
    signature = [tf.TensorSpec([None], tf.string)]
    self._tokenize_fn = tf.function(self._spm.tokenize, input_signature=signature)
    self._offsets_fn = tf.function(self._spm.tokenize_with_offsets, input_signature=signature)

  def _lookup(self, *candidates: str) -> Optional[int]:
    for piece in candidates:
      if piece in self._piece_to_id:
        return self._piece_to_id[piece]
    return None

  def _set_special_ids(self, require_mask: bool) -> None:
    self.unk_id = self._lookup("<unk>", "[UNK]")
    self.pad_id = self._lookup("[PAD]", "<pad>")
    self.cls_id = self._lookup("[CLS]", ETC_SPM_CLS_PIECE)
    self.sep_id = self._lookup("[SEP]", ETC_SPM_SEP_PIECE)
    self.mask_id = self._lookup("[MASK]", "<mask>")
    if self.mask_id is None and require_mask:
      raise ValueError(
          f"SentencePiece model {self.model_file} has no [MASK] piece (nor <mask>); the model "
          "must define [MASK] as a user symbol (spm_train --user_defined_symbols=[CLS],[SEP],"
          "[MASK]) for masked language model pretraining")
    for name, pieces in (("unk", "<unk> or [UNK]"), ("pad", "<pad> or [PAD]"),
                         ("cls", f"[CLS] or {ETC_SPM_CLS_PIECE}"),
                         ("sep", f"[SEP] or {ETC_SPM_SEP_PIECE}")):
      if getattr(self, f"{name}_id") is None:
        raise ValueError(f"SentencePiece model {self.model_file} has no {pieces} piece; the "
                         "model must define it (e.g. as a user or control symbol)")

  @property
  def signature(self) -> dict:
    return {"kind": self.kind, "split_punctuation": self.split_punctuation}

  # -- the official digit-comma rule

  def _split_digit_comma(self, piece_id: int) -> List[int]:
    """Ids replacing one digit-comma piece: its text re-encoded without "\u2581", then ","."""
    cached = self._split_cache.get(piece_id)
    if cached is not None:
      return cached
    piece = self._pieces[piece_id]
    ids = self._tokenize_fn(tf.constant([piece[:-1].replace(SPM_WORD_START, "")]))
    pieces = [self._pieces[i] for i in ids.flat_values.numpy().tolist()]
    # Encoding adds a word-start marker; a piece that did not start a word must not get one.
    if not piece.startswith(SPM_WORD_START) and pieces and pieces[0].startswith(SPM_WORD_START):
      pieces = pieces[1:] if pieces[0] == SPM_WORD_START else [pieces[0][1:]] + pieces[1:]
    pieces.append(piece[-1])
    cached = [self._piece_to_id.get(p, self.unk_id) for p in pieces]
    self._split_cache[piece_id] = cached
    return cached

  def _fix_digit_commas(self, ids: List[int]) -> Tuple[List[int], List[int]]:
    """-> (ids with digit-comma pieces split, index into `ids` of every output id)."""
    if not self._digit_comma[ids].any():
      return ids, list(range(len(ids)))
    out, source = [], []
    for k, i in enumerate(ids):
      new = self._split_digit_comma(i) if self._digit_comma[i] else [i]
      out.extend(new)
      source.extend([k] * len(new))
    return out, source

  # -- encoding

  def _encode(self, texts: List[str]) -> List[List[int]]:
    """Piece ids of every text encoded whole (digit-comma rule applied)."""
    if not texts:
      return []
    ragged = self._tokenize_fn(tf.constant(texts, tf.string))  # [batch, pieces]
    rows = _split_rows(ragged.flat_values.numpy().tolist(), ragged.row_splits.numpy())
    return [self._fix_digit_commas(ids)[0] for ids in rows]

  def _group_words(self, ids: List[int]) -> List[List[int]]:
    words = []
    for i in ids:
      if self._starts_word[i] or not words:
        words.append([i])
      else:
        words[-1].append(i)
    return words

  def _tokenize_words_batch(self, texts):
    if not self.split_punctuation:
      return [self._group_words(ids) for ids in self._encode(texts)]
    words = [[w for s, e in basic_word_spans(text) for w in basic_words(text[s:e], False)]
             for text in texts]
    unique = sorted({w for text_words in words for w in text_words})
    encoded = dict(zip(unique, self._encode(unique)))
    return [[encoded[w] for w in text_words if encoded[w]] for text_words in words]

  def tokenize_with_offsets(self, texts: Sequence[str]
                            ) -> List[Tuple[List[int], List[int], List[int]]]:
    """Plain mode: (ids, starts, ends) of every text, the [start, end) characters of each piece.

    A piece's span leaves out the whitespace its "\u2581" stands for; the pieces made of one
    digit-comma piece share its span.
    """
    if self.split_punctuation:
      raise ValueError("tokenize_with_offsets encodes whole texts; with split_punctuation, "
                       "tokenize word by word (span_tokenization.OffsetTokenizer does)")
    texts = _check_texts(texts)
    out = []
    for first in range(0, len(texts), self.batch_size):
      out.extend(self._offsets_batch(texts[first:first + self.batch_size]))
    return out

  def _offsets_batch(self, texts: List[str]):
    ragged, begins, ends = self._offsets_fn(tf.constant(texts, tf.string))  # [batch, pieces]
    splits = ragged.row_splits.numpy()
    rows = zip(_split_rows(ragged.flat_values.numpy().tolist(), splits),
               _split_rows(begins.flat_values.numpy(), splits),
               _split_rows(ends.flat_values.numpy(), splits))
    out = []
    for text, (ids, row_begins, row_ends) in zip(texts, rows):
      starts = _char_offsets(text, row_begins).tolist()
      stops = _char_offsets(text, row_ends).tolist()
      for k, (start, stop) in enumerate(zip(starts, stops)):
        while start < stop and text[start].isspace():
          start += 1
        starts[k] = start
      ids, source = self._fix_digit_commas(ids)
      out.append((ids, [starts[k] for k in source], [stops[k] for k in source]))
    return out

  def id_to_token(self, ids):
    return [self._pieces[i] for i in self._check_ids(ids)]

  def detokenize(self, ids):
    ids = [i for i in self._check_ids(ids) if i != self.pad_id]
    if not ids:
      return ""
    return self._spm.detokenize(tf.constant(ids, tf.int32)).numpy().decode("utf-8")


# --------------------------------------------------------------------------- choosing one


def load_tokenizer(vocab_file: Optional[str] = None, spm_model_file: Optional[str] = None,
                   lower_case: bool = True, split_punctuation: bool = False) -> Tokenizer:
  """Builds the tokenizer for a WordPiece vocab file or a SentencePiece model.

  Args:
    vocab_file: A WordPiece (BERT) vocab file.
    spm_model_file: A SentencePiece model file.
    lower_case: For WordPiece: lower-case the text (ignored for SentencePiece, whose model
      defines its own normalization).
    split_punctuation: For SentencePiece: BERT's basic cut before SentencePiece.

  Returns:
    A `WordPieceTokenizer` or a `SentencePieceTokenizer`.

  Raises:
    ValueError: Unless exactly one of `vocab_file` and `spm_model_file` is given.
  """
  if (vocab_file is None) == (spm_model_file is None):
    raise ValueError("give exactly one of vocab_file and spm_model_file, got "
                     f"vocab_file={vocab_file!r}, spm_model_file={spm_model_file!r}")
  if vocab_file is not None:
    return WordPieceTokenizer(vocab_file, lower_case=lower_case)
  return SentencePieceTokenizer(spm_model_file, split_punctuation=split_punctuation)


def is_sentencepiece_file(path: str) -> bool:
  """A SentencePiece model (`*.model`) rather than a WordPiece vocab file."""
  return path.endswith(".model")


def tokenizer_for_vocab(path: str, split_punctuation: bool = False) -> Tokenizer:
  """The tokenizer a fine-tuning run uses for its vocabulary file.

  `*.model`: SentencePiece (with `split_punctuation`: BERT's basic cut first); any other file:
  BERT uncased WordPiece.

  Raises:
    FileNotFoundError: If `path` does not exist.
    ValueError: For split_punctuation with a WordPiece vocabulary, or a vocabulary whose
      padding id is not 0 (the task features and the model treat id 0 as padding).
  """
  if not os.path.isfile(path):
    raise FileNotFoundError(f"vocabulary file not found: {path}")
  if is_sentencepiece_file(path):
    tokenizer = SentencePieceTokenizer(path, split_punctuation=split_punctuation,
                                       require_mask=False)
  elif split_punctuation:
    raise ValueError(f"split_punctuation: only for a SentencePiece model (*.model); {path} is "
                     "a WordPiece vocabulary, which always splits punctuation")
  else:
    tokenizer = WordPieceTokenizer(path, lower_case=True)
  if tokenizer.pad_id != vocab.PAD_ID:
    raise ValueError(f"{path}: the padding piece has id {tokenizer.pad_id}, but features are "
                     f"padded with id {vocab.PAD_ID}")
  return tokenizer


def _official_checkpoint_folder(init_checkpoint: str) -> Optional[str]:
  """The folder of an official `model.ckpt` given as the folder or the prefix, else None."""
  if os.path.basename(init_checkpoint.rstrip("/")) == OFFICIAL_CHECKPOINT_PREFIX:
    folder = os.path.dirname(init_checkpoint.rstrip("/")) or "."
  elif os.path.isdir(init_checkpoint):
    folder = init_checkpoint
  else:
    return None
  if not (os.path.isfile(os.path.join(folder, OFFICIAL_CHECKPOINT_PREFIX + ".index"))
          and os.path.isfile(os.path.join(folder, OFFICIAL_CONFIG_NAME))):
    return None
  return folder


def vocab_from_checkpoint_folder(init_checkpoint: str) -> Optional[str]:
  """The vocabulary released with an official ETC checkpoint, or None if it is not one.

  `init_checkpoint` is a folder holding `model.ckpt.index` and `etc_config.json`, or the
  `<folder>/model.ckpt` prefix. The folder's WordPiece vocabulary (`vocab.txt` or
  `vocab_bert_uncased_english.txt`) or SentencePiece model (`vocab_gpt_for_etc.model`, else
  the only `*.model`) is returned.

  Raises:
    FileNotFoundError: An official folder without (or with two kinds of) vocabulary.
  """
  if not init_checkpoint:
    return None
  folder = _official_checkpoint_folder(init_checkpoint)
  if folder is None:
    return None
  wordpiece = [n for n in WORDPIECE_VOCAB_NAMES if os.path.isfile(os.path.join(folder, n))]
  models = sorted(n for n in os.listdir(folder)
                  if is_sentencepiece_file(n) and os.path.isfile(os.path.join(folder, n)))
  if SENTENCEPIECE_MODEL_NAME in models:
    models = [SENTENCEPIECE_MODEL_NAME]
  if wordpiece and models:
    raise FileNotFoundError(f"init_checkpoint: {folder} holds both a WordPiece vocabulary "
                            f"({wordpiece[0]}) and a SentencePiece model ({models[0]}); set "
                            "train.vocab_file to the one the checkpoint was trained with")
  if len(models) > 1:
    raise FileNotFoundError(f"init_checkpoint: {folder} holds several SentencePiece models "
                            f"({', '.join(models)}); set train.vocab_file to one of them")
  if not wordpiece and not models:
    raise FileNotFoundError(
        f"init_checkpoint: {folder} holds no vocabulary (expected "
        f"{' or '.join(WORDPIECE_VOCAB_NAMES)} or {SENTENCEPIECE_MODEL_NAME}); set "
        "train.vocab_file")
  return os.path.join(folder, (wordpiece or models)[0])
