"""WikiHop sentences: `nltk.sent_tokenize`, as in Google's converter.

Google's WikiHop converter cuts every support document into sentences with
`nltk.sent_tokenize(doc)`: NLTK's Punkt tokenizer with its trained English parameters
(`punkt_tab/english`: abbreviations, collocations, sentence starters and the orthographic
context of about 20,000 words). Each sentence becomes a global token, so the sentences decide
Google's features. NLTK is a dependency of this package and the English punkt_tab files ship
with it (etc_realformer/data/nltk_data, NOTICE.md there); a copy on NLTK's own search path
(`python -m nltk.downloader punkt_tab`) is found first and is the same data.

Splitting costs about 0.3 ms per WikiHop example (1.8 MB of text a second on one core), a tenth
of the rest of the conversion. A hand-written approximation of Punkt's rules was used before
NLTK was a dependency; on 24 real WikiHop dev items it changed 9 of Google's 15 features, so
it was removed.
"""

import functools
import os
from typing import Callable, List

from absl import logging

from etc_realformer import data as etc_data

# NLTK's English Punkt parameters shipped with this package.
NLTK_DATA = os.path.join(os.path.dirname(etc_data.__file__), "nltk_data")


@functools.lru_cache(maxsize=None)
def sentence_splitter() -> Callable[[str], List[str]]:
  """nltk.sent_tokenize with the English punkt_tab data (NLTK's search path, then the copy
  shipped with this package); ValueError saying how to install what is missing."""
  try:
    import nltk  # pylint: disable=import-outside-toplevel
  except ImportError:
    raise ValueError("WikiHop: sentences need the NLTK package, a dependency "
                     "of etc-realformer: run `bash .ci/setup` or `pip install nltk`") from None
  if NLTK_DATA not in nltk.data.path:
    nltk.data.path.append(NLTK_DATA)
  try:
    nltk.data.find("tokenizers/punkt_tab/english/")
  except LookupError:
    raise ValueError(
        "WikiHop: sentences need NLTK's English punkt_tab parameters, which "
        f"ship with etc-realformer in {NLTK_DATA} but are not there (reinstall the package "
        "with `pip install -e .`, or run `python -m nltk.downloader punkt_tab`)") from None
  logging.info("WikiHop: sentences from nltk.sent_tokenize (punkt_tab english)")
  return functools.partial(nltk.sent_tokenize, language="english")
