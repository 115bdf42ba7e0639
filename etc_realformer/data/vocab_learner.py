"""Learns a BERT-style WordPiece vocabulary from sentences, and reads / writes vocab files.

The learned vocabulary starts with `vocab.RESERVED_TOKENS` (`[PAD]`, `[unused0..98]`, `[UNK]`,
`[CLS]`, `[SEP]`, `[MASK]`), so its special ids are those of an official BERT uncased vocabulary.
Learning uses `tensorflow_text`'s `bert_vocab_from_dataset`, which splits text the way
`tensorflow_text.BertTokenizer` does.
"""

import os
from typing import Iterable, Iterator, List

import numpy as np

from etc_realformer.data import hf_tokenizer
from etc_realformer.data import vocab
from etc_realformer.io_utils import atomic_write_text

# The word-piece learner keeps every character of the input; ##-pieces mark continuations.
_CONTINUATION = "##"


def _batches(sentences: Iterable[str], batch_size: int) -> Iterator[np.ndarray]:
  batch = []
  for sentence in sentences:
    if isinstance(sentence, bytes):
      sentence = sentence.decode("utf-8")
    batch.append(sentence)
    if len(batch) == batch_size:
      yield np.array(batch, dtype=object)
      batch = []
  if batch:
    yield np.array(batch, dtype=object)


def _fix_up(learned: List[str], vocab_size: int) -> List[str]:
  """RESERVED_TOKENS first, no duplicates, at most `vocab_size` entries.

  When the learner overshoots `vocab_size` (it can for small corpora), the last (rarest) learned
  pieces are dropped, but never a single character or its ##-continuation, so every word that
  could be tokenized before still tokenizes without [UNK].
  """
  reserved = list(vocab.RESERVED_TOKENS)
  seen = set(reserved)
  rest = []
  for token in learned:
    if token not in seen:
      seen.add(token)
      rest.append(token)
  excess = len(reserved) + len(rest) - vocab_size
  if excess > 0:
    def essential(token):
      return len(token) == 1 or (token.startswith(_CONTINUATION)
                                 and len(token) == len(_CONTINUATION) + 1)
    drop = set()
    for i in range(len(rest) - 1, -1, -1):
      if len(drop) == excess:
        break
      if not essential(rest[i]):
        drop.add(i)
    rest = [t for i, t in enumerate(rest) if i not in drop]
  return reserved + rest


def learn_wordpiece_vocab(sentences: Iterable[str], vocab_size: int = 8000,
                          lower_case: bool = True, batch_size: int = 1000) -> List[str]:
  """Learns a WordPiece vocabulary.

  Args:
    sentences: The training text, any iterable of str (read once, lazily).
    vocab_size: The target size, including the 104 reserved tokens. The learner aims at
      95-100% of it; it can be exceeded only when the corpus has more distinct characters
      than fit (every character and its ##-continuation are kept). A small corpus gives a
      smaller vocabulary: a piece is kept only if it occurs about 10 times.
    lower_case: Lower-case and strip accents first, as for an uncased BERT vocabulary (use the
      same setting for the tokenizer).
    batch_size: Sentences per batch sent to TensorFlow while counting words.

  Returns:
    The vocabulary in id order, starting with `vocab.RESERVED_TOKENS`.

  Raises:
    ValueError: If `vocab_size` does not exceed the reserved tokens or there is no text.
  """
  # pylint: disable=g-import-not-at-top
  import etc_realformer  # pylint: disable=unused-import  # sets TF_USE_LEGACY_KERAS first
  import tensorflow as tf
  from tensorflow_text.tools.wordpiece_vocab import bert_vocab_from_dataset
  # pylint: enable=g-import-not-at-top
  if vocab_size <= len(vocab.RESERVED_TOKENS):
    raise ValueError(f"vocab_size must exceed the {len(vocab.RESERVED_TOKENS)} reserved "
                     f"tokens, got {vocab_size}")
  if batch_size < 1:
    raise ValueError(f"batch_size must be positive, got {batch_size}")

  counter = {"sentences": 0, "nonempty": 0}

  def generate():
    for batch in _batches(sentences, batch_size):
      counter["sentences"] += len(batch)
      counter["nonempty"] += sum(1 for s in batch if s.strip())
      yield batch

  dataset = tf.data.Dataset.from_generator(
      generate, output_signature=tf.TensorSpec([None], tf.string))
  try:
    learned = bert_vocab_from_dataset.bert_vocab_from_dataset(
        dataset, vocab_size=vocab_size, reserved_tokens=list(vocab.RESERVED_TOKENS),
        bert_tokenizer_params={"lower_case": lower_case})
  except StopIteration:  # the learner's word counter found no word at all
    learned = None
  if not learned or not counter["nonempty"]:
    raise ValueError(f"no words to learn a vocabulary from ({counter['sentences']} sentences)")
  return _fix_up(learned, vocab_size)


def write_vocab(tokens: Iterable[str], path: str) -> None:
  """Writes one token per line, atomically (a temporary file renamed over `path`).

  Raises:
    ValueError: If a token contains a line break or surrounding whitespace (it would not read
      back the same).
  """
  tokens = list(tokens)
  for token in tokens:
    if not isinstance(token, str) or token != token.strip() or "\n" in token or "\r" in token:
      raise ValueError(f"token {token!r} cannot be written to a vocab file")
  atomic_write_text(path, "".join(token + "\n" for token in tokens))


def read_vocab(path: str) -> List[str]:
  """Reads a vocab file: one token per line, the line number is the id; or a Hugging Face
  tokenizer.json of a BERT WordPiece model (its pieces in id order, `hf_tokenizer`).

  Surrounding whitespace of each line is stripped (as BERT's `load_vocab` does); a trailing
  empty line is not a token.

  Raises:
    FileNotFoundError: If `path` does not exist.
    ValueError: If the file has no token (or is a tokenizer.json of another kind).
  """
  if hf_tokenizer.is_tokenizer_json(path):
    return hf_tokenizer.read_wordpiece(path)
  if not os.path.isfile(path):
    raise FileNotFoundError(f"vocab file not found: {path}")
  with open(path, "r", encoding="utf-8") as f:
    tokens = [line.strip() for line in f.read().split("\n")]
  while tokens and not tokens[-1]:
    tokens.pop()
  if not tokens:
    raise ValueError(f"vocab file {path} is empty")
  return tokens
