"""OpenKP pages -> the features Google's ETC converter writes (the one layout of this task).

Google's converter (etcmodel/models/openkp/generate_examples_lib.py, VDOM mode, run by
generate_examples.py) makes one tf.Example per page line. This module computes the same
features, under the same names, with the same values and lengths, from the raw JSON record:
the url's code points, up to 3 labels (first word and length of each key phrase found), the
word pieces of the kept VDOM elements' words with their word and element indices, and per
element (one global token each) its own and its parent's visual features. Every feature, its
kind, length and meaning: docs/file_formats.md ("TFRecords of the official layouts", OpenKP).

Google's rules and quirks, reproduced here, are listed in docs/official_layouts/openkp.md: the
words are the elements' `text` split on single spaces, each tokenized on its own; elements are
kept in file order until one would pass `global_max_length` elements or `long_max_length`
pieces; key phrases are found whole-word inside one element, each at its first occurrence.
Pages whose conversion fails are Google's "parse failures" (no tf.Example); here they raise
`OfficialConversionError` (a ValueError naming the field) and the caller counts them. Only VDOM
mode is implemented (Google's `fixed_block_len` mode is not).
"""

import bisect
import collections
import dataclasses
import json
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from tasks.common import feature_config
from tasks.openkp.data import is_phrase_list

NUM_LABELS = 3                 # Google's converter always writes 3 label slots
GLOBAL_TOKEN_ID = 1            # every global token, with WordPiece and SentencePiece alike
# A font size <= FONT_SIZE_CUTOFFS[i] gets id i (the first such i); larger sizes get the last id.
FONT_SIZE_CUTOFFS = (0,) + tuple(range(8, 25)) + (29, 34, 39, 44, 49)
FONT_ID_VOCAB_SIZE = len(FONT_SIZE_CUTOFFS) + 1   # 24

# The 20 floats of a VDOM element: 10 of the element, then 10 of its parent, each in this order.
VDOM_FIELDS = ("x_coord", "width", "y_coord", "height", "is_block", "is_inline", "is_heading",
               "is_leaf", "font_size", "is_bold")
_COORDINATES = ("x_coord", "width", "y_coord", "height")
_FLAGS = ("is_block", "is_inline", "is_heading", "is_leaf", "is_bold")

# (feature, which element (own or parent), field) of every visual feature, in Google's order.
_VISUAL = (
    ("global_x_coords", 0, "x_coord"), ("global_y_coords", 0, "y_coord"),
    ("global_widths", 0, "width"), ("global_heights", 0, "height"),
    ("global_font_ids", 0, "font_size"), ("global_block_indicator", 0, "is_block"),
    ("global_inline_indicator", 0, "is_inline"), ("global_heading_indicator", 0, "is_heading"),
    ("global_leaf_indicator", 0, "is_leaf"), ("global_bold_indicator", 0, "is_bold"),
    ("global_parent_x_coords", 1, "x_coord"), ("global_parent_y_coords", 1, "y_coord"),
    ("global_parent_widths", 1, "width"), ("global_parent_heights", 1, "height"),
    ("global_parent_font_ids", 1, "font_size"),
    ("global_parent_heading_indicator", 1, "is_heading"),
    ("global_parent_leaf_indicator", 1, "is_leaf"),
    ("global_parent_bold_indicator", 1, "is_bold"))
FLOAT_FEATURES = tuple(name for name, _, field in _VISUAL if field in _COORDINATES)
INDICATOR_FEATURES = tuple(name for name, _, field in _VISUAL if field in _FLAGS)
FONT_FEATURES = tuple(name for name, _, field in _VISUAL if field == "font_size")

# Every feature Google writes, in its order (OpenKpEtcFeatures), with its length's name:
# "url" (url_max_code_points), "labels" (3), "long", "first" (kp_max_length * long), "global".
FEATURE_AXES = collections.OrderedDict(
    [("url_code_points", "url"), ("label_start_idx", "labels"), ("label_phrase_len", "labels"),
     ("long_token_ids", "long"), ("long_word_idx", "long"), ("long_vdom_idx", "long"),
     ("long_input_mask", "long"), ("long_word_input_mask", "long"),
     ("long_word_first_occurrence", "first"), ("global_token_ids", "global"),
     ("global_input_mask", "global")] + [(name, "global") for name, _, _ in _VISUAL])
LABEL_FEATURES = ("label_start_idx", "label_phrase_len")
# What the model reads (Google's run_finetuning input_fn with visual features, less
# url_code_points): the int features, then the float ones.
MODEL_INT_FEATURES = ("long_token_ids", "long_word_idx", "long_vdom_idx", "long_input_mask",
                      "long_word_input_mask", "global_token_ids", "global_input_mask",
                      *FONT_FEATURES, *INDICATOR_FEATURES)
MODEL_FEATURES = MODEL_INT_FEATURES + FLOAT_FEATURES


@dataclasses.dataclass
class OpenKpFeatureConfig(feature_config.FeatureConfig):
  """The `features:` section, Google's flags of the same meaning: long_seq_len and
  global_seq_len (generate_examples.py --long_max_length, --global_max_length),
  max_phrase_words (run_finetuning.py --kp_max_length), max_key_phrases (--num_labels: the
  converter always writes 3 label slots) and url_max_code_points (--url_max_code_points)."""
  global_seq_len: int = 512
  max_phrase_words: int = 5
  max_key_phrases: int = NUM_LABELS
  url_max_code_points: int = 1000

  def check(self) -> None:
    if self.max_key_phrases != NUM_LABELS:
      raise ValueError(f"max_key_phrases: Google's converter writes {NUM_LABELS} label slots, "
                       f"got {self.max_key_phrases}")


class OfficialConversionError(ValueError):
  """A page Google's converter would not turn into a tf.Example; `reason` groups the count."""

  def __init__(self, reason: str, field: str, detail: str):
    super().__init__(f"field '{field}': {detail}")
    self.reason, self.field, self.detail = reason, field, detail


@dataclasses.dataclass
class OfficialSettings:
  """Google's EtcFeaturizationConfig fields that change the features."""
  long_max_length: int = 4096
  global_max_length: int = 512
  url_max_code_points: int = 1000
  kp_max_length: int = 5

  @classmethod
  def from_feature_config(cls, config) -> "OfficialSettings":
    return cls(config.long_seq_len, config.global_seq_len, config.url_max_code_points,
               config.max_phrase_words)

  def lengths(self) -> Dict[str, int]:
    """{feature: length} of every feature written."""
    sizes = {"url": self.url_max_code_points, "labels": NUM_LABELS,
             "long": self.long_max_length, "first": self.kp_max_length * self.long_max_length,
             "global": self.global_max_length}
    return {name: sizes[axis] for name, axis in FEATURE_AXES.items()}


@dataclasses.dataclass
class VdomElement:
  text: str
  own: Dict[str, Any]        # VDOM_FIELDS -> float (coordinates), bool (flags), int (font size)
  parent: Dict[str, Any]


@dataclasses.dataclass
class OfficialPage:
  """What the converter reads of a record."""
  url: str
  text: str                                  # the page text (for decoding only)
  elements: List[VdomElement]
  key_phrases: Optional[List[List[str]]]     # None: the record has no KeyPhrases


def font_id(font_size: int) -> int:
  """Google's font-size bucket: 0 for <= 0, 1..17 for 8..24, then <= 29, 34, 39, 44, 49, more."""
  return bisect.bisect_left(FONT_SIZE_CUTOFFS, font_size)


def _flag(value, field: str) -> bool:
  if isinstance(value, (int, float)) and value in (0.0, 1.0):
    return value == 1.0
  raise OfficialConversionError("bad VDOM feature", field, f"expected 0.0 or 1.0, got {value!r}")


def _vdom_features(floats: Sequence[Any], field: str) -> Dict[str, Any]:
  """10 raw numbers -> {VDOM_FIELDS: value}, checked as Google's VdomFeatures does."""
  if len(floats) != len(VDOM_FIELDS):
    raise OfficialConversionError("bad VDOM feature", field,
                                  f"expected {len(VDOM_FIELDS)} numbers, got {len(floats)}")
  out = {}
  for name, value in zip(VDOM_FIELDS, floats):
    where = f"{field} ({name})"
    if name in _COORDINATES:
      if not isinstance(value, float):
        raise OfficialConversionError("bad VDOM feature", where,
                                      f"expected a float (e.g. 12.0), got {value!r}")
      out[name] = value
    elif name == "font_size":
      try:
        out[name] = round(value)   # Python's round: half to even, as Google's converter
      except (TypeError, ValueError, OverflowError) as e:
        raise OfficialConversionError("bad VDOM feature", where, f"{value!r}: {e}") from None
    else:
      out[name] = _flag(value, where)
  return out


def _element(raw: Any, i: int) -> VdomElement:
  field = f"VDOM[{i}]"
  if not isinstance(raw, dict):
    raise OfficialConversionError("bad VDOM element", field, "not an object")
  for key, kind in (("Id", int), ("text", str), ("feature", list), ("start_idx", int),
                    ("end_idx", int)):
    if key not in raw:
      raise OfficialConversionError("bad VDOM element", f"{field}.{key}", "missing")
    if not isinstance(raw[key], kind):
      raise OfficialConversionError("bad VDOM element", f"{field}.{key}",
                                    f"expected {kind.__name__}, got {raw[key]!r}")
  floats = raw["feature"]
  return VdomElement(raw["text"], _vdom_features(floats[:10], f"{field}.feature[0:10]"),
                     _vdom_features(floats[10:], f"{field}.feature[10:20]"))


def parse_page(record: Any) -> OfficialPage:
  """A decoded JSON line -> OfficialPage, failing where Google's OpenKpExample.from_json does."""
  if not isinstance(record, dict):
    raise OfficialConversionError("not an object", "line", "the line is not a JSON object")
  for key in ("url", "text", "VDOM"):
    if key not in record:
      raise OfficialConversionError(f"missing {key}", key, "missing")
  for key in ("url", "text"):
    if not isinstance(record[key], str):
      raise OfficialConversionError(f"bad {key}", key, f"expected a string, got {record[key]!r}")
  if not isinstance(record["VDOM"], str):
    raise OfficialConversionError("bad VDOM", "VDOM", "expected a string holding a JSON list")
  try:
    vdom = json.loads(record["VDOM"])
  except json.JSONDecodeError as e:
    raise OfficialConversionError("bad VDOM", "VDOM", f"not JSON: {e.msg}") from None
  if not isinstance(vdom, list):
    raise OfficialConversionError("bad VDOM", "VDOM", "expected a JSON list of elements")
  phrases = record.get("KeyPhrases")   # None when the record has none
  if "KeyPhrases" in record and not is_phrase_list(phrases):
    raise OfficialConversionError("bad KeyPhrases", "KeyPhrases",
                                  "expected a list of lists of words")
  return OfficialPage(record["url"], record["text"],
                      [_element(e, i) for i, e in enumerate(vdom)], phrases)


class WordTokenizer:
  """Piece ids of single words with a project tokenizer (`tokenization.Tokenizer`), cached.

  Google tokenizes every space-separated word on its own (FullTokenizer.tokenize(word));
  `tokenize([word])` of the project's WordPiece and SentencePiece tokenizers does the same.
  """

  def __init__(self, tokenizer, max_cached: int = 200000):
    self.tokenizer = getattr(tokenizer, "tokenizer", tokenizer)   # unwrap an OffsetTokenizer
    self.max_cached = max_cached
    self._cache: Dict[str, List[int]] = {}

  def __call__(self, words: Sequence[str]) -> List[List[int]]:
    missing = sorted({w for w in words if w not in self._cache})
    if missing:
      if len(self._cache) + len(missing) > self.max_cached:
        self._cache = {}
      self._cache.update(zip(missing, self.tokenizer.tokenize(missing)))
    return [self._cache[w] for w in words]


def _first_occurrences(element_words: List[List[str]], kp_max_length: int) -> List[List[int]]:
  """For k = 1..kp_max_length, per word position: the position where the k-gram starting there
  (lower-cased words inside one element) first occurs; a k-gram that would run past its element
  gets its own position. -> [kp_max_length][num_words]."""
  first: Dict[str, int] = {}          # k-gram text -> first position (k is its space count + 1)
  rows = [[] for _ in range(kp_max_length)]
  start = 0
  for words in element_words:
    lowered = [w.lower() for w in words]
    for k in range(1, kp_max_length + 1):
      for i in range(len(lowered)):
        if i + k > len(lowered):
          rows[k - 1].append(start + i)
        else:
          rows[k - 1].append(first.setdefault(" ".join(lowered[i:i + k]), start + i))
    start += len(words)
  return rows


def _labels(element_texts: List[str], key_phrases: Optional[List[List[str]]]
            ) -> Tuple[List[int], List[int]]:
  """(start word, phrase length) of every key phrase found, in Google's order."""
  keys = sorted({" " + " ".join(p).lower() + " " for p in key_phrases or []})
  missing = set(keys)
  starts, lengths = [], []
  offset = 0
  for text in element_texts:
    search = " " + text.lower() + " "
    for key in keys:
      if key in missing and key in search:
        at = search.index(key)
        starts.append(offset + search[:at].count(" "))
        lengths.append(key.count(" ") - 1)
        missing.discard(key)
    offset += len(text.split(" "))
  if key_phrases is not None and len(missing) == len(keys):   # none found
    raise OfficialConversionError(
        "no key phrase in the input", "KeyPhrases",
        f"none of {sorted(k.strip() for k in keys)} occurs (whole words, inside one VDOM "
        "element) in the kept elements" if keys else "the list is empty")
  if len(starts) > NUM_LABELS:
    raise OfficialConversionError("more than 3 key phrases", "KeyPhrases",
                                  f"{len(starts)} key phrases found; Google's converter keeps "
                                  f"{NUM_LABELS} label slots and rejects the page")
  return starts, lengths


def convert_page(page: OfficialPage, words_tokenizer: WordTokenizer, settings: OfficialSettings,
                 with_labels: bool = True) -> Dict[str, np.ndarray]:
  """OfficialPage -> {feature: int64 or float32 array} of Google's features, in its order.

  with_labels=False converts as for a page without KeyPhrases (prediction): the labels are
  all -1 and a page whose phrases are not in the input still converts.
  """
  long_len, global_len = settings.long_max_length, settings.global_max_length
  code_points = [ord(c) for c in page.url]
  if len(code_points) > settings.url_max_code_points:
    raise OfficialConversionError("url too long", "url",
                                  f"{len(code_points)} code points, more than "
                                  f"url_max_code_points {settings.url_max_code_points}")
  tokens, word_idx, vdom_idx, num_words = [], [], [], 0
  kept_words = []
  for e, element in enumerate(page.elements):
    words = element.text.split(" ")
    pieces = words_tokenizer(words)
    count = sum(len(p) for p in pieces)
    if e >= global_len or len(tokens) + count > long_len:
      break
    for w, ids in enumerate(pieces):
      tokens.extend(ids)
      word_idx.extend([num_words + w] * len(ids))
    vdom_idx.extend([e] * count)
    num_words += len(words)
    kept_words.append(words)
  kept = page.elements[:len(kept_words)]
  starts, lengths = _labels([element.text for element in kept],
                            page.key_phrases if with_labels else None)
  if num_words > long_len:
    raise OfficialConversionError("too many words", "VDOM",
                                  f"{num_words} words (many without pieces) in the kept "
                                  f"elements, more than long_max_length {long_len}")

  def padded(values, length, pad):
    return values + [pad] * (length - len(values))

  f = collections.OrderedDict()
  f["url_code_points"] = padded(code_points, settings.url_max_code_points, -1)
  f["label_start_idx"] = padded(starts, NUM_LABELS, -1)
  f["label_phrase_len"] = padded(lengths, NUM_LABELS, -1)
  f["long_token_ids"] = padded(tokens, long_len, 0)
  f["long_word_idx"] = padded(word_idx, long_len, 0)
  f["long_vdom_idx"] = padded(vdom_idx, long_len, 0)
  f["long_input_mask"] = padded([1] * len(tokens), long_len, 0)
  f["long_word_input_mask"] = padded([1] * num_words, long_len, 0)
  # [kp_max_length * long_len]: row k-1 holds the k-gram first occurrences, padded with the
  # padding positions' own indices.
  f["long_word_first_occurrence"] = [
      position for row in _first_occurrences(kept_words, settings.kp_max_length)
      for position in row + list(range(len(row), long_len))]
  f["global_token_ids"] = [GLOBAL_TOKEN_ID] * global_len
  f["global_input_mask"] = padded([1] * len(kept), global_len, 0)
  for name, which, field in _VISUAL:
    values = [(element.own, element.parent)[which][field] for element in kept]
    if field == "font_size":
      values = [font_id(v) for v in values]
    elif field in _FLAGS:
      values = [int(v) for v in values]
    f[name] = padded(values, global_len, 0)
  return collections.OrderedDict(
      (name, np.asarray(values, np.float32 if name in FLOAT_FEATURES else np.int64))
      for name, values in f.items())


def convert_record(record: Any, words_tokenizer: WordTokenizer, settings: OfficialSettings,
                   with_labels: bool = True) -> Tuple[OfficialPage, Dict[str, np.ndarray]]:
  """A decoded JSON line -> (its page, its features); OfficialConversionError if it fails."""
  page = parse_page(record)
  return page, convert_page(page, words_tokenizer, settings, with_labels)


def url_from_code_points(code_points: Sequence[int]) -> str:
  """The url stored in url_code_points (-1 padding dropped)."""
  return "".join(chr(int(c)) for c in code_points if int(c) != -1)
