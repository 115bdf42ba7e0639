"""OpenKP page -> ETC features (docs/task_layouts.md, "OpenKP").

Layout of one page:
  global: one SENTENCE token (id 1) per VDOM element, in order, up to `global_seq_len`.
  long:   the word pieces of the page text, up to `long_seq_len`; pieces of one word stay
          together (a word that does not fit whole is left out, with everything after it).
  sentence_ids [L]: the element owning each piece (its word's element).
  word_ids [L]: the word of each piece (words numbered from 0), -1 on padding.
  num_words: how many words are in the input (words 0..num_words-1; an empty word, from two
    spaces in a row, has no piece and is never part of a predicted phrase).
  global_visual_features [G, 20] float: each element's visual features, squashed so that pixel
    sizes and flags have similar ranges: sign(v) * log1p(|v|) for x, width, y, height and font
    size (of the element and of its parent), flags as they are. The model adds a projection of
    these to the element's global embedding and to the embeddings of the element's pieces.

Labels (training): the first occurrence (case-insensitive, whole words, inside the input) of
each key phrase of at most `max_phrase_words` words, as `label_starts` / `label_lengths`
[max_key_phrases] (-1 / 0 where there is none).
"""

import dataclasses
import itertools
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from etc_realformer.data import vocab
from etc_realformer.data.span_tokenization import OffsetTokenizer
from tasks.common import feature_config
from tasks.openkp.data import NUM_VISUAL_FEATURES, OpenKpPage

MODEL_FEATURES = ("token_ids", "sentence_ids", "global_token_ids", "word_ids", "num_words")
FLOAT_FEATURES = ("global_visual_features",)
LABEL_FEATURES = ("label_starts", "label_lengths")
# Positions (0-based) of the continuous features among the 20: x, width, y, height, font_size
# of the element (1-10) and of its parent (11-20).
_CONTINUOUS = [0, 1, 2, 3, 8, 10, 11, 12, 13, 18]


@dataclasses.dataclass
class OpenKpFeatureConfig(feature_config.FeatureConfig):
  """Lengths of the converted features (long_seq_len 4096).

  layout "package": this module's features; "official": Google's (tasks/openkp/official.py),
  where max_phrase_words is Google's kp_max_length, url_max_code_points its
  url_max_code_points, and max_key_phrases must be 3 (Google's converter always writes 3
  label slots).
  """
  global_seq_len: int = 512
  max_phrase_words: int = 5
  max_key_phrases: int = 3
  url_max_code_points: int = 1000   # official layout only: length of url_code_points

  layouts = (feature_config.PACKAGE_LAYOUT, feature_config.OFFICIAL_LAYOUT)

  def check(self) -> None:
    if self.layout == feature_config.OFFICIAL_LAYOUT and self.max_key_phrases != 3:
      raise ValueError(f"max_key_phrases: the official layout has 3 label slots, got "
                       f"{self.max_key_phrases}")


def feature_lengths(config: OpenKpFeatureConfig) -> Dict[str, int]:
  """Length of every stored int feature (0 = a scalar)."""
  return {"token_ids": config.long_seq_len, "sentence_ids": config.long_seq_len,
          "word_ids": config.long_seq_len, "num_words": 0,
          "global_token_ids": config.global_seq_len,
          "label_starts": config.max_key_phrases, "label_lengths": config.max_key_phrases}


def float_shapes(config: OpenKpFeatureConfig) -> Dict[str, tuple]:
  return {"global_visual_features": (config.global_seq_len, NUM_VISUAL_FEATURES)}


def squash_visual(features: List[float]) -> np.ndarray:
  """Raw 20 visual features -> the model's [20] float32 input (see the module docstring)."""
  return squash_visual_rows(np.asarray(features, np.float32)[None])[0]


def squash_visual_rows(rows: np.ndarray) -> np.ndarray:
  """`squash_visual` of every row of [E, 20] float32 raw features -> [E, 20] float32.

  The sizes go through float64, sign(v) * log1p(|v|), then back to float32, as one value at a
  time through `math` would.
  """
  out = np.array(rows, np.float32)
  sizes = out[:, _CONTINUOUS].astype(np.float64)           # [E, len(_CONTINUOUS)]
  out[:, _CONTINUOUS] = np.copysign(np.log1p(np.abs(sizes)), sizes)
  return out


def word_pieces(page: OpenKpPage, tokenizer: OffsetTokenizer) -> Tuple[List[int], np.ndarray]:
  """(piece ids, [pieces] word index of each piece) of the page's text."""
  return word_pieces_many([page], tokenizer)[0]


def word_pieces_many(pages: Sequence[OpenKpPage], tokenizer: OffsetTokenizer
                     ) -> List[Tuple[List[int], np.ndarray]]:
  """`word_pieces` of every page, with one tokenizer call for all of them."""
  texts = [" ".join(p.words) for p in pages]
  out = []
  for page, text, pieces in zip(pages, texts, tokenizer.tokenize_many(texts)):
    starts = _word_starts(page.words, text)   # [words] the character where each word starts
    out.append((pieces.ids, np.searchsorted(starts, np.asarray(pieces.starts, np.int64),
                                            side="right") - 1))
  return out


def _word_starts(words: List[str], text: str) -> np.ndarray:
  """[words] the character of `text` (the words joined by single spaces) where each starts:
  0 and one past each space (read from the text's code points), unless a word holds a space."""
  codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)   # [characters]
  starts = np.flatnonzero(codes == ord(" ")) + 1
  if words and len(starts) + 1 == len(words):
    return np.concatenate([[0], starts])
  widths = np.fromiter(map(len, words), np.int64, len(words)) + 1
  return np.cumsum(widths) - widths


def phrase_key(words) -> str:
  """A phrase as the metric compares it: words lower-cased, joined by one space."""
  return " ".join(w.lower() for w in words if w)


def first_occurrences(words: List[str], phrases: List[List[str]], max_words: int
                      ) -> List[Tuple[int, int]]:
  """(start word, length) of the first occurrence of each phrase in `words`, (-1, 0) if none."""
  lowered = None
  out = []
  for phrase in phrases:
    target = [w.lower() for w in phrase if w]
    found = (-1, 0)
    if 0 < len(target) <= max_words:
      if lowered is None:
        lowered = _lowered(words)
      n, first = len(target), target[0]
      start, stop = 0, len(lowered) - n + 1   # candidate starts: [start, stop)
      while start < stop:
        try:
          start = lowered.index(first, start, stop)
        except ValueError:
          break
        if lowered[start:start + n] == target:
          found = (start, n)
          break
        start += 1
    out.append(found)
  return out


def _lowered(words: List[str]) -> List[str]:
  """[w.lower() for w in words], lower-casing the words joined by spaces in one call when that
  is the same: str.lower reads no context but a capital sigma's (final or not), and a space
  ends that context; words holding a space take the word-by-word way."""
  text = " ".join(words)
  if "\u03a3" not in text:
    lowered = text.lower().split(" ")
    if len(lowered) == len(words):
      return lowered
  return [w.lower() for w in words]


def _element_of_word(page: OpenKpPage) -> np.ndarray:
  """[words] the index of the element owning each word (0 where none does)."""
  bounds = [(element.start, element.end) for element in page.elements]
  lengths = [end - start for start, end in bounds]
  if (bounds and bounds[0][0] == 0 and bounds[-1][1] == len(page.words) and min(lengths) >= 0
      and all(end == following for (_, end), (following, _) in zip(bounds, bounds[1:]))):
    # Elements side by side over all the words (as `data.parse_vdom` leaves them).
    return np.repeat(np.arange(len(bounds), dtype=np.int64), lengths)
  element_of_word = np.zeros(len(page.words), np.int64)
  for e, (start, end) in enumerate(bounds):
    element_of_word[start:end] = e
  return element_of_word


def convert_page(page: OpenKpPage, tokenizer: OffsetTokenizer, config: OpenKpFeatureConfig,
                 with_labels: bool, pieces: Optional[Tuple[List[int], np.ndarray]] = None
                 ) -> Tuple[Dict[str, np.ndarray], dict]:
  """One page -> (features, info: words kept, elements kept, phrases labelled/unlabelled).
  `pieces`: the page's `word_pieces` when already tokenized (`word_pieces_many`)."""
  long_len, global_len = config.long_seq_len, config.global_seq_len
  ids, piece_words = pieces if pieces is not None else word_pieces(page, tokenizer)
  element_of_word = _element_of_word(page)
  # Words kept: those of the first `global_len` elements whose pieces all fit `long_len`.
  num_words = len(page.words)
  if len(page.elements) > global_len:
    num_words = page.elements[global_len].start
  if len(ids) > long_len:
    num_words = min(num_words, int(piece_words[long_len]))   # the word cut at the boundary goes
  kept = int(np.searchsorted(piece_words, num_words, side="left"))   # pieces of words < num_words

  f = {name: np.zeros([n], np.int64) if n else np.int64(0)
       for name, n in feature_lengths(config).items()}
  f["token_ids"][:kept] = ids[:kept]
  f["word_ids"][:] = -1
  f["word_ids"][:kept] = piece_words[:kept]
  f["sentence_ids"][:kept] = element_of_word[piece_words[:kept]]
  f["num_words"] = np.int64(num_words)
  visual = np.zeros([global_len, NUM_VISUAL_FEATURES], np.float32)
  num_elements = min(len(page.elements), global_len)
  if num_elements:
    rows = [element.features for element in page.elements[:num_elements]]
    if all(len(row) == NUM_VISUAL_FEATURES for row in rows):
      raw = np.fromiter(itertools.chain.from_iterable(rows), np.float32,
                        num_elements * NUM_VISUAL_FEATURES).reshape([num_elements, -1])
    else:
      raw = np.asarray(rows, np.float32)   # [elements, 20]; raises on a ragged row
    visual[:num_elements] = squash_visual_rows(raw)
  f["global_token_ids"][:num_elements] = vocab.SENTENCE_ID
  f["global_visual_features"] = visual
  info = {"words": len(page.words), "words_kept": num_words, "elements": len(page.elements),
          "elements_kept": num_elements, "phrases_labelled": 0, "phrases_unlabelled": 0}
  f["label_starts"][:] = -1
  if with_labels:
    phrases = (page.key_phrases or [])[:config.max_key_phrases]
    found = first_occurrences(page.words[:num_words], phrases, config.max_phrase_words)
    slot = 0
    for start, length in found:
      if start < 0:
        info["phrases_unlabelled"] += 1
        continue
      f["label_starts"][slot], f["label_lengths"][slot] = start, length
      slot += 1
    info["phrases_labelled"] = slot
  else:
    for name in LABEL_FEATURES:
      f.pop(name)
  return f, info
