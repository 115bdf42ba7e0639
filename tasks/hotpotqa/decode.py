"""Model outputs on the task's features -> HotpotQA predictions, by the rules of Google's
HotpotQA prediction code (etcmodel/models/hotpotqa/eval_utils.py, "span" answers).

Supporting facts are the sentence tokens whose sigmoid(sp_logit) passes the threshold, the
answer type is the argmax of its logits, and a span answer is the best of the top 50 begins x
top 50 ends that lie in one predicted-supporting title or sentence; the threshold is chosen as
Google's final evaluation chooses it (0.0, 0.1, ..., 1.0, the first with the best joint F1).
Every rule and tie: docs/official_layouts/hotpotqa.md, "Decoding". Option `min_supporting_facts`
(not Google's) predicts at least that many supporting facts, the most probable sentences when
fewer pass the threshold.
"""

import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from etc_realformer.data import tokenization
from tasks.hotpotqa import metrics as metrics_lib
from tasks.hotpotqa.data import HotpotExample
from tasks.hotpotqa.features import SENTENCE_TYPE, TITLE_TYPE
from tasks.hotpotqa.text import join_sentencepieces, split_unigrams

TOP_K = 50
MAX_ANSWER_PIECES = 30
THRESHOLDS = tuple(float(t) for t in np.linspace(0.0, 1.0, 11))
ANSWER_TEXTS = {1: "yes", 2: "no"}
DEFAULT_THRESHOLD = 0.5   # the supporting-fact threshold before one is chosen on dev (Google's flag)
OUTPUT_NAMES = ("answer_type_logits", "sp_logits", "begin_logits", "end_logits")

Span = Tuple[int, int]


@dataclasses.dataclass
class ExampleOutput:
  """The head outputs of one example (numpy, unbatched)."""
  answer_type_logits: np.ndarray   # [3]
  sp_logits: np.ndarray            # [G]
  begin_logits: np.ndarray         # [L]
  end_logits: np.ndarray           # [L]


def _sigmoid(x):
  return 1.0 / (1.0 + np.exp(-np.asarray(x, np.float64)))


def _softmax(x):
  x = np.asarray(x, np.float32)
  e = np.exp(x - x.max())
  return e / e.sum()


def top_k(probs: np.ndarray, k: int = TOP_K) -> np.ndarray:
  """Positions of the k largest values, largest first, the lower position first on a tie."""
  return np.argsort(-probs, kind="stable")[:k]


def sentence_tokens(f: Dict[str, np.ndarray]) -> np.ndarray:
  """[G] bool: the global tokens that are sentences (a paragraph and a sentence number)."""
  return (np.asarray(f["global_paragraph_ids"]) >= 0) & (np.asarray(f["global_sentence_ids"]) >= 0)


def supporting_mask(output: ExampleOutput, threshold: float,
                    f: Optional[Dict[str, np.ndarray]] = None, min_facts: int = 0) -> np.ndarray:
  """[G] bool: the global tokens predicted supporting. With min_facts (and the features f), the
  most probable sentence tokens are added until at least min_facts sentences are (or all)."""
  probs = _sigmoid(output.sp_logits)                                          # [G]
  supporting = probs >= threshold
  if min_facts and f is not None:
    sentences = sentence_tokens(f)
    missing = min_facts - int((supporting & sentences).sum())
    if missing > 0:
      others = np.flatnonzero(sentences & ~supporting)
      supporting[others[top_k(probs[others], missing)]] = True
  return supporting


def candidate_spans(f: Dict[str, np.ndarray], output: ExampleOutput, supporting: np.ndarray,
                    max_answer_pieces: int = MAX_ANSWER_PIECES, k: int = TOP_K
                    ) -> List[Tuple[float, Span]]:
  """(begin prob x end prob, (begin, end)) of every allowed pair of top-k begins and ends."""
  types, owners = f["long_token_type_ids"], f["long_sentence_ids"]
  begin_probs, end_probs = _softmax(output.begin_logits), _softmax(output.end_logits)  # [L]
  allowed = (SENTENCE_TYPE, TITLE_TYPE)
  ends = [e for e in top_k(end_probs, k) if types[e] in allowed]
  spans = []
  for b in top_k(begin_probs, k):
    if types[b] not in allowed:
      continue
    for e in ends:
      if (owners[b] == owners[e] and supporting[owners[b]] and b <= e
          and e - b + 1 <= max_answer_pieces):
        spans.append((float(begin_probs[b] * end_probs[e]), (int(b), int(e))))
  return spans


def _item_text(example: HotpotExample, f: Dict[str, np.ndarray], token: int) -> str:
  """The title or sentence of a global token ("" outside paragraphs)."""
  paragraph = int(f["global_paragraph_ids"][token])
  if paragraph == -1:
    return ""
  title, sentences = example.context[paragraph]
  sentence = int(f["global_sentence_ids"][token])
  return title if sentence == -1 else sentences[sentence]


def basic_tokens(text: str) -> List[str]:
  """BERT's BasicTokenizer(do_lower_case=True) tokens of a text."""
  spans = tokenization.basic_word_spans(text)
  words = tokenization.basic_word_texts(text, spans, True)
  return [token for word in words for token in tokenization.basic_words(word, True)]


def _without_spaces(text: str) -> Tuple[str, Dict[int, int]]:
  """(text without " ", {position in that text: position in `text`})."""
  kept, positions = [], {}
  for i, char in enumerate(text):
    if char != " ":
      positions[len(kept)] = i
      kept.append(char)
  return "".join(kept), positions


def final_text(piece_text: str, word_text: str) -> str:
  """The part of `word_text` (original words) that `piece_text` (normalized pieces) covers,
  by a character alignment of the two without spaces (BERT's `get_final_text`); `word_text`
  itself when the alignment fails."""
  normalized = " ".join(basic_tokens(word_text))
  start = normalized.find(piece_text)
  if start == -1:
    return word_text
  end = start + len(piece_text) - 1
  word_chars, word_positions = _without_spaces(word_text)
  normalized_chars, normalized_positions = _without_spaces(normalized)
  if len(word_chars) != len(normalized_chars):
    return word_text
  to_stripped = {original: stripped for stripped, original in normalized_positions.items()}
  first = word_positions.get(to_stripped.get(start, -1))
  last = word_positions.get(to_stripped.get(end, -1))
  if first is None or last is None:
    return word_text
  return word_text[first:last + 1]


def pieces_text(tokens: Sequence[str]) -> str:
  """WordPiece pieces joined into normalized text ("##" continuations glued on)."""
  text = " ".join(tokens).replace(" ##", "").replace("##", "")
  return " ".join(text.strip().split())


def span_text(example: HotpotExample, f: Dict[str, np.ndarray], span: Span, tokenizer) -> str:
  """The answer text of a long span (docs/official_layouts/hotpotqa.md, "Decoding")."""
  begin, end = span
  tokens = tokenizer.id_to_token(f["long_token_ids"][begin:end + 1].tolist())
  if tokenizer.kind != "wordpiece":
    return join_sentencepieces(tokens)
  to_unigrams = f["long_tokens_to_unigrams"]
  first, last = int(to_unigrams[begin]), int(to_unigrams[end])
  words, _ = split_unigrams(_item_text(example, f, int(f["long_sentence_ids"][begin])))
  return final_text(pieces_text(tokens), " ".join(words[first:last + 1]))


def decode_example(example: HotpotExample, f: Dict[str, np.ndarray],
                   output: Optional[ExampleOutput], tokenizer,
                   threshold: float = DEFAULT_THRESHOLD,
                   max_answer_pieces: int = MAX_ANSWER_PIECES,
                   min_supporting_facts: int = 0) -> Tuple[str, List[list]]:
  """-> (answer text, [[title, sentence index], ...]) of one example."""
  if output is None or f is None:
    return "", []
  supporting = supporting_mask(output, threshold, f, min_supporting_facts)
  sp = []
  for g in np.flatnonzero(supporting & sentence_tokens(f)):
    paragraph, sentence = int(f["global_paragraph_ids"][g]), int(f["global_sentence_ids"][g])
    sp.append([example.context[paragraph][0], sentence])
  answer_type = int(np.argmax(output.answer_type_logits))
  if answer_type in ANSWER_TEXTS:
    return ANSWER_TEXTS[answer_type], sp
  spans = candidate_spans(f, output, supporting, max_answer_pieces)
  if not spans:
    return "", sp
  return span_text(example, f, max(spans)[1], tokenizer), sp


def make_predictions(examples: Sequence[HotpotExample], layouts: Dict[str, dict],
                     outputs: Dict[str, ExampleOutput], tokenizer,
                     threshold: float = DEFAULT_THRESHOLD, min_supporting_facts: int = 0) -> dict:
  """The prediction file's content for every example ("" and [] where no output exists).

  layouts: {id: the example's features}; tokenizer: the run's project tokenizer."""
  prediction = {"answer": {}, "sp": {}}
  for example in examples:
    answer, sp = decode_example(example, layouts.get(example.qas_id),
                                outputs.get(example.qas_id), tokenizer, threshold,
                                min_supporting_facts=min_supporting_facts)
    prediction["answer"][example.qas_id] = answer
    prediction["sp"][example.qas_id] = sp
  return prediction


def choose_threshold(examples, layouts, outputs, gold: List[dict], tokenizer,
                     candidates: Sequence[float] = THRESHOLDS, key: str = "joint_f1",
                     min_supporting_facts: int = 0):
  """(threshold, {threshold: metrics}): the first candidate with the best `key`, each decoded
  with min_supporting_facts."""
  table = {}
  for threshold in map(float, candidates):
    table[threshold] = metrics_lib.evaluate(gold, make_predictions(
        examples, layouts, outputs, tokenizer, threshold, min_supporting_facts))
  return max(table, key=lambda threshold: table[threshold][key], default=None), table
