"""HotpotQA conversion: the multi-hop layout token by token, labels, truncation, char offsets."""

import numpy as np
import pytest

import hotpot_fixtures as hf
from etc_realformer.data import vocab
from etc_realformer.data.span_tokenization import split_words
from tasks.hotpotqa import features as fl

CONFIG = fl.HotpotFeatureConfig(long_seq_len=32, global_seq_len=16, max_question_pieces=8,
                                max_title_pieces=4)


def _ids(*words):
  return [hf.piece_id(w) for w in words]


def test_layout_token_by_token(tmp_path):
  f, layout = fl.convert_example(hf.example(), hf.tokenizer(tmp_path), CONFIG, with_labels=True)
  q = _ids("who", "was", "born", "first", "?")
  s_ann0 = _ids("ann", "was", "born", "in", "1921", ".")
  s_ann1 = _ids("ann", "is", "kind", ".")
  s_zoe0 = _ids("zoe", "was", "born", "in", "1930", ".")
  pad_l, pad_g = [0] * 9, [0] * 3
  # long: question | title Ann, 2 sentences | title Zoë, 1 sentence | padding
  assert f["token_ids"].tolist() == q + _ids("ann") + s_ann0 + s_ann1 + _ids("zoe") + s_zoe0 + pad_l
  # global: CLS, question | PARAGRAPH TITLE SENTENCE SENTENCE | PARAGRAPH TITLE SENTENCE
  assert f["global_token_ids"].tolist() == (
      [vocab.CLS_ID] + q + [vocab.PARAGRAPH_ID, fl.TITLE_ID, vocab.SENTENCE_ID, vocab.SENTENCE_ID,
                            vocab.PARAGRAPH_ID, fl.TITLE_ID, vocab.SENTENCE_ID] + pad_g)
  assert f["sentence_ids"].tolist() == [1, 2, 3, 4, 5, 7] + [8] * 6 + [9] * 4 + [11] + [12] * 6 + pad_l
  assert f["long_paragraph_ids"].tolist() == [0] * 5 + [1] * 11 + [2] * 7 + pad_l
  assert f["global_paragraph_ids"].tolist() == [0] * 6 + [1] * 4 + [2] * 3 + pad_g
  assert f["segment_ids"].tolist() == [0] * 5 + [2] + [3] * 10 + [2] + [3] * 6 + pad_l
  assert f["global_segment_ids"].tolist() == [0] * 6 + [1, 2, 3, 3, 1, 2, 3] + pad_g
  assert f["ignore_hard_g2l_mask"].tolist() == [1] * 6 + [1, 0, 0, 0, 1, 0, 0] + pad_g
  # labels: "Ann" first occurs in the supporting sentence (Ann, 0) at long position 6.
  assert int(f["answer_type"]) == 0
  assert (int(f["answer_begin"]), int(f["answer_end"])) == (6, 6)
  assert np.nonzero(f["sp_labels"])[0].tolist() == [8, 12]
  assert np.nonzero(f["sp_mask"])[0].tolist() == [8, 9, 12]
  assert np.nonzero(f["span_mask"])[0].tolist() == list(range(6, 16)) + list(range(17, 23))
  # layout for decoding
  assert layout.sentences == [(0, "Ann", 0), (0, "Ann", 1), (1, "Zoë", 0)]
  assert layout.sentence_global == [8, 9, 12]
  assert layout.long_sentence.tolist() == [-1] * 6 + [0] * 6 + [1] * 4 + [-1] + [2] * 6
  # " Ann is kind." keeps its leading space: "Ann" is characters 1..4.
  assert (layout.long_start[12], layout.long_end[12]) == (1, 4)
  assert layout.dropped == []


def test_yes_no_labels_and_prediction_mode(tmp_path):
  tok = hf.tokenizer(tmp_path)
  f, _ = fl.convert_example(hf.example(answer="no"), tok, CONFIG, with_labels=True)
  assert (int(f["answer_type"]), int(f["answer_begin"]), int(f["answer_end"])) == (2, -1, -1)
  f, _ = fl.convert_example(hf.example(answer=None, supporting_facts=None), tok, CONFIG,
                            with_labels=False)
  assert not set(fl.LABEL_FEATURES) & set(f)


def test_truncation_drops_trailing_sentences_of_the_longest_paragraph(tmp_path):
  # 23 long tokens needed; Ann's paragraph (11) is the longest: its last sentence (4) goes.
  config = fl.HotpotFeatureConfig(long_seq_len=20, global_seq_len=16, max_question_pieces=8)
  f, layout = fl.convert_example(hf.example(), hf.tokenizer(tmp_path), config, with_labels=True)
  assert layout.dropped == [("Ann", 1)]
  assert layout.sentences == [(0, "Ann", 0), (1, "Zoë", 0)]
  assert int((f["token_ids"] > 0).sum()) == 19
  assert np.nonzero(f["sp_labels"])[0].tolist() == [8, 11]


def test_answer_in_a_dropped_sentence_cannot_be_labelled(tmp_path):
  ex = hf.example(answer="kind", supporting_facts=[("Ann", 1), ("Zoë", 0)])
  config = fl.HotpotFeatureConfig(long_seq_len=20, global_seq_len=16, max_question_pieces=8)
  with pytest.raises(fl.LabelError, match="answer truncated"):
    fl.convert_example(ex, hf.tokenizer(tmp_path), config, with_labels=True)


def test_global_budget_truncates_too(tmp_path):
  config = fl.HotpotFeatureConfig(long_seq_len=64, global_seq_len=12, max_question_pieces=4)
  _, layout = fl.convert_example(hf.example(), hf.tokenizer(tmp_path), config, with_labels=False)
  # 1 + 4 question + (2 + 2) + (2 + 1) = 12 fits; the 5th question piece is cut.
  assert layout.question_truncated and layout.dropped == []


@pytest.mark.parametrize("text,first,last,expected", [
    ("Zoë's café (Paris), 1921.", 3, 6, "café (Paris)"),
    ("Zoë's café (Paris), 1921.", 0, 2, "Zoë's"),
    ("  Zoë  was born in 1930.", 0, 0, "Zoë"),
    ("Ann was born in 1921.", 4, 5, "1921."),
])
def test_pieces_map_back_to_the_original_text(tmp_path, text, first, last, expected):
  pieces = hf.tokenizer(tmp_path).tokenize(text)
  assert pieces.text_span(text, first, last) == expected


def test_unknown_words_keep_their_characters(tmp_path):
  text = "Ann met Ølaf-Ünal."
  pieces = hf.tokenizer(tmp_path).tokenize(text)
  words = [text[s:e] for s, e in split_words(text)]
  assert words == ["Ann", "met", "Ølaf", "-", "Ünal", "."]
  assert [text[s:e] for s, e in zip(pieces.starts, pieces.ends)] == words
  assert pieces.ids[1] == vocab.UNK_ID


def test_config_is_validated():
  with pytest.raises(ValueError, match="max_question_pieces"):
    fl.HotpotFeatureConfig(long_seq_len=64, global_seq_len=8, max_question_pieces=8)
  with pytest.raises(ValueError, match="long_seq_len"):
    fl.HotpotFeatureConfig(long_seq_len=0)
