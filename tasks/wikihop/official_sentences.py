"""Sentence splitting for the official WikiHop layout.

Google's WikiHop converter cuts every support document into sentences with
`nltk.sent_tokenize(doc)`: NLTK's Punkt tokenizer with its trained English parameters
(`punkt_tab/english`: abbreviations, collocations, sentence starters and the orthographic
context of about 20,000 words). Each sentence becomes a global token, so the sentences decide
the official features.

NLTK and its Punkt data are not dependencies of this package (the data do not come with the
NLTK wheel; `python -m nltk.downloader punkt_tab` fetches them). So:

  "nltk"     nltk.sent_tokenize, exactly as Google's converter; a clear error when NLTK or the
             punkt_tab data are missing.
  "builtin"  `split_sentences` below: Punkt's decision rules with a short built-in list of
             abbreviations and sentence starters instead of the trained parameters. It gives
             nltk's sentences on the WikiHop texts of this package's synthetic data and tests;
             on general English text it can differ where the trained parameters matter (a rare
             abbreviation, an initial or a number before a capitalised word, collocations).
  "auto"     "nltk" when NLTK and its punkt_tab data are installed, else "builtin".

`sentence_splitter(mode)` returns the splitter and logs once per process which one is in use.
"""

import functools
import re
from typing import Callable, List

from absl import logging

MODES = ("auto", "nltk", "builtin")

# Abbreviations (lower case, without the final period) after which a period does not end a
# sentence unless a typical sentence starter follows. Common English titles, months, days,
# company suffixes and similar; Punkt's trained list is longer.
ABBREVIATIONS = frozenset("""
mr mrs ms messrs dr prof gen col lt maj adm sen rep reps jr sr st ft ave
jan feb aug sep sept oct nov dec tues wed fri inc corp co cos ltd bros cie vs
a.m p.m u.s u.k u.s.a u.n d.c ph.d
""".split())

# Words that start a sentence after an abbreviation (Punkt's "sentence starters", lower case).
SENTENCE_STARTERS = frozenset("""
the a an he she it they we i this that these those there in on at but and however when while
if although though since so thus many most some yet according meanwhile moreover
""".split())

_NUMBER = re.compile(r"^-?[\.,]?\d[\d,\.-]*\.?$")
_INITIAL = re.compile(r"^[^\W\d]\.$")
# A possible sentence end: . ? or ! (and closing quotes or brackets), whitespace, a token.
_END = re.compile(r"[.?!][\"')\]}]*(?=\s+(\S+))")
_WORD_START_STOP = set("(\"`{[:;&#*@)}]-,'")   # characters that Punkt splits off a word


def _word_before(text: str, end: int) -> str:
  """The word that ends with the period at `end` (Punkt's word token holding it)."""
  start = end
  while start > 0 and not text[start - 1].isspace() and text[start - 1] not in _WORD_START_STOP:
    start -= 1
  return text[start:end + 1]


def _next_word(token: str) -> str:
  """The first word of the token after a possible break (punctuation split off)."""
  match = re.match(r"[^\s.,;:!?\"')\]}]+|\S", token)
  return match.group() if match else token


def _is_break(text: str, end: int, next_token: str) -> bool:
  """Whether the sentence-end character at `end` ends a sentence (Punkt's two passes)."""
  char = text[end]
  if char in "?!":
    return True
  word = _word_before(text, end)
  following = _next_word(next_token)
  if word == ".":                           # a period after a bracket or quote
    return True
  first_upper = following[:1].isupper()
  first_lower = following[:1].islower()
  starter = first_upper and following.lower() in SENTENCE_STARTERS
  stem = word[:-1].lower()
  if word.endswith("..") or stem in ABBREVIATIONS or stem.split("-")[-1] in ABBREVIATIONS:
    if _INITIAL.match(word):                 # an abbreviation that is an initial stays one
      return False
    return starter
  if _INITIAL.match(word) or _NUMBER.match(word.lower()):
    if following in (";", ":", ",", ".", "!", "?") or first_lower:
      return False
    if _INITIAL.match(word) and first_upper and not starter:
      return False
  return True


def split_sentences(text: str) -> List[str]:
  """The sentences of `text` as nltk.sent_tokenize gives them on plain prose: the text is cut
  after a sentence end followed by whitespace; the whitespace between sentences and at the end
  is dropped (leading whitespace stays with the first sentence). A text that is empty or only
  whitespace has no sentence."""
  sentences, start = [], 0
  for match in _END.finditer(text):
    if _is_break(text, match.start(), match.group(1)):
      sentences.append(text[start:match.end()])
      start = match.start(1)
  end = len(text.rstrip())
  if end > start:
    sentences.append(text[start:end])
  return sentences


def _nltk_sent_tokenize() -> Callable[[str], List[str]]:
  """nltk.sent_tokenize with the English punkt_tab data; ImportError / LookupError if missing."""
  import nltk  # pylint: disable=import-outside-toplevel
  nltk.data.find("tokenizers/punkt_tab/english/")
  return functools.partial(nltk.sent_tokenize, language="english")


@functools.lru_cache(maxsize=None)
def sentence_splitter(mode: str = "auto") -> Callable[[str], List[str]]:
  """The splitter of `mode` ("auto", "nltk" or "builtin"), logged once per mode."""
  if mode not in MODES:
    raise ValueError(f"sentence_splitter: {mode!r} is not one of {', '.join(MODES)}")
  if mode != "builtin":
    try:
      split = _nltk_sent_tokenize()
      logging.info("WikiHop official layout: sentences from nltk.sent_tokenize (punkt_tab "
                   "english), as Google's converter")
      return split
    except (ImportError, LookupError) as e:
      if mode == "nltk":
        raise ValueError(
            "sentence_splitter: nltk needs NLTK and its punkt_tab data (pip install nltk; "
            f"python -m nltk.downloader punkt_tab): {type(e).__name__}: "
            f"{str(e).strip().splitlines()[0] if str(e).strip() else ''}") from None
  logging.info("WikiHop official layout: sentences from the built-in Punkt-style splitter "
               "(NLTK with punkt_tab not %s); it equals nltk.sent_tokenize on plain prose like "
               "WikiHop's, not on every text", "used" if mode == "builtin" else "installed")
  return split_sentences
