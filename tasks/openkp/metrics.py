"""OpenKP precision, recall and F1 at 1, 3 and 5 (docs/file_formats.md, "OpenKP").

A phrase is its words lower-cased and joined by one space (a plain string instead of a list of
words is joined character by character, so it scores 0 as in the official scorer); empty phrases
are dropped; both sides are de-duplicated keeping order. For k in 1, 3, 5: TP@k = how many of the
first k predictions are in the reference set; P@k = TP@k / k; R@k = TP@k / |reference|; F1@k
per page; every number is the mean over the reference pages. A url with several lines keeps its
last one. A reference page without key phrases is an error naming its url; a page missing from
the prediction scores 0 and is counted.

No TensorFlow import: `python -m tasks.openkp evaluate` starts quickly.
"""

import json
import os
from typing import Any, Dict, Iterable, List, Union

KS = (1, 3, 5)
MAIN_KEY = "F1@3"


def normalize_phrases(phrases: Any) -> List[str]:
  """Key phrases of one line -> de-duplicated, non-empty, lower-cased strings in order."""
  out = []
  for phrase in phrases or []:
    words = list(phrase) if isinstance(phrase, (str, list, tuple)) else [str(phrase)]
    key = " ".join(str(w) for w in words).lower().strip()
    if key and key not in out:
      out.append(key)
  return out


def read_lines(source: Union[str, Iterable[dict]], what: str) -> Dict[str, List[str]]:
  """{url: normalised phrases} of a JSONL file (or of parsed lines); the last line of a url wins."""
  if isinstance(source, str):
    if not os.path.isfile(source):
      raise FileNotFoundError(f"{what} file not found: {source}")
    records = []
    with open(source, encoding="utf-8") as f:
      for number, line in enumerate(f, start=1):
        if not line.strip():
          continue
        try:
          records.append((number, json.loads(line)))
        except json.JSONDecodeError as e:
          raise ValueError(f"{what} file {source}: line {number}: not valid JSON ({e.msg})") \
              from None
    name = source
  else:
    records, name = list(enumerate(source, start=1)), what
  out = {}
  for number, record in records:
    url = record.get("url") if isinstance(record, dict) else None
    if not isinstance(url, str):
      raise ValueError(f"{name}: line {number}: field 'url': missing or not a string")
    phrases = record.get("KeyPhrases")
    if phrases is not None and not isinstance(phrases, list):
      raise ValueError(f"{name}: line {number} (url {url}): field 'KeyPhrases': expected a "
                       "list of phrases")
    out[url] = normalize_phrases(phrases)
  return out


def page_scores(predicted: List[str], reference: List[str]) -> Dict[str, float]:
  scores = {}
  gold = set(reference)
  for k in KS:
    tp = sum(p in gold for p in predicted[:k])
    precision, recall = tp / k, tp / len(reference)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    scores.update({f"P@{k}": precision, f"R@{k}": recall, f"F1@{k}": f1})
  return scores


def evaluate(reference: Union[str, Iterable[dict]], prediction: Union[str, Iterable[dict]],
             skip_empty_references: bool = False) -> Dict[str, float]:
  """-> {"P@1", "R@1", "F1@1", ..., "F1@5", "pages", "missing", "extra", "skipped_empty"}.

  A reference page without key phrases raises ValueError naming its url, unless
  skip_empty_references (then it is left out and counted).
  """
  gold = read_lines(reference, "reference")
  predicted = read_lines(prediction, "prediction")
  empty = [url for url, phrases in gold.items() if not phrases]
  if empty and not skip_empty_references:
    raise ValueError(f"reference: url {empty[0]!r} has no key phrases ({len(empty)} such "
                     "page(s)); P/R/F1 are undefined for it (skip_empty_references leaves "
                     "them out)")
  for url in empty:
    del gold[url]
  if not gold:
    raise ValueError("reference: no page")
  totals = {f"{m}@{k}": 0.0 for k in KS for m in ("P", "R", "F1")}
  for url, reference_phrases in gold.items():
    for key, value in page_scores(predicted.get(url, []), reference_phrases).items():
      totals[key] += value
  out = {key: value / len(gold) for key, value in totals.items()}
  out.update(pages=len(gold), missing=len(set(gold) - set(predicted)),
             extra=len(set(predicted) - set(gold) - set(empty)), skipped_empty=len(empty))
  return out


def format_metrics(metrics: Dict[str, float]) -> str:
  lines = ["       P       R       F1"]
  for k in KS:
    lines.append(f"@{k}  {metrics[f'P@{k}']:.4f}  {metrics[f'R@{k}']:.4f}  "
                 f"{metrics[f'F1@{k}']:.4f}")
  lines.append(f"({metrics['pages']} pages, {metrics['missing']} missing from the prediction)")
  return "\n".join(lines)
