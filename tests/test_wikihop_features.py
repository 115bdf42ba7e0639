"""WikiHop layout, links and truncation, checked token by token on a hand-made item."""

import numpy as np
import pytest

import wikihop_fixtures as wf
from etc_realformer.data import vocab
from tasks.wikihop import features as F


def _ids(*words):
  return [wf.piece_id(w) for w in words]


def test_layout_token_by_token(tmp_path):
  config = F.WikiHopFeatureConfig(long_seq_len=40, global_seq_len=16)
  f, info = F.convert_example(wf.example(), wf.tokenizer(tmp_path), config, with_labels=True)
  c, q, p, s = vocab.CANDIDATE_ID, None, vocab.PARAGRAPH_ID, vocab.SENTENCE_ID
  del q
  np.testing.assert_array_equal(f["global_token_ids"][:11], [
      c, c, c, *_ids("country", "mara", "veldt"), p, s, s, p, s])
  assert not f["global_token_ids"][11:].any()
  np.testing.assert_array_equal(f["token_ids"][:22], _ids(
      "freedonia", "new", "york", "york", "country", "mara", "veldt",
      "mara", "veldt", "lives", "in", "new", "york", ".", "she", "visited", "york", ".",
      "freedonia", "is", "far", "."))
  assert not f["token_ids"][22:].any()
  np.testing.assert_array_equal(f["sentence_ids"][:22],
                                [0, 1, 1, 2, 3, 4, 5] + [7] * 7 + [8] * 4 + [10] * 4)
  # "New York" is linked to candidate 1 (the longer match wins over "york"); "York" alone to 2.
  linked = np.full(40, -1)
  linked[[11, 12, 16, 18]] = [1, 1, 2, 0]
  np.testing.assert_array_equal(f["l2g_linked_ids"], linked)
  np.testing.assert_array_equal(f["long_paragraph_ids"][:22], [0] * 7 + [1] * 11 + [2] * 4)
  np.testing.assert_array_equal(f["global_paragraph_ids"][:11], [0] * 6 + [1, 1, 1, 2, 2])
  np.testing.assert_array_equal(f["ignore_hard_g2l_mask"][:11], [1] * 7 + [0, 0, 1, 0])
  np.testing.assert_array_equal(f["segment_ids"][:22], [0] * 4 + [1] * 3 + [3] * 15)
  np.testing.assert_array_equal(f["global_segment_ids"][:11], [0] * 3 + [1] * 3 +
                                [2, 3, 3, 2, 3])
  np.testing.assert_array_equal(f["candidate_mask"][:4], [1, 1, 1, 0])
  assert f["candidate_mask"].sum() == 3
  assert int(f["label"]) == 0
  assert info == {"dropped_sentences": 0, "dropped_documents": 0, "linked_pieces": 4,
                  "query_truncated": False}
  f, _ = F.convert_example(wf.example(answer="york"), wf.tokenizer(tmp_path), config, True)
  assert int(f["label"]) == 2
  f, _ = F.convert_example(wf.example(answer=None), wf.tokenizer(tmp_path), config, False)
  assert "label" not in f


def test_long_budget_drops_trailing_sentences_of_the_longest_document(tmp_path):
  config = F.WikiHopFeatureConfig(long_seq_len=18, global_seq_len=16)
  f, info = F.convert_example(wf.example(), wf.tokenizer(tmp_path), config, True)
  assert info["dropped_sentences"] == 1 and info["dropped_documents"] == 0
  np.testing.assert_array_equal(f["token_ids"][14:18], _ids("freedonia", "is", "far", "."))
  assert (f["global_token_ids"] == vocab.SENTENCE_ID).sum() == 2
  # A longer document loses sentences before a shorter one loses any.
  config = F.WikiHopFeatureConfig(long_seq_len=11, global_seq_len=16)
  f, info = F.convert_example(wf.example(), wf.tokenizer(tmp_path), config, True)
  assert info == {"dropped_sentences": 2, "dropped_documents": 1, "linked_pieces": 1,
                  "query_truncated": False}
  np.testing.assert_array_equal(f["token_ids"][7:11], _ids("freedonia", "is", "far", "."))


def test_global_budget_truncates_too(tmp_path):
  config = F.WikiHopFeatureConfig(long_seq_len=40, global_seq_len=10)
  f, info = F.convert_example(wf.example(), wf.tokenizer(tmp_path), config, True)
  assert info["dropped_sentences"] == 1
  assert f["global_token_ids"][9] == vocab.SENTENCE_ID


def test_candidates_are_never_dropped(tmp_path):
  config = F.WikiHopFeatureConfig(long_seq_len=40, global_seq_len=5)
  with pytest.raises(F.CandidatesDoNotFit, match="id WH_dev_0: 3 candidates .* global_seq_len"):
    F.convert_example(wf.example(), wf.tokenizer(tmp_path), config, True)
  config = F.WikiHopFeatureConfig(long_seq_len=6, global_seq_len=40)
  with pytest.raises(F.CandidatesDoNotFit, match="7 long tokens"):
    F.convert_example(wf.example(), wf.tokenizer(tmp_path), config, True)


def test_query_and_candidates_are_cut_to_their_limits(tmp_path):
  config = F.WikiHopFeatureConfig(long_seq_len=40, global_seq_len=16, max_query_pieces=2,
                                  max_candidate_pieces=1)
  f, info = F.convert_example(wf.example(), wf.tokenizer(tmp_path), config, True)
  assert info["query_truncated"]
  np.testing.assert_array_equal(f["token_ids"][:5], _ids("freedonia", "new", "york", "country",
                                                         "mara"))


@pytest.mark.parametrize("text,expected", [
    ("One. Two!  Three? four", ["One.", "Two!", "Three?", "four"]),
    ("No end", ["No end"]), ("  ", []), ("A.B. c.", ["A.B.", "c."])])
def test_split_sentences(text, expected):
  assert [text[s:e] for s, e in F.split_sentences(text)] == expected


def test_mentions_are_whole_words_case_insensitive():
  candidates = ["ann", "ann arbor", "bo"]
  pattern = F.mention_pattern(candidates)
  text = "Anna met Ann in Ann Arbor; BO and bob."
  found = [(text[s:e], c) for s, e, c in F.find_mentions(text, pattern, candidates)]
  assert found == [("Ann", 0), ("Ann Arbor", 1), ("BO", 2)]
  assert F.find_mentions("İstanbul ann", pattern, candidates) == []   # lower() moves offsets


def test_subject_matches_get_their_own_segment(tmp_path):
  config = F.WikiHopFeatureConfig(long_seq_len=40, global_seq_len=16, mark_subject_matches=True)
  f, _ = F.convert_example(wf.example(), wf.tokenizer(tmp_path), config, True)
  # "Mara Veldt" (long 7, 8) are the query subject's words; the query itself keeps segment 1.
  np.testing.assert_array_equal(f["segment_ids"][:22], [0] * 4 + [1] * 3 + [4, 4] + [3] * 13)
