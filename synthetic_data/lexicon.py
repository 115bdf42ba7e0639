"""Invented words for the synthetic data: syllables, fixed name pools and draws without repeats.

Each generator builds its pools once, from a seed of its own, so every data seed shares them and
a small WordPiece vocabulary covers train and dev alike. A second set of pools with none of those
words (`build_unseen_lexicon`) makes the splits about unseen entities, which test whether a model
reads rather than remembers names. The order of the random draws is part of
the data: the same arguments must keep giving the same words, so it never changes.
"""

from __future__ import annotations

import dataclasses
import random
import re
from typing import (Callable, Collection, Dict, Iterator, List, Mapping, Optional, Sequence, Set,
                    Tuple)

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
DIRECTIONS = ("north", "south", "east", "west")

# Pool name -> its words.
Lexicon = Dict[str, Tuple[str, ...]]
# (pool name, word, random generator) -> the word as it enters the pool.
Decorate = Callable[[str, str, random.Random], str]


@dataclasses.dataclass(frozen=True)
class Sounds:
  """The letters of a syllable: an onset, a vowel (rarely a non-ASCII one) and a coda."""
  onsets: Tuple[str, ...]
  vowels: Tuple[str, ...]
  codas: Tuple[str, ...]
  rare_vowels: Tuple[str, ...] = ()
  rare_rate: float = 0.0

  def syllable(self, rng: random.Random) -> str:
    """One syllable.

    Draw order: with rare vowels, a coin and the vowel come first, then the onset and the coda;
    without them, onset, vowel and coda.
    """
    if not self.rare_vowels:
      return rng.choice(self.onsets) + rng.choice(self.vowels) + rng.choice(self.codas)
    vowels = self.rare_vowels if rng.random() < self.rare_rate else self.vowels
    vowel = rng.choice(vowels)
    return rng.choice(self.onsets) + vowel + rng.choice(self.codas)


@dataclasses.dataclass(frozen=True)
class Pool:
  """`size` words, each of `syllables` syllables and an ending, at least `min_length` letters."""
  size: int
  syllables: int
  endings: Tuple[str, ...] = ("",)
  capitalised: bool = True
  min_length: int = 4


def capitalise(text: str) -> str:
  """The text with its first letter upper case and the rest unchanged."""
  return text[:1].upper() + text[1:]


def _word(rng: random.Random, sounds: Sounds, pool: Pool) -> str:
  """A raw candidate word: the syllables, then the ending."""
  return "".join(sounds.syllable(rng) for _ in range(pool.syllables)) + rng.choice(pool.endings)


def _draw_pool(rng: random.Random, sounds: Sounds, name: str, pool: Pool, max_length: int,
               seen: Set[str], decorate: Optional[Decorate]) -> Tuple[str, ...]:
  """One pool's words; a candidate of the wrong length or already in `seen` is drawn again."""
  words: List[str] = []
  while len(words) < pool.size:
    word = _word(rng, sounds, pool)
    if not pool.min_length <= len(word) <= max_length or word in seen:
      continue
    seen.add(word)
    if pool.capitalised:
      word = capitalise(word)
    words.append(decorate(name, word, rng) if decorate else word)
  return tuple(words)


def build_lexicon(seed: int, sounds: Sounds, pools: Mapping[str, Pool], max_length: int,
                  reserved: Collection[str] = (), decorate: Optional[Decorate] = None) -> Lexicon:
  """The fixed name pools, in the order of `pools`, drawn from one `random.Random(seed)`.

  Args:
    seed: The lexicon's own seed (not a data seed).
    sounds: The letters of the syllables.
    pools: Pool name -> what its words look like.
    max_length: The most letters of a word (before capitalising and decorating).
    reserved: Lower-case words no pool may contain (e.g. the English words of the templates).
    decorate: Called on every accepted word (after capitalising), e.g. to add an apostrophe.

  Returns:
    Pool name -> its words; no word is in two pools.
  """
  rng = random.Random(seed)
  seen = set(reserved)
  return {name: _draw_pool(rng, sounds, name, pool, max_length, seen, decorate)
          for name, pool in pools.items()}


def words_of(lex: Lexicon) -> Set[str]:
  """Every lower-case word of a lexicon's names (names split at spaces, apostrophes, hyphens)."""
  return {piece.lower() for names in lex.values() for name in names
          for piece in re.split(r"[\s'\-]+", name) if piece}


def strings(value) -> Iterator[str]:
  """Every string inside nested tuples, lists, dict values and dataclass fields (other values
  are skipped): the fixed texts whose words a lexicon must not contain."""
  if isinstance(value, str):
    yield value
  elif dataclasses.is_dataclass(value):
    for field in dataclasses.fields(value):
      yield from strings(getattr(value, field.name))
  elif isinstance(value, (dict, tuple, list)):
    for item in value.values() if isinstance(value, dict) else value:
      yield from strings(item)


def build_unseen_lexicon(seen: Lexicon, seed: int, sounds: Sounds, pools: Mapping[str, Pool],
                         max_length: int, reserved: Collection[str] = (),
                         decorate: Optional[Decorate] = None) -> Lexicon:
  """Pools shaped like `seen`'s (same sounds and pools) none of whose words occurs in `seen`:
  the names of a split about entities a model trained on `seen` has never met."""
  return build_lexicon(seed, sounds, pools, max_length, set(reserved) | words_of(seen), decorate)


class FreshDraws:
  """Draws values that are new within one scope (an item, a page): repeats are drawn again."""

  def __init__(self, rng: random.Random, lexicon: Lexicon, max_tries: int = 10_000):
    self.rng = rng
    self.lexicon = lexicon
    self.max_tries = max_tries
    self.used: Set[str] = set()

  def draw(self, make: Callable[[], str]) -> str:
    """Calls `make` until it returns a value not drawn before; records and returns it."""
    for _ in range(self.max_tries):
      value = make()
      if value not in self.used:
        self.used.add(value)
        return value
    raise RuntimeError("no fresh value left")

  def pick(self, options: Sequence[str]) -> str:
    """A fresh one of `options`."""
    return self.draw(lambda: self.rng.choice(options))

  def name(self, pool: str) -> str:
    """A fresh word of a lexicon pool."""
    return self.pick(self.lexicon[pool])
