"""Synthetic HotpotQA (distractor setting) in the official JSON format: one generator, two presets.

Every item is an invented world of people, towns, countries and companies, written as one JSON
array of {_id, question, answer, supporting_facts, context, type, level} that
`tasks/hotpotqa/data.py` reads unchanged. Template families (`FAMILIES`) phrase facts, dates and
questions and place the answer sentences their own way; the `*_unseen_templates` splits use only
`HELD_OUT_FAMILIES` and every unseen split names things from `UNSEEN_LEXICON`. Presets:
`PRESETS`, knobs in `Preset`. docs/synthetic_data/hotpotqa.md has the families, the length
targets and what was measured.

Every answer is a span of a gold paragraph's supporting sentence or yes/no, and the supporting
facts are exactly the sentences that state the needed facts (each item is checked: the answer
and the bridge entity stand in them). The same arguments give identical records (one
`random.Random` per call, no string hashing, no set order in the output). Pure Python: never
loads TensorFlow.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from typing import Dict, List, Optional, Sequence, Tuple

from synthetic_data import lexicon, writer
from synthetic_data.lexicon import DIRECTIONS, MONTHS

# Raise when a preset's data changes: demo data is then rewritten.
GENERATOR_VERSION = 1
PRESETS = ("benchmark", "short")
FAMILIES = ("encyclopedic", "narrative", "register", "archival", "digest")
TRAIN_FAMILIES = FAMILIES[:3]
HELD_OUT_FAMILIES = FAMILIES[3:]
SPLITS = writer.SPLITS
NUM_PARAGRAPHS = 10          # paragraphs per item at most (the benchmark preset's count)
BRIDGE_SHARE = 0.8           # the paper: about 80% bridge, 20% comparison questions
SHORT_ITEM_RATE = 0.03       # a few real items have fewer than 10 paragraphs
INFO_FILENAME = "benchmark_info.json"
FILENAMES = {split: f"benchmark_{split}.json" for split in SPLITS}
SEED_OFFSETS = {"train": 0, "dev": 1_000_003, "dev_unseen": 2_000_029,
                "dev_unseen_templates": 4_000_037, "test_unseen_templates": 5_000_011}
BRIDGE_KINDS = ("birth_country", "company_year", "company_town")
COMPARISON_KINDS = ("town_country", "older", "born_first", "same_occupation")
OCCUPATIONS = ("painter", "sculptor", "poet", "novelist", "composer", "architect", "engineer",
               "physician", "botanist", "photographer", "historian", "chemist", "violinist",
               "journalist", "cartographer", "economist", "actor", "singer", "astronomer")
INDUSTRIES = {"Works": "engineering", "Mills": "flour", "Foundry": "metal", "Press": "publishing",
              "Brewery": "brewing", "Textiles": "textile", "Motors": "car", "Records": "music"}
_SUFFIXES = tuple(sorted(INDUSTRIES))
PRODUCTS = ("lamp", "engine", "loom", "kettle", "radio", "bicycle", "clock", "stove")
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
# The `names` argument of `generate_examples` -> its lexicon.
LEXICONS = {"seen": LEXICON, "unseen": UNSEEN_LEXICON}

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
    rng, lex, suffix = self.rng, self.lex, self.rng.choice(_SUFFIXES)
    return self._add(Company, dict(
        name=self.names.draw(lambda: f"{rng.choice(lex['company'])} {suffix}"),
        industry=INDUSTRIES[suffix], town=rng.choice(lex["town"]),
        established=rng.randint(1840, 2000)), fields)


# ----------------------------------------------------------------------------- fact templates
# Family -> template name -> phrasings; the slots are those `_fact_slots` fills. No run of four
# or more words is shared between a train and a held-out family (tested on rendered items).

FACT_TEMPLATES: Dict[str, Dict[str, Tuple[str, ...]]] = {
    "encyclopedic": {
        "person_lead": (
            "{name} ({lived}) {was} {a_occ} whose work drew wide attention in {his} lifetime.",
            "{name} ({lived}) {was} {a_occ} and a respected teacher of the craft."),
        "person_birthplace": (
            "{He} was born in the town of {town} and attended the local school there.",
            "{He} was born and raised in {town}, where {his} parents ran a shop."),
        "person_founded": (
            "{He} later founded {company}, which {he} led for many years.",
            "{He} is best known as the founder of {company}."),
        "town_lead_country": (
            "{town} is a town in {country}, close to the banks of the {river} River.",
            "{town} is a small market town in the {direction} of {country}."),
        "town_lead": ("{town} is a town on the {river} River.",),
        "town_country": ("It lies in the {direction} of {country}.",),
        "company_lead_town": ("{company} is {a_industry} company with its head office in {town}.",),
        "company_lead": ("{company} is {a_industry} company with a long history.",),
        "company_town": ("Its headquarters are in {town}, near the railway station.",),
        "company_established": ("The company was established in {year}.",
                                "The company was founded in {year} with a small loan."),
    },
    "narrative": {
        "person_lead": (
            "{name} came into the world on {birth} and grew up in modest circumstances.",
            "The long story of {name} begins on {birth}."),
        "person_occupation": (
            "By trade {he} {was} {a_occ}, a calling that {he} took up while still young.",
            "{He} chose the life of {a_occ} at an early age and never regretted it."),
        "person_death": ("{He} died on {death}, after a short illness.",),
        "person_occupation_birthplace": (
            "{He} grew up to be {a_occ} in {town}, the very town in which {he} had been born.",),
        "person_birthplace": (
            "{His} childhood was spent in {town}, the town of {his} birth.",
            "{town} was the place of {his} birth, and {he} returned there often."),
        "person_founded": (
            "{He} went on to start a business of {his} own, which {he} called {company}.",
            "In time {he} set up {company}, a venture that would outlast {him}."),
        "town_lead": ("{town} is a settlement on the banks of the {river}.",
                      "The {river} River flows past {town} on its way to the sea."),
        "town_country": ("The town has always been part of {country}.",
                         "Today it belongs to {country}, as it has for centuries."),
        "company_lead": ("{company} began life as a small {industry} workshop.",),
        "company_established": ("{company} opened its doors in {year}.",
                                "Its doors first opened to customers in {year}."),
        "company_town": ("From the start, the firm has had its home in {town}.",
                         "{town} has been home to the firm since its very first day."),
    },
    "register": {
        "person_lead": ("{name}, {a_occ} by profession, was born on {birth}.",),
        "person_lead_birthplace": (
            "{name} (born on {birth} at {town}) {was} {a_occ} of considerable standing in "
            "{his} field.",),
        "person_birthplace": ("{His} place of birth was the town of {town}.",),
        "person_founded": ("{He} was the founder and first director of {company}.",),
        "person_death": ("{He} passed away on {death} at the age of {age}.",),
        "town_lead_country": (
            "{town} ({country}) is a town of the {direction}ern part of the country.",),
        "town_lead": ("{town} is an old settlement, first recorded in {year}.",),
        "town_country": ("Administratively, the town forms part of {country}.",),
        "company_lead_town": ("{company} ({town}) is {a_industry} firm of the old school.",),
        "company_lead": ("{company} is {a_industry} firm of the old school.",),
        "company_town": ("The firm's registered seat is in {town}.",),
        "company_established": ("The firm was incorporated in {year}.",
                                "{company} was incorporated in the year {year}."),
    },
    "archival": {
        "person_lead": (
            "{name} is remembered above all for {his} patience and {his} many friendships.",
            "{name} appears in many accounts of the period as a generous and restless figure."),
        "person_birth": ("According to parish records, {name} was born on {birth}.",
                         "The records give {birth} as the date on which {name} was born."),
        "person_birth_birthplace": (
            "Parish records show that {name} was born in {town} on {birth}.",),
        "person_occupation": (
            "The profession that {he} followed throughout was that of {a_occ}.",
            "Trained as {a_occ}, {he} practised that profession until late in life."),
        "person_death": ("{His} death on {death} was widely reported in the press.",),
        "person_birthplace": (
            "It was in {town} that {he} was born, the youngest of several children.",
            "{town}, a town some way from the coast, is where {name} was born."),
        "person_founded": ("{company}, a firm still active today, was founded by {name}.",
                           "The founding of {company} was the work of {name}."),
        "town_lead": (
            "{town} has been a market for the surrounding farms since the middle ages.",),
        "town_country": ("The country in which {town} lies is {country}.",
                         "{country} is the country to which the town belongs."),
        "company_lead": ("{company} is a name familiar to many in the {industry} trade.",),
        "company_established": ("The year {year} saw the establishment of {company}.",
                                "It was in {year} that the firm was first established."),
        "company_town": ("{town} is the town where the firm has its main offices.",
                         "The main offices of the firm are located in {town}."),
    },
    "digest": {
        "person_lead": (
            "{name} {was} {a_occ} active mainly in the {direction} of the country.",),
        "person_birth": ("{name}'s date of birth is recorded as {birth}.",
                         "Born {birth}, {name} showed an early gift for the work."),
        "person_birth_birthplace": (
            "{name}, born {birth} in {town}, came from a family of modest means.",),
        "person_death": ("{His} life came to an end on {death}.",),
        "person_birthplace": (
            "{name} hailed from {town}, a town where {his} family had lived for generations.",
            "{name} was a native of {town}, where {he} first saw the light of day."),
        "person_founded": ("{name} established {company} with money borrowed from friends.",
                           "It is {name} whom {company} counts as its founder."),
        "town_lead_country": (
            "{town}, which lies in {country}, stands on both banks of the {river}.",),
        "town_lead": ("{town} stands on both banks of the {river}.",),
        "town_country": (
            "{country} is the state to which {town} has belonged since the old treaties.",),
        "company_lead_town": (
            "{company}, a concern in the {industry} trade, is headquartered in {town}.",),
        "company_lead": ("{company} is a concern in the {industry} trade.",),
        "company_town": ("Its head office stands in {town}.",),
        "company_established": ("{company} traces its origins to {year}.",
                                "The firm's founding year is {year}."),
    },
}

# Family -> question kind -> phrasings ({p}: the bridge person; {a}, {b}: the compared pair).
QUESTION_TEMPLATES: Dict[str, Dict[str, Tuple[str, ...]]] = {
    "encyclopedic": {
        "birth_country": ("In which country is the town where {p} was born?",
                          "{p} was born in a town in which country?"),
        "company_year": ("In what year was the company founded by {p} established?",
                         "When was the company that {p} founded established?"),
        "company_town": ("In which town is the company founded by {p} based?",
                         "Where is the company that {p} founded based?"),
        "town_country": ("Are {a} and {b} in the same country?",
                         "Do {a} and {b} lie in the same country?"),
        "older": ("Is {a} older than {b}?", "Was {a} born before {b}?"),
        "born_first": ("Who was born first, {a} or {b}?",
                       "Which person was born earlier, {a} or {b}?"),
        "same_occupation": ("Did {a} and {b} have the same occupation?",
                            "Were {a} and {b} of the same profession?"),
    },
    "narrative": {
        "birth_country": ("{p} was born in a town that belongs to which country?",
                          "The birthplace of {p} is a town in what country?"),
        "company_year": ("In which year did the business started by {p} open?",
                         "The business that {p} set up opened in what year?"),
        "company_town": ("The firm {p} started has its home in which town?",
                         "Which town is home to the business set up by {p}?"),
        "town_country": ("Do {a} and {b} belong to the same country?",
                         "Are the towns {a} and {b} part of one country?"),
        "older": ("Did {a} come into the world before {b}?", "Was {a} born earlier than {b}?"),
        "born_first": ("Of {a} and {b}, who was born earlier?",
                       "Whose birth came first: {a} or {b}?"),
        "same_occupation": ("Did {a} and {b} earn a living in the same trade?",
                            "Were {a} and {b} in the same trade?"),
    },
    "register": {
        "birth_country": ("Which country contains the town of birth of {p}?",
                          "Of which country is the birthplace of {p} a part?"),
        "company_year": ("What year was the firm of {p} incorporated?",
                         "{p} founded a firm; when was it incorporated?"),
        "company_town": ("Where does the firm founded by {p} have its seat?",
                         "In what town is the firm of {p} registered?"),
        "town_country": ("Do {a} and {b} form part of one country?",
                         "Is {a} in the same country as {b}?"),
        "older": ("Was {a} born on an earlier date than {b}?",
                  "Does the birth date of {a} come before that of {b}?"),
        "born_first": ("Which came first, the birth of {a} or that of {b}?",
                       "Who is older, {a} or {b}?"),
        "same_occupation": ("Did {a} and {b} share a profession?",
                            "Is the profession of {a} the same as that of {b}?"),
    },
    "archival": {
        "birth_country": ("What is the country of the town in which {p} was born?",
                          "The town in which {p} began life is part of which country?"),
        "company_year": ("When was the firm whose founder is {p} first established?",
                         "What was the year of establishment of the firm created by {p}?"),
        "company_town": ("In which town does the firm founded by {p} keep its main offices?",
                         "The firm that {p} founded has its main offices in what town?"),
        "town_country": ("Are {a} and {b} located in one and the same country?",
                         "Is the country of {a} also the country of {b}?"),
        "older": ("Is it true that {a} was born before {b}?",
                  "Does the birth of {a} predate that of {b}?"),
        "born_first": ("Between {a} and {b}, whose birth was earlier?",
                       "Who came first into the world, {a} or {b}?"),
        "same_occupation": ("Did {a} follow the same profession as {b}?",
                            "Do {a} and {b} have a profession in common?"),
    },
    "digest": {
        "birth_country": ("Which country is home to the town that {p} hailed from?",
                          "The native town of {p} is in which country?"),
        "company_year": ("To what year does the firm {p} established trace its origins?",
                         "Which year did the concern begun by {p} start out?"),
        "company_town": ("Which town houses the head office of the firm of {p}?",
                         "Where is the concern established by {p} headquartered?"),
        "town_country": ("Are {a} and {b} parts of a single state?",
                         "Would {a} and {b} be found within one state?"),
        "older": ("Was {a} born ahead of {b}?", "Is {a} senior in age to {b}?"),
        "born_first": ("{a} or {b}: which of them was born sooner?",
                       "Who is the elder, {a} or {b}?"),
        "same_occupation": ("Did {a} and {b} pursue the same calling?",
                            "Was {b} in the same field as {a}?"),
    },
}


@dataclasses.dataclass(frozen=True)
class Family:
  """How one family lays out its paragraphs (the phrasings are in FACT_TEMPLATES).

  Leads are (weight, template name, facts the lead states); a fact no lead or combo states gets
  its own sentence (template "<kind>_<fact>", e.g. "person_birth"). `placement` says where the
  fact sentences go: "front" (right after the lead), "spread" (anywhere) or "back" (second half
  of the paragraph). `mention_rate` is the share of distractor paragraphs that mention a
  question entity in another relation (the family's distractor style).
  """
  date: str
  person_leads: Tuple[Tuple[float, str, Tuple[str, ...]], ...]
  town_leads: Tuple[Tuple[float, str, Tuple[str, ...]], ...]
  company_leads: Tuple[Tuple[float, str, Tuple[str, ...]], ...]
  placement: str
  mention_rate: float
  # (probability, template name, facts): one sentence stating several non-lead facts.
  combos: Tuple[Tuple[float, str, Tuple[str, ...]], ...] = ()


FAMILY_SPECS: Dict[str, Family] = {
    "encyclopedic": Family(
        date="dmy", person_leads=((1.0, "person_lead", ("birth", "occupation")),),
        town_leads=((0.6, "town_lead_country", ("country",)), (0.4, "town_lead", ())),
        company_leads=((0.6, "company_lead_town", ("town",)), (0.4, "company_lead", ())),
        placement="front", mention_rate=0.3),
    "narrative": Family(
        date="mdy", person_leads=((1.0, "person_lead", ("birth",)),),
        town_leads=((1.0, "town_lead", ()),), company_leads=((1.0, "company_lead", ()),),
        placement="spread", mention_rate=0.5,
        combos=((0.5, "person_occupation_birthplace", ("occupation", "birthplace")),)),
    "register": Family(
        date="ordinal_of", person_leads=(
            (0.6, "person_lead", ("birth", "occupation")),
            (0.4, "person_lead_birthplace", ("birth", "occupation", "birthplace"))),
        town_leads=((0.5, "town_lead_country", ("country",)), (0.5, "town_lead", ())),
        company_leads=((0.5, "company_lead_town", ("town",)), (0.5, "company_lead", ())),
        placement="front", mention_rate=0.35),
    "archival": Family(
        date="mdy_ordinal", person_leads=((1.0, "person_lead", ()),),
        town_leads=((1.0, "town_lead", ()),), company_leads=((1.0, "company_lead", ()),),
        placement="back", mention_rate=0.6,
        combos=((0.5, "person_birth_birthplace", ("birth", "birthplace")),)),
    "digest": Family(
        date="dmy_ordinal", person_leads=((1.0, "person_lead", ("occupation",)),),
        town_leads=((0.5, "town_lead_country", ("country",)), (0.5, "town_lead", ())),
        company_leads=((0.5, "company_lead_town", ("town",)), (0.5, "company_lead", ())),
        placement="spread", mention_rate=0.45,
        combos=((0.4, "person_birth_birthplace", ("birth", "birthplace")),)),
}


def _ordinal(day: int) -> str:
  """3 -> "3rd"."""
  suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
  return f"{day}{suffix}"


def format_date(date: Tuple[int, int, int], style: str) -> str:
  """(year, month, day) in a family's style: "3 May 1921", "May 3, 1921", "the 3rd of May 1921",
  "May 3rd, 1921" or "3rd May 1921"."""
  year, month, day = date[0], MONTHS[date[1] - 1], date[2]
  return {"dmy": f"{day} {month} {year}", "mdy": f"{month} {day}, {year}",
          "ordinal_of": f"the {_ordinal(day)} of {month} {year}",
          "mdy_ordinal": f"{month} {_ordinal(day)}, {year}",
          "dmy_ordinal": f"{_ordinal(day)} {month} {year}"}[style]


# ----------------------------------------------------------------------------- background prose
# Long sentence patterns per entity kind, shared by all families: they state no fact a question
# asks about (no birth, founding, location-of-company or country-of-town statements), so every
# question's answer stays with the fact sentences. Slots are filled per sentence.

PERSON_FILLERS = (
    "In {y1}, {he} moved with {his} family to {place}, a quiet town where {he} would spend the "
    "better part of the next two decades.",
    "{He} married the {occ2} {person} in {y2}, and the couple had three children, two of whom "
    "followed {him} into the same line of work.",
    "{He} received the {brand} Prize in {y3} for a body of work that critics described as "
    "patient, careful and quietly ambitious.",
    "{His} early work was shaped by {his} teacher, {person}, who encouraged {him} to travel "
    "widely and to keep detailed notebooks.",
    "After a long illness in {y2}, {he} withdrew from public life for several years and devoted "
    "{himself} to letters and reading.",
    "A large collection of {his} letters, drafts and sketches is now kept in the public archive "
    "of {place}.",
    "During the {decade} {he} lectured regularly at the academy in {place}, where {his} students "
    "included {person} and {person2}.",
    "{His} reputation grew steadily after {y2}, when a series of public talks drew crowds from "
    "across the {direction} of the country.",
    "Critics have often compared {him} with {person}, although {he} rejected the comparison in "
    "an interview given in {y3}.",
    "{He} spent the winter of {y1} in {place}, and the notes {he} made there were published many "
    "years later as a short book.",
    "In later life {he} served on the board of a savings bank and helped to raise money for a "
    "new library in {place}.",
    "{His} brother, {person}, was a well-known {occ2}, and the two often worked side by side "
    "during the summer months.",
    "Several streets and a small park in {place} have been named in {his} honour since {y3}.",
    "{He} was a keen walker and once crossed the hills between {place} and {place2} on foot in "
    "under a week.",
    "In {y2}, {he} travelled to {country_any} with {person}, a journey that {he} described at "
    "length in a diary.",
    "The {decade} were a difficult period for {him}, marked by debts, quarrels with publishers "
    "and a fire that destroyed {his} studio.",
    "{He} was elected to the {brand} Society in {y3}, the first person from {place} to be so "
    "honoured.",
    "Much of {his} output from the years after {y2} is lost, though a few pieces survive in "
    "private hands in {place}.",
    "{He} spoke four languages and translated several books by {person} for readers in "
    "{country_any}.",
    "A biography of {him}, written by {person}, appeared in {y3} and remains the standard "
    "account of {his} life.",
    "Between {y1} and {y2}, {he} lived in rented rooms above a bakery on the main square of "
    "{place}.",
    "{He} was known for {his} generosity to younger colleagues, and several of them later "
    "recalled long evenings spent at {his} table.",
    "In {y3}, a large exhibition about {his} work was held at the {landmark} in {place}, "
    "attracting more visitors than any show before it.",
    "{His} second marriage, to {person}, ended after only three years, and {he} never married "
    "again.",
    "Although {he} rarely gave interviews, {he} wrote a short memoir in {y3} that touched on "
    "{his} years in {place}.",
    "{He} kept a small farm near {place} and often said that the quiet of the fields was "
    "essential to {his} work.",
    "The {decade} brought {him} wider recognition, including invitations from learned societies "
    "in {country_any} and {country_any2}.",
    "{He} helped to set up a cooperative school in {place}, which still teaches about {num} "
    "pupils every year.",
    "Friends described {him} as shy in company but tireless at work, often at {his} desk long "
    "before dawn.",
    "In {y2}, {he} was injured in a railway accident near {place2}, and the long recovery "
    "changed the direction of {his} work.",
)

TOWN_FILLERS = (
    "The settlement grew up around a crossing of the {river} River and is first mentioned in a "
    "charter of {y0}.",
    "As of {recent}, {name} had a population of {pop}, most of whom live within a short walk of "
    "the old market square.",
    "{name} is known for its {landmark} and its {landmark2}, both of which draw visitors in the "
    "summer months.",
    "It is twinned with {place}, a town of similar size in {country_any}, and the two hold a "
    "joint festival every other year.",
    "The {river} River flows through the centre of {name} and once powered a dozen mills along "
    "its banks.",
    "A railway line reached {name} in {y1}, bringing new trade and a wave of settlers from the "
    "surrounding farms.",
    "The local economy rests on farming, small workshops and a {product} factory that employs "
    "several hundred people.",
    "Much of the old centre was rebuilt after a great fire in {y1}, and few buildings from "
    "before that date survive.",
    "The council meets in a handsome building near the {landmark}, completed in {y2} to designs "
    "by {person}.",
    "Every autumn {name} holds a horse fair that has taken place, with few interruptions, since "
    "{y1}.",
    "The surrounding countryside is flat and fertile, and the fields are divided by long lines "
    "of poplars and drainage ditches.",
    "A small museum near the {landmark} displays tools, costumes and photographs from the "
    "history of the district.",
    "The local football club, formed in {y2}, plays its home games on a ground beside the "
    "{river}.",
    "In {y2}, floods on the {river} damaged hundreds of homes, and a new embankment was built in "
    "the years that followed.",
    "{name} has two secondary schools, a public library and a hospital that serves the villages "
    "around it.",
    "The poet {person} lived here for several years and described its streets in a well-known "
    "sequence of poems.",
    "The road from {place} to {place2} passes through {name}, which has long served as a "
    "stopping point for travellers.",
    "A weekly market is held on the square every {weekday}, selling cheese, fish, flowers and "
    "cloth from the nearby villages.",
    "Most of the houses in the old quarter are built of red brick and date from the {decade}, "
    "when trade was at its height.",
    "During the unrest of {y2}, soldiers were quartered in {name} for a winter, and a memorial "
    "on the square lists the names of the dead.",
    "The name {name} is thought to come from an old word for a meadow, though scholars disagree "
    "on the details.",
    "Tourism has grown since the {decade}, and the {landmark} now welcomes tens of thousands of "
    "visitors a year.",
    "A long avenue of lime trees leads from the station to the {landmark2}, and it is lit with "
    "lanterns on feast days.",
    "The district around {name} is noted for its orchards, and apple blossom draws walkers from "
    "{place} every spring.",
)

COMPANY_FILLERS = (
    "Its best-known product is the {brand} {product}, which has been made in much the same way "
    "for several decades.",
    "In {y1}, it opened a second office in {place}, followed a few years later by a warehouse in "
    "{place2}.",
    "The company employs about {num} people, most of them at its main works and in a small "
    "research department.",
    "It was listed on the stock exchange of {country_any} in {y2} after a long dispute among its "
    "shareholders.",
    "During the {decade} the firm expanded rapidly, buying up several smaller rivals and "
    "doubling its output.",
    "A strike in {y1} closed the works for three months and led to the first written agreement "
    "with the unions.",
    "The firm's archive, including order books and letters from customers, was given to a "
    "public library in {place}.",
    "Since {y2}, the company has been run by {person}, who has placed a new emphasis on exports "
    "and design.",
    "It sponsors an annual prize for young engineers and a music festival held each summer in "
    "{place}.",
    "In {y2}, the company was briefly taken over by {brand} {suffix}, but the deal was undone "
    "after less than a year.",
    "Its logo, a stylised {product} drawn inside a circle, has changed little since it was first "
    "used in {y1}.",
    "Its goods are sold in more than {num2} countries, though most of its revenue still comes "
    "from the home market.",
    "A fire in {y1} destroyed much of the original workshop, and the present buildings date "
    "from the years after it.",
    "The firm was one of the first in the region to offer its workers paid holidays and a "
    "pension.",
    "It has won several awards for the quality of its goods, including first place at a trade "
    "fair in {place} in {y2}.",
    "In the {decade} the firm began to make {product}s as well, a line that soon earned more "
    "than its original trade.",
    "Several of its former employees went on to run competing firms in {place} and {place2}.",
    "The head of design in the {decade} was {person}, whose drawings are now shown in museums.",
    "After heavy losses in {y2}, the board sold its shipping arm and returned to its original "
    "line of business.",
    "Its delivery vans, painted dark green with gold lettering, were a familiar sight in "
    "{place} for many years.",
)

# Mentions of a question entity in a distractor paragraph, in a relation no question asks about:
# distractor kind -> mentioned kind -> patterns ({mention}: the entity's name).
MENTION_FILLERS = {
    Person: {
        Person: ("{He} studied for two years under {mention}, whose methods {he} later came to "
                 "reject.",
                 "In {y2}, {he} shared an exhibition hall with {mention}, and the two remained "
                 "friends for the rest of their lives.",
                 "{He} wrote a long and admiring review of a book by {mention} in {y3}."),
        Company: ("{He} worked as a clerk at {mention} for several years before turning to "
                  "{his} own work.",
                  "In {y2}, {he} designed a poster for {mention} that is still reproduced "
                  "today."),
        Town: ("{He} spent {his} last years in {mention}, in a house overlooking the square.",
               "In {y2}, {he} gave a series of lectures in {mention} that drew large "
               "audiences."),
    },
    Town: {
        Person: ("A plaque on the square recalls a visit by {mention} in {y2}.",
                 "A letter by {mention} praising the town hangs in the council chamber."),
        Company: ("{mention} runs a large depot on the edge of the town, opened in {y2}.",
                  "The old mill by the {river} was bought by {mention} in {y2} and turned into "
                  "a warehouse."),
        Town: ("A regular coach service links the town with {mention}, a journey of about two "
               "hours.",),
    },
    Company: {
        Person: ("Among its early customers was {mention}, who ordered a large number of its "
                 "goods in {y2}.",
                 "In {y2}, {mention} joined its board of directors for a short time."),
        Company: ("In {y2}, it signed a supply agreement with {mention} that lasted for many "
                  "years.",),
        Town: ("In {y2}, the firm opened a branch office in {mention}, which it closed again "
               "some years later.",),
    },
}

# Attributions some sentences end with (how often depends on the item's verbosity). They add
# no fact and fit any sentence, fact or background, so sentence length does not mark facts.
TAILS = (
    ", according to a short history of the district published many years later",
    ", as the surviving papers of the period make clear",
    ", according to letters that have survived from that period",
    ", at least according to the account most often repeated",
    ", as local newspapers reported at the time",
    ", in the words of one observer who knew the place well",
    ", as several later writers have noted",
    ", according to a local guidebook",
    ", as a regional almanac of the time records",
    ", according to an account written some decades later",
    ", as older residents still like to point out",
    ", as one visitor noted in a letter home",
    ", according to a survey carried out for the regional archive",
    ", as the minutes of the local council record",
)

_FILLERS = {Person: PERSON_FILLERS, Town: TOWN_FILLERS, Company: COMPANY_FILLERS}
_LANDMARKS = ("stone bridge", "clock tower", "town hall", "old harbour", "chapel", "glass works",
              "wool market", "abbey", "castle", "windmill", "corn exchange", "botanical garden")
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
# Sentences per paragraph in the benchmark preset: 2 to 12, median 4 (weights of 2, 3, ..., 12).
_SENTENCE_WEIGHTS = (19, 33, 20, 10, 6, 4, 3, 2, 1, 1, 1)
# Item verbosity: (weight, sentences added to every paragraph, share of background sentences
# with a tail clause). Real items vary a lot in length; this spreads words per item.
_VERBOSITY = ((32, 0, 0.8), (26, 0, 0.95), (20, 1, 1.0), (11, 2, 1.0), (7, 3, 1.0), (4, 4, 1.0))


# ----------------------------------------------------------------------------- presets


@dataclasses.dataclass(frozen=True)
class Preset:
  """What a preset sets; everything else (templates, questions, checks) is shared.

  `sentence_weights` weigh paragraphs of 2, 3, ... sentences (a paragraph still gets one
  sentence per fact it must state); `verbosity` is a table like `_VERBOSITY`, drawn once an
  item; `distractors` caps the distractor paragraphs (8: all of them); `short_item_rate` is the
  share of items that lose one or two distractors more, as a few real items do.
  """
  train_families: Tuple[str, ...]
  held_out_families: Tuple[str, ...]
  distractors: int
  sentence_weights: Tuple[int, ...]
  verbosity: Tuple[Tuple[int, int, float], ...]
  short_item_rate: float


PRESET_SETTINGS: Dict[str, Preset] = {
    "benchmark": Preset(TRAIN_FAMILIES, HELD_OUT_FAMILIES, distractors=8,
                        sentence_weights=_SENTENCE_WEIGHTS, verbosity=_VERBOSITY,
                        short_item_rate=SHORT_ITEM_RATE),
    # 8 paragraphs of mostly 2 to 5 sentences, few tail clauses, one family on each side.
    "short": Preset(FAMILIES[:1], HELD_OUT_FAMILIES[:1], distractors=6,
                    sentence_weights=(2, 3, 2, 1), verbosity=((1, 0, 0.3),), short_item_rate=0.0),
}


# ----------------------------------------------------------------------------- rendering


class _Context:
  """Per-item state for rendering: the family, the world and names not to reuse in fillers."""

  def __init__(self, rng: random.Random, family_name: str, world, titles: Sequence[str],
               extra: int, tail_rate: float, sentence_weights: Sequence[int]):
    self.rng = rng
    self.sentence_weights = sentence_weights   # the preset's weights of 2, 3, ... sentences
    self.family = FAMILY_SPECS[family_name]
    self.templates = FACT_TEMPLATES[family_name]
    self.extra = extra   # sentences added to every paragraph of the item
    self.tail_rate = tail_rate
    self.world = world
    self.lex = world.lex
    titles = set(titles)
    # Filler places are never an entity of the item, so no filler restates a town's facts.
    self.places = [t for t in self.lex["town"] if t not in titles]


# (male, female) of each pronoun slot.
_PRONOUNS = (("He", "She"), ("he", "she"), ("His", "Her"), ("his", "her"), ("him", "her"),
             ("himself", "herself"))


def _pronouns(p: Person) -> Dict[str, str]:
  """Pronoun slots of a person."""
  return {male: female if p.female else male for male, female in _PRONOUNS}


def _filler_slots(ctx: _Context, entity, base_year: int) -> Dict[str, str]:
  """Random values for every filler slot of an entity (pronouns added for people)."""
  rng, lex, world = ctx.rng, ctx.lex, ctx.world
  place = rng.choice(ctx.places)
  place2 = rng.choice([t for t in ctx.places if t != place])
  landmark, landmark2 = rng.sample(_LANDMARKS, 2)
  slots = {
      "y0": str(getattr(entity, "founded", base_year - rng.randint(0, 150))),
      "y1": str(base_year + rng.randint(18, 30)),
      "y2": str(base_year + rng.randint(31, 45)), "y3": str(base_year + rng.randint(46, 70)),
      "recent": str(rng.randint(1995, 2020)),
      "decade": f"{(base_year + rng.randint(20, 60)) // 10 * 10}s",
      "place": place, "place2": place2, "person": world.person_name(),
      "person2": world.person_name(), "occ2": rng.choice(OCCUPATIONS),
      "brand": rng.choice(lex["company"]), "suffix": rng.choice(_SUFFIXES),
      "country_any": rng.choice(lex["country"]), "country_any2": rng.choice(lex["country"]),
      "landmark": landmark, "landmark2": landmark2,
      "product": rng.choice(PRODUCTS), "num": f"{rng.randint(2, 9)}00",
      "num2": str(rng.randint(12, 60)), "pop": f"{rng.randint(2, 60)},{rng.randint(1, 9)}00",
      "weekday": rng.choice(_WEEKDAYS), "direction": rng.choice(DIRECTIONS),
      "name": entity.name, "river": getattr(entity, "river", rng.choice(lex["river"])),
  }
  if isinstance(entity, Person):
    slots.update(_pronouns(entity))
  return slots


def _base_year(rng: random.Random, entity) -> int:
  """The year the filler years of an entity count from (railways and floods of a town come
  long after its founding)."""
  if isinstance(entity, Person):
    return entity.birth[0]
  if isinstance(entity, Town):
    return rng.randint(1820, 1930)
  return entity.established


def _fact_slots(ctx: _Context, entity) -> Dict[str, str]:
  """The values of the fact templates' slots for one entity."""
  rng, style = ctx.rng, ctx.family.date
  if isinstance(entity, Person):
    slots = dict(_pronouns(entity), name=entity.name, a_occ=_article(entity.occupation),
                 birth=format_date(entity.birth, style), town=entity.birthplace,
                 company=entity.company or "", direction=rng.choice(DIRECTIONS),
                 was="was" if entity.death else "is")
    if entity.death:
      # Age at death: one year less if the birthday (month, day) had not yet come that year.
      age = entity.death[0] - entity.birth[0] - (entity.death[1:] < entity.birth[1:])
      slots.update(death=format_date(entity.death, style), age=str(age))
      slots["lived"] = f"{slots['birth']} – {slots['death']}"
    else:
      slots["lived"] = f"born {slots['birth']}"
    return slots
  if isinstance(entity, Town):
    return {"town": entity.name, "country": entity.country, "river": entity.river,
            "direction": rng.choice(DIRECTIONS), "year": str(entity.founded)}
  return {"company": entity.name, "industry": entity.industry,
          "a_industry": _article(entity.industry), "town": entity.town,
          "year": str(entity.established)}


def _facts_of(entity) -> Tuple[str, ...]:
  """The facts a paragraph about `entity` states, in a fixed order."""
  if isinstance(entity, Person):
    return ("birth", "occupation", "birthplace") + (("founded",) if entity.company else ()) + (
        ("death",) if entity.death else ())
  if isinstance(entity, Town):
    return ("country",)
  return ("town", "established")


def _positions(rng: random.Random, placement: str, n: int, k: int) -> List[int]:
  """k sentence positions (1..n-1) for the fact sentences under a family's placement (anywhere
  when it is "spread" or its part of the paragraph has fewer than k)."""
  pool = {"front": range(1, min(n, k + 2)), "back": range(max(1, n // 2), n)}.get(
      placement, range(1, n))
  return sorted(rng.sample(pool if len(pool) >= k else range(1, n), k))


def _paragraph(ctx: _Context, entity, mention=None) -> Tuple[List[str], Dict[str, int]]:
  """One paragraph: the sentences (later ones with a leading space, as in the official files)
  and each fact's sentence index. `mention` (a question entity) adds one mention sentence."""
  rng, family, templates = ctx.rng, ctx.family, ctx.templates
  leads = {Person: family.person_leads, Town: family.town_leads,
           Company: family.company_leads}[type(entity)]
  _, lead_name, lead_keys = rng.choices(leads, weights=[w for w, _, _ in leads])[0]
  slots = _fact_slots(ctx, entity)
  units = []
  done = set(lead_keys)
  facts = _facts_of(entity)
  for probability, name, keys in family.combos:
    if rng.random() < probability and all(k in facts and k not in done for k in keys):
      units.append((keys, rng.choice(templates[name]).format(**slots)))
      done.update(keys)
  for key in facts:
    name = f"{type(entity).__name__.lower()}_{key}"   # e.g. "person_birth", "town_country"
    # A family without a death template leaves the death unsaid; others say it now and then.
    if key not in done and name in templates and (key != "death" or rng.random() < 0.4):
      units.append(((key,), rng.choice(templates[name]).format(**slots)))
  lead = rng.choice(templates[lead_name]).format(**slots)
  counts = range(2, 2 + len(ctx.sentence_weights))
  n = min(13, max(rng.choices(counts, weights=ctx.sentence_weights)[0] + ctx.extra,
                  len(units) + 1 + (mention is not None)))
  base = _base_year(rng, entity)
  texts = []
  if mention is not None:
    patterns = MENTION_FILLERS[type(entity)][type(mention)]
    filler_slots = _filler_slots(ctx, entity, base)
    # The mention's year falls in both entities' lifetimes (a person is mentioned as an adult).
    if not isinstance(mention, Town):
      start = mention.birth[0] + 25 if isinstance(mention, Person) else mention.established
      filler_slots["y2"] = str(max(base, start) + rng.randint(1, 20))
    texts.append(rng.choice(patterns).format(mention=mention.name, **filler_slots))
  # Each background sentence has its own names and years, so no one name recurs in roles.
  fillers = _FILLERS[type(entity)]
  for pattern in rng.sample(fillers, min(len(fillers), n - 1 - len(units) - len(texts))):
    texts.append(pattern.format(**_filler_slots(ctx, entity, base)))
  # Tails: each at most once a paragraph; fact sentences get them half as often.
  tails = rng.sample(TAILS, len(TAILS))
  texts = [t[:-1] + tails.pop() + "." if rng.random() < ctx.tail_rate else t for t in texts]
  units = [(keys, t[:-1] + tails.pop() + "." if rng.random() < ctx.tail_rate / 2 else t)
           for keys, t in units]
  rng.shuffle(texts)
  positions = _positions(rng, family.placement, len(units) + len(texts) + 1, len(units))
  rng.shuffle(units)
  # Inserted in ascending order, each fact sentence ends up at its position after the lead.
  index = {key: 0 for key in lead_keys}
  for position, (keys, sentence) in zip(positions, units):
    texts.insert(position - 1, sentence)
    index.update({key: position for key in keys})
  return [lead] + [" " + sentence for sentence in texts], index


# ----------------------------------------------------------------------------- questions


def _question(w: _World, kind: str, family_name: str):
  """(question, answer, gold [(entity, fact)]) of one kind; its entities are added to `w`."""
  rng = w.rng
  if kind == "birth_country":
    town = w.town()
    p = w.person(birthplace=town.name)
    answer, gold = town.country, [(p, "birthplace"), (town, "country")]
  elif kind in ("company_year", "company_town"):
    p = w.person()
    company = w.company(established=p.birth[0] + rng.randint(22, 55))
    p.company = company.name
    fact = "established" if kind == "company_year" else "town"
    answer, gold = str(getattr(company, fact)), [(p, "founded"), (company, fact)]
  elif kind in ("town_country", "same_occupation"):   # yes or no: the same fact for both?
    make, fact, values = ((w.town, "country", w.lex["country"]) if kind == "town_country"
                          else (w.person, "occupation", OCCUPATIONS))
    a = make()
    same = rng.random() < 0.5
    value = getattr(a, fact)
    b = make(**{fact: value if same else rng.choice([v for v in values if v != value])})
    answer, gold = "yes" if same else "no", [(a, fact), (b, fact)]
  else:
    a, b = w.person(), w.person()
    while b.birth == a.birth:
      b.birth = (b.birth[0], b.birth[1], b.birth[2] % 28 + 1)
    if kind == "older":
      answer = "yes" if a.birth < b.birth else "no"
    else:
      answer = min((a, b), key=lambda p: p.birth).name
    gold = [(a, "birth"), (b, "birth")]
  # {p}: the bridge person (the first hop); {a}, {b}: the compared pair, in gold order.
  first, second = (e.name for e, _ in gold)
  question = rng.choice(QUESTION_TEMPLATES[family_name][kind]).format(p=first, a=first, b=second)
  return question, answer, gold


def _add_distractors(w: _World, gold, level: str) -> None:
  """Adds 8 distractor entities: two of each kind and one more of each question entity's kind.
  People may be born in or have founded ones in the context."""
  rng = w.rng
  n_people, n_towns, n_companies = (2 + sum(isinstance(e, cls) for e, _ in gold)
                                    for cls in (Person, Town, Company))
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


# ----------------------------------------------------------------------------- items


def _example(rng: random.Random, seed: int, index: int, split: str, names: str,
             families: Sequence[str], preset: str) -> dict:
  """One item in the official format, sized by `preset`."""
  settings = PRESET_SETTINGS[preset]
  family_name = rng.choice(list(families))
  w = _World(rng, LEXICONS[names])
  bridge = rng.random() < BRIDGE_SHARE
  kind = rng.choice(BRIDGE_KINDS if bridge else COMPARISON_KINDS)
  question, answer, gold = _question(w, kind, family_name)
  level = rng.choices(_LEVELS, weights=(2, 5, 3))[0]
  _add_distractors(w, gold, level)
  # Distractor founders get companies established in their adult lives (free companies only:
  # gold companies already are), so no paragraph contradicts another.
  companies = {c.name: c for c in w.entities[Company]}
  for p in w.entities[Person]:
    c = companies.get(p.company or "")
    if c is not None and not p.birth[0] + 20 <= c.established <= p.birth[0] + 60:
      c.established = p.birth[0] + rng.randint(22, 55)
  gold_entities = [e for e, _ in gold]
  distractors = [e for cls in (Person, Town, Company) for e in w.entities[cls]
                 if e not in gold_entities]
  # A few items lose one or two distractors, and the preset caps them (benchmark: 8 of 8).
  drop = rng.randint(1, 2) if rng.random() < settings.short_item_rate else 0
  for _ in range(max(drop, len(distractors) - settings.distractors)):
    distractors.pop(rng.randrange(len(distractors)))
  entities = gold_entities + distractors
  # Per-item verbosity: some items have much longer paragraphs, as real items do.
  verbosity = settings.verbosity
  _, extra, tail_rate = rng.choices(verbosity, weights=[v[0] for v in verbosity])[0]
  ctx = _Context(rng, family_name, w, [e.name for e in entities], extra, tail_rate,
                 settings.sentence_weights)
  paragraphs = {e.name: _paragraph(ctx, e) for e in gold_entities}
  for e in distractors:
    mention = rng.choice(gold_entities) if rng.random() < ctx.family.mention_rate else None
    paragraphs[e.name] = _paragraph(ctx, e, mention)
  facts = [[e.name, paragraphs[e.name][1][fact]] for e, fact in gold]
  context = [[e.name, paragraphs[e.name][0]] for e in entities]
  rng.shuffle(context)
  writer.check(len(context) <= NUM_PARAGRAPHS, f"{len(context)} paragraphs")
  support = [paragraphs[t][0][i] for t, i in facts]
  if answer not in ("yes", "no"):
    found = answer in support[-1] or kind == "born_first" and any(answer in s for s in support)
    writer.check(found, f"{answer!r} not in {support!r}")
  if bridge:   # the first hop names the bridge entity
    writer.check(gold_entities[1].name in support[0], f"bridge not in {support[0]!r}")
  # The preset is part of the id ("hotpotqa-benchmark:..."), so presets never share ids.
  digest = hashlib.sha1(
      f"hotpotqa-{preset}:{split}:{names}:{seed}:{index}".encode("utf-8")).hexdigest()
  return {"_id": digest[:24], "question": question, "answer": answer,
          "supporting_facts": facts, "context": context,
          "type": "bridge" if bridge else "comparison", "level": level}


# ----------------------------------------------------------------------------- public API


def generate_examples(num: int, seed: int = 0, split: str = "train", names: str = "seen",
                      families: Optional[Sequence[str]] = None,
                      preset: str = "benchmark") -> List[dict]:
  """Generates HotpotQA items (official distractor-setting records).

  Args:
    num: How many items.
    seed: The same arguments give identical items.
    split: One of `SPLITS`; part of every `_id`, so splits never share ids.
    names: "seen" (`LEXICON`) or "unseen" (`UNSEEN_LEXICON`).
    families: Template families to draw from (each item uses one, drawn at random); None: the
      preset's train families (`TRAIN_FAMILIES` in the benchmark preset).
    preset: One of `PRESETS`: "benchmark" (realistic lengths) or "short".

  Returns:
    Dicts with `_id`, `question`, `answer`, `supporting_facts`, `context`, `type`, `level`.
  """
  settings = writer.preset_settings(PRESET_SETTINGS, preset)
  families = settings.train_families if families is None else families
  families = writer.check_generator_arguments(num, split, SPLITS, names, tuple(LEXICONS),
                                              families, FAMILIES)
  rng = random.Random(seed)
  return [_example(rng, seed, i, split, names, families, preset) for i in range(num)]


# `split_plan(num_train, num_dev, seed, preset, train_families)` and
# `ensure_demo_data(directory, num_train, num_dev, seed, train_families, preset)`: the five
# splits and the folder that holds them (`writer.DemoData`).
_DEMO_DATA = writer.DemoData("hotpotqa", GENERATOR_VERSION, generate_examples, writer.write_json,
                             PRESET_SETTINGS, SEED_OFFSETS, FILENAMES, INFO_FILENAME)
split_plan, ensure_demo_data = _DEMO_DATA.split_plan, _DEMO_DATA.ensure


def item_words(record: dict) -> int:
  """Whitespace tokens of everything the model reads: question, titles and sentences."""
  total = len(record["question"].split())
  for title, sentences in record["context"]:
    total += len(title.split()) + sum(len(s.split()) for s in sentences)
  return total


def length_statistics(records: Sequence[dict]) -> Dict[str, float]:
  """Words per item (`writer.spread`: mean, median, p90, min, max) and the counts that matter
  for HotpotQA."""
  stats = {"items": len(records), **writer.spread("words", [item_words(r) for r in records]),
           **writer.spread("paragraphs", [len(r["context"]) for r in records]),
           **writer.spread("sentences_per_paragraph",
                           [len(s) for r in records for _, s in r["context"]])}
  for name, count in (("supporting_facts_mean", lambda r: len(r["supporting_facts"])),
                      ("bridge_share", lambda r: r["type"] == "bridge"),
                      ("yes_no_share", lambda r: r["answer"] in ("yes", "no"))):
    stats[name] = sum(map(count, records)) / len(records)
  return stats
