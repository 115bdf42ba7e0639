"""Tokenization that remembers where every word piece came from in the original text.

Question answering has to hand back spans of the ORIGINAL text (its case, accents and
punctuation), not detokenized word pieces. Every piece records [start, end) characters of the
text, so a span of pieces i..j maps back to text[start[i]:end[j]].

  tok = OffsetTokenizer(load_tokenizer(vocab_file="vocab.txt"))
  pieces = tok.tokenize("Zoë's café, 1921.")
  pieces.ids, pieces.starts, pieces.ends   # one entry per word piece

How the offsets are found depends on the tokenizer (`Tokenizer.cuts_words_first`):
  - WordPiece (unless backend="python"): the tokenizer gives every piece the span of its word
    itself (`WordPieceTokenizer.tokenize_with_word_spans`, mostly with tensorflow-text), as
    below;
  - WordPiece with backend="python", and split-punctuation SentencePiece: the text is cut into
    words with their offsets by BERT's basic cut (`split_words`), each word is tokenized once
    (a cache) and in batches, and every piece records the span of its word;
  - plain SentencePiece encodes whole texts (cutting at punctuation would change its pieces),
    and every piece records its own span, without the whitespace before it.
"""

import dataclasses
from typing import Dict, List, Sequence, Tuple

import numpy as np

from etc_realformer.data.tokenization import Tokenizer, basic_word_spans, gc_paused

MAX_CACHED_WORDS = 1 << 20


def split_words(text: str) -> List[Tuple[int, int]]:
  """[start, end) character offsets of the words of BERT's basic cut of `text`: runs of
  characters between whitespace, with every punctuation character and CJK ideograph apart."""
  return basic_word_spans(text)


@dataclasses.dataclass
class Pieces:
  """Word pieces of one text: ids with the [start, end) characters each piece came from (its
  word, or the piece itself for plain SentencePiece)."""
  ids: List[int]
  starts: List[int]
  ends: List[int]

  def __len__(self) -> int:
    return len(self.ids)

  def text_span(self, text: str, first: int, last: int) -> str:
    """The original text covered by pieces first..last (inclusive)."""
    return text[self.starts[first]:self.ends[last]]


class OffsetTokenizer:
  """Wraps a Tokenizer so that texts tokenize into `Pieces` with character offsets."""

  def __init__(self, tokenizer: Tokenizer):
    self.tokenizer = tokenizer
    self._cache: Dict[str, List[int]] = {}

  def _word_ids(self, words: Sequence[str]) -> None:
    """Fills the cache for the words it does not hold yet (emptied when it grows past
    MAX_CACHED_WORDS, so a long conversion's memory stays bounded)."""
    missing = sorted({w for w in words if w not in self._cache})
    if not missing:
      return
    if len(self._cache) + len(missing) > MAX_CACHED_WORDS:
      self._cache = {w: self._cache[w] for w in words if w in self._cache}
    for word, groups in zip(missing, self.tokenizer.tokenize_words(missing)):
      # The tokenizer may cut a word further (e.g. at punctuation its normalization creates);
      # all pieces stay with the word.
      self._cache[word] = [piece for group in groups for piece in group]

  def _by_words(self, texts: Sequence[str]) -> List[Pieces]:
    spans = [split_words(text) for text in texts]
    words = [self.tokenizer.word_texts(text, text_spans) for text, text_spans in zip(texts, spans)]
    self._word_ids([word for text_words in words for word in text_words])
    out = []
    for text_spans, text_words in zip(spans, words):
      ids, starts, ends = [], [], []
      for (start, end), word in zip(text_spans, text_words):
        for piece in self._cache[word]:
          ids.append(piece)
          starts.append(start)
          ends.append(end)
      out.append(Pieces(ids, starts, ends))
    return out

  def tokenize_many(self, texts: Sequence[str]) -> List[Pieces]:
    """Tokenizes `texts` (one batch for all unseen words)."""
    if getattr(self.tokenizer, "has_word_spans", False):
      spans = self.tokenizer.tokenize_with_word_spans(list(texts))
      with gc_paused():
        return [Pieces(ids, starts, ends) for ids, starts, ends in spans]
    if self.tokenizer.cuts_words_first:
      return self._by_words(texts)
    return [Pieces(ids, starts, ends) for ids, starts, ends in
            self.tokenizer.tokenize_with_offsets(list(texts))]

  def tokenize(self, text: str) -> Pieces:
    return self.tokenize_many([text])[0]

  def tokenize_each(self, texts: Sequence[str]) -> Tuple[np.ndarray, np.ndarray]:
    """The pieces `tokenize_many(texts)` gives, flattened: (ids [P] int64, owner [P] int64, the
    index in `texts` of the text each piece came from).

    For many short texts (the tokens of an NQ page). A tokenizer that cuts text into words
    first tokenizes a text as the concatenation of its words, and whitespace always ends a
    word, so the texts are joined with spaces and tokenized as one text; each piece goes back
    to the text its word starts in. Other tokenizers (plain SentencePiece, which reads across
    spaces) take the texts one by one.
    """
    texts = list(texts)
    if not texts:
      return np.zeros([0], np.int64), np.zeros([0], np.int64)
    if not (getattr(self.tokenizer, "has_word_spans", False) or self.tokenizer.cuts_words_first):
      pieces = self.tokenize_many(texts)
      lengths = np.fromiter((len(p.ids) for p in pieces), np.int64, len(pieces))
      ids = np.fromiter((i for p in pieces for i in p.ids), np.int64, int(lengths.sum()))
      return ids, np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
    joined = self.tokenize(" ".join(texts))
    # [T] the character where each text starts in the joined text (after a space per text).
    widths = np.fromiter(map(len, texts), np.int64, len(texts)) + 1
    text_starts = np.cumsum(widths) - widths
    ids = np.asarray(joined.ids, np.int64)                                    # [P]
    owner = np.searchsorted(text_starts, np.asarray(joined.starts, np.int64), side="right") - 1
    return ids, owner.astype(np.int64)
