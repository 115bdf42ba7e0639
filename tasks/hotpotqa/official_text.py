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

import dataclasses
from typing import List, Sequence, Tuple

from etc_realformer.data import tokenization

WHITESPACE = " \t\r\n\u202f"


@dataclasses.dataclass
class TokenizedText:
  """One title, sentence or question in pieces.

  text: the text answers are searched in (SentencePiece: the pieces joined back).
  ids / tokens [n]: the piece ids and piece strings.
  tokens_to_unigrams [n], unigrams_to_tokens [unigrams], chars_to_unigrams [len(text)]:
    WordPiece only (empty with SentencePiece).
  chars_to_tokens: SentencePiece only, one entry per character the pieces account for.
  """
  text: str
  ids: List[int]
  tokens: List[str]
  tokens_to_unigrams: List[int] = dataclasses.field(default_factory=list)
  unigrams_to_tokens: List[int] = dataclasses.field(default_factory=list)
  chars_to_unigrams: List[int] = dataclasses.field(default_factory=list)
  chars_to_tokens: List[int] = dataclasses.field(default_factory=list)


def split_unigrams(text: str) -> Tuple[List[str], List[int]]:
  """(unigrams, chars_to_unigrams): the words between WHITESPACE characters, and for every
  character the index of its unigram (a separator belongs to the unigram before it, -1 before
  the first)."""
  unigrams, chars_to_unigrams, after_separator = [], [], True
  for char in text:
    if char in WHITESPACE:
      after_separator = True
    elif after_separator:
      unigrams.append(char)
      after_separator = False
    else:
      unigrams[-1] += char
    chars_to_unigrams.append(len(unigrams) - 1)
  return unigrams, chars_to_unigrams


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

  @property
  def wordpiece(self) -> bool:
    return self.kind == "wordpiece"

  def tokens(self, ids: Sequence[int]) -> List[str]:
    return self.tokenizer.id_to_token(list(ids)) if len(ids) else []

  def tokenize(self, texts: Sequence[str]) -> List[TokenizedText]:
    """Every text tokenized (one tokenizer call for all of them)."""
    return self._wordpiece(texts) if self.wordpiece else self._sentencepiece(texts)

  def _wordpiece(self, texts):
    split = [split_unigrams(text) for text in texts]
    everything = [u for unigrams, _ in split for u in unigrams]
    pieces = self.tokenizer.tokenize(everything) if everything else []   # one list per unigram
    out, k = [], 0
    for text, (unigrams, chars_to_unigrams) in zip(texts, split):
      ids, tokens_to_unigrams, unigrams_to_tokens = [], [], []
      for u in range(len(unigrams)):
        unigrams_to_tokens.append(len(ids))
        ids.extend(pieces[k])
        tokens_to_unigrams.extend([u] * len(pieces[k]))
        k += 1
      out.append(TokenizedText(text, ids, self.tokens(ids), tokens_to_unigrams,
                               unigrams_to_tokens, chars_to_unigrams))
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
      first, last = tokenized.chars_to_unigrams[char_begin], tokenized.chars_to_unigrams[char_end]
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
