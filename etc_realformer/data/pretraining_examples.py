"""Pretraining examples from tokenised documents: packing, whole-word MLM and CPC hiding.

Pure NumPy so every rule can be checked on hand-made input. A document arrives as sentences of
words of word-piece ids (`Tokenizer.tokenize_words`). One example row holds:

  token_ids          [L]  word pieces after masking; 0 = padding
  global_token_ids   [G]  one SENTENCE (or CPC_MASK for a hidden sentence) per sentence
  sentence_ids       [L]  the global token owning each long token (hard g2l)
  long_breakpoints   [L]  1 on the last long token of each packed document
  global_breakpoints [G]  1 on the last global token of each packed document
  masked_lm_positions / masked_lm_ids / masked_lm_weights  [P]  MLM targets (P = max predictions)
  cpc_global_positions / cpc_weights  [C]   the global slots of hidden sentences
  cpc_sentence_token_ids  [C * S]  each hidden sentence's original pieces (S = cpc_sentence_len),
                                    encoded on their own as the CPC positive

Rules (docs/model_inputs.md, "Pretraining examples"):
- Packing: sentences are taken in order; a document that does not fit in the room left is
  split at sentence boundaries into further rows; with `pack_documents` several documents
  share a row, separated by breakpoints (so no attention crosses them). A sentence longer than
  L is truncated to L pieces (counted in the stats).
- CPC: in each row, round(cpc_prob * n) of the n eligible sentences (at least one when there
  are two or more; at most max_cpc_per_seq) are hidden: all their pieces become [MASK] and
  their global token becomes CPC_MASK. A sentence is eligible when its document has at least
  two sentences in the row (otherwise there is no context to predict it from).
- MLM: over the words outside hidden sentences, whole words are chosen in random order until
  round(masked_lm_prob * pieces) pieces are covered (at least one, at most P); a word that would
  overshoot is passed over. Each chosen piece becomes [MASK] 80% of the time, a random
  non-special piece 10%, itself 10% (decided per word, as whole-word masking does).
"""

import dataclasses
from typing import Dict, Iterable, List, Sequence, Tuple

import numpy as np

from etc_realformer.data import vocab
from etc_realformer.dataclass_utils import check_known_keys

Word = Sequence[int]
Sentence = Sequence[Word]


@dataclasses.dataclass(frozen=True)
class PretrainingDataConfig:
  """Shape and masking settings of pretraining examples (names are the converter's flags)."""
  long_seq_len: int = 4096
  global_seq_len: int = 256
  max_predictions_per_seq: int = 640
  masked_lm_prob: float = 0.15
  cpc_prob: float = 0.1
  max_cpc_per_seq: int = 32
  cpc_sentence_len: int = 32
  pack_documents: bool = True

  @classmethod
  def from_dict(cls, values, source="data config"):
    check_known_keys(cls, values, source, "data")
    return cls(**values).validate()

  def validate(self):
    for name in ("long_seq_len", "global_seq_len", "max_predictions_per_seq",
                 "max_cpc_per_seq", "cpc_sentence_len"):
      if int(getattr(self, name)) < 1:
        raise ValueError(f"{name}: must be >= 1, got {getattr(self, name)}")
    for name in ("masked_lm_prob", "cpc_prob"):
      value = getattr(self, name)
      if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name}: must be in [0, 1], got {value}")
    return self


def feature_lengths(config: PretrainingDataConfig) -> Dict[str, int]:
  """Length of every stored feature (all int64 but masked_lm_weights / cpc_weights)."""
  long_len, global_len = config.long_seq_len, config.global_seq_len
  return {
      "token_ids": long_len, "sentence_ids": long_len, "long_breakpoints": long_len,
      "global_token_ids": global_len, "global_breakpoints": global_len,
      "masked_lm_positions": config.max_predictions_per_seq,
      "masked_lm_ids": config.max_predictions_per_seq,
      "masked_lm_weights": config.max_predictions_per_seq,
      "cpc_global_positions": config.max_cpc_per_seq,
      "cpc_weights": config.max_cpc_per_seq,
      "cpc_sentence_token_ids": config.max_cpc_per_seq * config.cpc_sentence_len,
  }


FLOAT_FEATURES = ("masked_lm_weights", "cpc_weights")


class ExampleStats:
  """Counts what the builder did, for the converter's report."""

  def __init__(self):
    self.examples = 0
    self.documents = 0
    self.sentences = 0
    self.truncated_sentences = 0
    self.split_documents = 0
    self.empty_sentences = 0
    self.long_tokens = 0
    self.masked_lm = 0
    self.cpc_hidden = 0

  def to_dict(self):
    return dict(vars(self))


def pack_rows(documents: Iterable[Sequence[Sentence]], config: PretrainingDataConfig,
              stats: ExampleStats) -> Iterable[List[Tuple[int, Sentence]]]:
  """Groups sentences into rows: yields lists of (document index within the row, sentence).

  A row holds at most long_seq_len pieces and global_seq_len sentences.
  """
  long_room, global_room = config.long_seq_len, config.global_seq_len
  row, used_long, doc_in_row = [], 0, -1
  for document in documents:
    sentences = []
    for sentence in document:
      words = [list(w) for w in sentence if len(w)]
      if not words:
        stats.empty_sentences += 1
        continue
      pieces = sum(len(w) for w in words)
      if pieces > long_room:
        stats.truncated_sentences += 1
        words = _truncate_words(words, long_room)
      sentences.append(words)
    if not sentences:
      continue
    stats.documents += 1
    stats.sentences += len(sentences)
    pieces_needed = sum(_num_pieces(s) for s in sentences)
    fits = (used_long + pieces_needed <= long_room and len(row) + len(sentences) <= global_room)
    if row and not (config.pack_documents and fits):
      yield row
      row, used_long, doc_in_row = [], 0, -1
    doc_in_row += 1
    split = False
    for words in sentences:
      size = _num_pieces(words)
      if used_long + size > long_room or len(row) + 1 > global_room:
        yield row
        split = True
        row, used_long, doc_in_row = [], 0, 0
      row.append((doc_in_row, words))
      used_long += size
    stats.split_documents += int(split)
  if row:
    yield row


def _num_pieces(words) -> int:
  return sum(len(w) for w in words)


def _truncate_words(words, limit):
  out, used = [], 0
  for w in words:
    if used + len(w) > limit:
      if used < limit:
        out.append(w[:limit - used])
      break
    out.append(w)
    used += len(w)
  return out


def choose_cpc_sentences(doc_of_sentence: Sequence[int], config: PretrainingDataConfig,
                         rng: np.random.Generator) -> List[int]:
  """Indices (sorted) of the sentences of a row to hide for CPC."""
  counts = np.bincount(np.asarray(doc_of_sentence, np.int64)) if len(doc_of_sentence) else []
  eligible = [i for i, d in enumerate(doc_of_sentence) if counts[d] >= 2]
  if not eligible or config.cpc_prob <= 0:
    return []
  count = int(round(config.cpc_prob * len(eligible)))
  count = min(max(count, 1), config.max_cpc_per_seq, len(eligible))
  return sorted(int(i) for i in rng.choice(eligible, size=count, replace=False))


def choose_mlm_words(word_spans: Sequence[Tuple[int, int]], num_pieces: int,
                     config: PretrainingDataConfig, rng: np.random.Generator) -> List[int]:
  """Indices of candidate words (spans [start, end) of long positions) to mask, whole words."""
  if not word_spans or config.masked_lm_prob <= 0:
    return []
  target = int(round(config.masked_lm_prob * num_pieces))
  target = min(max(target, 1), config.max_predictions_per_seq)
  chosen, covered = [], 0
  for index in rng.permutation(len(word_spans)):
    start, end = word_spans[index]
    if covered + (end - start) > target:
      continue
    chosen.append(int(index))
    covered += end - start
    if covered == target:
      break
  return sorted(chosen)


def build_example(row: Sequence[Tuple[int, Sentence]], config: PretrainingDataConfig,
                  vocab_size: int, rng: np.random.Generator, stats: ExampleStats,
                  mask_id: int = vocab.MASK_ID,
                  min_random_id: int = vocab.MASK_ID + 1) -> Dict[str, np.ndarray]:
  """One padded example (dict of 1-D arrays, see the module docstring) from a packed row.

  mask_id is the tokenizer's [MASK]; random replacements are drawn from
  [min_random_id, vocab_size) so they are never special tokens.
  """
  if vocab_size <= min_random_id:
    raise ValueError(f"vocab_size: must exceed the {min_random_id} reserved ids, "
                     f"got {vocab_size}")
  lengths = feature_lengths(config)
  out = {name: np.zeros([size], np.float32 if name in FLOAT_FEATURES else np.int64)
         for name, size in lengths.items()}
  docs = [d for d, _ in row]
  hidden = set(choose_cpc_sentences(docs, config, rng))

  # Lay out the long and global streams.
  token_ids = out["token_ids"]
  pos, word_spans, sentence_spans = 0, [], []
  for g, (doc, words) in enumerate(row):
    out["global_token_ids"][g] = vocab.CPC_MASK_ID if g in hidden else vocab.SENTENCE_ID
    start = pos
    for w in words:
      token_ids[pos:pos + len(w)] = w
      if g not in hidden:
        word_spans.append((pos, pos + len(w)))
      pos += len(w)
    sentence_spans.append((start, pos))
    out["sentence_ids"][start:pos] = g
    last_of_doc = g + 1 == len(row) or row[g + 1][0] != doc
    if last_of_doc:
      out["long_breakpoints"][pos - 1] = 1
      out["global_breakpoints"][g] = 1
  num_long = pos
  original = token_ids.copy()

  # CPC: hide whole sentences; keep their original pieces as the positive.
  sent_len = config.cpc_sentence_len
  cpc_tokens = out["cpc_sentence_token_ids"].reshape(config.max_cpc_per_seq, sent_len)
  for slot, g in enumerate(sorted(hidden)):
    start, end = sentence_spans[g]
    pieces = original[start:end][:sent_len]
    cpc_tokens[slot, :len(pieces)] = pieces
    out["cpc_global_positions"][slot] = g
    out["cpc_weights"][slot] = 1.0
    token_ids[start:end] = mask_id

  # MLM: whole words outside hidden sentences.
  candidate_pieces = sum(e - s for s, e in word_spans)
  chosen = choose_mlm_words(word_spans, candidate_pieces, config, rng)
  slot = 0
  for index in chosen:
    start, end = word_spans[index]
    draw = rng.random()
    for p in range(start, end):
      if draw < 0.8:
        token_ids[p] = mask_id
      elif draw < 0.9:
        token_ids[p] = rng.integers(min_random_id, vocab_size)
      out["masked_lm_positions"][slot] = p
      out["masked_lm_ids"][slot] = original[p]
      out["masked_lm_weights"][slot] = 1.0
      slot += 1

  stats.examples += 1
  stats.long_tokens += num_long
  stats.masked_lm += slot
  stats.cpc_hidden += len(hidden)
  return out


def create_examples(documents: Iterable[Sequence[Sentence]], config: PretrainingDataConfig,
                    vocab_size: int, seed: int = 0, stats: ExampleStats = None,
                    mask_id: int = vocab.MASK_ID,
                    min_random_id: int = vocab.MASK_ID + 1) -> Iterable[Dict[str, np.ndarray]]:
  """Packs tokenised documents into rows and yields masked examples (deterministic per seed)."""
  config.validate()
  stats = stats if stats is not None else ExampleStats()
  rng = np.random.default_rng(seed)
  for row in pack_rows(documents, config, stats):
    yield build_example(row, config, vocab_size, rng, stats, mask_id, min_random_id)
