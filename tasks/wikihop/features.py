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
import re
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from etc_realformer.data import vocab
from etc_realformer.data.span_tokenization import OffsetTokenizer, Pieces, split_words
from tasks.common import feature_config
from tasks.wikihop.data import WikiHopExample
from tasks.wikihop.official_sentences import MODES as SPLITTER_MODES

SEGMENT_CANDIDATE, SEGMENT_QUERY, SEGMENT_PARAGRAPH, SEGMENT_SENTENCE = 0, 1, 2, 3
SEGMENT_SUBJECT_MATCH = 4
MODEL_FEATURES = ("token_ids", "segment_ids", "sentence_ids", "long_paragraph_ids",
                  "l2g_linked_ids", "global_token_ids", "global_segment_ids",
                  "global_paragraph_ids", "ignore_hard_g2l_mask")
LABEL_FEATURES = ("label",)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclasses.dataclass
class WikiHopFeatureConfig(feature_config.FeatureConfig):
  """Lengths of the converted features (long_seq_len 4096).

  layout "package" (this module) reads max_query_pieces, max_candidate_pieces and
  mark_subject_matches; layout "official" (tasks.wikihop.official: Google's features) reads
  max_num_sentences (generate_tf_examples.py's flag) and sentence_splitter ("auto", "nltk"
  or "builtin", tasks.wikihop.official_sentences).
  """
  global_seq_len: int = 430
  max_query_pieces: int = 32
  max_candidate_pieces: int = 16
  mark_subject_matches: bool = False
  max_num_sentences: int = 200
  sentence_splitter: str = "auto"

  layouts = (feature_config.PACKAGE_LAYOUT, feature_config.OFFICIAL_LAYOUT)

  def check(self) -> None:
    if self.sentence_splitter not in SPLITTER_MODES:
      raise ValueError(f"sentence_splitter: {self.sentence_splitter!r} is not one of "
                       f"{', '.join(SPLITTER_MODES)}")


class CandidatesDoNotFit(ValueError):
  """An example whose candidates (with the query) exceed the global or long length."""


def feature_lengths(config: WikiHopFeatureConfig) -> Dict[str, int]:
  """Length of every stored feature (0 = a scalar)."""
  return feature_config.feature_lengths(config, ("label", "candidate_mask") + MODEL_FEATURES,
                                        ("candidate_mask",), ("label",))


def split_sentences(text: str) -> List[Tuple[int, int]]:
  """[start, end) characters of the sentences of a document (cut after . ! ? and spaces)."""
  spans, start = [], 0
  for match in _SENTENCE_END.finditer(text):
    if text[start:match.start()].strip():
      spans.append((start, match.start()))
    start = match.end()
  if text[start:].strip():
    spans.append((start, len(text.rstrip())))
  return spans


def mention_pattern(candidates: List[str]):
  """A regex finding whole-word mentions of the (lower-case) candidates, longest first."""
  words = sorted({c for c in candidates if c}, key=lambda c: (-len(c), c))
  if not words:
    return None
  return re.compile(r"(?<![^\W_])(?:" + "|".join(re.escape(c) for c in words) + r")(?![^\W_])")


def find_mentions(text: str, pattern, candidates: List[str]) -> List[Tuple[int, int, int]]:
  """(start, end, candidate index) of the candidate mentions in `text` (case-insensitive)."""
  lowered = text.lower()
  if pattern is None or len(lowered) != len(text):   # a case change moved characters: no links
    return []
  index = {c: i for i, c in enumerate(candidates)}
  return [(m.start(), m.end(), index[m.group()]) for m in pattern.finditer(lowered)]


@dataclasses.dataclass
class _Document:
  index: int                    # position in the example's supports
  sentences: List[Pieces]       # offsets relative to the document text (starts/ends arrays)
  links: List[np.ndarray]       # per sentence, [pieces]: linked candidate or -1
  keep: int                     # sentences kept (a prefix)

  def long_len(self) -> int:
    return sum(len(s) for s in self.sentences[:self.keep])


def _truncate(fixed_long: int, fixed_global: int, documents: List[_Document],
              config: WikiHopFeatureConfig) -> None:
  """Drops trailing sentences of the longest documents until everything fits."""
  # [documents] pieces per document for its kept sentences, updated as sentences are dropped.
  lengths = [[len(s) for s in d.sentences] for d in documents]
  kept_len = [sum(n[:d.keep]) for n, d in zip(lengths, documents)]
  long_used = fixed_long + sum(n for n, d in zip(kept_len, documents) if d.keep)
  global_used = fixed_global + sum(1 + d.keep for d in documents if d.keep)
  while long_used > config.long_seq_len or global_used > config.global_seq_len:
    k = max((k for k, d in enumerate(documents) if d.keep),
            key=lambda k: (kept_len[k], documents[k].index))
    longest = documents[k]
    longest.keep -= 1
    dropped = lengths[k][longest.keep]
    kept_len[k] -= dropped
    long_used -= dropped
    global_used -= 1 if longest.keep else 2   # a document without sentences loses its token


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

  pattern = mention_pattern(candidates)
  subject_words = {text[s:e].lower() for text in [example.subject]
                   for s, e in split_words(example.subject)}
  documents = []
  for d, (text, (own, bounds)) in enumerate(zip(example.supports, document_pieces)):
    mentions = np.asarray(find_mentions(text, pattern, candidates), np.int64).reshape([-1, 3])
    # [document pieces] characters in the document text, sentence after sentence
    starts, ends = np.asarray(own.starts, np.int64), np.asarray(own.ends, np.int64)
    all_links = _mention_links(starts, ends, mentions)
    sentences, links = [], []
    for a, b in zip(bounds[:-1], bounds[1:]):
      if b > a:
        sentences.append(Pieces(own.ids[a:b], starts[a:b], ends[a:b]))
        links.append(all_links[a:b])
    documents.append(_Document(d, sentences, links, len(sentences)))
  _truncate(fixed_long, fixed_global, documents, config)

  f = {name: np.zeros([n], np.int64) if n else np.int64(0)
       for name, n in feature_lengths(config).items()}
  f["l2g_linked_ids"][:] = -1
  # The long and the global tokens in order, one list per feature (written into `f` at the end).
  long = {"token_ids": [], "sentence_ids": [], "long_paragraph_ids": [], "segment_ids": []}
  glob = {"global_token_ids": [], "global_paragraph_ids": [], "global_segment_ids": [],
          "ignore_hard_g2l_mask": []}

  def put_long(ids, owner, paragraph, segment):
    n = len(ids)
    long["token_ids"].extend(ids)
    long["sentence_ids"].extend([owner] * n)
    long["long_paragraph_ids"].extend([paragraph] * n)
    long["segment_ids"].extend([segment] * n if isinstance(segment, int) else segment)

  def put_global(token_id, paragraph, segment, exempt):
    for name, value in zip(glob, (token_id, paragraph, segment, exempt)):
      glob[name].append(value)
    return len(glob["global_token_ids"]) - 1

  for ids in cand_ids:
    token = put_global(vocab.CANDIDATE_ID, 0, SEGMENT_CANDIDATE, 1)
    f["candidate_mask"][token] = 1
    put_long(ids, token, 0, SEGMENT_CANDIDATE)
  for piece in q_ids:
    put_long([piece], put_global(piece, 0, SEGMENT_QUERY, 1), 0, SEGMENT_QUERY)
  paragraph = 0
  info = {"dropped_sentences": 0, "dropped_documents": 0, "linked_pieces": 0,
          "query_truncated": len(pieces[0]) > config.max_query_pieces}
  document_links = []   # [pieces] per kept sentence: the links of the long tokens after the query
  for document in documents:
    info["dropped_sentences"] += len(document.sentences) - document.keep
    if not document.keep:
      info["dropped_documents"] += 1
      continue
    paragraph += 1
    put_global(vocab.PARAGRAPH_ID, paragraph, SEGMENT_PARAGRAPH, 1)
    for sentence, links in zip(document.sentences[:document.keep],
                               document.links[:document.keep]):
      token = put_global(vocab.SENTENCE_ID, paragraph, SEGMENT_SENTENCE, 0)
      segments = SEGMENT_SENTENCE
      if config.mark_subject_matches:
        text = example.supports[document.index]
        segments = [SEGMENT_SUBJECT_MATCH if text[a:b].lower() in subject_words
                    else SEGMENT_SENTENCE for a, b in zip(sentence.starts, sentence.ends)]
      put_long(sentence.ids, token, paragraph, segments)
      document_links.append(links)
  pos, g = len(long["token_ids"]), len(glob["global_token_ids"])
  assert pos <= config.long_seq_len and g <= config.global_seq_len, (pos, g)
  for name, values in list(long.items()) + list(glob.items()):
    f[name][:len(values)] = values
  if document_links:
    # The documents' pieces follow the candidates' and the query's (fixed_long of them).
    links = np.concatenate(document_links)
    f["l2g_linked_ids"][fixed_long:pos] = links
    info["linked_pieces"] = int(np.count_nonzero(links >= 0))
  if with_labels:
    f["label"] = np.int64(example.label)
  else:
    f.pop("label")
  return f, info
