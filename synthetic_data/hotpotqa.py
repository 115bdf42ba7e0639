"""Small synthetic HotpotQA (distractor setting) data in the official JSON format.

Each item is an invented world of people, towns, countries and companies with short
Wikipedia-like paragraphs. Its facts are drawn afresh, so answers must be read, not memorised;
the names come from one fixed lexicon of a few hundred invented words (the same for every seed),
so a small WordPiece vocabulary covers train and dev alike. Bridge questions ask for the country
of a person's birthplace, or the founding year or home town of the company a person founded.
Comparison questions ask whether two towns share a country, whether one person is older, whether
two people share an occupation (yes/no, roughly balanced) or who was born first (a name). Each
item has 2 gold paragraphs and 8 shuffled distractors of the same kinds; in "medium" and "hard"
items some distractors share a name or a country with the question's entities.

The same seed always gives identical items (one `random.Random(seed)`, fixed-order lists).
Generate train and dev with different seeds: `ensure_demo_data` uses `seed` and
`seed + DEV_SEED_OFFSET`, so their ids and items differ. Pure Python: importing this module,
generating items or writing them never loads TensorFlow.

Splits about unseen entities (`names="unseen"`) draw every name from `UNSEEN_LEXICON`: pools
shaped like `LEXICON`'s with none of its words (only the affixes "O'" and "-on-Sea/Hill/Marsh",
`NAME_AFFIX_WORDS`, are common to both), so a model that memorised the train names gains
nothing on them; template words (occupations, "Works", "River", ...) are shared.
`ensure_demo_data` writes two: dev_unseen (`seed + UNSEEN_DEV_SEED_OFFSET`) and test_unseen
(`seed + UNSEEN_TEST_SEED_OFFSET`), each of `num_dev` items, each from its own generator, so
train and dev are the same as without them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import random
from typing import Dict, List, Optional, Tuple

from synthetic_data import lexicon, writer
from synthetic_data.lexicon import DIRECTIONS, MONTHS

NUM_PARAGRAPHS = 10
DEV_SEED_OFFSET = 1_000_003
UNSEEN_DEV_SEED_OFFSET = 2_000_029
UNSEEN_TEST_SEED_OFFSET = 3_000_017
TRAIN_FILENAME = "synthetic_train.json"
DEV_FILENAME = "synthetic_dev.json"
DEV_UNSEEN_FILENAME = "synthetic_dev_unseen.json"
TEST_UNSEEN_FILENAME = "synthetic_test_unseen.json"
INFO_FILENAME = "synthetic_info.json"
# Raise when the generated data changes: demo data is then rewritten. 2: the unseen-name splits
# (train and dev are byte-identical to version 1's).
GENERATOR_VERSION = 2
NAME_CHOICES = ("seen", "unseen")
BRIDGE_KINDS = ("birth_country", "company_year", "company_town")
COMPARISON_KINDS = ("town_country", "older", "born_first", "same_occupation")
OCCUPATIONS = ("painter", "sculptor", "poet", "novelist", "composer", "architect", "engineer",
               "physician", "botanist", "photographer", "historian", "chemist", "violinist",
               "journalist", "cartographer", "economist", "actor", "singer", "astronomer")
INDUSTRIES = {"Works": "engineering", "Mills": "flour", "Foundry": "metal", "Press": "publishing",
              "Brewery": "brewing", "Textiles": "textile", "Motors": "car", "Records": "music"}
PRODUCTS = ("lamp", "engine", "loom", "kettle", "radio", "bicycle", "clock", "stove")
LANDMARKS = ("stone bridge", "wool market", "spring fair", "old harbour", "clock tower",
             "town hall", "glass works", "chapel")
_LEVELS = ("easy", "medium", "hard")

# ----------------------------------------------------------------------------- lexicon

_LEXICON_SEED = 4177
_UNSEEN_LEXICON_SEED = 90_417
# A rare vowel about one time in twenty-five.
_SOUNDS = lexicon.Sounds(
    onsets=("b", "br", "d", "dr", "f", "g", "gr", "h", "k", "kr", "l", "m", "n", "p", "r", "s",
            "st", "t", "th", "v", "z", "sk", "tr", "w"),
    vowels=("a", "e", "i", "o", "u", "a", "e", "o", "ae", "ei", "ou"),
    codas=("", "", "", "n", "r", "l", "s", "nd", "rk"),
    rare_vowels=("é", "ø", "å", "ü"), rare_rate=0.04)
_POOLS = {
    "first": lexicon.Pool(44, 2, ("", "a", "o", "en", "is", "ine")),
    "last": lexicon.Pool(60, 1, ("sen", "berg", "ley", "ton", "ard", "wick", "mont", "ez")),
    "town": lexicon.Pool(60, 1, ("vik", "ford", "holm", "bury", "stad", "dal", "mere", "by")),
    "country": lexicon.Pool(16, 1, ("ia", "and", "ora", "esh", "ania", "ovia")),
    "river": lexicon.Pool(20, 2),
    "company": lexicon.Pool(30, 2),
}


_TOWN_SUFFIXES = ("Sea", "Hill", "Marsh")
# The words `_decorate` adds (split as `lexicon.words_of` splits): shared by both lexicons.
NAME_AFFIX_WORDS = frozenset({"o", "on"} | {suffix.lower() for suffix in _TOWN_SUFFIXES})


def _decorate(pool: str, word: str, rng: random.Random) -> str:
  """A few last names get an apostrophe ("O'Brel"), a few towns a hyphen ("Vik-on-Sea")."""
  if pool == "last" and rng.random() < 0.08:
    return "O'" + word
  if pool == "town" and rng.random() < 0.08:
    return word + "-on-" + rng.choice(_TOWN_SUFFIXES)
  return word


LEXICON = lexicon.build_lexicon(_LEXICON_SEED, _SOUNDS, _POOLS, max_length=9,
                                decorate=_decorate)
# The names of the unseen-entity splits: same shapes, no word of LEXICON (but the affixes).
UNSEEN_LEXICON = lexicon.build_unseen_lexicon(LEXICON, _UNSEEN_LEXICON_SEED, _SOUNDS, _POOLS,
                                              max_length=9, decorate=_decorate)


def lexicon_for(names: str) -> lexicon.Lexicon:
  """The lexicon of a `names` choice: "seen" (LEXICON, train and dev) or "unseen"."""
  if names not in NAME_CHOICES:
    raise ValueError(f"names must be one of {NAME_CHOICES}, got {names!r}")
  return LEXICON if names == "seen" else UNSEEN_LEXICON


# ----------------------------------------------------------------------------- the world


@dataclasses.dataclass
class Person:
  """A person: the title of their paragraph is `name`."""
  name: str
  female: bool
  birth: Tuple[int, int, int]  # (year, month 1-12, day)
  death: Optional[Tuple[int, int, int]]
  occupation: str
  birthplace: str
  company: Optional[str] = None


@dataclasses.dataclass
class Town:
  """A town in a country."""
  name: str
  country: str
  founded: int
  river: str


@dataclasses.dataclass
class Company:
  """A company based in a town; its founder is named only in the founder's paragraph."""
  name: str
  industry: str
  town: str
  established: int


def _date(date: Tuple[int, int, int]) -> str:
  """(year, month, day) as "3 May 1921"."""
  return f"{date[2]} {MONTHS[date[1] - 1]} {date[0]}"


def _article(word: str) -> str:
  """The word with "a" or "an"."""
  return ("an " if word[0] in "aeiou" else "a ") + word


class _World:
  """The entities of one item, with unique names from `lex`, drawn from one random generator."""

  def __init__(self, rng: random.Random, lex: lexicon.Lexicon):
    self.rng = rng
    self.lex = lex
    self.entities = {Person: [], Town: [], Company: []}
    self.names = lexicon.FreshDraws(rng, lex)

  def _add(self, cls, values: dict, fields: dict):
    """Adds an entity of class `cls` from drawn `values`, overridden by `fields`."""
    values.update(fields)
    self.entities[cls].append(cls(**values))
    return self.entities[cls][-1]

  def person_name(self, first: Optional[str] = None, last: Optional[str] = None) -> str:
    """A fresh full name; `first` or `last` fixes that part."""
    rng, lex = self.rng, self.lex
    return self.names.draw(lambda: f"{first or rng.choice(lex['first'])} "
                                   f"{last or rng.choice(lex['last'])}")

  def person(self, name: Optional[str] = None, **fields) -> Person:
    """A new person; `fields` override the drawn values (drawn all the same)."""
    rng = self.rng
    birth = (rng.randint(1840, 1960), rng.randint(1, 12), rng.randint(1, 28))
    death = (birth[0] + rng.randint(55, 95), rng.randint(1, 12), rng.randint(1, 28))
    alive = death[0] > 2020 or rng.random() < 0.4
    return self._add(Person, dict(
        name=name or self.person_name(), female=rng.random() < 0.5, birth=birth,
        death=None if alive else death, occupation=rng.choice(OCCUPATIONS),
        birthplace=rng.choice(self.lex["town"])), fields)

  def town(self, **fields) -> Town:
    """A new town with a fresh name; `fields` override the drawn values."""
    rng = self.rng
    return self._add(Town, dict(
        name=self.names.name("town"),
        country=rng.choice(self.lex["country"]), founded=rng.randrange(1200, 1800, 10),
        river=rng.choice(self.lex["river"])), fields)

  def company(self, **fields) -> Company:
    """A new company with a fresh name; `fields` override the drawn values."""
    rng, lex, suffix = self.rng, self.lex, self.rng.choice(sorted(INDUSTRIES))
    return self._add(Company, dict(
        name=self.names.draw(lambda: f"{rng.choice(lex['company'])} {suffix}"),
        industry=INDUSTRIES[suffix], town=rng.choice(lex["town"]),
        established=rng.randint(1840, 2000)), fields)


# ----------------------------------------------------------------------------- paragraphs


def _other(rng: random.Random, lex: lexicon.Lexicon, pool: str, exclude: str) -> str:
  """A name from a pool of `lex` other than `exclude`."""
  return rng.choice([name for name in lex[pool] if name != exclude])


def _compose(rng: random.Random, intro: str, facts: Dict[str, str], fillers: List[str],
             in_intro: str = "intro"):
  """Sentences (intro first, the rest shuffled, 3 to 6 in all) and each fact's index.

  The intro's index is 0, under "intro" and, unless stated later, under `in_intro`.
  """
  room = max(0, rng.randint(3, 6) - 1 - len(facts))
  body = sorted(facts.items()) + [(None, text) for text in rng.sample(fillers, room)]
  rng.shuffle(body)
  index = {key: i + 1 for i, (key, _) in enumerate(body) if key}
  index["intro"] = 0
  index.setdefault(in_intro, 0)
  return [intro] + [" " + text for _, text in body], index


def _person_paragraph(rng: random.Random, p: Person, world: _World):
  """Birth date and occupation first, then birthplace, founded company and fillers."""
  he, his = ("She", "her") if p.female else ("He", "his")
  born = _date(p.birth)
  if p.death:
    lived = f"{born} – {_date(p.death)}"
    intro = rng.choice((f"{p.name} ({lived}) was {_article(p.occupation)}.",
                        f"{p.name} ({lived}) was a noted {p.occupation} and teacher."))
  else:
    intro = rng.choice((f"{p.name} (born {born}) is {_article(p.occupation)}.",
                        f"{p.name} (born {born}) is a celebrated {p.occupation}."))
  facts = {"birthplace": rng.choice((
      f"{he} was born in the town of {p.birthplace}.",
      f"{he} was born and raised in {p.birthplace}, where {his} parents ran a shop."))}
  if p.company:
    facts["founded"] = rng.choice((
        f"{he} later founded {p.company}, which {he.lower()} led for many years.",
        f"{he} is best known as the founder of {p.company}."))
  year, lex = p.birth[0], world.lex
  fillers = [
      f"In {year + rng.randint(18, 40)}, {he.lower()} moved to "
      f"{_other(rng, lex, 'town', p.birthplace)} with {his} family.",
      f"{he} married the {rng.choice(OCCUPATIONS)} {world.person_name()} in "
      f"{year + rng.randint(20, 35)}.",
      f"{he} received the {rng.choice(lex['company'])} Prize in {year + rng.randint(30, 60)}.",
      f"{his.capitalize()} early work was shaped by {his} teacher, {world.person_name()}.",
  ]
  return _compose(rng, intro, facts, fillers)


def _town_paragraph(rng: random.Random, t: Town, world: _World):
  """The country in the first sentence or a later one, then fillers."""
  facts = {}
  if rng.random() < 0.6:
    intro = rng.choice((f"{t.name} is a town in {t.country}.",
                        f"{t.name} is a small market town in the {rng.choice(DIRECTIONS)} "
                        f"of {t.country}."))
  else:
    intro = f"{t.name} is a town on the {t.river} River."
    facts["country"] = f"It lies in the {rng.choice(DIRECTIONS)} of {t.country}."
  lex = world.lex
  fillers = [
      f"The town was founded in {t.founded}.",
      f"As of {rng.randint(1990, 2020)}, it had a population of {rng.randint(2, 60)},"
      f"{rng.randint(1, 9)}00.",
      f"The {t.river} River flows through the centre of the town.",
      f"{t.name} is known for its {rng.choice(LANDMARKS)} and its {rng.choice(LANDMARKS)}.",
      f"It is twinned with {_other(rng, lex, 'town', t.name)}, a town in "
      f"{rng.choice(lex['country'])}.",
  ]
  return _compose(rng, intro, facts, fillers, in_intro="country")


def _company_paragraph(rng: random.Random, c: Company, world: _World):
  """Industry and home town (first sentence or a later one), founding year, fillers."""
  facts = {"established": rng.choice((f"The company was established in {c.established}.",
                                      f"The company was founded in {c.established} "
                                      f"with a small loan."))}
  if rng.random() < 0.6:
    intro = f"{c.name} is {_article(c.industry)} company based in {c.town}."
  else:
    intro = f"{c.name} is {_article(c.industry)} company with a long history."
    facts["town"] = f"Its headquarters are in {c.town}, near the railway station."
  lex, later = world.lex, c.established + rng.randint(5, 25)
  fillers = [
      f"Its best-known product is the {rng.choice(lex['company'])} {rng.choice(PRODUCTS)}.",
      f"In {later}, it opened a second office in {_other(rng, lex, 'town', c.town)}.",
      f"The company employs about {rng.randint(2, 9)}00 people.",
      f"It was listed on the stock exchange of {rng.choice(lex['country'])} in {later}.",
  ]
  return _compose(rng, intro, facts, fillers, in_intro="town")


_PARAGRAPHS = {Person: _person_paragraph, Town: _town_paragraph, Company: _company_paragraph}


# ----------------------------------------------------------------------------- questions


def _flip(rng: random.Random) -> bool:
  """A fair coin."""
  return rng.random() < 0.5


def _bridge(w: _World, kind: str):
  """A bridge question: (question, answer, gold [(entity, fact)], distractor counts)."""
  rng = w.rng
  if kind == "birth_country":
    town = w.town()
    p = w.person(birthplace=town.name)
    q = rng.choice((f"In which country is the town where {p.name} was born?",
                    f"{p.name} was born in a town in which country?"))
    return q, town.country, [(p, "birthplace"), (town, "country")], (3, 3, 2)
  p = w.person()
  company = w.company(established=p.birth[0] + rng.randint(22, 55))
  p.company = company.name
  if kind == "company_year":
    q = rng.choice((f"In what year was the company founded by {p.name} established?",
                    f"When was the company that {p.name} founded established?"))
    return q, str(company.established), [(p, "founded"), (company, "established")], (3, 2, 3)
  q = rng.choice((f"In which town is the company founded by {p.name} based?",
                  f"Where is the company that {p.name} founded based?"))
  return q, company.town, [(p, "founded"), (company, "town")], (3, 2, 3)


def _comparison(w: _World, kind: str):
  """A comparison question: (question, answer, gold [(entity, fact)], distractor counts)."""
  rng = w.rng
  if kind == "town_country":
    a = w.town()
    same = _flip(rng)
    b = w.town(country=a.country) if same else w.town(
        country=rng.choice([c for c in w.lex["country"] if c != a.country]))
    q = rng.choice((f"Are {a.name} and {b.name} in the same country?",
                    f"Do {a.name} and {b.name} lie in the same country?"))
    return q, "yes" if same else "no", [(a, "country"), (b, "country")], (2, 4, 2)
  a = w.person()
  if kind == "same_occupation":
    same = _flip(rng)
    b = w.person(occupation=a.occupation if same else rng.choice(
        [o for o in OCCUPATIONS if o != a.occupation]))
    q = rng.choice((f"Did {a.name} and {b.name} have the same occupation?",
                    f"Were {a.name} and {b.name} of the same profession?"))
    return q, "yes" if same else "no", [(a, "intro"), (b, "intro")], (4, 2, 2)
  b = w.person()
  while b.birth == a.birth:
    b.birth = (b.birth[0], b.birth[1], b.birth[2] % 28 + 1)
  if kind == "older":
    q = rng.choice((f"Is {a.name} older than {b.name}?", f"Was {a.name} born before {b.name}?"))
    answer = "yes" if a.birth < b.birth else "no"
  else:
    q = rng.choice((f"Who was born first, {a.name} or {b.name}?",
                    f"Which person was born earlier, {a.name} or {b.name}?"))
    answer = min((a, b), key=lambda p: p.birth).name
  return q, answer, [(a, "intro"), (b, "intro")], (4, 2, 2)


def _add_distractors(w: _World, gold, counts: Tuple[int, int, int], level: str) -> None:
  """Adds 8 distractor entities; people may be born in or have founded ones in the context."""
  rng = w.rng
  n_people, n_towns, n_companies = counts
  # Medium and hard: the countries of the question's towns also appear in distractors.
  shared = [e.country for e, _ in gold if isinstance(e, Town)][:_LEVELS.index(level)]
  for i in range(n_towns):
    w.town(**({"country": shared[i]} if i < len(shared) else {}))
  for _ in range(n_companies):
    w.company()
  gold_people = [e for e, _ in gold if isinstance(e, Person)]
  owned = {p.company for p in w.entities[Person]}
  free = [c.name for c in w.entities[Company] if c.name not in owned]
  for i in range(n_people):
    name = None
    if i == 0 and gold_people and level != "easy":
      first, last = gold_people[0].name.split(" ", 1)
      name = w.person_name(last=last) if level == "hard" else w.person_name(first=first)
    p = w.person(name=name)
    if rng.random() < 0.5:
      p.birthplace = rng.choice(w.entities[Town]).name
    if free and rng.random() < 0.6:
      p.company = free.pop(0)


def _check(condition: bool, message: str) -> None:
  """An assertion that stays on under `python -O`."""
  if not condition:
    raise AssertionError(message)


def _example(rng: random.Random, seed: int, index: int, names: str = "seen") -> dict:
  """One item in the official format, its names from `lexicon_for(names)`."""
  w = _World(rng, lexicon_for(names))
  bridge = _flip(rng)
  kind = rng.choice(BRIDGE_KINDS if bridge else COMPARISON_KINDS)
  question, answer, gold, counts = (_bridge if bridge else _comparison)(w, kind)
  level = rng.choices(_LEVELS, weights=(2, 5, 3))[0]
  _add_distractors(w, gold, counts, level)
  entities = [e for cls in (Person, Town, Company) for e in w.entities[cls]]
  paragraphs = {e.name: _PARAGRAPHS[type(e)](rng, e, w) for e in entities}
  facts = [[e.name, paragraphs[e.name][1][fact]] for e, fact in gold]
  context = [[e.name, paragraphs[e.name][0]] for e in entities]
  rng.shuffle(context)
  _check(len(context) == NUM_PARAGRAPHS, f"{len(context)} paragraphs")
  if answer not in ("yes", "no"):
    support = [paragraphs[t][0][i] for t, i in facts]
    _check(any(answer in s for s in support), f"{answer!r} not in {support!r}")
  # Unseen-name items hash under their own prefix: their ids never repeat a seen item's.
  prefix = "synthetic-hotpotqa" if names == "seen" else f"synthetic-hotpotqa-{names}"
  digest = hashlib.sha1(f"{prefix}:{seed}:{index}".encode("utf-8")).hexdigest()
  return {"_id": digest[:24], "question": question, "answer": answer,
          "supporting_facts": facts, "context": context,
          "type": "bridge" if bridge else "comparison", "level": level}


# ----------------------------------------------------------------------------- public API


def generate_examples(num_examples: int, seed: int = 0, names: str = "seen") -> List[dict]:
  """Generates HotpotQA-style items.

  Args:
    num_examples: How many items.
    seed: The same seed gives identical items; use different seeds for train and dev.
    names: "seen" draws the names from `LEXICON` (train, dev), "unseen" from `UNSEEN_LEXICON`
      (entities a model trained on the seen names never met; the ids differ from seen ones).

  Returns:
    A list of dicts with the official keys (`_id`, `question`, `answer`, `supporting_facts`,
    `context`, `type`, `level`).
  """
  lexicon_for(names)  # fails early on an unknown choice
  rng = random.Random(seed)
  return [_example(rng, seed, i, names) for i in range(num_examples)]


def write_dataset(path: str, num_examples: int, seed: int = 0, names: str = "seen") -> str:
  """Writes `generate_examples(num_examples, seed, names)` as one UTF-8 JSON array; returns
  `path`."""
  return writer.write_json(path, generate_examples(num_examples, seed, names))


def _splits(seed: int) -> Dict[str, Tuple[str, int, str]]:
  """Split -> (file name, seed, names), in writing order."""
  return {"train": (TRAIN_FILENAME, seed, "seen"),
          "dev": (DEV_FILENAME, seed + DEV_SEED_OFFSET, "seen"),
          "dev_unseen": (DEV_UNSEEN_FILENAME, seed + UNSEEN_DEV_SEED_OFFSET, "unseen"),
          "test_unseen": (TEST_UNSEEN_FILENAME, seed + UNSEEN_TEST_SEED_OFFSET, "unseen")}


def ensure_demo_data(directory: str, num_train: int, num_dev: int,
                     seed: int = 0) -> Dict[str, str]:
  """Writes the demo files unless the info file shows they were written by this generator
  version with the same arguments (then they are reused as they are).

  Every split has its own `random.Random`, so train and dev do not depend on the unseen splits.

  Args:
    directory: Folder of `synthetic_train.json`, `synthetic_dev.json`,
      `synthetic_dev_unseen.json`, `synthetic_test_unseen.json` and the info file.
    num_train: Items in the train file.
    num_dev: Items in the dev file, and in each unseen-name file.
    seed: Train seed; dev uses `seed + DEV_SEED_OFFSET`, so dev ids and items differ;
      dev_unseen `seed + UNSEEN_DEV_SEED_OFFSET` and test_unseen `seed + UNSEEN_TEST_SEED_OFFSET`,
      both with `UNSEEN_LEXICON`'s names.

  Returns:
    {"train", "dev", "dev_unseen", "test_unseen"} -> path.
  """
  splits = _splits(seed)
  paths = {split: os.path.join(directory, filename) for split, (filename, _, _) in splits.items()}
  info_path = os.path.join(directory, INFO_FILENAME)
  info = {"generator_version": GENERATOR_VERSION, "num_train": num_train, "num_dev": num_dev,
          "seed": seed, "dev_seed": seed + DEV_SEED_OFFSET,
          "dev_unseen_seed": splits["dev_unseen"][1],
          "test_unseen_seed": splits["test_unseen"][1]}
  if not writer.is_current(info_path, info, paths.values()):
    for split, (_, split_seed, names) in splits.items():
      write_dataset(paths[split], num_train if split == "train" else num_dev, split_seed, names)
    writer.write_info(info_path, info)
  return paths
