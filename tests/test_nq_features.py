"""NQ windows checked token by token on a hand-made document."""

import numpy as np
import pytest

import nq_fixtures as nf
from etc_realformer.data import vocab
from tasks.nq import data
from tasks.nq import features as fl

# Token:    0       1     2    3    4      5      6      7    8       9       10     11   12
TOKENS = ["<HTML>", "<P>", "a", "b", "</P>", "<Ul>", "<Li>", "c", "cafe", "</Li>", "<Li>", "d",
          "</Li>", "</Ul>", "<P>", "e", "f", "g", "</P>", "</HTML>"]
#           13      14     15   16   17    18      19
# Candidates: 0 P [1, 5), 1 Ul [5, 14), 2 Li [6, 10), 3 Li [10, 13), 4 P [14, 19).
CONFIG = fl.NqFeatureConfig(long_seq_len=10, global_seq_len=6, doc_stride=4,
                            max_question_pieces=3, null_window_keep_rate=1.0)
W = nf.word_id


def example(annotations, example_id=7):
  record = nf.record(example_id, "what is a", TOKENS, annotations)
  return data.parse_record(record, with_labels=bool(annotations), repairs=[])


@pytest.fixture(name="tok")
def fixture_tok(tmp_path):
  return nf.tokenizer(tmp_path)


def test_pieces_windows_and_candidate_map(tok):
  features, layout = fl.convert_example(example([nf.annotation(TOKENS, 2, [(8, 9)])]), tok,
                                        CONFIG, with_labels=True)
  # <HTML> and </HTML> are outside every top-level candidate: dropped.
  assert layout.piece_token.tolist() == list(range(1, 19))
  assert layout.piece_html.tolist() == [fl.tag_name(TOKENS[t]) != "" for t in range(1, 19)]
  assert layout.piece_top.tolist() == [0] * 4 + [1] * 9 + [2] * 5
  assert layout.top_candidates == [0, 1, 4]
  # 7 document slots (10 - 3 question pieces), stride 4; the last window ends at the end.
  assert layout.windows == [(0, 7), (4, 11), (8, 15), (12, 18)]
  assert layout.candidate_pieces.tolist() == [[0, 3], [4, 12], [5, 8], [9, 11], [13, 17]]
  assert len(features) == 4

  q = [W("what"), W("is"), W("a")]
  f = features[0]
  assert f["token_ids"].tolist() == q + [fl.html_marker_id("<P>"), W("a"), W("b"),
                                         fl.html_marker_id("</P>"), fl.html_marker_id("<Ul>"),
                                         fl.html_marker_id("<Li>"), W("c")]
  # Global: CLS, 3 question tokens, one token per top-level candidate touching the window.
  assert f["global_token_ids"].tolist() == [vocab.CLS_ID] + [fl.QUESTION_ID] * 3 + [
      vocab.PARAGRAPH_ID] * 2
  assert f["sentence_ids"].tolist() == [1, 2, 3, 4, 4, 4, 4, 5, 5, 5]
  assert f["global_segment_ids"].tolist() == [0, 0, 0, 0, 1, 3]     # paragraph, list
  assert f["segment_ids"].tolist() == [0, 0, 0, 1, 1, 1, 1, 3, 3, 3]
  assert f["ignore_hard_g2l_mask"].tolist() == [1, 1, 1, 1, 0, 0]
  assert f["doc_mask"].tolist() == [0] * 3 + [1] * 7
  assert f["short_mask"].tolist() == [0, 0, 0, 0, 1, 1, 0, 0, 0, 1]

  last = features[3]      # pieces 12..17: "</Ul>" then the second paragraph; one padding slot
  assert last["token_ids"].tolist()[-1] == 0 and last["sentence_ids"].tolist() == [
      1, 2, 3, 4, 5, 5, 5, 5, 5, 0]
  assert last["global_token_ids"].tolist() == [vocab.CLS_ID] + [fl.QUESTION_ID] * 3 + [
      vocab.PARAGRAPH_ID] * 2


def test_labels_across_a_window_boundary(tok):
  # Long answer: the first <Li> (pieces 5..8), short answer "cafe" (piece 7).
  features, _ = fl.convert_example(example([nf.annotation(TOKENS, 2, [(8, 9)])]), tok, CONFIG,
                                   with_labels=True)
  labels = [(int(f["answer_type"]), int(f["long_start"]), int(f["long_end"]),
             int(f["short_start"]), int(f["short_end"])) for f in features]
  # Window 0 holds pieces 0..6: the <Li> crosses its end -> null. Window 1 (pieces 4..10) holds
  # it at positions 3 + (5 - 4) = 4 .. 7, "cafe" at 6. Window 2 starts at piece 8: null.
  assert labels == [(fl.NULL, -1, -1, -1, -1), (fl.SHORT, 4, 7, 6, 6),
                    (fl.NULL, -1, -1, -1, -1), (fl.NULL, -1, -1, -1, -1)]
  # The second <Li> (pieces 9..11) lies in windows 2 (8..14) only; "d" is piece 10.
  features, _ = fl.convert_example(example([nf.annotation(TOKENS, 3, [(11, 12)])]), tok, CONFIG,
                                   with_labels=True)
  assert [int(f["answer_type"]) for f in features] == [fl.NULL, fl.NULL, fl.SHORT, fl.NULL]
  assert (int(features[2]["long_start"]), int(features[2]["short_start"])) == (4, 5)
  # The last paragraph (pieces 13..17) lies whole in window 3 (12..17) only; a NO answer.
  features, _ = fl.convert_example(example([nf.annotation(TOKENS, 4, yes_no="NO")]), tok,
                                   CONFIG, with_labels=True)
  assert [int(f["answer_type"]) for f in features] == [fl.NULL, fl.NULL, fl.NULL, fl.NO]
  assert (int(features[3]["long_start"]), int(features[3]["long_end"]),
          int(features[3]["short_start"])) == (4, 8, -1)
  # A long answer without a short one; the <Ul> (9 pieces) is longer than any window: null.
  features, _ = fl.convert_example(example([nf.annotation(TOKENS, 0)]), tok, CONFIG, True)
  assert [int(f["answer_type"]) for f in features] == [fl.LONG, fl.NULL, fl.NULL, fl.NULL]
  features, _ = fl.convert_example(example([nf.annotation(TOKENS, 1)]), tok, CONFIG, True)
  assert all(int(f["answer_type"]) == fl.NULL for f in features)


def test_windows_are_cut_where_candidates_do_not_fit_in_global(tok):
  config = fl.NqFeatureConfig(long_seq_len=10, global_seq_len=5, doc_stride=4,
                              max_question_pieces=3)    # room for one candidate token
  features, layout = fl.convert_example(example([]), tok, config, with_labels=False)
  assert layout.windows == [(0, 4), (4, 11), (8, 13), (12, 13), (13, 18)]
  for (start, end), f in zip(layout.windows, features):
    assert len(set(layout.piece_top[start:end])) == 1
    assert f["global_token_ids"].tolist()[-1] == vocab.PARAGRAPH_ID
  covered = set()
  for start, end in layout.windows:
    covered.update(range(start, end))
  assert covered == set(range(18))
  assert not any(name in features[0] for name in fl.LABEL_FEATURES)


def test_without_html_tokens(tok):
  config = fl.NqFeatureConfig(long_seq_len=10, global_seq_len=6, doc_stride=4,
                              max_question_pieces=3, include_html_tokens=False)
  features, layout = fl.convert_example(example([nf.annotation(TOKENS, 2, [(8, 9)])]), tok,
                                        config, with_labels=True)
  assert layout.piece_token.tolist() == [2, 3, 7, 8, 11, 15, 16, 17]
  assert layout.candidate_pieces.tolist() == [[0, 1], [2, 4], [2, 3], [4, 4], [5, 7]]
  assert [int(f["answer_type"]) for f in features] == [fl.SHORT, fl.NULL]
  assert int(features[0]["long_start"]) == 5 and int(features[0]["short_start"]) == 6


def test_gold_label_follows_the_scorers_vote():
  A = nf.annotation
  ex = lambda anns: data.parse_record(nf.record(1, "q", TOKENS, anns), True, [])  # noqa: E731
  one = ex([A(TOKENS, 2, [(8, 9)])])
  assert fl.gold_label(one.annotations).short_answer == data.Span(8, 9, 32, 36)
  # Five annotators: one long answer is not enough (the scorer needs two).
  five_null = ex([A(TOKENS, 2, [(8, 9)])] + [A(TOKENS)] * 4)
  assert fl.gold_label(five_null.annotations).long_answer is None
  # Two long answers but one short: long only, from the first annotator with a long answer.
  long_only = ex([A(TOKENS), A(TOKENS, 2, [(8, 9)]), A(TOKENS, 2), A(TOKENS), A(TOKENS)])
  label = fl.gold_label(long_only.annotations)
  assert label.long_answer.start_token == 6 and label.short_answer is None
  # A yes and a short span both count as short answers; the first of them is taken.
  mixed = ex([A(TOKENS, 3), A(TOKENS, 4, yes_no="YES"), A(TOKENS, 2, [(8, 9)]), A(TOKENS),
              A(TOKENS)])
  label = fl.gold_label(mixed.annotations)
  assert (label.long_answer.start_token, label.yes_no) == (14, "YES")


def test_marker_ids_and_null_window_sampling():
  assert fl.html_marker_id("<P>") == 41 and fl.html_marker_id("</P>") == 71
  assert fl.html_marker_id("<Table>") == 42 and fl.html_marker_id("</Td>") == 74
  assert fl.html_marker_id("<Blink>") == fl.html_marker_id("<Marquee>") == 41 + len(
      fl.HTML_TAGS) - 1
  assert max(fl.html_marker_id(f"</{t}>") for t in fl.HTML_TAGS) < vocab.UNK_ID
  kept = [fl.window_keep(i, w, 0.3) for i in range(500) for w in range(4)]
  assert kept == [fl.window_keep(i, w, 0.3) for i in range(500) for w in range(4)]
  assert 0.25 < np.mean(kept) < 0.35
  assert all(fl.window_keep(i, 0, 1.0) for i in range(50))


@pytest.mark.parametrize("values, message", [
    (dict(doc_stride=9), "doc_stride: 9 is longer"),
    (dict(global_seq_len=4), "max_question_pieces: 3 leaves no global slot"),
    (dict(null_window_keep_rate=1.5), "null_window_keep_rate"),
    (dict(long_seq_len=0), "long_seq_len: must be a positive integer"),
])
def test_config_errors_name_the_field(values, message):
  args = dict(long_seq_len=10, global_seq_len=6, doc_stride=4, max_question_pieces=3)
  args.update(values)
  with pytest.raises(ValueError, match=message):
    fl.NqFeatureConfig(**args)
