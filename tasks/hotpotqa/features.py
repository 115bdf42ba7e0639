"""HotpotQA in the layout Google's ETC converter writes: the task's one feature layout.

One record becomes one feature dict holding exactly the tf.Example features of Google's
HotpotQA converter (etcmodel/models/hotpotqa, "span" answers), under its names and with its
values:

  global: [CLS] | one token per question piece | per paragraph: PARAGRAPH, title, sentences
  long:   [CLS] | question pieces              | per paragraph: title pieces, sentence pieces

Every feature, its length, padding and meaning: docs/file_formats.md ("TFRecords of the official
layouts", HotpotQA). Google's quirks are reproduced (a title or sentence that does not fit is
left out whole, the sentence counter does not advance over it, ...) and listed in
docs/official_layouts/hotpotqa.md, with the options that are not Google's (ConverterOptions,
from the `features:` section; off by default, on in the tiny demo). The options change only
which pieces and sentences are written and the question tokens' ids, never a feature's name,
kind or meaning.
"""

import collections
import dataclasses
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from etc_realformer.data import vocab
from tasks.common import feature_config
from tasks.common.batches import map_in_batches
from tasks.hotpotqa.data import HotpotExample
from tasks.hotpotqa.text import TextTokenizer, TokenizedText

GLOBAL_TYPE, SENTENCE_TYPE, TITLE_TYPE, QUESTION_TYPE = 0, 1, 2, 3
ANSWER_TYPES = {"span": 0, "yes": 1, "no": 2}

@dataclasses.dataclass(frozen=True)
class GlobalTokenIds:
  """The ids the converter puts in `global_token_ids` for each kind of global token."""
  cls: int
  sentence: int
  question: int
  paragraph: int


# BERT uncased: [CLS] and [unused0..4] (Google's converter with a WordPiece vocabulary).
WORDPIECE_GLOBAL_IDS = GlobalTokenIds(cls=vocab.CLS_ID, sentence=vocab.SENTENCE_ID,
                                      question=vocab.QUESTION_ID, paragraph=vocab.PARAGRAPH_ID)
# The ETC-large SentencePiece model: "<unused_39>", "<unused_40>", "<unused_42>" for CLS,
# question and paragraph; the sentence id stays the pretraining one, 1.
SENTENCEPIECE_GLOBAL_IDS = GlobalTokenIds(cls=40, sentence=vocab.SENTENCE_ID, question=41,
                                          paragraph=43)


def global_ids_for(tokenizer_kind: str) -> GlobalTokenIds:
  """HotpotQA's global ids for a "wordpiece" or "sentencepiece" tokenizer (`Tokenizer.kind`)."""
  tables = {"wordpiece": WORDPIECE_GLOBAL_IDS, "sentencepiece": SENTENCEPIECE_GLOBAL_IDS}
  if tokenizer_kind not in tables:
    raise ValueError(f"tokenizer kind {tokenizer_kind!r}: expected one of {sorted(tables)}")
  return tables[tokenizer_kind]


@dataclasses.dataclass
class HotpotFeatureConfig(feature_config.FeatureConfig):
  """The `features:` section: long_seq_len and global_seq_len (Google's flags), and options
  that are not Google's. Each option's off value (false / 0, the default) is Google's
  behaviour; the etc configs keep them off and the tiny demo turns them on
  (docs/official_layouts/hotpotqa.md has what each one measured):
    max_question_pieces / max_title_pieces: > 0 keeps at most that many pieces of the question /
      of each title (0: no cap).
    truncate_longest_paragraphs: when the paragraphs do not fit, the trailing sentences of the
      longest paragraphs are left out first (then whole paragraphs from the end), instead of
      leaving out every item that does not fit when it comes.
    question_piece_global_ids: each question piece's global token carries the piece's own id
      instead of Google's one "question" id.
    span_loss_in_sentences: the begin / end softmax losses run over the title and sentence
      pieces only (model.py) instead of over all long positions.
    min_supporting_facts: decoding predicts at least this many supporting facts, the most
      probable sentences when fewer pass the threshold (decode.py).
  """
  max_question_pieces: int = 0
  max_title_pieces: int = 0
  truncate_longest_paragraphs: bool = False
  question_piece_global_ids: bool = False
  span_loss_in_sentences: bool = False
  min_supporting_facts: int = 0

  zero_allowed = ("max_question_pieces", "max_title_pieces", "min_supporting_facts")


LONG_PADDING = {"long_token_ids": 0, "long_sentence_ids": -1, "long_paragraph_ids": -1,
                "long_paragraph_breakpoints": 0, "long_token_type_ids": 0,
                "long_tokens_to_unigrams": -1}
GLOBAL_PADDING = {"global_token_ids": 0, "global_sentence_ids": -1, "global_paragraph_ids": -1,
                  "global_paragraph_breakpoints": 0, "global_token_type_ids": 0,
                  "supporting_facts": 0}
# What the model reads (Google's inference features), and the training labels.
MODEL_INPUTS = ("long_token_ids", "long_sentence_ids", "long_paragraph_ids",
                "long_paragraph_breakpoints", "long_token_type_ids", "global_token_ids",
                "global_paragraph_breakpoints", "global_token_type_ids")
LABELS = ("supporting_facts", "answer_types", "answer_begins", "answer_ends")
SCALAR_LABELS = ("answer_types", "answer_begins", "answer_ends")


def feature_lengths(config) -> Dict[str, int]:
  """Length of every feature training parses (0 = one value): the model inputs and labels."""
  return feature_config.feature_lengths(config, MODEL_INPUTS + LABELS,
                                        global_names=("supporting_facts",),
                                        scalar_names=SCALAR_LABELS)


class Dropped(ValueError):
  """A training record Google's converter writes no tf.Example for."""

  def __init__(self, reason: str, field: str, detail: str):
    super().__init__(f"{reason}: {detail}")
    self.reason, self.field = reason, field


class _Builder:
  """The long and global sequences of one record as they grow (unpadded lists)."""

  def __init__(self, long_len: int, global_len: int):
    self.long_len, self.global_len = long_len, global_len
    self.long = {name: [] for name in LONG_PADDING}
    self.long_tokens = []      # the piece strings of long_token_ids
    self.glob = {name: [] for name in GLOBAL_PADDING}
    self.owner = 0             # global index the next long pieces belong to
    self.paragraph_token = 0   # global index of the current PARAGRAPH token
    self.paragraph = 0         # index of the current paragraph in the record
    self.sentence = 0          # sentence counter within the paragraph
    self.skipped = 0           # titles / sentences / question pieces that did not fit

  @property
  def num_long(self) -> int:
    return len(self.long["long_token_ids"])

  @property
  def num_global(self) -> int:
    return len(self.glob["global_token_ids"])

  def add_global(self, token_id: int, ids, is_title: bool = False,
                 supporting: bool = False) -> None:
    if self.num_global >= self.global_len:
      return
    g = self.glob
    g["global_token_ids"].append(token_id)
    g["global_paragraph_breakpoints"].append(0)
    g["global_token_type_ids"].append(GLOBAL_TYPE)
    g["supporting_facts"].append(int(supporting))
    # Google compares the token id with the sentence TYPE id (1): the sentence id is 1 too.
    if token_id == SENTENCE_TYPE and not is_title:
      g["global_sentence_ids"].append(self.sentence)
      self.sentence += 1
    else:
      g["global_sentence_ids"].append(-1)
    in_paragraph = token_id in (ids.paragraph, ids.sentence)
    g["global_paragraph_ids"].append(self.paragraph if in_paragraph else -1)
    self.owner = self.num_global

  def add_long(self, piece_ids: Sequence[int], tokens: Sequence[str], type_id: int,
               unigrams: Sequence[int], owned: bool = True, in_paragraph: bool = True) -> None:
    n = len(piece_ids)
    if self.num_long + n > self.long_len:
      return
    ll = self.long
    ll["long_token_ids"].extend(piece_ids)
    self.long_tokens.extend(tokens)
    ll["long_sentence_ids"].extend([self.owner if owned else -1] * n)
    ll["long_paragraph_ids"].extend([self.paragraph_token if in_paragraph else -1] * n)
    ll["long_paragraph_breakpoints"].extend([0] * n)
    ll["long_token_type_ids"].extend([type_id] * n)
    ll["long_tokens_to_unigrams"].extend(unigrams)

  def add_item(self, piece_ids, tokens, type_id, unigrams, token_id, ids, in_paragraph=True,
               is_title=False, supporting=False) -> None:
    """A question piece, title or sentence: its pieces and its global token, or neither."""
    if self.num_long + len(piece_ids) > self.long_len or self.num_global >= self.global_len:
      self.skipped += 1
      return
    self.add_long(piece_ids, tokens, type_id, unigrams, in_paragraph=in_paragraph)
    self.add_global(token_id, ids, is_title=is_title, supporting=supporting)

  def end_segment(self, paragraph_done: bool = False) -> None:
    """Breakpoints on the last long and global tokens so far; the next segment starts."""
    if self.num_long:
      self.long["long_paragraph_breakpoints"][-1] = 1
    if self.num_global:
      self.glob["global_paragraph_breakpoints"][-1] = 1
    self.paragraph_token = self.num_global
    if paragraph_done:
      self.paragraph += 1
      self.sentence = 0

  def padded(self) -> Dict[str, np.ndarray]:
    """Every sequence padded: int64 [long_len] or [global_len]."""
    out = {}
    for values, padding, length in ((self.long, LONG_PADDING, self.long_len),
                                    (self.glob, GLOBAL_PADDING, self.global_len)):
      for name, value in padding.items():
        out[name] = np.full([length], value, np.int64)
        out[name][:len(values[name])] = values[name]
    return out


@dataclasses.dataclass(frozen=True)
class ConverterOptions:
  """What the converter may do differently from Google's: the HotpotFeatureConfig options of the
  same names (the defaults are Google's). An answer found in the cut-off part of a title is not
  found; with truncate_longest_paragraphs (`keep_longest_first`) the answer is searched in
  written items only, since a left-out sentence has no long position to point at.
  """
  max_question_pieces: int = 0
  max_title_pieces: int = 0
  truncate_longest_paragraphs: bool = False
  question_piece_global_ids: bool = False

  @classmethod
  def of(cls, config) -> "ConverterOptions":
    """The options of a HotpotFeatureConfig."""
    return cls(config.max_question_pieces, config.max_title_pieces,
               config.truncate_longest_paragraphs, config.question_piece_global_ids)


GOOGLE = ConverterOptions()


def capped(text: TokenizedText, limit: int) -> TokenizedText:
  """The first `limit` pieces of a text (all of them when limit is 0); what answers are searched
  in (text, unigrams, character map) is kept whole."""
  if not limit or len(text.ids) <= limit:
    return text
  return dataclasses.replace(text, ids=text.ids[:limit], tokens=text.tokens[:limit],
                             tokens_to_unigrams=text.tokens_to_unigrams[:limit])


def keep_longest_first(question_len: int, titles: Sequence[int],
                       sentences: Sequence[Sequence[int]], long_len: int,
                       global_len: int) -> List[int]:
  """How many sentences of each paragraph to write (-1: the paragraph is left out whole), longest
  paragraphs first: while the long or global input is over its length, the last
  kept sentence of the paragraph with the most long pieces goes (the later paragraph on a tie);
  once no paragraph has a sentence left, whole paragraphs go from the end.

  Counts of pieces: question_len of the question, titles[p] of paragraph p's title,
  sentences[p][s] of its sentence s. Long: [CLS], the question, per paragraph its title and
  sentences; global: [CLS], one token per question piece, per paragraph PARAGRAPH, title and
  one token per sentence.
  """
  keep = [len(s) for s in sentences]
  sizes = [title + sum(s) for title, s in zip(titles, sentences)]   # long pieces of each kept part
  long_used = 1 + question_len + sum(sizes)
  global_used = 1 + question_len + sum(2 + k for k in keep)
  while long_used > long_len or global_used > global_len:
    with_sentences = [p for p, k in enumerate(keep) if k > 0]
    if with_sentences:
      p = max(with_sentences, key=lambda p: (sizes[p], p))
      keep[p] -= 1
      size, extra = sentences[p][keep[p]], 1
    else:
      live = [p for p, k in enumerate(keep) if k == 0]
      if not live:
        break   # the question alone does not fit: Google's rule leaves its pieces out
      p = live[-1]
      keep[p] = -1
      size, extra = sizes[p], 2
    sizes[p] -= size
    long_used -= size
    global_used -= extra
  return keep


# Examples tokenized in one call when converting (fewer calls into the library).
EXAMPLES_PER_CALL = 16


def tokenize_examples(examples: Iterable[HotpotExample], tokenizer: TextTokenizer
                      ) -> Iterator[Tuple[HotpotExample, List[TokenizedText]]]:
  """(example, its texts tokenized) of every example, EXAMPLES_PER_CALL at a time."""
  return map_in_batches(examples, EXAMPLES_PER_CALL,
                        lambda batch: tokenizer.tokenize_groups([_texts(e) for e in batch]))


def _texts(example: HotpotExample) -> List[str]:
  """question, then per paragraph its title and sentences."""
  texts = [example.question]
  for title, sentences in example.context:
    texts.append(title)
    texts.extend(sentences)
  return texts


def convert_example(example: HotpotExample, tokenizer: TextTokenizer, long_len: int,
                    global_len: int, is_training: bool, debug: bool = True,
                    tokenized: Optional[List[TokenizedText]] = None,
                    options: ConverterOptions = GOOGLE) -> Dict[str, Any]:
  """The features Google's converter writes for one record (docs/file_formats.md).

  is_training adds the labels and may raise Dropped; otherwise (or with debug) the decoding
  features long_tokens_to_unigrams (WordPiece), global_paragraph_ids and global_sentence_ids
  are written; debug adds long_tokens and global_tokens. `tokenized`: the example's texts
  already tokenized (see `tokenize_examples`), or None to tokenize them here. `options`: what
  is done differently from Google's converter (ConverterOptions; the default changes nothing).
  """
  ids = global_ids_for(tokenizer.kind)
  tokenized = tokenizer.tokenize(_texts(example)) if tokenized is None else list(tokenized)
  question = capped(tokenized[0], options.max_question_pieces)
  paragraphs = []   # (title, [sentences]) of each paragraph, tokenized
  cursor = 1
  for _, sentences in example.context:
    paragraphs.append((tokenized[cursor], tokenized[cursor + 1:cursor + 1 + len(sentences)]))
    cursor += 1 + len(sentences)
  keep = [len(s) for _, s in paragraphs]   # sentences written per paragraph (-1: none, no title)
  if options.truncate_longest_paragraphs:
    keep = keep_longest_first(
        len(question.ids), [len(capped(t, options.max_title_pieces).ids) for t, _ in paragraphs],
        [[len(s.ids) for s in sentences] for _, sentences in paragraphs], long_len, global_len)
  facts = collections.defaultdict(list)
  for title, index in example.supporting_facts or []:
    facts[title].append(index)
  answer = example.answer or ""
  spans = []   # inclusive long spans of every occurrence of the answer

  def find(text: TokenizedText, offset: int, written: int) -> None:
    """The answer's spans in `text`, whose first `written` pieces go at long position offset."""
    try:
      spans.extend((b + offset, e + offset) for b, e in tokenizer.answer_spans(text, answer)
                   if e < written)
    except IndexError as e:
      raise Dropped("answer past the SentencePiece character map", "answer",
                    f"{answer!r} in {text.text!r}") from e

  b = _Builder(long_len, global_len)
  b.add_global(ids.cls, ids)
  b.end_segment()
  b.add_long([ids.cls], tokenizer.tokens([ids.cls]), SENTENCE_TYPE, [-1], owned=False,
             in_paragraph=False)
  b.long["long_paragraph_breakpoints"][-1] = 1
  for piece, token in zip(question.ids, question.tokens):
    b.add_item([piece], [token], QUESTION_TYPE, [-1],
               piece if options.question_piece_global_ids else ids.question, ids,
               in_paragraph=False)
  b.end_segment()
  for (title, _), (title_text, sentences), kept in zip(example.context, paragraphs, keep):
    if kept < 0:   # left out whole by truncate_longest_paragraphs; its index stays taken
      b.skipped += 1 + len(sentences)
      b.paragraph += 1
      continue
    supporting = facts.get(title, [])
    b.add_global(ids.paragraph, ids, supporting=bool(supporting))
    written = capped(title_text, options.max_title_pieces)
    if supporting:
      find(title_text, b.num_long, len(written.ids))
    b.add_item(written.ids, written.tokens, TITLE_TYPE, written.tokens_to_unigrams, ids.sentence,
               ids, is_title=True, supporting=bool(supporting))
    b.skipped += len(sentences) - kept
    for index, sentence in enumerate(sentences[:kept]):
      if index in supporting:
        find(sentence, b.num_long, len(sentence.ids))
      b.add_item(sentence.ids, sentence.tokens, SENTENCE_TYPE, sentence.tokens_to_unigrams,
                 ids.sentence, ids, supporting=index in supporting)
    b.end_segment(paragraph_done=True)

  global_tokens = tokenizer.tokens(b.glob["global_token_ids"])
  padded = b.padded()   # int64 arrays
  out = {"unique_ids": [example.qas_id], "type": [example.type], "level": [example.level]}
  out.update((name, padded[name]) for name in MODEL_INPUTS)
  if is_training:
    out["supporting_facts"] = padded["supporting_facts"]
    if not out["supporting_facts"].any():
      raise Dropped("no supporting fact kept", "supporting_facts",
                    "no supporting paragraph, title or sentence has a global token")
    spans.sort(key=lambda span: span[1])
    if answer in ("yes", "no"):
      answer_type = ANSWER_TYPES[answer]
    elif spans and spans[0][1] < long_len:
      answer_type = ANSWER_TYPES["span"]
    elif spans:
      raise Dropped("answer past the long input", "answer",
                    f"the first occurrence of {answer!r} ends at {spans[0][1]} >= {long_len}")
    else:
      raise Dropped("answer not found", "answer",
                    f"{answer!r} occurs in no supporting title or sentence (case-sensitive)")
    begin, end = spans[0] if spans else (0, 0)
    out.update(answer_types=np.asarray([answer_type], np.int64),
               answer_begins=np.asarray([begin], np.int64),
               answer_ends=np.asarray([end], np.int64))
  if not is_training or debug:
    if tokenizer.wordpiece:
      out["long_tokens_to_unigrams"] = padded["long_tokens_to_unigrams"]
    out["global_paragraph_ids"] = padded["global_paragraph_ids"]
    out["global_sentence_ids"] = padded["global_sentence_ids"]
  if debug:
    out["long_tokens"], out["global_tokens"] = b.long_tokens, global_tokens
  out["_stats"] = {"long": b.num_long, "global": b.num_global, "skipped": b.skipped}
  return out


def pop_stats(features: Dict[str, Any]) -> Dict[str, int]:
  """Removes and returns the converter's counts (long / global tokens used, items skipped)."""
  return features.pop("_stats")
