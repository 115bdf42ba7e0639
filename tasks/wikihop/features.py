"""WikiHop items -> the features Google's ETC converter writes (WikiHop's one layout).

What Google's etcmodel/models/wikihop/data_utils.py (WikiHopTFExampleConverter, with the
flags of generate_tf_examples.py) writes for one item, under its names, with its values:

  global (G): cand_1 .. cand_C | q_1 .. q_Q | per document: [PARAGRAPH] [SENTENCE] x n_d | 0 ..
  long   (L): candidate pieces | query pieces | per document: its sentences' pieces | 0 ..

Every feature, its kind, length and meaning: docs/file_formats.md ("TFRecords of the official
layouts", WikiHop). Google's quirks, reproduced, are listed in docs/official_layouts/wikihop.md:
the query keeps its case, candidates are stripped and lower-cased but the answer only
lower-cased, documents are cut into sentences by nltk.sent_tokenize (tasks.wikihop.sentences)
and truncated sentence by sentence from the document with the most sentences left, and a
mention is every run of a sentence's pieces equal to a candidate's pieces where the lower-cased
sentence contains the candidate. Where Google's code fails (an assertion, an infinite loop),
`DoesNotFit` or a ValueError names the item instead.
"""

import dataclasses
import heapq
import itertools
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

from tasks.common import feature_config
from tasks.common.read_report import RecordProblem

SENTENCE_GLOBAL_TOKEN_ID, QUESTION_GLOBAL_TOKEN_ID = 1, 3
CANDIDATE_GLOBAL_TOKEN_ID, PARAGRAPH_GLOBAL_TOKEN_ID = 4, 5
SENTENCE_TYPE_ID, QUESTION_TYPE_ID, CANDIDATE_TYPE_ID = 1, 3, 4      # long tokens
SENTENCE_GLOBAL_TYPE_ID, QUESTION_GLOBAL_TYPE_ID = 0, 5               # global tokens
CANDIDATE_GLOBAL_TYPE_ID, PARAGRAPH_GLOBAL_TYPE_ID = 6, 7

LONG_FEATURES = ("long_token_ids", "long_token_type_ids", "long_sentence_ids",
                 "long_paragraph_ids", "long_paragraph_breakpoints", "l2g_linked_ids")
GLOBAL_FEATURES = ("global_paragraph_breakpoints", "global_token_ids", "global_token_type_ids")
# Features Google's run_wikihop_lib.py parses (the model's inputs and labels).
MODEL_FEATURES = LONG_FEATURES + GLOBAL_FEATURES
LABEL_FEATURES = ("is_real_example", "label_id")
TEXT_FEATURES = ("example_id", "query", "candidates", "ground_truth_answer")
FEATURE_NAMES = MODEL_FEATURES + LABEL_FEATURES + TEXT_FEATURES


@dataclasses.dataclass
class WikiHopFeatureConfig(feature_config.FeatureConfig):
  """The `features:` section, under the names of Google's flags: long_seq_len, global_seq_len
  and max_num_sentences (generate_tf_examples.py: the most sentences kept over all documents),
  add_final_layer (run_wikihop.py: the post-LN residual block before the candidate logits;
  false = one Dense layer on the global output, what the tiny demo trains best with)."""
  global_seq_len: int = 430
  max_num_sentences: int = 200
  add_final_layer: bool = True

  removed_keys = {name: "it belonged to the package layout, removed (WikiHop has one layout, "
                        "Google's features)"
                  for name in ("max_query_pieces", "max_candidate_pieces",
                               "mark_subject_matches")}


def feature_lengths(config) -> Dict[str, int]:
  """The int64 features the model reads: {name: length}; is_real_example is one per example."""
  lengths = {name: config.long_seq_len for name in LONG_FEATURES}
  lengths.update({name: config.global_seq_len for name in GLOBAL_FEATURES})
  lengths["is_real_example"] = 0
  return lengths


class DoesNotFit(ValueError):
  """An item whose candidates and query (or global tokens) exceed the lengths."""


@dataclasses.dataclass
class OfficialExample:
  """One item as Google's WikiHopExample.from_json reads it."""
  example_id: str
  query: str                   # as in the file
  docs: List[str]              # the supports
  candidates: List[str]        # stripped and lower-cased, duplicates kept
  answer: Optional[str] = None  # lower-cased (not stripped); None without a label
  label: int = -1              # index of `answer` in `candidates` (-1 without)


def from_item(item: Dict[str, Any], with_labels: bool) -> OfficialExample:
  """A JSON item (already checked by tasks.wikihop.data.parse_item) -> OfficialExample.

  Training (`with_labels`): RecordProblem when the answer, compared as Google's code does
  (lower-cased, not stripped), is not a candidate. Prediction: non-string supports and
  candidates were reported by the reader and are left out here.
  """
  query = item.get("query")
  candidates = [c.strip().lower() for c in item.get("candidates") or [] if isinstance(c, str)]
  docs = [d for d in item.get("supports") or [] if isinstance(d, str)]
  example = OfficialExample(item["id"], query if isinstance(query, str) else "", docs,
                            candidates)
  answer = item.get("answer")
  if isinstance(answer, str):
    example.answer = answer.lower()
    example.label = candidates.index(example.answer) if example.answer in candidates else -1
  if with_labels and example.label < 0:
    raise RecordProblem("answer not a candidate (official layout)", "answer",
                        f"{answer!r} lower-cased (Google's converter does not strip it) is "
                        "not one of the stripped, lower-cased candidates")
  return example


def truncate_documents(sentence_lengths: List[List[int]], max_sentences: int,
                       max_tokens: int) -> List[int]:
  """How many leading sentences of each document Google's converter keeps.

  sentence_lengths[d][s]: pieces of sentence s of document d. Sentences are dropped from the
  end of the document with the most sentences left (ties: the entry pushed earliest) until at
  most `max_sentences` sentences and `max_tokens` pieces remain.
  """
  keep = [len(lengths) for lengths in sentence_lengths]
  sentences_over = sum(keep) - max_sentences
  tokens_over = sum(map(sum, sentence_lengths)) - max_tokens
  if sentences_over <= 0 and tokens_over <= 0:
    return keep
  heap = [(-n, order, d) for order, (d, n) in enumerate(enumerate(keep))]   # a max-heap on n
  heapq.heapify(heap)
  pushed = len(heap)
  while sentences_over > 0 or tokens_over > 0:
    _, _, d = heapq.heappop(heap)
    if keep[d] > 0:
      keep[d] -= 1
      tokens_over -= sentence_lengths[d][keep[d]]
      sentences_over -= 1
    elif not any(keep):   # Google's loop would never end (`convert` checks this before)
      raise DoesNotFit(f"{tokens_over} pieces too many with every sentence dropped")
    heapq.heappush(heap, (-keep[d], pushed, d))
    pushed += 1
  return keep


def _runs(haystack: Sequence[int], needle: Sequence[int]) -> List[int]:
  """Start positions of every occurrence of `needle` in `haystack`."""
  n = len(needle)
  return [i for i in range(len(haystack) - n + 1) if list(haystack[i:i + n]) == list(needle)]


def convert(example: OfficialExample, tokenize: Callable[[List[str]], List[List[int]]],
            split: Callable[[str], List[str]], long_seq_len: int, global_seq_len: int,
            max_num_sentences: int, with_labels: bool,
            info: Optional[Dict[str, int]] = None) -> Dict[str, Any]:
  """One example -> Google's features (int64 / float32 arrays, lists of str).

  tokenize: texts -> piece ids per text (the vocabulary's tokenizer); split: a document ->
  its sentences (sentences.sentence_splitter); `info`, when given, receives the
  number of sentences and of those kept.
  Raises DoesNotFit when the candidates and query leave no room, or the global tokens exceed
  global_seq_len (Google's converter fails there too), and ValueError for a candidate without
  pieces.
  """
  where = f"id {example.example_id}"
  sentences = [split(doc) for doc in example.docs]
  flat = [s for doc in sentences for s in doc]
  pieces = tokenize(example.candidates + [example.query] + flat)
  cand_ids = pieces[:len(example.candidates)]
  query_ids = pieces[len(example.candidates)]
  sentence_pieces = iter(pieces[len(example.candidates) + 1:])
  for i, ids in enumerate(cand_ids):
    if not ids:
      raise ValueError(f"{where}: field 'candidates[{i}]': {example.candidates[i]!r} has no "
                       "word pieces (Google's converter fails on it)")
  room = long_seq_len - len(query_ids) - sum(map(len, cand_ids))
  if room < 0:
    raise DoesNotFit(f"{where}: {len(example.candidates)} candidates and the query take "
                     f"{long_seq_len - room} long tokens, more than long_seq_len "
                     f"{long_seq_len} (Google's converter never ends on this item)")
  doc_pieces = [list(itertools.islice(sentence_pieces, len(doc))) for doc in sentences]
  keep = truncate_documents([[len(p) for p in doc] for doc in doc_pieces],
                            max_num_sentences, room)
  if info is not None:
    info.update(sentences=len(flat), kept_sentences=sum(keep))
  num_global = len(example.candidates) + len(query_ids) + len(keep) + sum(keep)
  if num_global > global_seq_len:
    raise DoesNotFit(f"{where}: {num_global} global tokens ({len(example.candidates)} "
                     f"candidates, {len(query_ids)} query pieces, {len(keep)} documents, "
                     f"{sum(keep)} sentences) exceed global_seq_len {global_seq_len}")

  long: Dict[str, List[int]] = {name: [] for name in LONG_FEATURES[:-1]}
  glob: Dict[str, List[int]] = {name: [] for name in GLOBAL_FEATURES}
  linked = np.full([long_seq_len], -1, np.int64)   # [L]; later candidates overwrite earlier

  def add_long(ids, type_id, sentence, paragraph):
    for piece in ids:
      long["long_token_ids"].append(piece)
      long["long_token_type_ids"].append(type_id)
      long["long_sentence_ids"].append(sentence)
      long["long_paragraph_ids"].append(paragraph)
      long["long_paragraph_breakpoints"].append(0)

  def add_global(token_id, type_id):
    glob["global_token_ids"].append(token_id)
    glob["global_token_type_ids"].append(type_id)
    glob["global_paragraph_breakpoints"].append(0)
    return len(glob["global_token_ids"]) - 1

  def close_segment():     # Google sets the last entry, whichever token it is
    for breakpoints in (long["long_paragraph_breakpoints"], glob["global_paragraph_breakpoints"]):
      if breakpoints:
        breakpoints[-1] = 1

  for c, ids in enumerate(cand_ids):
    token = add_global(CANDIDATE_GLOBAL_TOKEN_ID, CANDIDATE_GLOBAL_TYPE_ID)
    start = len(long["long_token_ids"])
    linked[start:start + len(ids)] = c
    add_long(ids, CANDIDATE_TYPE_ID, token, -1)
    close_segment()
  for piece in query_ids:
    add_long([piece], QUESTION_TYPE_ID, add_global(QUESTION_GLOBAL_TOKEN_ID,
                                                   QUESTION_GLOBAL_TYPE_ID), -1)
  close_segment()
  for doc_sentences, doc_ids, kept in zip(sentences, doc_pieces, keep):
    paragraph = add_global(PARAGRAPH_GLOBAL_TOKEN_ID, PARAGRAPH_GLOBAL_TYPE_ID)
    for text, ids in zip(doc_sentences[:kept], doc_ids[:kept]):
      offset, lowered = len(long["long_token_ids"]), text.lower()
      for c, candidate in enumerate(example.candidates):
        if candidate and candidate in lowered:
          for i in _runs(ids, cand_ids[c]):
            linked[offset + i:offset + i + len(cand_ids[c])] = c
      sentence = add_global(SENTENCE_GLOBAL_TOKEN_ID, SENTENCE_GLOBAL_TYPE_ID)
      add_long(ids, SENTENCE_TYPE_ID, sentence, paragraph)
    close_segment()

  pads = {"long_token_ids": 0, "long_token_type_ids": 0, "long_sentence_ids": -1,
          "long_paragraph_ids": -1, "long_paragraph_breakpoints": 0}
  features: Dict[str, Any] = {}
  for name, values in long.items():
    features[name] = np.array(values + [pads[name]] * (long_seq_len - len(values)), np.int64)
  features["l2g_linked_ids"] = linked
  for name, values in glob.items():
    features[name] = np.array(values + [0] * (global_seq_len - len(values)), np.int64)
  features["is_real_example"] = np.array([1], np.int64)
  features["example_id"] = [example.example_id]
  features["query"] = [example.query]
  features["candidates"] = list(example.candidates)
  if with_labels:
    features["label_id"] = np.array([example.label], np.float32)
    features["ground_truth_answer"] = [example.answer]
  return features
