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
import re
from typing import Dict, List, Sequence, Tuple

import numpy as np

from etc_realformer.data.tokenization import Tokenizer, basic_word_spans, gc_paused

MAX_CACHED_WORDS = 1 << 20
# Whitespace that is not a control character (BERT's basic cut drops the control characters
# Python counts as whitespace, so they do not end a word there): what may lie between the spans
# of `OffsetTokenizer.tokenize_in_spans` when it tokenizes a whole text.
_SEPARATOR = re.compile(r"[^\S\x0b\x0c\x1c-\x1f\x85]*")


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

  def tokenize_in_spans(self, texts: Sequence[str], spans: Sequence[Sequence[Tuple[int, int]]]
                        ) -> List[Tuple[Pieces, List[int]]]:
    """For every text, (pieces, bounds): the pieces of its [start, end) character spans one
    after the other, with offsets into the text, and the [S + 1] piece index where each span's
    pieces begin (then the total). Span k gets what `tokenize_many` gives `text[start:end]`,
    its offsets moved by `start`.

    For texts cut into many spans with whitespace between them (WikiHop's sentences): when the
    tokenizer cuts text into words first, the spans are in order and every character outside
    them is whitespace (not a control character), at least one between two spans, the whole
    text is tokenized and its pieces are handed to the spans they start in; otherwise each span
    is tokenized on its own.
    """
    texts = list(texts)
    whole = [self._splits_at_whitespace(text, text_spans)
             for text, text_spans in zip(texts, spans)]
    tokenized = iter(self.tokenize_many([text for text, w in zip(texts, whole) if w]))
    alone = iter(self.tokenize_many([text[a:b] for text, text_spans, w in zip(texts, spans, whole)
                                     if not w for a, b in text_spans]))
    out = []
    for text_spans, w in zip(spans, whole):
      if w:
        pieces = next(tokenized)
        span_starts = np.asarray([a for a, _ in text_spans], np.int64)   # [S]
        # A piece belongs to the last span starting at or before it (pieces are in text order).
        owner = np.searchsorted(span_starts, np.asarray(pieces.starts, np.int64), side="right")
        bounds = np.searchsorted(owner, np.arange(1, len(text_spans) + 2), side="left")
        out.append((pieces, bounds.tolist()))
        continue
      ids, starts, ends, bounds = [], [], [], [0]
      for a, _ in text_spans:   # (the spans first: zip then takes no piece list beyond them)
        p = next(alone)
        ids.extend(p.ids)
        starts.extend(x + a for x in p.starts)
        ends.extend(x + a for x in p.ends)
        bounds.append(len(ids))
      out.append((Pieces(ids, starts, ends), bounds))
    return out

  def _splits_at_whitespace(self, text: str, spans: Sequence[Tuple[int, int]]) -> bool:
    """Whether `text` tokenizes as its `spans` do one by one (`tokenize_in_spans`)."""
    if not (getattr(self.tokenizer, "has_word_spans", False) or self.tokenizer.cuts_words_first):
      return False
    position = 0
    for k, (start, end) in enumerate(spans):
      # Spans one after the other, with some whitespace between two (a word never spans it).
      if (start < position + (k > 0) or end < start
          or not _SEPARATOR.fullmatch(text, position, start)):
        return False
      position = end
    return bool(_SEPARATOR.fullmatch(text, position))

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
