"""Packing, whole-word MLM and CPC hiding on hand-made documents: exact counts and positions."""

import numpy as np
import pytest

from etc_realformer.data import pretraining_examples as pe
from etc_realformer.data import vocab

MASK, SENT, CPC = vocab.MASK_ID, vocab.SENTENCE_ID, vocab.CPC_MASK_ID


def _doc(*sentence_lengths, start=200):
  """A document whose sentences have the given word lengths (in pieces), distinct ids."""
  doc, next_id = [], start
  for lengths in sentence_lengths:
    sentence = []
    for n in lengths:
      sentence.append(list(range(next_id, next_id + n)))
      next_id += n
    doc.append(sentence)
  return doc


def test_packing_layout_breakpoints_and_sentence_ids():
  config = pe.PretrainingDataConfig(long_seq_len=12, global_seq_len=4, max_predictions_per_seq=4,
                                    masked_lm_prob=0.0, cpc_prob=0.0, max_cpc_per_seq=1,
                                    cpc_sentence_len=4)
  docs = [_doc([1, 2], [2]), _doc([3], [1, 1], start=300), _doc([5, 4], start=400)]
  stats = pe.ExampleStats()
  rows = list(pe.create_examples(docs, config, vocab_size=1000, stats=stats))
  # Docs 1 (5 pieces, 2 sentences) and 2 (5 pieces, 2 sentences) share row 0; doc 3 (9) row 1.
  assert len(rows) == 2
  r0 = rows[0]
  np.testing.assert_array_equal(r0["token_ids"],
                                [200, 201, 202, 203, 204, 300, 301, 302, 303, 304, 0, 0])
  np.testing.assert_array_equal(r0["sentence_ids"], [0, 0, 0, 1, 1, 2, 2, 2, 3, 3, 0, 0])
  np.testing.assert_array_equal(r0["long_breakpoints"], [0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0])
  np.testing.assert_array_equal(r0["global_token_ids"], [SENT] * 4)
  np.testing.assert_array_equal(r0["global_breakpoints"], [0, 1, 0, 1])
  np.testing.assert_array_equal(rows[1]["global_token_ids"], [SENT, 0, 0, 0])
  np.testing.assert_array_equal(rows[1]["long_breakpoints"][:10], [0] * 8 + [1, 0])
  assert stats.examples == 2 and stats.documents == 3 and stats.sentences == 5
  assert stats.long_tokens == 19 and stats.masked_lm == 0 and stats.cpc_hidden == 0


def test_long_document_is_split_and_long_sentence_truncated():
  config = pe.PretrainingDataConfig(long_seq_len=6, global_seq_len=8, max_predictions_per_seq=2,
                                    masked_lm_prob=0.0, cpc_prob=0.0, max_cpc_per_seq=1,
                                    cpc_sentence_len=2, pack_documents=False)
  stats = pe.ExampleStats()
  rows = list(pe.create_examples([_doc([3], [3], [2, 2, 2, 2])], config, 1000, stats=stats))
  assert len(rows) == 2
  np.testing.assert_array_equal(rows[0]["token_ids"], [200, 201, 202, 203, 204, 205])
  # The 8-piece sentence is cut to 6 pieces (whole words of 2).
  np.testing.assert_array_equal(rows[1]["token_ids"], [206, 207, 208, 209, 210, 211])
  assert stats.truncated_sentences == 1 and stats.split_documents == 1


def test_cpc_hides_whole_sentences_and_keeps_the_positive():
  config = pe.PretrainingDataConfig(long_seq_len=40, global_seq_len=10, max_predictions_per_seq=8,
                                    masked_lm_prob=0.0, cpc_prob=0.2, max_cpc_per_seq=3,
                                    cpc_sentence_len=3)
  # 10 sentences in one document: round(0.2 * 10) = 2 hidden.
  doc = _doc(*([[2, 1]] * 10))
  row = next(pe.create_examples([doc], config, 1000, seed=5))
  hidden = np.flatnonzero(row["global_token_ids"] == CPC)
  assert len(hidden) == 2
  np.testing.assert_array_equal(row["cpc_global_positions"], list(hidden) + [0])
  np.testing.assert_array_equal(row["cpc_weights"], [1, 1, 0])
  positives = row["cpc_sentence_token_ids"].reshape(3, 3)
  for slot, g in enumerate(hidden):
    pieces = np.flatnonzero(row["sentence_ids"][:30] == g)
    assert np.all(row["token_ids"][pieces] == MASK)
    np.testing.assert_array_equal(positives[slot], 200 + pieces)  # the original ids
  np.testing.assert_array_equal(positives[2], [0, 0, 0])
  # Every other sentence is untouched and keeps its SENTENCE token.
  shown = np.isin(row["sentence_ids"][:30], hidden, invert=True)
  np.testing.assert_array_equal(row["token_ids"][:30][shown], (200 + np.arange(30))[shown])
  assert np.sum(row["global_token_ids"] == SENT) == 8


def test_cpc_needs_a_second_sentence_of_the_same_document():
  config = pe.PretrainingDataConfig(long_seq_len=20, global_seq_len=4, max_predictions_per_seq=2,
                                    masked_lm_prob=0.0, cpc_prob=1.0, max_cpc_per_seq=4,
                                    cpc_sentence_len=2)
  docs = [_doc([1]), _doc([1], [1], start=300), _doc([1], start=400)]
  row = next(pe.create_examples(docs, config, 1000))
  # Only the two sentences of the middle document are eligible (cpc_prob 1 hides both).
  np.testing.assert_array_equal(row["global_token_ids"], [SENT, CPC, CPC, SENT])


def test_whole_word_mlm_counts_positions_and_labels():
  config = pe.PretrainingDataConfig(long_seq_len=64, global_seq_len=4, max_predictions_per_seq=20,
                                    masked_lm_prob=0.15, cpc_prob=0.0, max_cpc_per_seq=1,
                                    cpc_sentence_len=2)
  # 36 pieces in words of 1, 2 and 3 pieces: round(0.15 * 36) = 5 pieces are predicted.
  doc = _doc([1, 2, 3, 1, 2, 3, 1, 2], [3, 1, 2, 3, 1, 2, 3, 1, 2, 3])
  original = np.concatenate([np.concatenate([np.array(w) for w in s]) for s in doc])
  for seed in range(20):
    row = next(pe.create_examples([doc], config, 1000, seed=seed))
    weights = row["masked_lm_weights"]
    n = int(weights.sum())
    assert n == 5, seed
    positions = row["masked_lm_positions"][:n]
    assert np.all(np.diff(positions) > 0)                       # ascending, no repeats
    np.testing.assert_array_equal(row["masked_lm_ids"][:n], original[positions])
    np.testing.assert_array_equal(weights[n:], 0)
    # Whole words: a word is either fully predicted or not at all.
    starts = np.cumsum([0] + [len(w) for s in doc for w in s])
    chosen = set(positions.tolist())
    for a, b in zip(starts[:-1], starts[1:]):
      inside = [p in chosen for p in range(a, b)]
      assert all(inside) or not any(inside), (seed, a, b)
    # Positions not predicted keep their original id.
    untouched = np.setdiff1d(np.arange(36), positions)
    np.testing.assert_array_equal(row["token_ids"][untouched], original[untouched])


def test_mlm_replacement_shares_are_80_10_10():
  config = pe.PretrainingDataConfig(long_seq_len=512, global_seq_len=4, max_predictions_per_seq=80,
                                    masked_lm_prob=0.15, cpc_prob=0.0, max_cpc_per_seq=1,
                                    cpc_sentence_len=2)
  doc = _doc([1] * 500, start=1000)
  counts = np.zeros(3)
  for row in pe.create_examples([doc] * 40, config, vocab_size=5000, seed=1):
    n = int(row["masked_lm_weights"].sum())
    got = row["token_ids"][row["masked_lm_positions"][:n]]
    want = row["masked_lm_ids"][:n]
    counts += [np.sum(got == MASK), np.sum((got != MASK) & (got != want)),
               np.sum(got == want)]
    assert np.all((got == MASK) | (got >= MASK + 1))          # never another special id
  shares = counts / counts.sum()                               # 40 * 75 = 3000 draws
  np.testing.assert_allclose(shares, [0.8, 0.1, 0.1], atol=0.025)


def test_deterministic_per_seed_and_config_errors():
  config = pe.PretrainingDataConfig(long_seq_len=32, global_seq_len=4, max_predictions_per_seq=6,
                                    max_cpc_per_seq=1, cpc_sentence_len=4)
  docs = [_doc([1, 2], [2, 1], [3])]
  a = next(pe.create_examples(docs, config, 1000, seed=3))
  b = next(pe.create_examples(docs, config, 1000, seed=3))
  for name in a:
    np.testing.assert_array_equal(a[name], b[name])
  with pytest.raises(ValueError, match="masked_lm_prob"):
    pe.PretrainingDataConfig(masked_lm_prob=1.5).validate()
  with pytest.raises(ValueError, match="unknown data key"):
    pe.PretrainingDataConfig.from_dict({"long_len": 3})
  with pytest.raises(ValueError, match="vocab_size"):
    next(pe.create_examples(docs, config, vocab_size=50))
