"""OpenKP model outputs -> the leaderboard's JSONL lines, as Google's prediction code picks the
phrases (etcmodel/models/openkp/eval_utils.py and run_finetuning.py, `_process_prediction`).

The `max_position_predictions` (100) highest cells of ngram_logits [5, L] (cell (n - 1, s): the
n words from word s), best first, become the lower-cased words of the page's `text.split(' ')`;
empty phrases are skipped, duplicates dropped, and the first 5 (`max_kp_predictions`) make the
line {"url": url, "KeyPhrases": [[phrase], ...]}. The -10000 cells are not excluded (on a short
page they fill the list), and equal logits are ordered by their flat index, where Google's
argpartition leaves the order unspecified. Every rule: docs/official_layouts/openkp.md,
"Decoding".
"""

from typing import Dict, List, Sequence, Tuple

import numpy as np

from tasks.openkp.data import OpenKpPage

OUTPUT_NAMES = ("ngram_logits",)
MAX_POSITION_PREDICTIONS = 100
MAX_KP_PREDICTIONS = 5


def top_positions(ngram_logits: np.ndarray, max_predictions: int = MAX_POSITION_PREDICTIONS
                  ) -> List[Tuple[int, int, float]]:
  """(start word, phrase length, logit) of the best `max_predictions` cells, best first."""
  logits = np.asarray(ngram_logits)
  if logits.ndim != 2:
    raise ValueError(f"ngram_logits: expected [max_ngram, length], got shape {logits.shape}")
  flat = logits.reshape(-1)
  order = np.lexsort((np.arange(flat.size), -flat.astype(np.float64)))[:max_predictions]
  width = logits.shape[1]
  return [(int(cell % width), int(cell // width) + 1, float(flat[cell])) for cell in order]


def key_phrases(words: Sequence[str], positions: Sequence[Tuple[int, int, float]],
                max_predictions: int = MAX_KP_PREDICTIONS) -> List[str]:
  """Rules 2 and 3: positions (best first) -> up to `max_predictions` distinct phrases."""
  phrases: List[str] = []
  for start, length, _ in positions:
    if length <= 0:
      continue
    phrase = " ".join(words[start:start + length]).lower()
    if not phrase:
      continue
    if phrase not in phrases:
      phrases.append(phrase)
    if len(phrases) >= max_predictions:
      break
  return phrases


def page_prediction(url: str, text: str, ngram_logits: np.ndarray) -> dict:
  """One prediction line for a page (rules 1-4)."""
  return {"url": url,
          "KeyPhrases": [[p] for p in key_phrases(text.split(" "), top_positions(ngram_logits))]}


def prediction_lines(pages: Sequence[OpenKpPage], chosen: Dict[str, List[List[str]]]
                     ) -> List[dict]:
  """One line per page (input order) from {url: phrases, each a list of words}; a page with
  nothing chosen gets an empty list (the baselines' predictions)."""
  return [{"url": p.url, "KeyPhrases": chosen.get(p.url, [])} for p in pages]
