"""Scoring NQ predictions with the official scorer library (`natural_questions.nq_eval`).

The scoring itself is the official code, called as a library: its gold reader
(`eval_utils.read_annotation_from_one_split`, one call per shard, no process pool), its
prediction reader, `nq_eval.score_answers` and `nq_eval.get_metrics_with_answer_stats`. What
this module adds is checking first, so that a bad file is an error naming the file and the field
instead of a traceback from inside the scorer: gold files must be gzipped JSONL, the predictions
must cover exactly the gold ids, with ids of the same JSON type.

The scorer reads its vote thresholds (>= 2 annotators) from absl flags; when no absl app has
parsed the command line (a library call, a test), the flags are marked parsed with their
defaults.
"""

import json
import os
import tempfile
from typing import Dict, Union

from absl import flags
from natural_questions import eval_utils
from natural_questions import nq_eval

from tasks.nq.data import NqDataError, expand_paths, iter_lines

MAIN_KEYS = ("long-best-threshold-f1", "short-best-threshold-f1")


def read_gold(path: str) -> Dict[object, list]:
  """example_id -> the annotators' labels, by the official reader (path: a file or a glob)."""
  gold = {}
  for file in expand_paths(path):
    with open(file, "rb") as f:
      if f.read(2) != b"\x1f\x8b":
        raise NqDataError(f"{file}: gold files must be gzipped JSONL, as released")
    try:
      gold.update(eval_utils.read_annotation_from_one_split(file))
    except KeyError as e:
      raise NqDataError(f"{file}: field {e}: missing in a record; not an NQ gold file") from None
    except (OSError, EOFError, ValueError, TypeError) as e:
      # Find the record for the message (the official reader does not say).
      for number, line in iter_lines(file):
        try:
          record = json.loads(line)
        except ValueError:
          raise NqDataError(f"{file}: line {number}: not JSON") from None
        for i, annotation in enumerate(record.get("annotations", [])):
          try:
            for span in [annotation["long_answer"]] + list(annotation["short_answers"]):
              eval_utils.Span(span["start_byte"], span["end_byte"], span["start_token"],
                              span["end_token"])
          except (KeyError, TypeError, ValueError) as problem:
            raise NqDataError(f"{file}: line {number} (example_id {record.get('example_id')}): "
                              f"field 'annotations[{i}]': {problem}") from None
      raise NqDataError(f"{file}: the official reader failed: {e}") from None
  return gold


def _check_ids(gold: Dict[object, list], predictions: dict, source: str) -> None:
  entries = predictions.get("predictions") if isinstance(predictions, dict) else None
  if not isinstance(entries, list):
    raise NqDataError(f"{source}: expected {{\"predictions\": [...]}}")
  for i, entry in enumerate(entries):
    for key in ("example_id", "long_answer", "long_answer_score", "short_answers",
                "short_answers_score"):
      if not isinstance(entry, dict) or key not in entry:
        raise NqDataError(f"{source}: predictions[{i}]: field '{key}': missing")
  predicted = [e["example_id"] for e in entries]
  predicted_set = set(predicted)
  missing = [g for g in gold if g not in predicted_set]
  extra = [p for p in predicted if p not in gold]
  if missing or extra:
    gold_type = type(next(iter(gold))).__name__ if gold else "?"
    pred_type = type(predicted[0]).__name__ if predicted else "?"
    raise NqDataError(
        f"{source}: field 'example_id': {len(missing)} gold id(s) without a prediction "
        f"(first: {missing[:3]}) and {len(extra)} predicted id(s) not in gold "
        f"(first: {extra[:3]}); gold ids are {gold_type}s, predicted ids {pred_type}s")


def evaluate(gold_path: str, predictions: Union[str, dict]) -> Dict[str, float]:
  """The official metrics of `predictions` (a file path or the JSON content) against gold."""
  if not flags.FLAGS.is_parsed():   # the scorer's vote thresholds (module docstring)
    flags.FLAGS.mark_as_parsed()
  gold = read_gold(gold_path)
  if isinstance(predictions, str):
    source = predictions
    try:
      with open(predictions) as f:
        content = json.load(f)
    except FileNotFoundError:
      raise FileNotFoundError(f"{predictions}: no such predictions file") from None
    except ValueError as e:
      raise NqDataError(f"{predictions}: not JSON: {e}") from None
  else:
    source, content = "predictions", predictions
  _check_ids(gold, content, source)
  with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "predictions.json")
    with open(path, "w") as f:
      json.dump(content, f)
    try:
      predicted = eval_utils.read_prediction_json(path)
    except (KeyError, TypeError, ValueError) as e:
      raise NqDataError(f"{source}: rejected by the official reader: {e!r}") from None
  long_stats, short_stats = nq_eval.score_answers(gold, predicted)
  return dict(nq_eval.get_metrics_with_answer_stats(long_stats, short_stats))


def format_metrics(metrics: Dict[str, float]) -> str:
  lines = []
  for prefix in ("long", "short"):
    lines.append(f"{prefix}-best-threshold-f1: {metrics[prefix + '-best-threshold-f1']:.4f} "
                 f"(precision {metrics[prefix + '-best-threshold-precision']:.4f}, recall "
                 f"{metrics[prefix + '-best-threshold-recall']:.4f}, threshold "
                 f"{metrics[prefix + '-best-threshold']})")
  return "\n".join(lines)
