"""Trivial OpenKP baselines: the first five words, and the most frequent n-grams."""

import collections
from typing import Dict, List, Sequence

from tasks.openkp.data import OpenKpPage
from tasks.openkp.synthetic import STOPWORDS   # function words an n-gram may not be made of


def first_words(pages: Sequence[OpenKpPage], k: int = 5) -> Dict[str, List[List[str]]]:
  """{url: the first k words, each a one-word phrase}."""
  return {p.url: [[w] for w in p.words if w][:k] for p in pages}


def frequent_ngrams(pages: Sequence[OpenKpPage], k: int = 5, max_n: int = 3
                    ) -> Dict[str, List[List[str]]]:
  """{url: the k most frequent 1..max_n-grams (lower-cased, not only stopwords; ties: first
  occurrence)}."""
  out = {}
  for page in pages:
    words = [w for w in page.words if w]
    counts, first = collections.Counter(), {}
    for n in range(1, max_n + 1):
      for start in range(len(words) - n + 1):
        gram = tuple(w.lower() for w in words[start:start + n])
        if all(w in STOPWORDS for w in gram):
          continue
        counts[gram] += 1
        first.setdefault(gram, (start, n))
    ranked = sorted(counts, key=lambda g: (-counts[g], first[g]))
    out[page.url] = [list(g) for g in ranked[:k]]
  return out
