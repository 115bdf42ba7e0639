"""OpenKP model outputs -> the leaderboard's JSONL lines, as Google's prediction code picks the
phrases (etcmodel/models/openkp/eval_utils.py and run_finetuning.py, `_process_prediction`).

Rules:
  1. ngram_logits [5, L]: cell (n - 1, s) scores the n words starting at word s. The
     `max_position_predictions` (100) highest cells are taken, best first. Cells masked to
     -10000 (phrases past the input) are not excluded: on a short page they fill the list
     after the real ones.
  2. Each cell becomes the words s .. s+n-1 of the page's `text.split(' ')`, joined by one
     space and lower-cased. A slice past the end of the text is shortened (or empty); an empty
     phrase is skipped. Word indices count the VDOM elements' words, which are the text's when
     the elements tile it.
  3. Phrases are de-duplicated in order; the first 5 (`max_kp_predictions`) are the prediction.
  4. The prediction line is {"url": url, "KeyPhrases": [[phrase], ...]}: each phrase one string.

Ties: Google takes the top cells with numpy's argpartition (which of several equal logits it
keeps is unspecified) and then sorts them stably by logit; here equal logits are ordered by
their flat index (n first, then the start word), so the -10000 cells come 1-grams first, left
to right. With fewer than 100 cells (long length < 20) all are taken (Google's argpartition
would fail).
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
