"""Model outputs -> HotpotQA predictions ({"answer": ..., "sp": ...}), and the dev threshold.

Per example:
  supporting facts: the sentences whose sigmoid(sp_logit) >= threshold (at least the best one);
  answer: "yes"/"no" when the answer-type head says so; otherwise the best span
    begin_logit[b] + end_logit[e] with b <= e, e - b < max_answer_pieces, b and e in the same
    sentence, and that sentence among the predicted supporting facts (all sentences when no
    span fits there). The span comes back as the original text of the sentence.
Examples without any usable sentence get an empty answer and no supporting fact.
"""

import dataclasses
from typing import Dict, List, Optional, Sequence

import numpy as np

from tasks.hotpotqa import metrics as metrics_lib
from tasks.hotpotqa.data import HotpotExample
from tasks.hotpotqa.features import ExampleLayout

DEFAULT_THRESHOLD = 0.5
MAX_ANSWER_PIECES = 30
ANSWER_TYPES = ("span", "yes", "no")


@dataclasses.dataclass
class ExampleOutput:
  """The head outputs of one example (numpy, unbatched)."""
  answer_type_logits: np.ndarray   # [3]
  sp_logits: np.ndarray            # [G]
  begin_logits: np.ndarray         # [L]
  end_logits: np.ndarray           # [L]


def split_batch(outputs: Dict[str, np.ndarray]) -> List[ExampleOutput]:
  """Batched model outputs -> one ExampleOutput per row."""
  names = [f.name for f in dataclasses.fields(ExampleOutput)]
  return [ExampleOutput(**{name: outputs[name][i] for name in names})
          for i in range(len(outputs[names[0]]))]


def _sigmoid(x):
  return 1.0 / (1.0 + np.exp(-x))


def predict_supporting(output: ExampleOutput, layout: ExampleLayout, threshold: float
                       ) -> List[int]:
  """Indices into layout.sentences of the predicted supporting facts (at least one)."""
  if not layout.sentences:
    return []
  probs = _sigmoid(output.sp_logits[np.asarray(layout.sentence_global)])   # [num_sentences]
  chosen = [i for i, p in enumerate(probs) if p >= threshold]
  return chosen or [int(np.argmax(probs))]


def best_span(output: ExampleOutput, layout: ExampleLayout, sentences: Sequence[int],
              max_answer_pieces: int = MAX_ANSWER_PIECES) -> Optional[tuple]:
  """(begin, end) long positions of the best span inside `sentences`, or None."""
  owner = layout.long_sentence                                             # [num_long]
  begin = output.begin_logits[:len(owner)]
  end = output.end_logits[:len(owner)]
  starts = np.nonzero(np.isin(owner, np.asarray(list(sentences), np.int32)))[0]   # [S]
  if not len(starts):
    return None
  ends = starts[:, None] + np.arange(max_answer_pieces)[None, :]           # [S, W]
  valid = ends < len(owner)
  ends = np.minimum(ends, len(owner) - 1)
  valid &= owner[ends] == owner[starts][:, None]                           # same sentence
  scores = np.where(valid, begin[starts][:, None] + end[ends], -np.inf)    # [S, W]
  flat = int(np.argmax(scores))
  row, col = divmod(flat, max_answer_pieces)
  return int(starts[row]), int(ends[row, col])


def decode_example(example: HotpotExample, layout: ExampleLayout,
                   output: Optional[ExampleOutput], threshold: float = DEFAULT_THRESHOLD,
                   max_answer_pieces: int = MAX_ANSWER_PIECES):
  """-> (answer text, [[title, sentence index], ...])."""
  if output is None or not layout.sentences:
    return "", []
  chosen = predict_supporting(output, layout, threshold)
  sp = [[layout.sentences[i][1], int(layout.sentences[i][2])] for i in chosen]
  kind = ANSWER_TYPES[int(np.argmax(output.answer_type_logits))]
  if kind != "span":
    return kind, sp
  span = best_span(output, layout, chosen, max_answer_pieces)
  if span is None:
    span = best_span(output, layout, range(len(layout.sentences)), max_answer_pieces)
  if span is None:
    return "", sp
  begin, end = span
  p_index, _, s_index = layout.sentences[layout.long_sentence[begin]]
  text = example.context[p_index][1][s_index]
  return text[layout.long_start[begin]:layout.long_end[end]].strip(), sp


def make_predictions(examples: Sequence[HotpotExample], layouts: Dict[str, ExampleLayout],
                     outputs: Dict[str, ExampleOutput], threshold: float = DEFAULT_THRESHOLD,
                     max_answer_pieces: int = MAX_ANSWER_PIECES) -> dict:
  """The prediction file's content for EVERY example (empty answer where no output exists)."""
  prediction = {"answer": {}, "sp": {}}
  for example in examples:
    layout = layouts.get(example.qas_id)
    answer, sp = ("", []) if layout is None else decode_example(
        example, layout, outputs.get(example.qas_id), threshold, max_answer_pieces)
    prediction["answer"][example.qas_id] = answer
    prediction["sp"][example.qas_id] = sp
  return prediction


def choose_threshold(examples: Sequence[HotpotExample], layouts, outputs, gold: List[dict],
                     candidates: Sequence[float] = tuple(np.round(np.arange(0.05, 0.91, 0.05), 2)),
                     key: str = "joint_f1"):
  """The supporting-fact threshold with the best `key` on labelled (dev) data.

  Returns (threshold, {threshold: metrics}).
  """
  table = {}
  for threshold in candidates:
    prediction = make_predictions(examples, layouts, outputs, float(threshold))
    table[float(threshold)] = metrics_lib.evaluate(gold, prediction)
  best = max(table, key=lambda t: (table[t][key], -abs(t - DEFAULT_THRESHOLD)))
  return best, table
