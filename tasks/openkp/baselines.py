"""Trivial OpenKP baselines: the first five words, and the most frequent n-grams."""

import collections
from typing import Dict, List, Sequence

from tasks.openkp.data import OpenKpPage


# Function words an n-gram may not be made of only (also the generator's function words).
STOPWORDS = frozenset("""
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each even ever every
    few for from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just least less may me might more most much must my myself no nor not
    now of off on once only or other our ours ourselves out over own per please quite rather same
    she should since so some still such than that the their theirs them themselves then there
    these they this those though through to too under until up upon us very was we well were what
    when where whether which while who whom whose why will with within without would yet you your
    yours yourself yourselves
    """.split())


def first_words(pages: Sequence[OpenKpPage], k: int = 5) -> Dict[str, List[List[str]]]:
  """{url: the first k words, each a one-word phrase}."""
  return {p.url: [[w] for w in p.words if w][:k] for p in pages}


def top_ngrams(words: Sequence[str], k: int = 5, max_n: int = 3) -> List[List[str]]:
  """The k most frequent 1..max_n-grams of `words`, lower-cased, leaving out those made only of
  STOPWORDS; ties go to the n-gram that occurs first (earlier start, then the shorter one)."""
  words = [w.lower() for w in words if w]
  counts, first = collections.Counter(), {}
  for n in range(1, max_n + 1):
    for start in range(len(words) - n + 1):
      gram = tuple(words[start:start + n])
      if all(w in STOPWORDS for w in gram):
        continue
      counts[gram] += 1
      first.setdefault(gram, (start, n))
  ranked = sorted(counts, key=lambda g: (-counts[g], first[g]))
  return [list(g) for g in ranked[:k]]


def frequent_ngrams(pages: Sequence[OpenKpPage], k: int = 5, max_n: int = 3
                    ) -> Dict[str, List[List[str]]]:
  """{url: the k most frequent n-grams of the page (top_ngrams)}."""
  return {page.url: top_ngrams(page.words, k, max_n) for page in pages}
