"""OpenKP model outputs -> the leaderboard's JSONL lines {"url", "KeyPhrases": [[words], ...]}."""

from typing import Dict, List, Sequence

import numpy as np

from tasks.openkp.data import OpenKpPage
from tasks.openkp.features import phrase_key

OUTPUT_NAMES = ("ngram_logits",)
TOP_K = 5


def top_phrases(page: OpenKpPage, ngram_logits: np.ndarray, k: int = TOP_K) -> List[List[str]]:
  """The k best-scoring distinct phrases (compared as the metric does), each a list of words.

  ngram_logits [N, W]: cell (n - 1, s) scores words s..s+n-1. Cells past the input are -10000
  and never chosen; phrases with an empty word (two spaces in the text) are skipped.
  """
  num_n, width = ngram_logits.shape
  flat = ngram_logits.reshape(-1)
  order = np.argsort(-flat, kind="stable")
  chosen, seen = [], set()
  for cell in order:
    if flat[cell] <= -10000.0 or len(chosen) == k:
      break
    n, start = divmod(int(cell), width)
    words = page.words[start:start + n + 1]
    if len(words) != n + 1 or not all(words):
      continue
    key = phrase_key(words)
    if key not in seen:
      seen.add(key)
      chosen.append(list(words))
  del num_n
  return chosen


def prediction_lines(pages: Sequence[OpenKpPage], chosen: Dict[str, List[List[str]]]
                     ) -> List[dict]:
  """One line per page (input order); a page with nothing chosen gets an empty list."""
  return [{"url": p.url, "KeyPhrases": chosen.get(p.url, [])} for p in pages]
