"""Tokenization that remembers where every word piece came from in the original text.

Question answering has to hand back spans of the ORIGINAL text (its case, accents and
punctuation), not detokenized word pieces. The text is first cut into words with their character
offsets: runs of letters/digits, and every other non-space character on its own (the same cut
BERT's basic tokenizer makes). Each word is then split into word pieces by the model's tokenizer,
and every piece records the [start, end) characters of its word. A span of pieces i..j therefore
maps back to text[start[i]:end[j]].

  tok = OffsetTokenizer(load_tokenizer(vocab_file="vocab.txt"))
  pieces = tok.tokenize("Zoë's café, 1921.")
  pieces.ids, pieces.starts, pieces.ends   # one entry per word piece

Words are tokenized once each (a cache) and in batches, so large datasets convert quickly.
"""

import dataclasses
import re
from typing import Dict, List, Sequence, Tuple

from etc_realformer.data.tokenization import Tokenizer

_WORD = re.compile(r"[^\W_]+|[^\w\s]|_", re.UNICODE)


def split_words(text: str) -> List[Tuple[int, int]]:
  """[start, end) character offsets of the words of `text` (alphanumeric runs, other symbols)."""
  return [match.span() for match in _WORD.finditer(text)]


@dataclasses.dataclass
class Pieces:
  """Word pieces of one text: ids with the [start, end) characters of the word of each piece."""
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
    """Fills the cache for the words it does not hold yet."""
    missing = sorted({w for w in words if w not in self._cache})
    if not missing:
      return
    for word, groups in zip(missing, self.tokenizer.tokenize_words(missing)):
      # The tokenizer may cut a word further (e.g. CJK characters); all pieces stay with it.
      self._cache[word] = [piece for group in groups for piece in group]

  def tokenize_many(self, texts: Sequence[str]) -> List[Pieces]:
    """Tokenizes `texts` (one batch for all unseen words)."""
    spans = [split_words(text) for text in texts]
    self._word_ids([text[s:e] for text, text_spans in zip(texts, spans) for s, e in text_spans])
    out = []
    for text, text_spans in zip(texts, spans):
      ids, starts, ends = [], [], []
      for start, end in text_spans:
        for piece in self._cache[text[start:end]]:
          ids.append(piece)
          starts.append(start)
          ends.append(end)
      out.append(Pieces(ids, starts, ends))
    return out

  def tokenize(self, text: str) -> Pieces:
    return self.tokenize_many([text])[0]
