"""Word-piece and SentencePiece tokenizers behind one interface, built on tensorflow-text.

Both tokenizers keep the grouping of pieces into words, which whole-word masking needs:

  tok = load_tokenizer(vocab_file="vocab.txt")
  tok.tokenize_words(["Unaffable dogs"])   # [[[id(un), id(##aff), id(##able)], [id(dogs)]]]
  tok.tokenize(["Unaffable dogs"])         # [[id(un), id(##aff), id(##able), id(dogs)]]

Texts are tokenized in batches (`batch_size` strings per call) by a `tf.function`, eagerly
from Python, so a corpus can be tokenized without building a `tf.data` pipeline.
"""

import abc
import os
from typing import List, Optional, Sequence

import numpy as np

import etc_realformer  # pylint: disable=unused-import  # sets TF_USE_LEGACY_KERAS first
import tensorflow as tf  # pylint: disable=g-bad-import-order
import tensorflow_text as tf_text  # pylint: disable=g-bad-import-order

from etc_realformer.data import vocab_learner

# SentencePiece marks the start of a word (a piece preceded by whitespace) with this character.
SPM_WORD_START = "\u2581"
# WordPiece marks a piece that continues the previous one with this prefix.
WORDPIECE_CONTINUATION = "##"

DEFAULT_BATCH_SIZE = 256


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
    vocab_size: Number of ids; every id produced is in `[0, vocab_size)`.
    pad_id: Id of the padding token.
    unk_id: Id of the unknown token.
    cls_id: Id of the `[CLS]` token.
    sep_id: Id of the `[SEP]` token.
    mask_id: Id of the `[MASK]` token.
    batch_size: Number of texts sent to TensorFlow per call.
  """

  vocab_size: int
  pad_id: int
  unk_id: int
  cls_id: int
  sep_id: int
  mask_id: int

  def __init__(self, batch_size: int = DEFAULT_BATCH_SIZE):
    if batch_size < 1:
      raise ValueError(f"batch_size must be positive, got {batch_size}")
    self.batch_size = batch_size

  @property
  def special_ids(self) -> dict:
    """The special ids by name (pad, unk, cls, sep, mask)."""
    return {"pad": self.pad_id, "unk": self.unk_id, "cls": self.cls_id, "sep": self.sep_id,
            "mask": self.mask_id}

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


class WordPieceTokenizer(Tokenizer):
  """BERT tokenization (basic splitting + WordPiece) with `tensorflow_text.BertTokenizer`.

  The ids are the line numbers of the vocab file (BERT format, one token per line). The special
  ids are looked up by their token strings `[PAD] [UNK] [CLS] [SEP] [MASK]`.
  """

  def __init__(self, vocab_file: str, lower_case: bool = True,
               batch_size: int = DEFAULT_BATCH_SIZE):
    """Loads the vocabulary.

    Args:
      vocab_file: Path of the vocab file, one token per line.
      lower_case: Lower-case and strip accents before splitting (an uncased vocabulary).
      batch_size: Number of texts per TensorFlow call.

    Raises:
      FileNotFoundError: If `vocab_file` does not exist.
      ValueError: If the vocabulary lacks one of the special tokens.
    """
    super().__init__(batch_size)
    self.vocab_file = vocab_file
    self.lower_case = lower_case
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

    keys = list(self._token_to_id)
    values = np.array([self._token_to_id[k] for k in keys], np.int64)
    table = tf.lookup.StaticVocabularyTable(
        tf.lookup.KeyValueTensorInitializer(tf.constant(keys, tf.string), tf.constant(values)),
        num_oov_buckets=1)
    self._bert = tf_text.BertTokenizer(table, token_out_type=tf.int64,
                                       unknown_token="[UNK]", lower_case=lower_case)
    self._tokenize_fn = tf.function(
        self._bert.tokenize, input_signature=[tf.TensorSpec([None], tf.string)])

  def _tokenize_words_batch(self, texts):
    if not texts:
      return []
    ragged = self._tokenize_fn(tf.constant(texts, tf.string))  # [batch, words, pieces]
    word_splits, piece_splits = (s.numpy() for s in ragged.nested_row_splits)
    words = _split_rows(ragged.flat_values.numpy().tolist(), piece_splits)
    return [[word for word in text if word] for text in _split_rows(words, word_splits)]

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


class SentencePieceTokenizer(Tokenizer):
  """SentencePiece tokenization with `tensorflow_text.SentencepieceTokenizer`.

  A word starts at every piece that begins with "\u2581" (SentencePiece's whitespace marker);
  the following pieces up to the next such piece belong to the same word. The model must define
  `[CLS]`, `[SEP]` and `[MASK]` (as user-defined symbols, as ALBERT's models do), a padding
  piece `<pad>` or `[PAD]`, and `<unk>`.
  """

  def __init__(self, model_file: str, batch_size: int = DEFAULT_BATCH_SIZE):
    """Loads the model.

    Args:
      model_file: Path of the serialized SentencePiece model (`*.model`).
      batch_size: Number of texts per TensorFlow call.

    Raises:
      FileNotFoundError: If `model_file` does not exist.
      ValueError: If the model lacks one of the special pieces.
    """
    super().__init__(batch_size)
    self.model_file = model_file
    if not os.path.isfile(model_file):
      raise FileNotFoundError(f"SentencePiece model file not found: {model_file}")
    with open(model_file, "rb") as f:
      model = f.read()
    self._spm = tf_text.SentencepieceTokenizer(model=model, out_type=tf.int32)
    self.vocab_size = int(self._spm.vocab_size())
    self._pieces = [p.decode("utf-8") for p in
                    self._spm.id_to_string(tf.range(self.vocab_size)).numpy().tolist()]
    self._starts_word = np.array([p.startswith(SPM_WORD_START) for p in self._pieces], bool)
    piece_to_id = {}
    for i, piece in enumerate(self._pieces):
      piece_to_id.setdefault(piece, i)

    def lookup(*candidates):
      for piece in candidates:
        if piece in piece_to_id:
          return int(self._spm.string_to_id(piece).numpy())
      return None

    self.unk_id = lookup("<unk>", "[UNK]")
    self.pad_id = lookup("[PAD]", "<pad>")
    self.cls_id = lookup("[CLS]")
    self.sep_id = lookup("[SEP]")
    self.mask_id = lookup("[MASK]")
    if self.mask_id is None:
      raise ValueError(
          f"SentencePiece model {model_file} has no [MASK] piece; the model must define "
          "[MASK] as a user symbol (spm_train --user_defined_symbols=[CLS],[SEP],[MASK]) "
          "for masked language model pretraining")
    for name, pieces in (("unk", "<unk>"), ("pad", "<pad> or [PAD]"), ("cls", "[CLS]"),
                         ("sep", "[SEP]")):
      if getattr(self, f"{name}_id") is None:
        raise ValueError(f"SentencePiece model {model_file} has no {pieces} piece; the model "
                         "must define it (e.g. as a user or control symbol)")
    self._tokenize_fn = tf.function(
        self._spm.tokenize, input_signature=[tf.TensorSpec([None], tf.string)])

  def _tokenize_words_batch(self, texts):
    if not texts:
      return []
    ragged = self._tokenize_fn(tf.constant(texts, tf.string))  # [batch, pieces]
    result = []
    for ids in _split_rows(ragged.flat_values.numpy().tolist(), ragged.row_splits.numpy()):
      words = []
      for i in ids:
        if self._starts_word[i] or not words:
          words.append([i])
        else:
          words[-1].append(i)
      result.append(words)
    return result

  def id_to_token(self, ids):
    return [self._pieces[i] for i in self._check_ids(ids)]

  def detokenize(self, ids):
    ids = [i for i in self._check_ids(ids) if i != self.pad_id]
    if not ids:
      return ""
    return self._spm.detokenize(tf.constant(ids, tf.int32)).numpy().decode("utf-8")


def load_tokenizer(vocab_file: Optional[str] = None, spm_model_file: Optional[str] = None,
                   lower_case: bool = True) -> Tokenizer:
  """Builds the tokenizer for a WordPiece vocab file or a SentencePiece model.

  Args:
    vocab_file: A WordPiece (BERT) vocab file.
    spm_model_file: A SentencePiece model file.
    lower_case: For WordPiece: lower-case the text (ignored for SentencePiece, whose model
      defines its own normalization).

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
  return SentencePieceTokenizer(spm_model_file)
