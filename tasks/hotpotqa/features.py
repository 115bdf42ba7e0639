"""HotpotQA example -> ETC features, multi-hop layout (docs/task_layouts.md, "HotpotQA"), and back.

Layout of one example (Q question pieces, paragraphs in file order):

  global: [CLS] q_1 .. q_Q | per paragraph p: [PARAGRAPH] [TITLE] [SENTENCE] x n_p | padding
  long:   q_1 .. q_Q       | per paragraph p: title pieces, sentence 1 pieces, ... | padding

  global ids of CLS / PARAGRAPH / SENTENCE: 101 / 5 / 1 with WordPiece, 40 / 43 / 1 with the
    ETC-large SentencePiece model, as the official converter (`global_ids_for`); TITLE 6.

  sentence_ids (owner of each long token): question piece i -> global q_i; title pieces -> the
    paragraph's TITLE token; sentence pieces -> their SENTENCE token.
  long/global_paragraph_ids: 0 for the question context (CLS and question), p = 1.. for the
    p-th paragraph. Long tokens attend only inside their own context and g2g pairs across
    contexts get the "unordered" relative id, so paragraph order cannot matter.
  ignore_hard_g2l_mask: CLS and question tokens see every long token, a PARAGRAPH token the
    long tokens of its paragraph; TITLE and SENTENCE tokens see only their own pieces (hard g2l).
  segment ids: question 0, paragraph token 1, title 2, sentence 3 (long and global alike).

Labels: answer_type (0 span, 1 yes, 2 no); sp_labels [G] (1 on supporting SENTENCE tokens) with
sp_mask [G] (1 on every SENTENCE token); answer_begin/answer_end, the long positions of the first
occurrence of the answer inside a supporting sentence (-1 for yes/no); span_mask [L] (1 on
sentence pieces: where spans may be predicted).

Truncation: while the pieces do not fit `long_seq_len` / the tokens `global_seq_len`, the last
sentence of the paragraph with the most pieces is dropped (whole sentences, longest paragraphs
first); a paragraph left with no sentence is dropped whole if it still does not fit. What was
dropped is recorded. `ExampleLayout` keeps, for every long token, the sentence and characters it
came from, so a predicted span comes back as the original text.
"""

import dataclasses
from typing import Dict, List, Optional, Tuple

import numpy as np

from etc_realformer.data import vocab
from etc_realformer.data.span_tokenization import OffsetTokenizer, Pieces
from tasks.common import feature_config
from tasks.hotpotqa.data import HotpotExample

TITLE_ID = 6    # [unused6]: the global token of a paragraph title
SEGMENT_QUESTION, SEGMENT_PARAGRAPH, SEGMENT_TITLE, SEGMENT_SENTENCE = 0, 1, 2, 3
MODEL_FEATURES = ("token_ids", "segment_ids", "sentence_ids", "long_paragraph_ids",
                  "global_token_ids", "global_segment_ids", "global_paragraph_ids",
                  "ignore_hard_g2l_mask")
LABEL_FEATURES = ("answer_type", "answer_begin", "answer_end", "sp_labels", "sp_mask",
                  "span_mask")


@dataclasses.dataclass(frozen=True)
class GlobalTokenIds:
  """The ids a converter puts in `global_token_ids` for each kind of global token."""
  cls: int
  sentence: int
  cpc_mask: int
  question: int
  candidate: int
  paragraph: int


# BERT uncased: [CLS] and [unused0..4].
WORDPIECE_GLOBAL_IDS = GlobalTokenIds(cls=vocab.CLS_ID, sentence=vocab.SENTENCE_ID,
                                      cpc_mask=vocab.CPC_MASK_ID, question=vocab.QUESTION_ID,
                                      candidate=vocab.CANDIDATE_ID,
                                      paragraph=vocab.PARAGRAPH_ID)
# The official HotpotQA converter with the ETC-large SentencePiece model: "<unused_39..42>" for
# CLS, question, candidate and paragraph; sentence and CPC keep the pretraining ids 1 and 2.
SENTENCEPIECE_GLOBAL_IDS = GlobalTokenIds(cls=40, sentence=vocab.SENTENCE_ID,
                                          cpc_mask=vocab.CPC_MASK_ID, question=41, candidate=42,
                                          paragraph=43)


def global_ids_for(tokenizer_kind: str) -> GlobalTokenIds:
  """HotpotQA's global ids for a "wordpiece" or "sentencepiece" tokenizer (`Tokenizer.kind`)."""
  tables = {"wordpiece": WORDPIECE_GLOBAL_IDS, "sentencepiece": SENTENCEPIECE_GLOBAL_IDS}
  if tokenizer_kind not in tables:
    raise ValueError(f"tokenizer kind {tokenizer_kind!r}: expected one of {sorted(tables)}")
  return tables[tokenizer_kind]


# The package layout's caps of question and title pieces when its config says 0 (or nothing).
PACKAGE_QUESTION_PIECES, PACKAGE_TITLE_PIECES = 64, 32


@dataclasses.dataclass
class HotpotFeatureConfig(feature_config.FeatureConfig):
  """Lengths of the converted features (long_seq_len 4096, global_seq_len 256).

  max_question_pieces / max_title_pieces: the question keeps at most that many pieces, each
  title at most that many. 0 (the default) is each layout's own default: no cap in the official
  layout (Google's), 64 / 32 in the package layout (`check` writes those values in).

  Options of the official layout (not Google's; false / 0 is Google's behaviour, and the package
  layout, which always behaves so, refuses them):
    truncate_longest_paragraphs: when the paragraphs do not fit, the trailing sentences of the
      longest paragraphs are left out first (then whole paragraphs from the end), as the package
      layout truncates, instead of leaving out every item that does not fit when it comes.
    span_loss_in_sentences: the begin / end softmax losses run over the title and sentence
      pieces only (official_model.py) instead of over all long positions.
    min_supporting_facts: decoding predicts at least this many supporting facts, the most
      probable sentences when fewer pass the threshold (official_decode.py).
  """
  max_question_pieces: int = 0
  max_title_pieces: int = 0
  truncate_longest_paragraphs: bool = False
  span_loss_in_sentences: bool = False
  min_supporting_facts: int = 0

  layouts = (feature_config.PACKAGE_LAYOUT, feature_config.OFFICIAL_LAYOUT)
  zero_allowed = ("max_question_pieces", "max_title_pieces", "min_supporting_facts")

  def check(self):
    if self.layout != feature_config.PACKAGE_LAYOUT:
      return
    for name, behaviour in (
        ("truncate_longest_paragraphs", "always truncates the longest paragraphs first"),
        ("span_loss_in_sentences", "always masks its span loss to sentence pieces"),
        ("min_supporting_facts", "always predicts at least one supporting fact")):
      if getattr(self, name):
        raise ValueError(f"{name}: an option of the official layout (the package layout "
                         f"{behaviour})")
    # 0 = the package layout's own caps, written in so that its converter reads them as before.
    self.max_question_pieces = self.max_question_pieces or PACKAGE_QUESTION_PIECES
    self.max_title_pieces = self.max_title_pieces or PACKAGE_TITLE_PIECES
    self.check_question_room("max_question_pieces", "paragraphs", "paragraphs")


def feature_lengths(config: HotpotFeatureConfig) -> Dict[str, int]:
  """Length of every stored feature (0 = a scalar)."""
  return feature_config.feature_lengths(config, MODEL_FEATURES + LABEL_FEATURES,
                                        ("sp_labels", "sp_mask"),
                                        ("answer_type", "answer_begin", "answer_end"))


@dataclasses.dataclass
class ExampleLayout:
  """Where everything of one example went, for decoding.

  sentences: (context index, title, sentence index) of each SENTENCE token kept, in order.
  sentence_global: global position of each of those SENTENCE tokens.
  long_sentence [num_long]: index into `sentences` of the sentence owning each long token, -1
    for question and title pieces.
  long_start / long_end [num_long]: [start, end) characters of each long token's word in its
    sentence's text.
  dropped: (title, sentence index) of sentences dropped by truncation.
  """
  qas_id: str
  sentences: List[Tuple[int, str, int]]
  sentence_global: List[int]
  long_sentence: np.ndarray
  long_start: np.ndarray
  long_end: np.ndarray
  dropped: List[Tuple[str, int]]
  question_truncated: bool = False


@dataclasses.dataclass
class _Paragraph:
  index: int                # position in the example's context
  title: str
  title_pieces: Pieces
  sentences: List[Pieces]
  keep: int                 # sentences kept (a prefix)
  kept: bool = True

  def long_len(self) -> int:
    return len(self.title_pieces) + sum(len(s) for s in self.sentences[:self.keep])

  def global_len(self) -> int:
    return 2 + self.keep


def _truncate(question_len: int, paragraphs: List[_Paragraph], config: HotpotFeatureConfig):
  """Drops trailing sentences of the longest paragraphs (then whole paragraphs) until it fits."""
  def sizes():
    live = [p for p in paragraphs if p.kept]
    return (question_len + sum(p.long_len() for p in live),
            1 + question_len + sum(p.global_len() for p in live))

  long_used, global_used = sizes()
  while long_used > config.long_seq_len or global_used > config.global_seq_len:
    with_sentences = [p for p in paragraphs if p.kept and p.keep > 0]
    if with_sentences:
      longest = max(with_sentences, key=lambda p: (p.long_len(), p.index))
      longest.keep -= 1
    else:
      last = max((p for p in paragraphs if p.kept), key=lambda p: p.index)
      last.kept = False
    long_used, global_used = sizes()


def _answer_span(example: HotpotExample, paragraphs: List[_Paragraph],
                 sentence_long_start: Dict[Tuple[int, int], int]) -> Optional[Tuple[int, int]]:
  """Long positions of the first occurrence of the answer in a kept supporting sentence."""
  answer = example.answer.strip()
  by_title = {p.title: p for p in paragraphs}
  facts = sorted({(by_title[t].index, s) for t, s in example.supporting_facts if t in by_title})
  for p_index, s_index in facts:
    if (p_index, s_index) not in sentence_long_start:
      continue   # dropped by truncation
    paragraph = paragraphs[p_index]
    text = example.context[p_index][1][s_index]
    pieces = paragraph.sentences[s_index]
    position = text.find(answer)
    if position < 0 and len(text.lower()) == len(text):
      position = text.lower().find(answer.lower())
    if position < 0:
      continue
    end = position + len(answer)
    inside = [i for i in range(len(pieces)) if pieces.ends[i] > position and pieces.starts[i] < end]
    if inside:
      offset = sentence_long_start[(p_index, s_index)]
      return offset + inside[0], offset + inside[-1]
  return None


class LabelError(ValueError):
  """A training example that cannot be labelled after conversion (e.g. answer truncated)."""

  def __init__(self, reason: str, detail: str):
    super().__init__(f"{reason}: {detail}")
    self.reason = reason


def convert_example(example: HotpotExample, tokenizer: OffsetTokenizer,
                    config: HotpotFeatureConfig, with_labels: bool
                    ) -> Tuple[Dict[str, np.ndarray], ExampleLayout]:
  """One example -> (features incl. labels when with_labels, layout). LabelError if unlabelable."""
  texts = [example.question] + [t for t, _ in example.context]
  for _, sentences in example.context:
    texts.extend(sentences)
  pieces = tokenizer.tokenize_many(texts)
  question = pieces[0]
  question_truncated = len(question) > config.max_question_pieces
  q_ids = question.ids[:config.max_question_pieces]
  cursor = 1 + len(example.context)
  paragraphs = []
  for p, (title, sentences) in enumerate(example.context):
    title_pieces = pieces[1 + p]
    title_pieces = Pieces(title_pieces.ids[:config.max_title_pieces],
                          title_pieces.starts[:config.max_title_pieces],
                          title_pieces.ends[:config.max_title_pieces])
    sentence_pieces = pieces[cursor:cursor + len(sentences)]
    cursor += len(sentences)
    paragraphs.append(_Paragraph(p, title, title_pieces, sentence_pieces, len(sentences)))
  _truncate(len(q_ids), paragraphs, config)

  long_len, global_len = config.long_seq_len, config.global_seq_len
  f = {name: np.zeros([n], np.int64) if n else np.int64(0)
       for name, n in feature_lengths(config).items()}
  num_q = len(q_ids)
  global_ids = global_ids_for(tokenizer.tokenizer.kind)   # official ids per vocabulary
  f["global_token_ids"][0] = global_ids.cls
  f["global_token_ids"][1:1 + num_q] = q_ids
  f["ignore_hard_g2l_mask"][:1 + num_q] = 1
  f["token_ids"][:num_q] = q_ids
  f["sentence_ids"][:num_q] = np.arange(1, 1 + num_q)
  long_sentence = [-1] * num_q
  long_start, long_end = [0] * num_q, [0] * num_q
  sentences, sentence_global, dropped = [], [], []
  sentence_long_start = {}
  g, pos = 1 + num_q, num_q

  def put_long(piece_ids, owner, paragraph_id, segment):
    nonlocal pos
    n = len(piece_ids)
    f["token_ids"][pos:pos + n] = piece_ids
    f["sentence_ids"][pos:pos + n] = owner
    f["long_paragraph_ids"][pos:pos + n] = paragraph_id
    f["segment_ids"][pos:pos + n] = segment
    pos += n

  def put_global(token_id, paragraph_id, segment, exempt=0):
    nonlocal g
    f["global_token_ids"][g] = token_id
    f["global_paragraph_ids"][g] = paragraph_id
    f["global_segment_ids"][g] = segment
    f["ignore_hard_g2l_mask"][g] = exempt
    g += 1
    return g - 1

  paragraph_id = 0
  for paragraph in paragraphs:
    dropped.extend((paragraph.title, s) for s in range(
        paragraph.keep if paragraph.kept else 0, len(paragraph.sentences)))
    if not paragraph.kept:
      continue
    paragraph_id += 1
    put_global(global_ids.paragraph, paragraph_id, SEGMENT_PARAGRAPH, exempt=1)
    title_token = put_global(TITLE_ID, paragraph_id, SEGMENT_TITLE)
    put_long(paragraph.title_pieces.ids, title_token, paragraph_id, SEGMENT_TITLE)
    long_sentence += [-1] * len(paragraph.title_pieces)
    long_start += [0] * len(paragraph.title_pieces)
    long_end += [0] * len(paragraph.title_pieces)
    for s in range(paragraph.keep):
      sentence_token = put_global(global_ids.sentence, paragraph_id, SEGMENT_SENTENCE)
      sentence_long_start[(paragraph.index, s)] = pos
      piece = paragraph.sentences[s]
      f["span_mask"][pos:pos + len(piece)] = 1
      f["sp_mask"][sentence_token] = 1
      put_long(piece.ids, sentence_token, paragraph_id, SEGMENT_SENTENCE)
      long_sentence += [len(sentences)] * len(piece)
      long_start += piece.starts
      long_end += piece.ends
      sentences.append((paragraph.index, paragraph.title, s))
      sentence_global.append(sentence_token)
  assert pos <= long_len and g <= global_len, (pos, g)

  layout = ExampleLayout(example.qas_id, sentences, sentence_global,
                         np.asarray(long_sentence, np.int32), np.asarray(long_start, np.int32),
                         np.asarray(long_end, np.int32), dropped, question_truncated)
  if with_labels:
    f["answer_type"] = np.int64(example.answer_type)
    f["answer_begin"] = np.int64(-1)
    f["answer_end"] = np.int64(-1)
    gold = set(example.supporting_facts)
    for (_, title, s), token in zip(sentences, sentence_global):
      if (title, s) in gold:
        f["sp_labels"][token] = 1
    if example.answer_type == 0:
      span = _answer_span(example, paragraphs, sentence_long_start)
      if span is None:
        raise LabelError("answer truncated",
                         f"no kept supporting sentence contains the answer {example.answer!r} "
                         f"({len(dropped)} sentence(s) dropped to fit)")
      f["answer_begin"], f["answer_end"] = np.int64(span[0]), np.int64(span[1])
  else:
    for name in LABEL_FEATURES:
      f.pop(name)
  return f, layout
