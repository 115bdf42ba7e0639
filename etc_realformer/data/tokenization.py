"""WordPiece and SentencePiece tokenizers behind one interface, cutting text as the official ETC
fine-tuning code does (docs/tokenizers.md).

Both tokenizers keep the grouping of pieces into words, which whole-word masking needs:

  tok = load_tokenizer(vocab_file="vocab.txt")
  tok.tokenize_words(["Unaffable dogs"])   # [[[id(un), id(##aff), id(##able)], [id(dogs)]]]
  tok.tokenize(["Unaffable dogs"])         # [[id(un), id(##aff), id(##able), id(dogs)]]

The three ways Google's released ETC checkpoints tokenize:

  WordPieceTokenizer(vocab.txt)                       BERT uncased: basic cut, lower-case, strip
                                                      accents, greedy WordPiece with "##"
  SentencePieceTokenizer(*.model)                     SentencePiece on the whole text
  SentencePieceTokenizer(*.model, split_punctuation)  BERT's basic cut (case kept), then
                                                      SentencePiece on every word

The "basic cut" is BERT's BasicTokenizer: control characters are dropped, whitespace separates
words, every punctuation character and every CJK ideograph is a word of its own.
`tokenizer_for_vocab` picks the tokenizer from the vocabulary file's name and
`vocab_from_checkpoint_folder` finds the vocabulary beside an official checkpoint.

`WordPieceTokenizer` runs tensorflow-text's fast BERT tokenizer (C++) on the text the library
tokenizes as the Python code here does (decided character by character), and the Python code
(the reference) on the rest, so its output is the same whichever runs (`backend="python"`
forces the reference; see docs/tokenizers.md, "Fast path (tensorflow-text)").

Why one long module: the Python reference, the character-by-character routing that decides which
text the library may take and the two tokenizers share the basic cut and its character classes;
split apart, each half would have to import the other's private tables, and the proof that both
paths give the same ids (tests/test_fast_tokenization.py) is easiest to follow in one place.
"""

import abc
import bisect
import contextlib
import dataclasses
import functools
import gc
import hashlib
import json
import os
import re
import sys
import unicodedata
from typing import Dict, List, Optional, Sequence, Tuple

from absl import logging
import numpy as np

import etc_realformer  # pylint: disable=unused-import  # sets TF_USE_LEGACY_KERAS first
import tensorflow as tf  # pylint: disable=g-bad-import-order
import tensorflow_text as tf_text  # pylint: disable=g-bad-import-order

from etc_realformer.data import vocab
from etc_realformer.data import vocab_learner
from etc_realformer.io_utils import atomic_write_json

# SentencePiece marks the start of a word (a piece preceded by whitespace) with this character.
SPM_WORD_START = "\u2581"
# WordPiece marks a piece that continues the previous one with this prefix.
WORDPIECE_CONTINUATION = "##"
# Longer words (in characters, after normalization) become one [UNK]. The official ETC code
# uses 200 (BERT's original tokenizer 100).
MAX_CHARS_PER_WORD = 200

# The pieces the official NQ converter uses as [CLS] and [SEP] with the RoBERTa SentencePiece
# model of the ETC-large checkpoints, which has no [CLS] / [SEP] pieces.
ETC_SPM_CLS_PIECE = "<unused_63>"
ETC_SPM_SEP_PIECE = "<unused_2>"

# Vocabulary file names in a released checkpoint folder, in order of preference.
WORDPIECE_VOCAB_NAMES = ("vocab.txt", "vocab_bert_uncased_english.txt")
SENTENCEPIECE_MODEL_NAME = "vocab_gpt_for_etc.model"
OFFICIAL_CHECKPOINT_PREFIX = "model.ckpt"
OFFICIAL_CONFIG_NAME = "etc_config.json"

DEFAULT_BATCH_SIZE = 256
_MAX_CACHED_WORDS = 1 << 20
# The fast path caches the results of texts up to this long (words, names, short questions).
_CACHED_TEXT_CHARS = 64
# backend="auto" tokenizes this many characters in Python before it sets the library up (a few
# seconds once per process, 0.1 s per tokenizer), so that small jobs do not pay for it.
_FAST_PATH_AFTER_CHARS = 100_000
_SIGMA = "\u03a3"   # Greek capital sigma: the one character Python lower-cases by context

# The CJK ideograph blocks BERT's basic tokenizer puts spaces around, as [first, last] ranges.
_CJK_RANGES = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2A6DF),
               (0x2A700, 0x2B73F), (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0x2F800, 0x2FA1F))


# ------------------------------------------------------------------------ BERT's basic cut


def _is_bert_punctuation(cp: int, category: str) -> bool:
  """Non-alphanumeric ASCII symbols and every Unicode P* character."""
  return (33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126
          or category.startswith("P"))


@dataclasses.dataclass(frozen=True)
class _CharTables:
  """Code points by their role in the basic cut (lists of ints)."""
  dropped: List[int]       # NUL, U+FFFD and control/format characters other than \t \n \r
  whitespace: List[int]    # separate words
  punctuation: List[int]   # a word of their own
  marks: List[int]         # Mn: removed with the accents when lower-casing


# ------------------------------------------------------ per-code-point tables, cached on disk
# The tables below take one pass over all 1.1 million code points each (0.5 s for the basic
# cut, 0.8 s for the fast-path routing and 0.4 s for the library check, on a 2-core machine),
# which every process that tokenizes would pay: each command a user starts, each Horovod rank.
# They depend only on this module's rules, Python's Unicode database and the installed
# tensorflow-text, so they are kept in a JSON file per table whose name holds a hash of all three:
# any change to them makes a new file. $ETC_REALFORMER_CACHE picks the folder (default
# ~/.cache/etc-realformer); a file that cannot be read or written is recomputed, not an error.
CACHE_ENV = "ETC_REALFORMER_CACHE"


@functools.lru_cache(maxsize=None)
def _tables_key() -> str:
  digest = hashlib.sha256()
  with open(__file__, "rb") as f:
    digest.update(f.read())
  digest.update(f"{unicodedata.unidata_version} {sys.version_info[:2]} "
                f"{getattr(tf_text, '__version__', '')}".encode())
  return digest.hexdigest()[:16]


def _disk_cached(name: str, compute):
  """compute() (a JSON-able dict), read from the table cache when it is there, else computed
  and written to it."""
  try:
    root = os.environ.get(CACHE_ENV) or os.path.join(os.path.expanduser("~"), ".cache",
                                                     "etc-realformer")
    path = os.path.join(root, "unicode_tables", f"{name}-{_tables_key()}.json")
  except OSError:
    return compute()
  try:
    with open(path) as f:
      return json.load(f)
  except (OSError, ValueError):
    pass
  value = compute()
  try:
    atomic_write_json(path, value, indent=None)
  except OSError as e:
    logging.debug("tokenization: could not cache %s (%s)", path, e)
  return value


@functools.lru_cache(maxsize=None)
def _char_tables() -> _CharTables:
  return _CharTables(**_disk_cached(
      "char_tables", lambda: dataclasses.asdict(_compute_char_tables())))


def _compute_char_tables() -> _CharTables:
  dropped, whitespace, punctuation, marks = [], [], [], []
  for cp in range(sys.maxunicode + 1):
    char = chr(cp)
    category = unicodedata.category(char)
    if cp in (0, 0xFFFD) or (category in ("Cc", "Cf") and char not in "\t\n\r"):
      dropped.append(cp)
    elif char in " \t\n\r" or category == "Zs" or char.isspace():
      whitespace.append(cp)   # isspace: U+2028/U+2029, on which BERT's str.split() cuts too
    elif _is_bert_punctuation(cp, category):
      punctuation.append(cp)
    elif category == "Mn":
      marks.append(cp)
  return _CharTables(dropped, whitespace, punctuation, marks)


def _class_body(code_points: Sequence[int]) -> str:
  """The inside of a regex character class matching `code_points` (sorted ints)."""
  parts, i = [], 0
  while i < len(code_points):
    j = i
    while j + 1 < len(code_points) and code_points[j + 1] == code_points[j] + 1:
      j += 1
    first, last = code_points[i], code_points[j]
    parts.append(f"\\U{first:08x}" if first == last else f"\\U{first:08x}-\\U{last:08x}")
    i = j + 1
  return "".join(parts)


@functools.lru_cache(maxsize=None)
def _patterns() -> Dict[str, re.Pattern]:
  """Compiled regexes of the basic cut, built once."""
  tables = _char_tables()
  cjk = "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in _CJK_RANGES)
  punct, dropped = _class_body(tables.punctuation), _class_body(tables.dropped)
  word_char = f"[^{_class_body(tables.whitespace)}{punct}{cjk}{dropped}]"
  return {
      # A punctuation character, a CJK ideograph, or a run of other word characters that
      # dropped characters do not interrupt ("a<U+200B>b" is one word, as in BERT).
      "word": re.compile(f"[{punct}{cjk}]|{word_char}(?:[{dropped}]*{word_char})*"),
      "punct_split": re.compile(f"[{punct}]|[^{punct}]+"),
      # What BERT lower-cases as one string: a run between whitespace and CJK ideographs.
      "lowered_unit": re.compile(f"[^{_class_body(tables.whitespace)}{cjk}]+"),
  }


@functools.lru_cache(maxsize=None)
def _translate_tables() -> Tuple[Dict[int, None], Dict[int, None]]:
  """str.translate tables deleting (dropped characters, combining marks)."""
  tables = _char_tables()
  return dict.fromkeys(tables.dropped), dict.fromkeys(tables.marks)


def basic_word_spans(text: str) -> List[Tuple[int, int]]:
  """[start, end) character offsets of the words of BERT's basic cut of `text`."""
  return [match.span() for match in _patterns()["word"].finditer(text)]


def _sigma_forms(text: str) -> Dict[int, str]:
  """Position of every capital sigma in `text` -> the lower-case form BERT gives it.

  Lower-casing is per character except for sigma, which becomes final "\u03c2" or "\u03c3"
  depending on its neighbours in the string BERT lower-cases (the whitespace-separated token,
  dropped characters removed), which can be wider than its word ("Σ" in "dΣ.e").
  """
  dropped = _translate_tables()[0]
  forms = {}
  for unit in _patterns()["lowered_unit"].finditer(text):
    if _SIGMA not in unit.group():
      continue
    kept = [(unit.start() + k, c) for k, c in enumerate(unit.group()) if ord(c) not in dropped]
    token = "".join(c for _, c in kept)
    lowered = token.lower()
    for i, (position, char) in enumerate(kept):
      if char == _SIGMA:
        forms[position] = lowered[len(token[:i].lower())]
  return forms


def basic_word_texts(text: str, spans: Sequence[Tuple[int, int]], lower_case: bool
                     ) -> List[str]:
  """The raw words text[start:end] of `spans`; when lower-casing, a capital sigma is replaced
  by the form its context gives it, so that every word can be normalized on its own."""
  words = [text[s:e] for s, e in spans]
  if not lower_case or _SIGMA not in text:
    return words
  forms = _sigma_forms(text)
  return ["".join(forms.get(s + k, c) for k, c in enumerate(word)) if _SIGMA in word else word
          for word, (s, _) in zip(words, spans)]


def basic_words(word: str, lower_case: bool) -> List[str]:
  """The tokens BERT's basic tokenizer makes of one word of `basic_word_spans`.

  Dropped characters are removed; with `lower_case` the word is lower-cased, decomposed (NFD)
  and stripped of combining marks, then cut again at punctuation (normalization can create
  some). Usually a list of one token; empty when nothing is left.
  """
  dropped, marks = _translate_tables()
  word = word.translate(dropped)
  if not lower_case:
    return [word] if word else []
  word = unicodedata.normalize("NFD", word.lower()).translate(marks)
  return _patterns()["punct_split"].findall(word)


# ----------------------------------------------------------------------------- interface


def _split_rows(values: list, splits: np.ndarray) -> list:
  """`values` cut at the row splits (`RaggedTensor.to_list` is far slower)."""
  splits = splits.tolist()
  return [values[start:end] for start, end in zip(splits[:-1], splits[1:])]


def _check_texts(texts) -> List[str]:
  """Returns `texts` as a list of str; rejects a bare string (it would iterate characters)."""
  if isinstance(texts, (str, bytes)):
    raise TypeError("expected a list of texts, got a single string; wrap it in a list")
  return [t.decode("utf-8") if isinstance(t, bytes) else str(t) for t in texts]


class Tokenizer(abc.ABC):
  """Common interface of the tokenizers.

  Attributes:
    kind: "wordpiece" or "sentencepiece".
    vocab_size: Number of ids; every id produced is in `[0, vocab_size)`.
    pad_id: Id of the padding token.
    unk_id: Id of the unknown token.
    cls_id: Id of the `[CLS]` token.
    sep_id: Id of the `[SEP]` token.
    mask_id: Id of the `[MASK]` token (None for a SentencePiece model loaded without one).
    cuts_words_first: True when a text tokenizes as the concatenation of its basic-cut words
      (`basic_word_spans`), so word pieces can be cached per word.
    has_word_spans: True when `tokenize_with_word_spans` gives every piece the span of its
      basic-cut word itself (`span_tokenization.OffsetTokenizer` then uses it).
    batch_size: Number of texts sent to TensorFlow per call.
  """

  kind: str
  vocab_size: int
  pad_id: int
  unk_id: int
  cls_id: int
  sep_id: int
  mask_id: Optional[int]
  cuts_words_first: bool = True
  has_word_spans: bool = False

  def __init__(self, batch_size: int = DEFAULT_BATCH_SIZE):
    if batch_size < 1:
      raise ValueError(f"batch_size must be positive, got {batch_size}")
    self.batch_size = batch_size

  @property
  def special_ids(self) -> dict:
    """The special ids by name (pad, unk, cls, sep, mask)."""
    return {"pad": self.pad_id, "unk": self.unk_id, "cls": self.cls_id, "sep": self.sep_id,
            "mask": self.mask_id}

  @property
  @abc.abstractmethod
  def signature(self) -> dict:
    """What the ids depend on besides the vocabulary file (for conversion fingerprints)."""

  def tokenize_words(self, texts: Sequence[str]) -> List[List[List[int]]]:
    """Tokenizes texts, keeping the pieces of each word together.

    Args:
      texts: The texts (a list of str, not a single str).

    Returns:
      For every text, for every word, the piece ids of that word. Words that produce no pieces
      are dropped, so every inner list is non-empty.
    """
    texts = _check_texts(texts)
    result = []
    for start in range(0, len(texts), self.batch_size):
      result.extend(self._tokenize_words_batch(texts[start:start + self.batch_size]))
    return result

  def tokenize(self, texts: Sequence[str]) -> List[List[int]]:
    """Tokenizes texts into flat lists of piece ids, one list per text."""
    return [[piece for word in words for piece in word] for words in self.tokenize_words(texts)]

  def word_texts(self, text: str, spans: Sequence[Tuple[int, int]]) -> List[str]:
    """The words of `text` at `spans` (basic-cut words), as `tokenize_words` should see them."""
    return [text[s:e] for s, e in spans]

  @abc.abstractmethod
  def _tokenize_words_batch(self, texts: List[str]) -> List[List[List[int]]]:
    """`tokenize_words` for one batch of at most `batch_size` texts."""

  @abc.abstractmethod
  def id_to_token(self, ids: Sequence[int]) -> List[str]:
    """The piece strings of `ids`."""

  @abc.abstractmethod
  def detokenize(self, ids: Sequence[int]) -> str:
    """Best-effort text of a sequence of ids (padding is dropped)."""

  def _check_ids(self, ids: Sequence[int]) -> List[int]:
    array = np.asarray(ids).reshape([-1])
    if array.dtype.kind not in "iu":   # floats, objects: each one through int()
      array = np.fromiter((int(i) for i in array), np.int64, array.size)
    outside = np.flatnonzero((array < 0) | (array >= self.vocab_size))
    if outside.size:
      raise ValueError(f"id {int(array[outside[0]])} is outside the vocabulary "
                       f"[0, {self.vocab_size})")
    return array.tolist()


# -------------------------------------------------------------- the tensorflow-text fast path
#
# tensorflow_text.FastBertTokenizer implements BERT's rules in C++, but not everywhere as the
# reference above does: it normalizes with ICU (case folding and compatibility decomposition
# where Python lower-cases and decomposes canonically, one character at a time), turns most
# control characters into spaces, and knows a newer Unicode version. Whether the two agree is
# decided per character (`fast_path_divergence`; the tests check the rule against the library on
# every code point). Text is cut at ASCII whitespace, where both always end a word; a run
# between two such spaces goes to the library only if it holds no divergent character and is
# short enough that no word-length limit can apply in it. Every other run goes to the reference.

BACKENDS = ("auto", "tensorflow_text", "python")

# Why the library may tokenize a character unlike the reference (docs/tokenizers.md, "Fast
# path"). The last seven only apply when lower-casing.
DIVERGENCES = (
    "surrogate",         # a lone surrogate: the library's input must be valid UTF-8
    "unassigned",        # not assigned in Python's Unicode version; the library's ICU is newer
    "dropped",           # deleted inside its word by BERT; the library makes most of them spaces
    "combining_mark",    # stripped by both, but a word-initial mark is outside the library's span
    "capital_sigma",     # Python lower-cases a word-final sigma to the final form
    "ignorable_letter",  # Hangul fillers, which the library deletes
    "case_folding",      # the library case-folds (ß -> ss), Python lower-cases (ß stays)
    "compatibility",     # the library also undoes compatibility forms (² -> 2, ª -> a)
    "reordering",        # a mark Python's NFD may reorder and the library does not
    "role_change",       # normalizing changes its role in the basic cut (≠ -> "=" + a mark)
)

_HANGUL_FILLERS = frozenset((0x115F, 0x1160, 0x3164, 0xFFA0))
_ASCII_SPACES = " \t\n\r"
# FastWordpieceTokenizer refuses vocabulary tokens longer than this (UTF-8 bytes, "##" excluded).
_LIBRARY_MAX_TOKEN_BYTES = 256
# Longest run (characters) the library gets; longer runs are rare and go to the reference.
_MAX_LIBRARY_RUN = 10000
# Bytes of text per library call (bounds the memory of the offset arithmetic).
_LIBRARY_CALL_BYTES = 1 << 22


@functools.lru_cache(maxsize=None)
def _role_sets() -> Tuple[frozenset, frozenset, frozenset]:
  """(dropped, whitespace, punctuation) code points of the basic cut, as sets."""
  tables = _char_tables()
  return frozenset(tables.dropped), frozenset(tables.whitespace), frozenset(tables.punctuation)


def _cut_role(char: str) -> str:
  """What a character is to the basic cut: dropped, space, punctuation, cjk or word."""
  cp = ord(char)
  dropped, whitespace, punctuation = _role_sets()
  if cp in dropped:
    return "dropped"
  if cp in whitespace:
    return "space"
  if cp in punctuation:
    return "punctuation"
  if cp >= _CJK_RANGES[0][0] and any(first <= cp <= last for first, last in _CJK_RANGES):
    return "cjk"
  return "word"


def _reference_normalized(char: str, lower_case: bool) -> str:
  """What the reference makes of one non-dropped character before WordPiece."""
  if not lower_case:
    return char
  return unicodedata.normalize("NFD", char.lower()).translate(_translate_tables()[1])


def fast_path_divergence(char: str, lower_case: bool = True) -> Optional[str]:
  """Why tensorflow-text may tokenize `char` unlike the reference (one of DIVERGENCES), or None.

  None: in a run of such characters (between ASCII whitespace) the library gives the same
  pieces, words and word spans as the reference. `WordPieceTokenizer` sends every run holding
  a divergent character to the reference.

  Args:
    char: One character.
    lower_case: The tokenizer's `lower_case`.

  Raises:
    ValueError: If `char` is not a string of one character.
  """
  if not isinstance(char, str) or len(char) != 1:
    raise ValueError(f"expected a single character, got {char!r}")
  category = unicodedata.category(char)
  if category == "Cs":
    return "surrogate"
  if category == "Cn":
    return "unassigned"
  role = _cut_role(char)
  if role == "dropped":
    return "dropped"
  # Whitespace is a word boundary on both sides (the library makes it a plain space first), and
  # without lower-casing nothing else is normalized.
  if role == "space" or not lower_case:
    return None
  if category == "Mn":
    return "combining_mark"
  if char == _SIGMA:
    return "capital_sigma"
  if ord(char) in _HANGUL_FILLERS:
    return "ignorable_letter"
  if char.lower() != char.casefold():
    return "case_folding"
  if unicodedata.normalize("NFKD", char) != unicodedata.normalize("NFD", char):
    return "compatibility"
  # NFD sorts adjacent marks by combining class; the library maps every character on its own.
  # Mn marks are stripped anyway, so only the other marks (Mc) could end up in another order.
  if any(unicodedata.combining(c) and unicodedata.category(c) != "Mn"
         for c in unicodedata.normalize("NFD", char.lower())):
    return "reordering"
  # The reference cuts the raw text and cuts punctuation again after normalizing (all pieces
  # keeping the raw word's span); the library only cuts the normalized text.
  roles = [_cut_role(c) for c in _reference_normalized(char, True)]
  if role == "word":
    changed = not roles or set(roles) != {"word"}   # (nothing left counts as a change)
  else:
    changed = roles != [role]   # one punctuation character or CJK ideograph stays one
  return "role_change" if changed else None


@dataclasses.dataclass(frozen=True)
class _Routing:
  """The divergent characters of one mode (`fast_path_divergence`)."""
  firsts: List[int]     # the divergent code points as [first, last] ranges, in order
  lasts: List[int]
  expansion: int        # the most characters a non-divergent character normalizes to

  def is_divergent(self, cp: int) -> bool:
    k = bisect.bisect_right(self.firsts, cp) - 1
    return k >= 0 and cp <= self.lasts[k]

  def code_points(self, first: int = 0, last: int = sys.maxunicode) -> List[int]:
    """The divergent code points in [first, last]."""
    return [cp for a, b in zip(self.firsts, self.lasts) for cp in range(max(a, first),
                                                                        min(b, last) + 1)]


@functools.lru_cache(maxsize=None)
def _fast_path_routing(lower_case: bool) -> _Routing:
  """Every code point through `fast_path_divergence`, once per mode (cached on disk)."""
  return _Routing(**_disk_cached(f"fast_path_routing_{'lower' if lower_case else 'cased'}",
                                 lambda: dataclasses.asdict(_compute_routing(lower_case))))


def _compute_routing(lower_case: bool) -> _Routing:
  firsts, lasts, expansion = [], [], 1
  for cp in range(sys.maxunicode + 1):
    char = chr(cp)
    category = unicodedata.category(char)
    if category == "Co":
      continue   # private use: a word character without case or decomposition (not divergent)
    # Most code points are unassigned: no need for the full rule.
    if category in ("Cn", "Cs") or fast_path_divergence(char, lower_case):
      if lasts and lasts[-1] == cp - 1:
        lasts[-1] = cp
      else:
        firsts.append(cp)
        lasts.append(cp)
    elif lower_case and cp > 127:
      # Hangul syllables decompose into two or three letters.
      expansion = max(expansion, len(_reference_normalized(char, True)))
  return _Routing(firsts, lasts, expansion)


@functools.lru_cache(maxsize=None)
def _check_library_normalizer(lower_case: bool) -> Optional[str]:
  """None if the installed library normalizes every non-divergent character of the Basic
  Multilingual Plane (private use left out) as the reference does; else what differs (cached
  on disk with the library's version)."""
  return _disk_cached(f"library_check_{'lower' if lower_case else 'cased'}",
                      lambda: {"difference": _compute_library_check(lower_case)})["difference"]


def _compute_library_check(lower_case: bool) -> Optional[str]:
  routing = _fast_path_routing(lower_case)
  chars = [chr(cp) for cp in range(0x10000) if not routing.is_divergent(cp)
           and unicodedata.category(chr(cp)) != "Co"]
  normalizer = tf_text.FastBertNormalizer(lower_case_nfd_strip_accents=lower_case)
  got = normalizer.normalize(tf.constant([c.encode("utf-8") for c in chars])).numpy()
  for char, normalized in zip(chars, got):
    normalized = normalized.decode("utf-8")
    if _cut_role(char) == "space":
      if not normalized.isspace():   # the library separates words at it, as at a space
        return f"U+{ord(char):04X} becomes {normalized!r}, not whitespace"
    elif normalized != _reference_normalized(char, lower_case):
      return (f"U+{ord(char):04X} becomes {normalized!r}, not "
              f"{_reference_normalized(char, lower_case)!r}")
  return None


def library_vocab(tokens: Sequence[str]) -> Tuple[List[str], List[int]]:
  """The vocabulary the library gets, with the reference id of each of its tokens.

  A duplicated token keeps its first id (the library refuses duplicates). Tokens no word can
  produce are left out: empty ones, "##" alone, and tokens holding whitespace or a dropped
  character (the library would match a token holding a space across two words).
  """
  dropped, whitespace, _ = _role_sets()
  seen, kept, ids = set(), [], []
  for i, token in enumerate(tokens):
    body = token[len(WORDPIECE_CONTINUATION):] if token.startswith(WORDPIECE_CONTINUATION) \
        else token
    if (token in seen or not body
        or any(ord(c) in whitespace or ord(c) in dropped or 0xD800 <= ord(c) <= 0xDFFF
               for c in token)):
      continue
    seen.add(token)
    kept.append(token)
    ids.append(i)
  return kept, ids


def too_long_for_library(tokens: Sequence[str]) -> List[str]:
  """The tokens FastWordpieceTokenizer refuses (more than 256 UTF-8 bytes without "##")."""
  return [t for t in tokens if len(t.encode("utf-8", "surrogatepass"))
          - (len(WORDPIECE_CONTINUATION) if t.startswith(WORDPIECE_CONTINUATION) else 0)
          > _LIBRARY_MAX_TOKEN_BYTES]


@functools.lru_cache(maxsize=None)
def _probe_runs(lower_case: bool) -> Tuple[str, ...]:
  """Runs of non-divergent characters of many scripts and roles, for `_FastWordPiece.check`."""
  routing = _fast_path_routing(lower_case)
  english = ("The café's naïve Zoë paid £5 (€6) in 1921–2004; \"unaffable\" dogs, x² ÷ y. "
             "ABC-def_ghi@example.org #1 100% Ünïcödé ÅNGSTRÖM øre Straße İ")
  runs = (english + " " + english.upper() + " " + english.lower()).split()
  sample = [chr(cp) for cp in range(0x21, 0x10000, 7) if unicodedata.category(chr(cp)) != "Co"]
  runs += ["".join(sample[i:i + 4]) for i in range(0, len(sample), 4)]
  return tuple(run for run in ("".join(c for c in run if not routing.is_divergent(ord(c)))
                               for run in runs)
               if run and not run.isspace())


def _library_pieces(wordpiece, texts: tf.Tensor) -> Tuple[tf.Tensor, ...]:
  """Normalized texts -> flat ids, row splits, byte starts and ends of their pieces."""
  ids, starts, ends = wordpiece.tokenize_with_offsets(texts)
  return ids.flat_values, ids.row_splits, starts.flat_values, ends.flat_values


def _library_normalized_pieces(normalizer, wordpiece, texts: tf.Tensor) -> Tuple[tf.Tensor, ...]:
  """As `_library_pieces` on raw texts, with the normalizer's map from every byte of a
  normalized text to a byte of its raw text (flat values and row splits)."""
  normalized, offsets = normalizer.normalize_with_offsets(texts)
  return _library_pieces(wordpiece, normalized) + (offsets.flat_values, offsets.row_splits)


@contextlib.contextmanager
def gc_paused():
  """Pauses Python's cyclic garbage collector in a `with` block (then restores its state).

  Building the many small lists of a tokenization (one per word or text) otherwise triggers
  collections that walk all of TensorFlow's objects: with TensorFlow loaded they took about
  half the time of the fast path. The lists hold no reference cycles, so nothing is left for
  the collector to free.
  """
  enabled = gc.isenabled()
  gc.disable()
  try:
    yield
  finally:
    if enabled:
      gc.enable()


def _freeze_result(result, kind: str) -> tuple:
  """A result of `_FastWordPiece.tokenize` as tuples (cached, never handed out)."""
  if kind == "flat":
    return tuple(result)
  if kind == "words":
    return tuple(tuple(word) for word in result)
  return tuple(tuple(values) for values in result)


def _copy_result(result, kind: str):
  """Fresh lists with the values of a result (of lists or tuples)."""
  if kind == "flat":
    return list(result)
  if kind == "words":
    return [list(word) for word in result]
  ids, starts, ends = result
  return list(ids), list(starts), list(ends)


class _FastWordPiece:
  """FastBertTokenizer set up to return the reference's ids, and the routing of runs of text.

  Built by `WordPieceTokenizer` at its first use of the fast path.
  """

  def __init__(self, tokens: Sequence[str], lower_case: bool, max_chars_per_word: int):
    self._routing = _fast_path_routing(lower_case)
    expansion = self._routing.expansion
    # The divergent characters of the Basic Multilingual Plane and every character beyond it
    # (a regex class with the astral ranges too is a hundred times slower to search), which
    # `_routing` then decides.
    self._candidate = re.compile(f"[{_class_body(self._routing.code_points(0, 0xFFFF))}"
                                 "\U00010000-\U0010ffff]")
    # A run of at most `max_run` characters normalizes to at most max_chars_per_word characters
    # (4 bytes each at most), so neither side's word-length limit applies in it (the library
    # counts UTF-8 bytes, the reference characters); longer runs go to the reference.
    self.max_run = max(0, min(max_chars_per_word // expansion, _MAX_LIBRARY_RUN))
    self._long_run = re.compile(f"(?<![^{_ASCII_SPACES}])[^{_ASCII_SPACES}]"
                                f"{{{self.max_run + 1},}}")
    self._space = re.compile(f"[{_ASCII_SPACES}]")
    self.lower_case = lower_case
    library_tokens, ids = library_vocab(tokens)
    self._reference_id = np.array(ids, np.int64)   # library id -> id
    # [vocab] the piece continues a word. A word's first piece never does: no word holds "#".
    self._continues = np.array([t.startswith(WORDPIECE_CONTINUATION) for t in tokens], bool)
    # The two halves of tensorflow_text.FastBertTokenizer, called separately so that the
    # normalizer can be skipped on ASCII text and its offsets mapped back in NumPy (the
    # library's ragged gather takes longer than the tokenization).
    normalizer = tf_text.FastBertNormalizer(lower_case_nfd_strip_accents=lower_case)
    wordpiece = tf_text.FastWordpieceTokenizer(
        vocab=library_tokens, suffix_indicator=WORDPIECE_CONTINUATION,
        max_bytes_per_word=max(1, 4 * expansion * self.max_run), token_out_type=tf.int64,
        unknown_token="[UNK]")
    # Partial functions, not closures: TensorFlow counts the tracings of all closures with the
    # same code together and warns of "retracing" once a few tokenizers exist.
    # autograph=False (etc_realformer/autograph.py): rewriting these functions and the library
    # code they call took 0.35 s of every process's first tokenization.
    signature = [tf.TensorSpec([None], tf.string)]
    self._pieces_fn = tf.function(functools.partial(_library_pieces, wordpiece),
                                  input_signature=signature, autograph=False)
    self._normalized_pieces_fn = tf.function(
        functools.partial(_library_normalized_pieces, normalizer, wordpiece),
        input_signature=signature, autograph=False)

  def reference_runs(self, text: str) -> List[Tuple[int, int]]:
    """[start, end) of the runs of `text` (between ASCII whitespace) the reference must
    tokenize, in order; usually none."""
    first = self._candidate.search(text)
    long_run = self._long_run.search(text)
    if first is None and long_run is None:
      return []
    runs = []
    if first is not None:
      end = 0
      for match in self._candidate.finditer(text, first.start()):
        position = match.start()
        if runs and position < end:
          continue   # in the run already taken
        if ord(text[position]) > 0xFFFF and not self._routing.is_divergent(ord(text[position])):
          continue
        # The run starts after the last ASCII space before `position` (the previous run ended
        # at one, so the search stops there) ...
        start = max(text.rfind(c, end, position) for c in _ASCII_SPACES) + 1
        # ... and ends at the next one.
        space = self._space.search(text, position)
        end = space.start() if space else len(text)
        runs.append((start, end))
    if long_run is not None:
      # Whole runs, like the ones above: a run taken twice is one run.
      runs = sorted(set(runs) | {m.span() for m in self._long_run.finditer(text,
                                                                           long_run.start())})
    return runs

  def tokenize(self, segments: List[str], kind: str, batch_size: int) -> list:
    """Library tokenization of segments of text (no reference run in them).

    Args:
      segments: The texts.
      kind: "flat" (for each segment, its ids), "words" (for each segment, its words' ids) or
        "spans" (for each segment, (ids, starts, ends): every piece with the [start, end)
        characters of its word in the segment).
      batch_size: Most segments per library call.

    Returns:
      A list with one entry per segment.
    """
    out, batch, size = [], [], 0
    for segment in segments:
      encoded = segment.encode("utf-8")
      if batch and (size + len(encoded) > _LIBRARY_CALL_BYTES or len(batch) == batch_size):
        out.extend(self._tokenize_batch(batch, kind))
        batch, size = [], 0
      batch.append((segment, encoded))
      size += len(encoded)
    if batch:
      out.extend(self._tokenize_batch(batch, kind))
    return out

  def _tokenize_batch(self, batch: List[Tuple[str, bytes]], kind: str) -> list:
    encoded = [data for _, data in batch]
    ascii_only = sum(len(data) for data in encoded) == sum(len(text) for text, _ in batch)
    if ascii_only:
      # On ASCII (without the divergent control characters) the normalizer only lower-cases.
      texts = [text.lower().encode("ascii") for text, _ in batch] if self.lower_case else encoded
      ids, splits, starts, ends = (t.numpy() for t in self._pieces_fn(tf.constant(texts)))
    else:
      ids, splits, starts, ends, raw_byte, raw_splits = (
          t.numpy() for t in self._normalized_pieces_fn(tf.constant(encoded)))
      if kind == "spans":
        # Offsets into the normalized text -> into the raw text (bytes).
        base = np.repeat(raw_splits[:-1], np.diff(splits))   # [pieces]
        starts, ends = raw_byte[starts + base], raw_byte[ends + base]
    # splits: [segments + 1]; ids, starts, ends: [pieces]
    ids = self._reference_id[ids]
    heads = ~self._continues[ids]                             # [pieces] the piece starts a word
    heads[splits[:-1][np.diff(splits) > 0]] = True            # as a segment's first piece does
    ids_list = ids.tolist()
    if kind == "flat":
      return _split_rows(ids_list, splits)
    bounds = np.append(np.flatnonzero(heads), len(ids))       # [words + 1]
    if kind == "words":
      word_splits = np.concatenate([[0], np.cumsum(heads)])[splits]
      bounds = bounds.tolist()
      words = [ids_list[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
      return _split_rows(words, word_splits)
    if not ascii_only:
      # Some character takes several bytes: byte offsets -> character offsets, for the whole
      # batch at once (offsets into each segment, so the characters before it are subtracted).
      data = np.frombuffer(b"".join(encoded), np.uint8)
      chars_before = np.concatenate([[0], np.cumsum((data & 0xC0) != 0x80, dtype=np.int32)])
      first_byte = np.concatenate([[0], np.cumsum([len(d) for d in encoded])])[:-1]
      base = np.repeat(first_byte, np.diff(splits))           # [pieces]
      starts = chars_before[starts + base] - chars_before[base]
      ends = chars_before[ends + base] - chars_before[base]
    # Every piece gets its word's span: from its first piece's start to its last piece's end.
    word = np.cumsum(heads) - 1                               # [pieces] index of its word
    starts = starts[bounds[:-1]][word].tolist()
    ends = ends[bounds[1:] - 1][word].tolist()
    return list(zip(_split_rows(ids_list, splits), _split_rows(starts, splits),
                    _split_rows(ends, splits)))

  def check(self, reference: "WordPieceTokenizer") -> Optional[str]:
    """None if the library agrees with `reference` on a probe text, else the first difference."""
    problem = _check_library_normalizer(reference.lower_case)
    if problem is not None:
      return problem
    # Runs separated by every kind of ASCII space, leaving out those too long for the library.
    runs = [run for run in _probe_runs(reference.lower_case) if len(run) <= self.max_run]
    text = "".join(run + _ASCII_SPACES[k % 4] for k, run in enumerate(runs))
    if self.reference_runs(text):
      return "the probe text holds a run the reference would tokenize"
    got = self.tokenize([text], "spans", 1)[0]
    expected = reference._reference_spans(text)  # pylint: disable=protected-access
    if tuple(got) != tuple(expected):
      for k, (g, e) in enumerate(zip(zip(*got), zip(*expected))):
        if g != e:
          return f"piece {k} of a probe text: (id, start, end) {g}, the reference {e}"
      return f"{len(got[0])} pieces in a probe text, the reference {len(expected[0])}"
    return None


# ----------------------------------------------------------------------------- WordPiece


class WordPieceTokenizer(Tokenizer):
  """BERT tokenization: the basic cut (lower-cased, accents stripped) and greedy WordPiece.

  Every token of the basic cut is matched longest-prefix-first against the vocabulary, the
  pieces after the first carrying "##"; a token with no match for some part, or longer than
  `max_chars_per_word` characters, becomes one [UNK]. The ids are the line numbers of the
  vocab file (BERT format, one token per line). The special ids are looked up by their token
  strings `[PAD] [UNK] [CLS] [SEP] [MASK]`.

  By default the text goes to `tensorflow_text.FastBertTokenizer`, except the runs of text
  (between ASCII whitespace) on which the library may differ, which the Python code here (the
  reference) tokenizes; the output is the same as with `backend="python"`. The default backend
  ("auto") tokenizes the first 100,000 characters in Python, then sets the library up.
  """

  kind = "wordpiece"

  def __init__(self, vocab_file: str, lower_case: bool = True,
               batch_size: int = DEFAULT_BATCH_SIZE,
               max_chars_per_word: int = MAX_CHARS_PER_WORD, backend: str = "auto"):
    """Loads the vocabulary.

    Args:
      vocab_file: Path of the vocab file, one token per line.
      lower_case: Lower-case and strip accents (an uncased vocabulary).
      batch_size: Number of texts per call.
      max_chars_per_word: Longer tokens become [UNK].
      backend: "auto" (tensorflow-text where it gives the reference's output, else the
        reference, once 100,000 characters are tokenized; the reference alone if the library
        cannot be used), "tensorflow_text" (the same from the start, and an error if the
        library cannot be used) or "python" (the reference only). The ids do not depend on it.

    Raises:
      FileNotFoundError: If `vocab_file` does not exist.
      ValueError: If the vocabulary lacks one of the special tokens, for an unknown `backend`,
        or with backend="tensorflow_text" and a token the library refuses.
      RuntimeError: With backend="tensorflow_text", if the installed tensorflow-text does not
        tokenize as the version the routing rules were checked against.
    """
    super().__init__(batch_size)
    if backend not in BACKENDS:
      raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    self.vocab_file = vocab_file
    self.lower_case = lower_case
    self.max_chars_per_word = max_chars_per_word
    self.backend = backend
    self.has_word_spans = backend != "python"
    self._tokens = vocab_learner.read_vocab(vocab_file)
    self.vocab_size = len(self._tokens)
    # The first occurrence of a duplicated token wins, as in BERT's `load_vocab`.
    self._token_to_id = {}
    for i, token in enumerate(self._tokens):
      self._token_to_id.setdefault(token, i)
    for name, token in (("pad", "[PAD]"), ("unk", "[UNK]"), ("cls", "[CLS]"), ("sep", "[SEP]"),
                        ("mask", "[MASK]")):
      if token not in self._token_to_id:
        raise ValueError(f"vocab file {vocab_file} has no {token} token")
      setattr(self, f"{name}_id", self._token_to_id[token])
    # raw word of the basic cut -> pieces of each of its tokens (tuples, never mutated)
    self._cache: Dict[str, Tuple[Tuple[int, ...], ...]] = {}
    self._fast: Optional[_FastWordPiece] = None   # built at the first use of the fast path
    self._fast_cache: Dict[str, Dict[str, tuple]] = {}   # kind -> short text -> its result
    # Why the fast path is not used (None: it is, or it is not built yet).
    self._no_fast_path: Optional[str] = "backend='python'" if backend == "python" else None
    self._reference_chars = 0   # characters tokenized in Python before the fast path was built
    too_long = too_long_for_library(self._tokens) if backend != "python" else []
    if too_long:
      self._no_fast_path = (
          f"vocab file {vocab_file} has a token of more than {_LIBRARY_MAX_TOKEN_BYTES} UTF-8 "
          f"bytes ({too_long[0][:40]!r}...), which tensorflow-text refuses")
      if backend == "tensorflow_text":
        raise ValueError(self._no_fast_path + "; use backend='auto' or 'python'")
    if backend == "tensorflow_text":
      self._fast_path()

  def __getstate__(self) -> dict:
    # TensorFlow objects do not pickle; a copy builds its own library tokenizer when needed.
    return dict(self.__dict__, _fast=None, _fast_cache={})

  @property
  def vocab_pieces(self) -> Tuple[str, ...]:
    """The vocabulary's pieces, by id."""
    return tuple(self._tokens)

  @property
  def uses_fast_path(self) -> bool:
    """Whether tensorflow-text tokenizes now (the runs it agrees on)."""
    return self._fast is not None

  def _fast_path(self, texts: Sequence[str] = ()) -> Optional[_FastWordPiece]:
    """The library tokenizer for `texts`, built and checked against the reference when first
    needed; None when the reference tokenizes them."""
    if self._fast is None and self._no_fast_path is None:
      if self.backend == "auto":
        self._reference_chars += sum(len(text) for text in texts)
        if self._reference_chars < _FAST_PATH_AFTER_CHARS:
          return None
      fast = _FastWordPiece(self._tokens, self.lower_case, self.max_chars_per_word)
      problem = fast.check(self)
      if problem is None:
        self._fast = fast
      else:
        # A tensorflow-text version that tokenizes differently from the one the routing rules
        # were checked against: the ids must not change, so the reference does everything.
        self._no_fast_path = f"the installed tensorflow-text differs from the reference: {problem}"
        if self.backend == "tensorflow_text":
          raise RuntimeError(self._no_fast_path)
        logging.warning("WordPieceTokenizer: %s; tokenizing in Python", self._no_fast_path)
    return self._fast

  @property
  def signature(self) -> dict:
    return {"kind": self.kind, "lower_case": self.lower_case,
            "max_chars_per_word": self.max_chars_per_word}

  def _wordpiece(self, token: str) -> Tuple[int, ...]:
    """Greedy longest-match-first pieces of one basic token."""
    if len(token) > self.max_chars_per_word:
      return (self.unk_id,)
    pieces, start = [], 0
    while start < len(token):
      end = len(token)
      while end > start:
        piece = token[start:end] if start == 0 else WORDPIECE_CONTINUATION + token[start:end]
        if piece in self._token_to_id:
          pieces.append(self._token_to_id[piece])
          break
        end -= 1
      else:
        return (self.unk_id,)   # some part matches no vocabulary entry: the whole word
      start = end
    return tuple(pieces)

  def _word(self, word: str) -> Tuple[Tuple[int, ...], ...]:
    """Pieces of every token of one raw word of the basic cut (cached)."""
    cached = self._cache.get(word)
    if cached is None:
      if len(self._cache) >= _MAX_CACHED_WORDS:
        self._cache.clear()
      cached = tuple(self._wordpiece(t) for t in basic_words(word, self.lower_case))
      self._cache[word] = cached
    return cached

  def word_texts(self, text, spans):
    return basic_word_texts(text, spans, self.lower_case)

  # -- the reference, on whole texts or on the runs the library leaves to it

  def _reference_words(self, text: str) -> List[List[int]]:
    """`tokenize_words` of one text by the reference."""
    return [list(pieces) for word in self.word_texts(text, basic_word_spans(text))
            for pieces in self._word(word)]

  def _reference_spans(self, text: str) -> Tuple[List[int], List[int], List[int]]:
    """`tokenize_with_word_spans` of one text by the reference (all tokens of a raw word of the
    basic cut get its span)."""
    ids, starts, ends = [], [], []
    spans = basic_word_spans(text)
    for (start, end), word in zip(spans, self.word_texts(text, spans)):
      for pieces in self._word(word):
        ids.extend(pieces)
        starts.extend([start] * len(pieces))
        ends.extend([end] * len(pieces))
    return ids, starts, ends

  # -- tokenizing

  def _tokenize_words_batch(self, texts):
    return [self._reference_words(text) for text in texts]

  # The fast path takes all texts at once (the cache and the routing work per distinct text);
  # `_FastWordPiece.tokenize` sends them to the library `batch_size` at a time.

  def tokenize_words(self, texts):
    texts = _check_texts(texts)
    fast = self._fast_path(texts)
    if fast is None:
      return [self._reference_words(text) for text in texts]
    return self._fast_batch(fast, texts, "words")

  def tokenize(self, texts):
    texts = _check_texts(texts)
    fast = self._fast_path(texts)
    if fast is None:
      return [[piece for word in self._reference_words(text) for piece in word]
              for text in texts]
    return self._fast_batch(fast, texts, "flat")

  def tokenize_with_word_spans(self, texts: Sequence[str]
                               ) -> List[Tuple[List[int], List[int], List[int]]]:
    """(ids, starts, ends) of every text: each piece with the [start, end) characters of its
    basic-cut word in the text (all pieces of a word share its span, as
    `span_tokenization.OffsetTokenizer` gives them)."""
    texts = _check_texts(texts)
    fast = self._fast_path(texts)
    if fast is None:
      return [self._reference_spans(text) for text in texts]
    return self._fast_batch(fast, texts, "spans")

  def _fast_batch(self, fast: _FastWordPiece, texts: List[str], kind: str) -> list:
    """`kind` ("flat", "words" or "spans", as `_FastWordPiece.tokenize`) for every text: the
    library on its runs without divergence, the reference on the others, joined in order.

    Short texts (the NQ converter passes single words) repeat, so their results are cached
    (immutable) and copied out; longer texts are tokenized once per distinct text.
    """
    with gc_paused():
      return self._fast_batch_unpaused(fast, texts, kind)

  def _fast_batch_unpaused(self, fast: _FastWordPiece, texts: List[str], kind: str) -> list:
    cache = self._fast_cache.setdefault(kind, {})
    out: list = [None] * len(texts)
    todo: Dict[str, List[int]] = {}   # text -> its positions in `texts`
    for i, text in enumerate(texts):
      cached = cache.get(text) if len(text) <= _CACHED_TEXT_CHARS else None
      if cached is None:
        todo.setdefault(text, []).append(i)
      else:
        out[i] = _copy_result(cached, kind)
    unique = list(todo)
    segments, plans = [], []   # plans: the index of the text's segment, or the text's parts
    for text in unique:
      runs = fast.reference_runs(text)
      if not runs:
        plans.append(len(segments))
        segments.append(text)
        continue
      parts, position = [], 0   # (start, end, segment index or None for the reference)
      for start, end in runs + [(len(text), len(text))]:
        if start > position:
          parts.append((position, start, len(segments)))
          segments.append(text[position:start])
        if end > start:
          parts.append((start, end, None))
        position = end
      plans.append(parts)
    library = fast.tokenize(segments, kind, self.batch_size)
    if len(cache) + len(unique) > _MAX_CACHED_WORDS:
      cache.clear()
    for text, parts in zip(unique, plans):
      result = library[parts] if isinstance(parts, int) else self._join(text, parts, library,
                                                                        kind)
      if len(text) <= _CACHED_TEXT_CHARS:
        cache[text] = _freeze_result(result, kind)
      # Every position gets lists of its own, as from the reference.
      positions = todo[text]
      out[positions[0]] = result
      for i in positions[1:]:
        out[i] = _copy_result(result, kind)
    return out

  def _join(self, text: str, parts: list, library: list, kind: str):
    """The result of a text cut into library segments and reference runs (`_fast_batch`)."""
    ids, starts, ends = [], [], []   # "words" puts the words in `ids`
    for start, end, segment in parts:
      if segment is not None:
        result = library[segment]
      elif kind == "words":
        result = self._reference_words(text[start:end])
      else:
        result = self._reference_spans(text[start:end])
        result = result[0] if kind == "flat" else result
      if kind != "spans":
        ids.extend(result)
      else:
        ids.extend(result[0])
        starts.extend(s + start for s in result[1])
        ends.extend(e + start for e in result[2])
    return (ids, starts, ends) if kind == "spans" else ids

  def token_to_id(self, token: str) -> int:
    """The id of `token`, or `unk_id` when it is not in the vocabulary."""
    return self._token_to_id.get(token, self.unk_id)

  def id_to_token(self, ids):
    return [self._tokens[i] for i in self._check_ids(ids)]

  def detokenize(self, ids):
    words = []
    for token in self.id_to_token([i for i in self._check_ids(ids) if i != self.pad_id]):
      if token.startswith(WORDPIECE_CONTINUATION) and words:
        words[-1] += token[len(WORDPIECE_CONTINUATION):]
      else:
        words.append(token)
    return " ".join(words)


# ------------------------------------------------------------------------- SentencePiece


def _char_offsets(text: str, byte_offsets: np.ndarray) -> np.ndarray:
  """UTF-8 byte offsets into `text` -> character offsets (same shape)."""
  if text.isascii():
    return byte_offsets
  data = np.frombuffer(text.encode("utf-8"), np.uint8)
  starts = (data & 0xC0) != 0x80                                  # [bytes] a character starts
  chars_before = np.concatenate([[0], np.cumsum(starts)])         # [bytes + 1]
  return chars_before[byte_offsets]


def _is_digit_comma(piece: str) -> bool:
  """A piece like "5," or "\u258119,", which the official code splits before the comma."""
  return len(piece) > 1 and piece[-1] == "," and piece[-2].isdigit()


class SentencePieceTokenizer(Tokenizer):
  """SentencePiece tokenization with `tensorflow_text.SentencepieceTokenizer`.

  As in the official ETC code (its ALBERT-derived `encode_pieces`), a piece ending in a digit
  and a comma ("\u25811995,") is re-encoded without the comma, and the comma added as a piece
  of its own.

  Plain mode encodes whole texts; a word starts at every piece that begins with "\u2581"
  (SentencePiece's whitespace marker) and holds the pieces up to the next such piece. With
  `split_punctuation` the text is first cut into words by BERT's basic cut (case kept, as the
  `etc_large_split_punctuation` checkpoint expects) and every word is encoded on its own.

  Special pieces: `<unk>`/`[UNK]`; padding `[PAD]`/`<pad>`; `[CLS]`, else `<unused_63>`;
  `[SEP]`, else `<unused_2>` (the last two are what the official NQ converter uses with the
  ETC-large model); `[MASK]`/`<mask>`.
  """

  kind = "sentencepiece"

  def __init__(self, model_file: str, batch_size: int = DEFAULT_BATCH_SIZE,
               split_punctuation: bool = False, require_mask: bool = True):
    """Loads the model.

    Args:
      model_file: Path of the serialized SentencePiece model (`*.model`).
      batch_size: Number of texts per TensorFlow call.
      split_punctuation: Cut words with BERT's basic cut before SentencePiece.
      require_mask: A model without a mask piece is an error (masked-LM pretraining needs it);
        fine-tuning passes False.

    Raises:
      FileNotFoundError: If `model_file` does not exist.
      ValueError: If the model lacks one of the special pieces.
    """
    super().__init__(batch_size)
    self.model_file = model_file
    self.split_punctuation = split_punctuation
    self.cuts_words_first = split_punctuation
    if not os.path.isfile(model_file):
      raise FileNotFoundError(f"SentencePiece model file not found: {model_file}")
    with open(model_file, "rb") as f:
      model = f.read()
    self._spm = tf_text.SentencepieceTokenizer(model=model, out_type=tf.int32)
    self.vocab_size = int(self._spm.vocab_size())
    self._pieces = [p.decode("utf-8") for p in
                    self._spm.id_to_string(tf.range(self.vocab_size)).numpy().tolist()]
    self._starts_word = np.array([p.startswith(SPM_WORD_START) for p in self._pieces], bool)
    self._digit_comma = np.array([_is_digit_comma(p) for p in self._pieces], bool)
    self._piece_to_id = {}
    for i, piece in enumerate(self._pieces):
      self._piece_to_id.setdefault(piece, i)
    self._set_special_ids(require_mask)
    self._split_cache: Dict[int, List[int]] = {}
    signature = [tf.TensorSpec([None], tf.string)]
    self._tokenize_fn = tf.function(self._spm.tokenize, input_signature=signature,
                                    autograph=False)
    self._offsets_fn = tf.function(self._spm.tokenize_with_offsets, input_signature=signature,
                                   autograph=False)

  def _lookup(self, *candidates: str) -> Optional[int]:
    for piece in candidates:
      if piece in self._piece_to_id:
        return self._piece_to_id[piece]
    return None

  def _set_special_ids(self, require_mask: bool) -> None:
    self.unk_id = self._lookup("<unk>", "[UNK]")
    self.pad_id = self._lookup("[PAD]", "<pad>")
    self.cls_id = self._lookup("[CLS]", ETC_SPM_CLS_PIECE)
    self.sep_id = self._lookup("[SEP]", ETC_SPM_SEP_PIECE)
    self.mask_id = self._lookup("[MASK]", "<mask>")
    if self.mask_id is None and require_mask:
      raise ValueError(
          f"SentencePiece model {self.model_file} has no [MASK] piece (nor <mask>); the model "
          "must define [MASK] as a user symbol (spm_train --user_defined_symbols=[CLS],[SEP],"
          "[MASK]) for masked language model pretraining")
    for name, pieces in (("unk", "<unk> or [UNK]"), ("pad", "<pad> or [PAD]"),
                         ("cls", f"[CLS] or {ETC_SPM_CLS_PIECE}"),
                         ("sep", f"[SEP] or {ETC_SPM_SEP_PIECE}")):
      if getattr(self, f"{name}_id") is None:
        raise ValueError(f"SentencePiece model {self.model_file} has no {pieces} piece; the "
                         "model must define it (e.g. as a user or control symbol)")

  @property
  def signature(self) -> dict:
    return {"kind": self.kind, "split_punctuation": self.split_punctuation}

  # -- the official digit-comma rule

  def _split_digit_comma(self, piece_id: int) -> List[int]:
    """Ids replacing one digit-comma piece: its text re-encoded without "\u2581", then ","."""
    cached = self._split_cache.get(piece_id)
    if cached is not None:
      return cached
    piece = self._pieces[piece_id]
    ids = self._tokenize_fn(tf.constant([piece[:-1].replace(SPM_WORD_START, "")]))
    pieces = [self._pieces[i] for i in ids.flat_values.numpy().tolist()]
    # Encoding adds a word-start marker; a piece that did not start a word must not get one.
    if not piece.startswith(SPM_WORD_START) and pieces and pieces[0].startswith(SPM_WORD_START):
      pieces = pieces[1:] if pieces[0] == SPM_WORD_START else [pieces[0][1:]] + pieces[1:]
    pieces.append(piece[-1])
    cached = [self._piece_to_id.get(p, self.unk_id) for p in pieces]
    self._split_cache[piece_id] = cached
    return cached

  def _fix_digit_commas(self, ids: List[int]) -> Tuple[List[int], List[int]]:
    """-> (ids with digit-comma pieces split, index into `ids` of every output id)."""
    if not self._digit_comma[ids].any():
      return ids, list(range(len(ids)))
    out, source = [], []
    for k, i in enumerate(ids):
      new = self._split_digit_comma(i) if self._digit_comma[i] else [i]
      out.extend(new)
      source.extend([k] * len(new))
    return out, source

  # -- encoding

  def _encode(self, texts: List[str]) -> List[List[int]]:
    """Piece ids of every text encoded whole (digit-comma rule applied)."""
    if not texts:
      return []
    ragged = self._tokenize_fn(tf.constant(texts, tf.string))  # [batch, pieces]
    rows = _split_rows(ragged.flat_values.numpy().tolist(), ragged.row_splits.numpy())
    return [self._fix_digit_commas(ids)[0] for ids in rows]

  def _group_words(self, ids: List[int]) -> List[List[int]]:
    words = []
    for i in ids:
      if self._starts_word[i] or not words:
        words.append([i])
      else:
        words[-1].append(i)
    return words

  def _tokenize_words_batch(self, texts):
    if not self.split_punctuation:
      return [self._group_words(ids) for ids in self._encode(texts)]
    words = [[w for s, e in basic_word_spans(text) for w in basic_words(text[s:e], False)]
             for text in texts]
    unique = sorted({w for text_words in words for w in text_words})
    encoded = dict(zip(unique, self._encode(unique)))
    return [[encoded[w] for w in text_words if encoded[w]] for text_words in words]

  def tokenize_with_offsets(self, texts: Sequence[str]
                            ) -> List[Tuple[List[int], List[int], List[int]]]:
    """Plain mode: (ids, starts, ends) of every text, the [start, end) characters of each piece.

    A piece's span leaves out the whitespace its "\u2581" stands for; the pieces made of one
    digit-comma piece share its span.
    """
    if self.split_punctuation:
      raise ValueError("tokenize_with_offsets encodes whole texts; with split_punctuation, "
                       "tokenize word by word (span_tokenization.OffsetTokenizer does)")
    texts = _check_texts(texts)
    out = []
    for first in range(0, len(texts), self.batch_size):
      out.extend(self._offsets_batch(texts[first:first + self.batch_size]))
    return out

  def _offsets_batch(self, texts: List[str]):
    ragged, begins, ends = self._offsets_fn(tf.constant(texts, tf.string))  # [batch, pieces]
    splits = ragged.row_splits.numpy()
    rows = zip(_split_rows(ragged.flat_values.numpy().tolist(), splits),
               _split_rows(begins.flat_values.numpy(), splits),
               _split_rows(ends.flat_values.numpy(), splits))
    out = []
    for text, (ids, row_begins, row_ends) in zip(texts, rows):
      starts = _char_offsets(text, row_begins).tolist()
      stops = _char_offsets(text, row_ends).tolist()
      for k, (start, stop) in enumerate(zip(starts, stops)):
        while start < stop and text[start].isspace():
          start += 1
        starts[k] = start
      ids, source = self._fix_digit_commas(ids)
      out.append((ids, [starts[k] for k in source], [stops[k] for k in source]))
    return out

  def id_to_token(self, ids):
    return [self._pieces[i] for i in self._check_ids(ids)]

  def detokenize(self, ids):
    ids = [i for i in self._check_ids(ids) if i != self.pad_id]
    if not ids:
      return ""
    return self._spm.detokenize(tf.constant(ids, tf.int32)).numpy().decode("utf-8")


# --------------------------------------------------------------------------- choosing one


def load_tokenizer(vocab_file: Optional[str] = None, spm_model_file: Optional[str] = None,
                   lower_case: bool = True, split_punctuation: bool = False) -> Tokenizer:
  """Builds the tokenizer for a WordPiece vocab file or a SentencePiece model.

  Args:
    vocab_file: A WordPiece (BERT) vocab file.
    spm_model_file: A SentencePiece model file.
    lower_case: For WordPiece: lower-case the text (ignored for SentencePiece, whose model
      defines its own normalization).
    split_punctuation: For SentencePiece: BERT's basic cut before SentencePiece.

  Returns:
    A `WordPieceTokenizer` or a `SentencePieceTokenizer`.

  Raises:
    ValueError: Unless exactly one of `vocab_file` and `spm_model_file` is given.
  """
  if (vocab_file is None) == (spm_model_file is None):
    raise ValueError("give exactly one of vocab_file and spm_model_file, got "
                     f"vocab_file={vocab_file!r}, spm_model_file={spm_model_file!r}")
  if vocab_file is not None:
    return WordPieceTokenizer(vocab_file, lower_case=lower_case)
  return SentencePieceTokenizer(spm_model_file, split_punctuation=split_punctuation)


def is_sentencepiece_file(path: str) -> bool:
  """A SentencePiece model (`*.model`) rather than a WordPiece vocab file."""
  return path.endswith(".model")


def tokenizer_for_vocab(path: str, split_punctuation: bool = False) -> Tokenizer:
  """The tokenizer a fine-tuning run uses for its vocabulary file.

  `*.model`: SentencePiece (with `split_punctuation`: BERT's basic cut first); any other file:
  BERT uncased WordPiece.

  Raises:
    FileNotFoundError: If `path` does not exist.
    ValueError: For split_punctuation with a WordPiece vocabulary, or a vocabulary whose
      padding id is not 0 (the task features and the model treat id 0 as padding).
  """
  if not os.path.isfile(path):
    raise FileNotFoundError(f"vocabulary file not found: {path}")
  if is_sentencepiece_file(path):
    tokenizer = SentencePieceTokenizer(path, split_punctuation=split_punctuation,
                                       require_mask=False)
  elif split_punctuation:
    raise ValueError(f"split_punctuation: only for a SentencePiece model (*.model); {path} is "
                     "a WordPiece vocabulary, which always splits punctuation")
  else:
    tokenizer = WordPieceTokenizer(path, lower_case=True)
  if tokenizer.pad_id != vocab.PAD_ID:
    raise ValueError(f"{path}: the padding piece has id {tokenizer.pad_id}, but features are "
                     f"padded with id {vocab.PAD_ID}")
  return tokenizer


def _official_checkpoint_folder(init_checkpoint: str) -> Optional[str]:
  """The folder of an official `model.ckpt` given as the folder or the prefix, else None."""
  if os.path.basename(init_checkpoint.rstrip("/")) == OFFICIAL_CHECKPOINT_PREFIX:
    folder = os.path.dirname(init_checkpoint.rstrip("/")) or "."
  elif os.path.isdir(init_checkpoint):
    folder = init_checkpoint
  else:
    return None
  if not (os.path.isfile(os.path.join(folder, OFFICIAL_CHECKPOINT_PREFIX + ".index"))
          and os.path.isfile(os.path.join(folder, OFFICIAL_CONFIG_NAME))):
    return None
  return folder


def vocab_from_checkpoint_folder(init_checkpoint: str) -> Optional[str]:
  """The vocabulary released with an official ETC checkpoint, or None if it is not one.

  `init_checkpoint` is a folder holding `model.ckpt.index` and `etc_config.json`, or the
  `<folder>/model.ckpt` prefix. The folder's WordPiece vocabulary (`vocab.txt` or
  `vocab_bert_uncased_english.txt`) or SentencePiece model (`vocab_gpt_for_etc.model`, else
  the only `*.model`) is returned.

  Raises:
    FileNotFoundError: An official folder without (or with two kinds of) vocabulary.
  """
  if not init_checkpoint:
    return None
  folder = _official_checkpoint_folder(init_checkpoint)
  if folder is None:
    return None
  wordpiece = [n for n in WORDPIECE_VOCAB_NAMES if os.path.isfile(os.path.join(folder, n))]
  models = sorted(n for n in os.listdir(folder)
                  if is_sentencepiece_file(n) and os.path.isfile(os.path.join(folder, n)))
  if SENTENCEPIECE_MODEL_NAME in models:
    models = [SENTENCEPIECE_MODEL_NAME]
  if wordpiece and models:
    raise FileNotFoundError(f"init_checkpoint: {folder} holds both a WordPiece vocabulary "
                            f"({wordpiece[0]}) and a SentencePiece model ({models[0]}); set "
                            "train.vocab_file to the one the checkpoint was trained with")
  if len(models) > 1:
    raise FileNotFoundError(f"init_checkpoint: {folder} holds several SentencePiece models "
                            f"({', '.join(models)}); set train.vocab_file to one of them")
  if not wordpiece and not models:
    raise FileNotFoundError(
        f"init_checkpoint: {folder} holds no vocabulary (expected "
        f"{' or '.join(WORDPIECE_VOCAB_NAMES)} or {SENTENCEPIECE_MODEL_NAME}); set "
        "train.vocab_file")
  return os.path.join(folder, (wordpiece or models)[0])
