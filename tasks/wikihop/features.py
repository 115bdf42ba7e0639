"""WikiHop example -> ETC features (docs/task_layouts.md, "WikiHop").

Layout of one example (C candidates, Q query pieces, D kept documents):

  global: cand_1 .. cand_C | q_1 .. q_Q | per document d: [PARAGRAPH] [SENTENCE] x n_d | padding
  long:   candidate pieces | query pieces | per document d: its sentences' pieces   | padding

  global_token_ids: CANDIDATE (4) per candidate, the query's own piece ids, PARAGRAPH (5),
    SENTENCE (1); the official converter keeps these ids with the SentencePiece model too.
  sentence_ids (owner of each long token): a candidate's pieces -> its candidate token; query
    piece i -> q_i; a sentence's pieces -> its SENTENCE token.
  long/global_paragraph_ids: 0 for candidates and query (the shared context), d = 1.. for the
    d-th kept document: long tokens attend only inside their context, and g2g pairs across
    contexts get the "unordered" relative id, so the document order cannot matter.
  ignore_hard_g2l_mask: candidate and query tokens see every long token, a PARAGRAPH token the
    pieces of its document; SENTENCE tokens see only their own pieces (hard g2l).
  l2g_linked_ids: every piece of a candidate mention in a document (whole words,
    case-insensitive, longest candidate first) is linked to that candidate's global token;
    -1 elsewhere.
  segment ids: candidate 0, query 1, paragraph 2, sentence 3 (long and global alike); with
    `mark_subject_matches`, document pieces of words that are also words of the query's subject
    get segment 4 (an exact-match feature: it tells a tiny model trained from scratch where the
    subject is mentioned; a pretrained model can learn without it).
  candidate_mask [G]: 1 on the candidate tokens (the head's softmax runs over these only).
  label: the answer's candidate index (= its global position).

Truncation: the query is cut to `max_query_pieces` and each candidate to `max_candidate_pieces`.
Candidates are never dropped: if they (with the query) do not fit the global or long length,
`CandidatesDoNotFit` names the example. Then, while the documents do not fit, the last sentence
of the document with the most pieces is dropped (a document left with no sentence disappears).
"""

import dataclasses
import heapq
import itertools
import re
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from etc_realformer.data import vocab
from etc_realformer.data.span_tokenization import OffsetTokenizer, Pieces, split_words
from tasks.common import feature_config
from tasks.wikihop.data import WikiHopExample

SEGMENT_CANDIDATE, SEGMENT_QUERY, SEGMENT_PARAGRAPH, SEGMENT_SENTENCE = 0, 1, 2, 3
SEGMENT_SUBJECT_MATCH = 4
MODEL_FEATURES = ("token_ids", "segment_ids", "sentence_ids", "long_paragraph_ids",
                  "l2g_linked_ids", "global_token_ids", "global_segment_ids",
                  "global_paragraph_ids", "ignore_hard_g2l_mask")
LABEL_FEATURES = ("label",)
# A sentence ends at . ! or ? followed by whitespace (the cut: the whitespace).
_SENTENCE_END = re.compile(r"[.!?]\s+")
_LETTER_OR_DIGIT = re.compile(r"[^\W_]")


@dataclasses.dataclass
class WikiHopFeatureConfig(feature_config.FeatureConfig):
  """Lengths of the converted features (long_seq_len 4096).

  layout "package" (this module) reads max_query_pieces, max_candidate_pieces and
  mark_subject_matches; layout "official" (tasks.wikihop.official: Google's features) reads
  max_num_sentences (generate_tf_examples.py's flag); its sentences are nltk.sent_tokenize's
  (tasks.wikihop.official_sentences).
  """
  global_seq_len: int = 430
  max_query_pieces: int = 32
  max_candidate_pieces: int = 16
  mark_subject_matches: bool = False
  max_num_sentences: int = 200

  layouts = (feature_config.PACKAGE_LAYOUT, feature_config.OFFICIAL_LAYOUT)


class CandidatesDoNotFit(ValueError):
  """An example whose candidates (with the query) exceed the global or long length."""


def feature_lengths(config: WikiHopFeatureConfig) -> Dict[str, int]:
  """Length of every stored feature (0 = a scalar)."""
  return feature_config.feature_lengths(config, ("label", "candidate_mask") + MODEL_FEATURES,
                                        ("candidate_mask",), ("label",))


def split_sentences(text: str) -> List[Tuple[int, int]]:
  """[start, end) characters of the sentences of a document (cut after . ! ? and spaces).

  Every sentence before a cut ends with its . ! or ?, so none is blank; only the text after
  the last cut can be.
  """
  spans, start = [], 0
  for match in _SENTENCE_END.finditer(text):
    spans.append((start, match.start() + 1))   # the match begins with the . ! or ?
    start = match.end()
  if text[start:].strip():
    spans.append((start, len(text.rstrip())))
  return spans


def mention_pattern(candidates: List[str]):
  """A regex finding mentions of the (lower-case) candidates not followed by a letter or
  digit, longest first; `find_mentions` keeps those not preceded by one (whole words)."""
  words = sorted({c for c in candidates if c}, key=lambda c: (-len(c), c))
  if not words:
    return None
  # The alternatives come first, so that the regex engine looks only at the positions where
  # one of their first characters is (a look-behind first would make it try every position).
  return re.compile(r"(?:" + "|".join(re.escape(c) for c in words) + r")(?![^\W_])")


def find_mentions(text: str, pattern, candidates: List[str]) -> List[Tuple[int, int, int]]:
  """(start, end, candidate index) of the candidate mentions in `text` (case-insensitive):
  at the first position not preceded by a letter or digit where a candidate matches, the
  longest such candidate, then on after it."""
  lowered = text.lower()
  if pattern is None or len(lowered) != len(text):   # a case change moved characters: no links
    return []
  index = {c: i for i, c in enumerate(candidates)}
  out, position, search, word_char = [], 0, pattern.search, _LETTER_OR_DIGIT.match
  while True:
    match = search(lowered, position)
    if match is None:
      return out
    start = match.start()
    if start and word_char(lowered, start - 1):   # inside a word: try the next position
      position = start + 1
      continue
    out.append((start, match.end(), index[match.group()]))
    position = match.end()


def document_mentions(texts: Sequence[str], candidates: List[str]
                      ) -> List[List[Tuple[int, int, int]]]:
  """`find_mentions` of each text of an example, without a regex built for its candidates
  (compiling one costs more than the search: about 0.2 ms an example).

  The texts are lower-cased and joined by line breaks (no candidate holds one; else a text at
  a time), each candidate's occurrences are found with str.find, and of those that no letter
  or digit touches, the longest at each position is kept. Taking them from the first on, each
  after the end of the one before, gives the regex's matches: at the first position where a
  candidate matches as a whole word, the longest one. A text whose lower-casing moves
  characters gets none, as in `find_mentions`.
  """
  index = {c: i for i, c in enumerate(candidates)}   # a repeated candidate: its last index
  words = [c for c in index if c]
  if any("\n" in c for c in words):
    pattern = mention_pattern(candidates)
    return [find_mentions(text, pattern, candidates) for text in texts]
  out = [[] for _ in texts]
  if not words:
    return out
  lowered = [text.lower() for text in texts]
  joined = "\n".join(lowered)
  word_char = _LETTER_OR_DIGIT.match
  longest = {}   # start -> (end, candidate) of the longest whole-word occurrence there
  for word in words:
    size, index_of_word = len(word), index[word]
    start = joined.find(word)
    while start >= 0:
      end = start + size
      if ((start == 0 or not word_char(joined, start - 1)) and not word_char(joined, end)
          and longest.get(start, (-1,))[0] < end):
        longest[start] = (end, index_of_word)
      start = joined.find(word, start + 1)
  widths = [len(text) + 1 for text in lowered]
  text_at = list(itertools.accumulate(widths, initial=0))   # [texts + 1] where each begins
  moved = [len(a) != len(b) for a, b in zip(lowered, texts)]
  position, d = 0, 0
  for start in sorted(longest):
    if start < position:
      continue
    end, candidate = longest[start]
    position = end
    while start >= text_at[d + 1]:
      d += 1
    if not moved[d]:
      out[d].append((start - text_at[d], end - text_at[d], candidate))
  return out


@dataclasses.dataclass
class _Document:
  index: int                    # position in the example's supports
  pieces: Pieces                # of the document text, sentence after sentence
  first: int                    # the piece where the first sentence begins
  lengths: List[int]            # pieces of each non-empty sentence, in order
  links: np.ndarray             # [pieces of `pieces`] linked candidate or -1
  keep: int                     # sentences kept (a prefix)

  def kept_pieces(self) -> slice:
    """The pieces of the kept sentences (indices into `pieces` and `links`)."""
    return slice(self.first, self.first + sum(self.lengths[:self.keep]))


def _truncate(fixed_long: int, fixed_global: int, documents: List[_Document],
              config: WikiHopFeatureConfig) -> None:
  """Drops trailing sentences of the longest documents until everything fits."""
  # [documents] pieces per document for its kept sentences, updated as sentences are dropped.
  lengths = [d.lengths for d in documents]
  kept_len = [sum(n[:d.keep]) for n, d in zip(lengths, documents)]
  long_used = fixed_long + sum(n for n, d in zip(kept_len, documents) if d.keep)
  global_used = fixed_global + sum(1 + d.keep for d in documents if d.keep)
  # The documents with sentences, the longest (then the last) first: (-pieces, -index, k).
  longest_first = [(-kept_len[k], -d.index, k) for k, d in enumerate(documents) if d.keep]
  heapq.heapify(longest_first)
  while long_used > config.long_seq_len or global_used > config.global_seq_len:
    k = heapq.heappop(longest_first)[2]
    longest = documents[k]
    longest.keep -= 1
    dropped = lengths[k][longest.keep]
    kept_len[k] -= dropped
    long_used -= dropped
    global_used -= 1 if longest.keep else 2   # a document without sentences loses its token
    if longest.keep:
      heapq.heappush(longest_first, (-kept_len[k], -longest.index, k))


def _mention_links(starts: np.ndarray, ends: np.ndarray, mentions: np.ndarray) -> np.ndarray:
  """[pieces] the candidate of the first mention (in text order) holding each piece, or -1.

  starts / ends [pieces]: the pieces' characters; mentions [M, 3]: (start, end, candidate), in
  text order and not overlapping, so both their starts and their ends ascend: the mentions
  starting at or before a piece are a prefix, those ending at or after it a suffix, and the
  first mention holding it is the suffix's first when that lies in the prefix.
  """
  if not len(mentions):
    return np.full(len(starts), -1, np.int64)
  before = np.searchsorted(mentions[:, 0], starts, side="right")   # [pieces] prefix length
  first = np.searchsorted(mentions[:, 1], ends, side="left")       # [pieces] suffix start
  holds = first < before
  return np.where(holds, mentions[np.minimum(first, len(mentions) - 1), 2], -1)


def _example_links(example: WikiHopExample, document_pieces) -> List[np.ndarray]:
  """Per document, [its pieces] the candidate linked to each piece or -1 (`_mention_links`).

  All documents go through `_mention_links` at once, as if the texts were one, each placed
  one character after the end of the one before: a piece then lies beyond the end of every
  mention of an earlier document and before the start of every mention of a later one, so
  each piece meets only its own document's mentions.
  """
  texts = example.supports
  found = document_mentions(texts, example.candidates)
  widths = np.array([len(text) + 1 for text in texts], np.int64)
  text_at = np.cumsum(widths) - widths                # [D] where each text is placed
  mentions = np.asarray(list(itertools.chain.from_iterable(found)), np.int64).reshape([-1, 3])
  mentions[:, :2] += np.repeat(text_at, [len(m) for m in found])[:, None]   # [M, 3]
  counts = [len(own) for own, _ in document_pieces]   # [D] pieces per document
  piece_at = np.repeat(text_at, counts)               # [pieces of all documents]
  starts = np.fromiter(itertools.chain.from_iterable(own.starts for own, _ in document_pieces),
                       np.int64, len(piece_at)) + piece_at
  ends = np.fromiter(itertools.chain.from_iterable(own.ends for own, _ in document_pieces),
                     np.int64, len(piece_at)) + piece_at
  links = _mention_links(starts, ends, mentions)
  bounds = list(itertools.accumulate(counts, initial=0))
  return [links[a:b] for a, b in zip(bounds, bounds[1:])]


# The tokenized texts of one example: the pieces of its query and of each candidate, and per
# document the pieces of its sentences (offsets into the document text) with the piece index
# where each sentence begins (`OffsetTokenizer.tokenize_in_spans`).
Tokenized = Tuple[List[Pieces], List[Tuple[Pieces, List[int]]]]


def tokenize_examples(examples: Sequence[WikiHopExample], tokenizer: OffsetTokenizer
                      ) -> List[Tokenized]:
  """The texts of every example tokenized (two tokenizer calls for all of them)."""
  heads = [[example.query_text()] + example.candidates for example in examples]
  head_pieces = iter(tokenizer.tokenize_many([text for head in heads for text in head]))
  documents = iter(tokenizer.tokenize_in_spans(
      [text for example in examples for text in example.supports],
      [split_sentences(text) for example in examples for text in example.supports]))
  return [([next(head_pieces) for _ in head], [next(documents) for _ in example.supports])
          for head, example in zip(heads, examples)]


def convert_example(example: WikiHopExample, tokenizer: OffsetTokenizer,
                    config: WikiHopFeatureConfig, with_labels: bool,
                    tokenized: Optional[Tokenized] = None
                    ) -> Tuple[Dict[str, np.ndarray], dict]:
  """One example -> (features, info). info: dropped sentences/documents, linked mentions.
  `tokenized`: the example's texts when already tokenized (`tokenize_examples`).

  Raises CandidatesDoNotFit when the candidates cannot all be placed.
  """
  candidates = example.candidates
  pieces, document_pieces = (tokenized if tokenized is not None
                             else tokenize_examples([example], tokenizer)[0])
  q_ids = pieces[0].ids[:config.max_query_pieces]
  unk = tokenizer.tokenizer.unk_id
  cand_ids = [p.ids[:config.max_candidate_pieces] or [unk] for p in pieces[1:1 + len(candidates)]]
  fixed_long = len(q_ids) + sum(len(c) for c in cand_ids)
  fixed_global = len(q_ids) + len(candidates)
  if fixed_global > config.global_seq_len or fixed_long > config.long_seq_len:
    raise CandidatesDoNotFit(
        f"id {example.example_id}: {len(candidates)} candidates and {len(q_ids)} query pieces "
        f"need {fixed_global} global and {fixed_long} long tokens, but global_seq_len is "
        f"{config.global_seq_len} and long_seq_len {config.long_seq_len}; candidates are never "
        "dropped, so raise global_seq_len (or max_candidate_pieces/max_query_pieces)")

  links = _example_links(example, document_pieces)
  documents = []
  for d, (own, bounds) in enumerate(document_pieces):
    lengths = [b - a for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    documents.append(_Document(d, own, bounds[0] if bounds else 0, lengths, links[d],
                               len(lengths)))
  _truncate(fixed_long, fixed_global, documents, config)

  f = {name: np.zeros([n], np.int64) if n else np.int64(0)
       for name, n in feature_lengths(config).items()}
  kept = [d for d in documents if d.keep]
  info = {"dropped_sentences": sum(len(d.lengths) - d.keep for d in documents),
          "dropped_documents": len(documents) - len(kept), "linked_pieces": 0,
          "query_truncated": len(pieces[0]) > config.max_query_pieces}
  num_cands, num_query = len(cand_ids), len(q_ids)
  head = num_cands + num_query            # global tokens of the candidates and the query
  cand_long = fixed_long - num_query      # long tokens of the candidates
  # The kept documents' global tokens follow: per document its PARAGRAPH token, then one
  # SENTENCE token per kept sentence.
  sizes = np.array([1 + d.keep for d in kept], np.int64)              # [K]
  paragraph_at = head + np.cumsum(sizes) - sizes                      # [K] global positions
  g = head + int(sizes.sum())
  is_sentence = np.ones(g, bool)
  is_sentence[:head] = False
  is_sentence[paragraph_at] = False
  sentence_at = np.flatnonzero(is_sentence)                           # [S] global positions
  sentence_lengths = [n for d in kept for n in d.lengths[:d.keep]]   # [S] pieces
  pos = fixed_long + sum(sentence_lengths)
  assert pos <= config.long_seq_len and g <= config.global_seq_len, (pos, g)

  f["candidate_mask"][:num_cands] = 1
  f["global_token_ids"][:num_cands] = vocab.CANDIDATE_ID
  f["global_token_ids"][num_cands:head] = q_ids
  f["global_token_ids"][head:g] = vocab.SENTENCE_ID
  f["global_token_ids"][paragraph_at] = vocab.PARAGRAPH_ID
  f["global_paragraph_ids"][head:g] = np.repeat(np.arange(1, len(kept) + 1), sizes)
  f["global_segment_ids"][:num_cands] = SEGMENT_CANDIDATE
  f["global_segment_ids"][num_cands:head] = SEGMENT_QUERY
  f["global_segment_ids"][head:g] = SEGMENT_SENTENCE
  f["global_segment_ids"][paragraph_at] = SEGMENT_PARAGRAPH
  f["ignore_hard_g2l_mask"][:head] = 1
  f["ignore_hard_g2l_mask"][paragraph_at] = 1

  spans = [d.kept_pieces() for d in kept]
  f["token_ids"][:pos] = np.fromiter(itertools.chain(
      itertools.chain.from_iterable(cand_ids), q_ids,
      itertools.chain.from_iterable(d.pieces.ids[span] for d, span in zip(kept, spans))),
      np.int64, pos)
  # A candidate's pieces belong to its token, query piece i to q_i, a sentence's pieces to its
  # SENTENCE token.
  f["sentence_ids"][:cand_long] = np.repeat(np.arange(num_cands), [len(c) for c in cand_ids])
  f["sentence_ids"][cand_long:fixed_long] = np.arange(num_cands, head)
  f["sentence_ids"][fixed_long:pos] = np.repeat(sentence_at, sentence_lengths)
  f["long_paragraph_ids"][fixed_long:pos] = np.repeat(
      np.arange(1, len(kept) + 1), [span.stop - span.start for span in spans])
  f["segment_ids"][:cand_long] = SEGMENT_CANDIDATE
  f["segment_ids"][cand_long:fixed_long] = SEGMENT_QUERY
  f["segment_ids"][fixed_long:pos] = SEGMENT_SENTENCE
  if config.mark_subject_matches:
    subject_words = {example.subject[s:e].lower() for s, e in split_words(example.subject)}
    segments = []
    for d, span in zip(kept, spans):
      text = example.supports[d.index]
      segments.extend(SEGMENT_SUBJECT_MATCH if text[a:b].lower() in subject_words
                      else SEGMENT_SENTENCE
                      for a, b in zip(d.pieces.starts[span], d.pieces.ends[span]))
    f["segment_ids"][fixed_long:pos] = segments
  f["l2g_linked_ids"][:] = -1
  if kept:
    # The documents' pieces follow the candidates' and the query's (fixed_long of them).
    links = np.concatenate([d.links[span] for d, span in zip(kept, spans)])
    f["l2g_linked_ids"][fixed_long:pos] = links
    info["linked_pieces"] = int(np.count_nonzero(links >= 0))
  if with_labels:
    f["label"] = np.int64(example.label)
  else:
    f.pop("label")
  return f, info
