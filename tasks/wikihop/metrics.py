"""WikiHop accuracy, as the leaderboard computes it (docs/file_formats.md, "WikiHop").

accuracy = share of gold ids whose predicted string equals the answer exactly; a missing id
counts as wrong. The prediction is compared lower-cased and stripped (the export writes it so).
Ids in the prediction that the gold file lacks are ignored and counted.

No TensorFlow import: `python -m tasks.wikihop evaluate` starts quickly.
"""

from typing import Any, Dict, List, Union

from tasks.common.json_files import load_json


def gold_answers(gold: Union[str, List[Any]]) -> Dict[str, str]:
  """{id: answer} of a WikiHop file (path or loaded items); errors name the item and field."""
  path = gold if isinstance(gold, str) else "gold"
  items = load_json(gold, "gold") if isinstance(gold, str) else gold
  if not isinstance(items, list):
    raise ValueError(f"{path}: expected a JSON array of WikiHop items")
  answers = {}
  for index, item in enumerate(items):
    example_id = item.get("id") if isinstance(item, dict) else None
    if not isinstance(example_id, str):
      raise ValueError(f"{path}: item {index}: field 'id': missing or not a string")
    answer = item.get("answer")
    if not isinstance(answer, str):
      raise ValueError(f"{path}: item {index} (id {example_id}): field 'answer': missing or "
                       "not a string (test files have no answers and cannot be scored)")
    answers[example_id] = answer
  return answers


def evaluate(gold: Union[str, List[Any]], prediction: Union[str, Dict[str, Any]]
             ) -> Dict[str, float]:
  """-> {"accuracy", "correct", "total", "missing", "extra"}."""
  answers = gold_answers(gold)
  path = prediction if isinstance(prediction, str) else "prediction"
  prediction = load_json(prediction, "prediction") if isinstance(prediction, str) else prediction
  if not isinstance(prediction, dict):
    raise ValueError(f"{path}: expected a JSON object {{id: candidate}}, got a JSON "
                     f"{type(prediction).__name__}")
  correct = missing = 0
  for example_id, answer in answers.items():
    if example_id not in prediction:
      missing += 1
      continue
    predicted = prediction[example_id]
    if not isinstance(predicted, str):
      raise ValueError(f"{path}: id {example_id}: expected a candidate string, got "
                       f"{type(predicted).__name__}")
    correct += predicted.strip().lower() == answer.strip().lower()
  total = len(answers)
  return {"accuracy": correct / total if total else 0.0, "correct": correct, "total": total,
          "missing": missing, "extra": len(set(prediction) - set(answers))}


def format_metrics(metrics: Dict[str, float]) -> str:
  return (f"accuracy {metrics['accuracy']:.4f} ({metrics['correct']}/{metrics['total']}; "
          f"{metrics['missing']} id(s) missing from the prediction)")
