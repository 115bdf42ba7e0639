"""HotpotQA (distractor setting) answer, supporting-fact and joint metrics.

Pure Python re-implementation of the scoring rules of the official HotpotQA evaluation, giving
the same numbers: answer EM and bag-of-tokens P/R/F1 on normalised strings, supporting-fact EM
and set P/R/F1 on (title, sentence index) pairs, and joint metrics from the two, each averaged
over all gold ids (an id without a prediction scores 0). Formats, normalisation and every rule:
docs/file_formats.md, "HotpotQA".
"""

import collections
import re
import string
from typing import Any, Dict, Iterable, List, Sequence, Tuple

from tasks.common.json_files import load_json  # pylint: disable=unused-import  (re-exported)

ANSWER_KEYS = ("em", "f1", "prec", "recall")
SP_KEYS = ("sp_em", "sp_f1", "sp_prec", "sp_recall")
JOINT_KEYS = ("joint_em", "joint_f1", "joint_prec", "joint_recall")
METRIC_KEYS = ANSWER_KEYS + SP_KEYS + JOINT_KEYS

# Answers that are scored all-or-nothing: partial token overlap gives no credit.
SPECIAL_ANSWERS = frozenset({"yes", "no", "noanswer"})

PREDICTION_KEYS = ("answer", "sp")
GOLD_FIELDS = ("_id", "answer", "supporting_facts")

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")

# (em, f1, prec, recall)
Scores = Tuple[float, float, float, float]


def normalize_answer(s: str) -> str:
  """Normalises an answer string for comparison.

  Args:
    s: The raw answer text.

  Returns:
    `s` lower-cased, without ASCII punctuation, without the whole words
    a/an/the, and with runs of white space collapsed to single spaces.
  """
  text = "".join(ch for ch in s.lower() if ch not in _PUNCTUATION)
  # A space (not the empty string) keeps the neighbours apart, as the official scorer does.
  return " ".join(_ARTICLES.sub(" ", text).split())


def _f1(prec: float, recall: float) -> float:
  """Harmonic mean of precision and recall, 0 when both are 0."""
  return 2 * prec * recall / (prec + recall) if prec + recall > 0 else 0.0


def _token_prec_recall(normalized_prediction: str, normalized_gold: str) -> Tuple[float, float]:
  """Bag-of-tokens precision and recall of two normalised answers."""
  if normalized_prediction != normalized_gold and (
      normalized_prediction in SPECIAL_ANSWERS or normalized_gold in SPECIAL_ANSWERS):
    return 0.0, 0.0
  prediction_tokens = normalized_prediction.split()
  gold_tokens = normalized_gold.split()
  common = collections.Counter(prediction_tokens) & collections.Counter(gold_tokens)
  num_same = sum(common.values())
  if num_same == 0:
    return 0.0, 0.0
  return num_same / len(prediction_tokens), num_same / len(gold_tokens)


def answer_scores(prediction: str, gold: str) -> Scores:
  """Scores one predicted answer against the gold answer.

  Args:
    prediction: The predicted answer text.
    gold: The gold answer text.

  Returns:
    (em, f1, prec, recall) as floats.
  """
  normalized_prediction = normalize_answer(prediction)
  normalized_gold = normalize_answer(gold)
  em = 1.0 if normalized_prediction == normalized_gold else 0.0
  prec, recall = _token_prec_recall(normalized_prediction, normalized_gold)
  return em, _f1(prec, recall), prec, recall


def sp_scores(prediction: Iterable[Sequence[Any]], gold: Iterable[Sequence[Any]]) -> Scores:
  """Scores predicted supporting facts against the gold ones.

  Args:
    prediction: Predicted (title, sentence index) pairs, as lists or tuples.
      Duplicates count once.
    gold: Gold (title, sentence index) pairs, as lists or tuples.

  Returns:
    (em, f1, prec, recall) as floats.
  """
  predicted = {tuple(fact) for fact in prediction}
  expected = {tuple(fact) for fact in gold}
  tp = len(predicted & expected)
  fp = len(predicted - expected)
  fn = len(expected - predicted)
  prec = tp / (tp + fp) if tp + fp > 0 else 0.0
  recall = tp / (tp + fn) if tp + fn > 0 else 0.0
  em = 1.0 if fp + fn == 0 else 0.0
  return em, _f1(prec, recall), prec, recall


def joint_scores(answer: Scores, sp: Scores) -> Scores:
  """Combines the answer and supporting-fact scores of one question.

  Args:
    answer: (em, f1, prec, recall) of the answer.
    sp: (em, f1, prec, recall) of the supporting facts.

  Returns:
    (em, f1, prec, recall): EM, precision and recall are products; F1 is the
    harmonic mean of the joint precision and recall.
  """
  prec = answer[2] * sp[2]
  recall = answer[3] * sp[3]
  return answer[0] * sp[0], _f1(prec, recall), prec, recall


def _check_prediction(prediction: Any) -> None:
  """Raises a ValueError unless `prediction` has "answer" and "sp" mappings."""
  if not isinstance(prediction, dict):
    raise ValueError(
        f"prediction must be a JSON object with keys {list(PREDICTION_KEYS)}, "
        f"got {type(prediction).__name__}")
  for key in PREDICTION_KEYS:
    if key not in prediction:
      raise ValueError(f"prediction lacks the key {key!r} (expected keys {list(PREDICTION_KEYS)})")
    if not isinstance(prediction[key], dict):
      raise ValueError(
          f"prediction[{key!r}] must map question ids to predictions, "
          f"got {type(prediction[key]).__name__}")


def _check_gold(gold: Any) -> None:
  """Raises a ValueError unless `gold` is a non-empty list of complete records."""
  if not isinstance(gold, list):
    raise ValueError(f"gold must be a JSON list of records, got {type(gold).__name__}")
  if not gold:
    raise ValueError("gold is empty: there is nothing to average over")
  for index, record in enumerate(gold):
    if not isinstance(record, dict):
      raise ValueError(
          f"gold record at index {index} must be a JSON object, got {type(record).__name__}")
    for field in GOLD_FIELDS:
      if field not in record:
        where = f"gold record at index {index}"
        if "_id" in record:
          where += f" (id {record['_id']!r})"
        raise ValueError(f"{where} lacks the field {field!r}")


def missing_ids(gold: List[Dict[str, Any]], prediction: Dict[str, Any]) -> Dict[str, List[Any]]:
  """Lists the gold ids that the prediction does not cover.

  Args:
    gold: The gold records.
    prediction: {"answer": {id: text}, "sp": {id: facts}}.

  Returns:
    {"answer": [...], "sp": [...]}: gold ids absent from prediction["answer"]
    and from prediction["sp"], in gold order.

  Raises:
    ValueError: If the prediction or a gold record is malformed.
  """
  _check_prediction(prediction)
  _check_gold(gold)
  return {
      key: [record["_id"] for record in gold if record["_id"] not in prediction[key]]
      for key in PREDICTION_KEYS
  }


def _record_scores(prediction: Dict[str, Any], record: Dict[str, Any]) -> Dict[str, float]:
  """The 12 metrics of one gold record; absent predictions score 0."""
  qid = record["_id"]
  zero = (0.0, 0.0, 0.0, 0.0)
  has_answer = qid in prediction["answer"]
  has_sp = qid in prediction["sp"]
  answer = answer_scores(prediction["answer"][qid], record["answer"]) if has_answer else zero
  sp = sp_scores(prediction["sp"][qid], record["supporting_facts"]) if has_sp else zero
  joint = joint_scores(answer, sp) if has_answer and has_sp else zero
  return dict(zip(METRIC_KEYS, answer + sp + joint))


def _loaded(value: Any, what: str) -> Any:
  """A path is read as JSON (errors name the file); anything else is already loaded."""
  return load_json(value, what) if isinstance(value, str) else value


def evaluate(gold: Any, prediction: Any) -> Dict[str, float]:
  """Scores a HotpotQA prediction against the gold records.

  Args:
    gold: The official list of gold records, or the path of that JSON file.
    prediction: {"answer": {id: text}, "sp": {id: [[title, index], ...]}}, or the path of
      that JSON file. Ids that are not in `gold` are ignored.

  Returns:
    The 12 metrics of METRIC_KEYS, each averaged over all gold records.

  Raises:
    ValueError: If the prediction lacks "answer" or "sp", or a gold record
      lacks `_id`, `answer` or `supporting_facts`.
  """
  gold, prediction = _loaded(gold, "gold"), _loaded(prediction, "prediction")
  _check_prediction(prediction)
  _check_gold(gold)
  totals = dict.fromkeys(METRIC_KEYS, 0.0)
  for record in gold:
    for key, value in _record_scores(prediction, record).items():
      totals[key] += value
  return {key: totals[key] / len(gold) for key in METRIC_KEYS}


def evaluate_files(gold_path: str, prediction_path: str) -> Dict[str, float]:
  """Scores a prediction JSON file against a gold JSON file; see `evaluate`."""
  return evaluate(load_json(gold_path, "gold"), load_json(prediction_path, "prediction"))


def format_metrics(metrics: Dict[str, float]) -> str:
  """Renders the 12 metrics as an aligned text table with 4 decimals.

  Args:
    metrics: A dict with (at least) the keys of METRIC_KEYS.

  Returns:
    Four lines: a header (em, f1, prec, recall) and one row each for the
    answer, the supporting facts and the joint metrics.

  Raises:
    ValueError: If a metric is missing.
  """
  missing = [key for key in METRIC_KEYS if key not in metrics]
  if missing:
    raise ValueError(f"metrics lack the keys {missing}")
  rows = (("answer", ANSWER_KEYS), ("sp", SP_KEYS), ("joint", JOINT_KEYS))
  label_width = max(len(label) for label, _ in rows)
  lines = ["".ljust(label_width) + "".join(f"{name:>10}" for name in ANSWER_KEYS)]
  for label, keys in rows:
    lines.append(label.ljust(label_width) + "".join(f"{metrics[key]:>10.4f}" for key in keys))
  return "\n".join(lines)
