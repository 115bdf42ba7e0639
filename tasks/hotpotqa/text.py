"""Texts tokenized as Google's HotpotQA converter tokenizes them, and answers found in them.

WordPiece: a text is cut into "unigrams" at the five characters " \\t\\r\\n\\u202f" only, and
every unigram is tokenized on its own (BERT's basic cut, then WordPiece), so that each piece
knows its unigram (`tokens_to_unigrams`, the official `long_tokens_to_unigrams`).
SentencePiece: the whole text is encoded at once; the text the answer is searched in is the
pieces joined back ("\\u2581" -> space, the first piece's leading one dropped), and every
character of it maps to a piece (`chars_to_tokens`).

Answers are found as Google's converter finds them: every occurrence of the answer string
(case-sensitive `str.find`, the next search starting after the end of the previous match),
mapped to pieces; with WordPiece the span of whole unigrams is then narrowed to the first
sub-span whose pieces, joined with spaces, equal the answer's own pieces (BERT's
"improve answer span").
"""

import bisect
import dataclasses
import itertools
import re
from typing import List, Sequence, Tuple

import numpy as np

from etc_realformer.data import tokenization
from etc_realformer.data.span_tokenization import OffsetTokenizer

WHITESPACE = " \t\r\n\u202f"
_UNIGRAM_SPLIT = re.compile(f"([^{WHITESPACE}]+)")   # a run of anything else, kept
_WHITESPACE_CODES = np.array([ord(c) for c in WHITESPACE], np.uint32)


@dataclasses.dataclass
class TokenizedText:
  """One title, sentence or question in pieces.

  text: the text answers are searched in (SentencePiece: the pieces joined back).
  ids / tokens [n]: the piece ids and piece strings.
  tokens_to_unigrams [n], unigrams_to_tokens [unigrams], unigram_starts [unigrams] (the
    character where each unigram begins): WordPiece only (empty with SentencePiece).
  chars_to_tokens: SentencePiece only, one entry per character the pieces account for.
  """
  text: str
  ids: List[int]
  tokens: List[str]
  tokens_to_unigrams: List[int] = dataclasses.field(default_factory=list)
  unigrams_to_tokens: List[int] = dataclasses.field(default_factory=list)
  unigram_starts: List[int] = dataclasses.field(default_factory=list)
  chars_to_tokens: List[int] = dataclasses.field(default_factory=list)


def split_unigrams(text: str) -> Tuple[List[str], List[int]]:
  """(unigrams, chars_to_unigrams): the words between WHITESPACE characters, and for every
  character the index of its unigram (a separator belongs to the unigram before it, -1 before
  the first)."""
  unigrams, starts = unigram_starts(text)
  chars_to_unigrams = [-1] * (starts[0] if starts else len(text))
  for u, (begin, end) in enumerate(zip(starts, starts[1:] + [len(text)])):
    chars_to_unigrams += [u] * (end - begin)
  return unigrams, chars_to_unigrams


def unigram_starts(text: str) -> Tuple[List[str], List[int]]:
  """(unigrams, starts): the words between WHITESPACE characters and the character where each
  begins. The unigram of character c (`split_unigrams`) is the last one starting at or before
  it: bisect_right(starts, c) - 1."""
  parts = _UNIGRAM_SPLIT.split(text)   # [separators, unigram, separators, ..., separators]
  ends = list(itertools.accumulate(map(len, parts)))
  return parts[1::2], ends[0:-1:2]


def join_sentencepieces(tokens: Sequence[str]) -> str:
  """The text of SentencePiece pieces: the first piece's leading "\\u2581" dropped, every other
  one a space."""
  tokens = list(tokens)
  if tokens and tokens[0].startswith(tokenization.SPM_WORD_START):
    tokens[0] = tokens[0][1:]
  return "".join(tokens).replace(tokenization.SPM_WORD_START, " ")


def find_all(text: str, answer: str) -> List[Tuple[int, int]]:
  """Inclusive character spans of the answer's non-overlapping occurrences ([] if empty)."""
  spans = []
  if not answer:
    return spans
  begin = text.find(answer)
  while begin != -1:
    end = begin + len(answer) - 1
    spans.append((begin, end))
    begin = text.find(answer, end + 1)
  return spans


class TextTokenizer:
  """Tokenizes texts and finds answers with a project tokenizer (WordPiece or SentencePiece)."""

  def __init__(self, tokenizer: tokenization.Tokenizer):
    self.tokenizer = tokenizer
    self.kind = tokenizer.kind
    if self.kind not in ("wordpiece", "sentencepiece"):
      raise ValueError(f"tokenizer kind {self.kind!r}: expected wordpiece or sentencepiece")
    if self.kind == "sentencepiece" and getattr(tokenizer, "split_punctuation", False):
      raise ValueError("the official HotpotQA layout encodes whole texts with SentencePiece; "
                       "a tokenizer with split_punctuation is not supported")
    self._each = OffsetTokenizer(tokenizer) if self.kind == "wordpiece" else None
    # [vocab] every id's piece string, looked up in NumPy for the ids the tokenizer gave.
    self._vocab = np.array(tokenizer.id_to_token(range(tokenizer.vocab_size)), dtype=object)

  @property
  def wordpiece(self) -> bool:
    return self.kind == "wordpiece"

  def tokens(self, ids: Sequence[int]) -> List[str]:
    return self.tokenizer.id_to_token(list(ids)) if len(ids) else []

  def tokenize(self, texts: Sequence[str]) -> List[TokenizedText]:
    """Every text tokenized (one tokenizer call for all of them)."""
    return self.tokenize_groups([texts])[0]

  def tokenize_groups(self, groups: Sequence[Sequence[str]]) -> List[List[TokenizedText]]:
    """`tokenize` of every group of texts (the texts of several examples), with one tokenizer
    call for all of them: calls into the library cost more than the pieces of one example."""
    if not self.wordpiece:
      return [self._sentencepiece(texts) for texts in groups]
    # Tokenizing every unigram on its own gives the pieces of the whole text: the separators
    # are whitespace to BERT's basic cut, and no word runs across whitespace. So each group's
    # texts are tokenized joined by spaces, and every piece goes to the unigram its word
    # starts in.
    joined = [" ".join(texts) for texts in groups]
    return [self._unigram_pieces(texts, text, pieces)
            for texts, text, pieces in zip(groups, joined, self._each.tokenize_many(joined))]

  def _unigram_pieces(self, texts: Sequence[str], joined: str, pieces) -> List[TokenizedText]:
    """The TokenizedText of each of `texts` from the pieces of `joined` (the texts joined by
    spaces)."""
    ids = np.asarray(pieces.ids, np.int64)                                     # [P]
    # [U] where every unigram starts in `joined`; [T + 1] where every text starts (then the end).
    codes = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), np.uint32)  # [chars]
    separator = np.isin(codes, _WHITESPACE_CODES)
    after_separator = np.concatenate([[True], separator[:-1]])[:len(codes)]
    unigram_starts_ = np.flatnonzero(~separator & after_separator)
    widths = np.fromiter(map(len, texts), np.int64, len(texts)) + 1
    text_starts = np.concatenate([[0], np.cumsum(widths)])
    # [P] the unigram of every piece (non-decreasing); [T + 1] every text's first unigram.
    owner = np.searchsorted(unigram_starts_, np.asarray(pieces.starts, np.int64),
                            side="right") - 1
    text_unigrams = np.searchsorted(unigram_starts_, text_starts, side="left").tolist()
    # [U + 1] the first piece of every unigram (of the next one when it has none), then P.
    firsts = np.searchsorted(owner, np.arange(len(unigram_starts_) + 1), side="left")
    all_ids = ids.tolist()
    all_tokens = self._vocab[ids].tolist()
    out = []
    for t, text in enumerate(texts):
      u0, u1 = text_unigrams[t], text_unigrams[t + 1]
      a, b = int(firsts[u0]), int(firsts[u1])   # the text's pieces
      out.append(TokenizedText(text, all_ids[a:b], all_tokens[a:b],
                               (owner[a:b] - u0).tolist(), (firsts[u0:u1] - a).tolist(),
                               (unigram_starts_[u0:u1] - text_starts[t]).tolist()))
    return out

  def _sentencepiece(self, texts):
    out = []
    for ids in self.tokenizer.tokenize(list(texts)) if texts else []:
      tokens = self.tokens(ids)
      chars_to_tokens = []
      for i, token in enumerate(tokens):
        # Google's converter takes one character off the first piece, "\u2581" or not.
        chars_to_tokens.extend([i] * (len(token) - (1 if i == 0 else 0)))
      out.append(TokenizedText(join_sentencepieces(tokens), ids, tokens,
                               chars_to_tokens=chars_to_tokens))
    return out

  def answer_spans(self, tokenized: TokenizedText, answer: str) -> List[Tuple[int, int]]:
    """Inclusive piece spans of every occurrence of `answer` in the text.

    Raises IndexError where Google's converter would fail (a SentencePiece character past its
    character map)."""
    char_spans = find_all(tokenized.text, answer)
    if not char_spans:
      return []
    if not self.wordpiece:
      return [(tokenized.chars_to_tokens[b], tokenized.chars_to_tokens[e]) for b, e in char_spans]
    wanted = " ".join(self.tokens(self.tokenizer.tokenize([answer])[0]))
    starts, num_tokens = tokenized.unigrams_to_tokens, len(tokenized.ids)
    spans = []
    for char_begin, char_end in char_spans:
      first = bisect.bisect_right(tokenized.unigram_starts, char_begin) - 1
      last = bisect.bisect_right(tokenized.unigram_starts, char_end) - 1
      begin = starts[first]
      end = starts[last + 1] - 1 if last + 1 < len(starts) else num_tokens - 1
      spans.append(_narrow(tokenized.tokens, begin, end, wanted))
    return spans


def _narrow(tokens: Sequence[str], begin: int, end: int, wanted: str) -> Tuple[int, int]:
  """The first sub-span of [begin, end] whose pieces, joined with spaces, read `wanted` (begins
  tried from the left, for each the ends from the right), else [begin, end] itself."""
  for b in range(begin, end + 1):
    for e in range(end, b - 1, -1):
      if " ".join(tokens[b:e + 1]) == wanted:
        return b, e
  return begin, end
