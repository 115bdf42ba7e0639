"""Small synthetic Natural Questions data in the official original (and simplified) format.

Why: tests and a CPU demo need NQ files without downloading the 40 GB release. Each example is
a wiki-like page about one invented country, town, person or company: an `<H1>` title, several
`<P>` paragraphs, a `<Ul>` of `<Li>` facts and an infobox `<Table>` of `<Tr>` rows with `<Th>` /
`<Td>` cells, wrapped in `<HTML><BODY>`. Every relation of the entity (capital, mayor, founder,
...) is stated at most once: in a paragraph sentence, a table row or a list item. Values are
drawn afresh for every page, so answers must be read, not memorised; names come from one fixed
lexicon (its own seed, the same for every data seed), so a tiny WordPiece vocabulary covers
train and dev alike. A few names carry non-ASCII letters, so byte and character offsets differ.

Question kinds, in equal shares (each run of four examples has one of each, shuffled):
* "short": what is the <relation> of <entity>; the long answer is the `<P>`, `<Tr>` or `<Li>`
  candidate stating it (so nested long answers occur) and the short answer is the value
  (1 to 3 tokens).
* "yes_no": is <value> the <relation> of <entity>; YES with the true value, NO with a fresh
  wrong one (never on the page); the long answer is the fact's candidate.
* "long": "history of <entity>", "what happened to <entity>", ...; the topic's `<P>` is the
  long answer, with no short answer.
* "null": a relation the page leaves out, or a topic it lacks; every annotation is null.
Facts are independent draws (dates need not agree with each other), not a consistent world.
Paragraphs stating other relations of the same entity act as distractors, so a model has to
match the relation words of the question (each question shares a keyword with its fact's
sentence and table label: the data is learnable from local text patterns).

Tokens follow NQ: every html tag is one token (`html_token` true); text is split into words
and single punctuation marks. Tokens are separated by one space or a newline in
`document_html`, and byte offsets index its UTF-8 encoding (end exclusive). Candidates are
every `<P>`, `<Ul>`, `<Li>`, `<Table>` and `<Tr>` in document order; `<Li>` and `<Tr>` are
nested (`top_level` false). Train examples carry 1 annotation, dev examples 5 with realistic
disagreement (the >=2 non-null rule still recovers the gold answer).

Unseen entities: every name is drawn from `LEXICON`, which train and dev share, so a model can
score on dev partly by remembering names. `UNSEEN_LEXICON` has pools of the same shape none of
whose words occurs in `LEXICON` or in any fixed text of the pages (templates, word lists, tags,
urls); `generate_examples(..., names="unseen")` draws every name from it, so no word of those
names occurs in the text of a train file. `write_dataset` adds two such splits in the dev format (5
annotations): `dev_unseen` and `test_unseen`, each with its own seed; train, simplified train
and dev are the same as without them.

The same arguments always give identical output (one `random.Random(seed)` per split). Pure
Python: importing or running this module never loads TensorFlow.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import random
import re
import string
import urllib.parse
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from synthetic_data import lexicon, writer
from synthetic_data.lexicon import DIRECTIONS, MONTHS

# 2: adds the dev_unseen and test_unseen splits (train, simplified train and dev unchanged).
GENERATOR_VERSION = 2
DEV_SEED_OFFSET = 1_000_003
UNSEEN_DEV_SEED_OFFSET = 2_000_003
UNSEEN_TEST_SEED_OFFSET = 3_000_017
DOC_PARAGRAPHS = 8
NUM_DEV_ANNOTATIONS = 5
NUM_OMITTED = 2  # relations per page left unstated (targets of null questions)
KINDS = ("short", "yes_no", "long", "null")
CANDIDATE_TAGS = ("P", "Ul", "Li", "Table", "Tr")
TRAIN_FILENAME = "nq-train.jsonl.gz"
DEV_FILENAME = "nq-dev.jsonl.gz"
TRAIN_SIMPLIFIED_FILENAME = "nq-train-simplified.jsonl.gz"
DEV_UNSEEN_FILENAME = "nq-dev-unseen.jsonl.gz"
TEST_UNSEEN_FILENAME = "nq-test-unseen.jsonl.gz"
INFO_FILENAME = "synthetic_info.json"

OCCUPATIONS = ("painter", "sculptor", "poet", "novelist", "composer", "chemist", "botanist",
               "photographer", "historian", "violinist", "journalist", "cartographer",
               "singer", "surgeon", "tailor", "potter")
INDUSTRIES = ("fishing", "mining", "brewing", "tourism", "shipbuilding", "weaving", "farming",
              "glassmaking", "printing", "forestry")
ANIMALS = ("lynx", "stork", "red deer", "brown bear", "eagle owl", "otter", "grey wolf", "swan",
           "heron", "elk", "wild boar", "golden eagle")
LANDMARKS = ("clock tower", "stone bridge", "wool market", "round church", "salt mill",
             "old lighthouse", "glass house", "iron gate", "rose garden", "bell tower")
PRODUCTS = ("lamp", "engine", "loom", "kettle", "radio", "bicycle", "clock", "stove", "tractor",
            "camera")
SLOGANS = ("Built to last", "Made with care", "Light for all", "Quality comes first",
           "Power for everyone", "Always moving forward", "Simply better", "Forward together")
TITLE_WORDS = (("Silent", "Golden", "Last", "Northern", "Quiet", "Broken", "Hidden", "Distant"),
               ("Harbour", "Garden", "Winter", "Letter", "Mirror", "Lantern", "Orchard",
                "Voyage"))
CHILDREN = ("two", "three", "four", "five", "six", "seven")
COMPANY_SUFFIXES = ("Works", "Mills", "Press", "Motors", "Foundry", "Textiles", "Holdings",
                    "Records")
# Sentences of the padding paragraphs that make long pages (`page_words`): no relation, no value
# and no name; every word already occurs in the fixed texts (so `UNSEEN_LEXICON` is unchanged).
PADDING_SENTENCES = (
    "Visitors often enjoyed walks along the narrow streets on a Saturday.",
    "Many local shops sell bread, cheese and tea.",
    "The museum library holds several thousand letters and books.",
    "A wooden footpath runs through the green hills near the valley.",
    "Students from the college often study in the public library.",
    "Residents held a weekly festival in the main square.",
    "Several small villages lie along the river.",
    "The local football club plays in blue and white.",
    "Workers rebuilt the walls after a serious storm.",
    "A ferry service connects the islands in summer.",
    "The region is known as a place of mild winters and snowy hills.",
    "Hundreds of visitors reached the highest mountain by railway.")
_URL = "https://en.wikipedia.org//w/index.php?title={title}&oldid={oldid}"
_TOKEN_RE = re.compile(r"\w+|[^\w\s]")
_FORMATTER = string.Formatter()

# ----------------------------------------------------------------------------- lexicon

_LEXICON_SEED = 9173
# A non-ASCII vowel about one time in sixteen.
_SOUNDS = lexicon.Sounds(
    onsets=("b", "br", "d", "dr", "f", "g", "gr", "h", "k", "kr", "l", "m", "n", "p", "r", "s",
            "st", "t", "th", "v", "z", "sk", "tr", "w", "j"),
    vowels=("a", "e", "i", "o", "u", "a", "e", "o", "ai", "ei", "ou"),
    codas=("", "", "", "n", "r", "l", "s", "nd", "rk", "lt"),
    rare_vowels=("é", "ø", "å", "ü", "ö"), rare_rate=0.06)
_POOLS = {
    "first": lexicon.Pool(50, 2, ("", "a", "o", "en", "ia")),
    "last": lexicon.Pool(60, 1, ("sen", "berg", "ton", "ard", "ström", "mann", "wick")),
    "town": lexicon.Pool(70, 1, ("vik", "ford", "holm", "by", "stad", "dal", "mere", "bourg")),
    "country": lexicon.Pool(30, 1, ("ia", "and", "ora", "esh", "ania", "ovia")),
    "river": lexicon.Pool(30, 2),
    "company": lexicon.Pool(40, 2),
    "word": lexicon.Pool(80, 2),
    "food": lexicon.Pool(30, 2, capitalised=False),
    "coin": lexicon.Pool(20, 1, ("ar", "el", "o", "un"), capitalised=False),
    "language": lexicon.Pool(20, 1, ("ish", "ic", "ese", "i")),
}
LEXICON = lexicon.build_lexicon(_LEXICON_SEED, _SOUNDS, _POOLS, max_length=10)
# The names of the unseen-entity splits: `UNSEEN_LEXICON`, built below the entity types (it
# avoids their words), from its own seed.
_UNSEEN_LEXICON_SEED = 40_127

# ----------------------------------------------------------------------------- fresh values


class _Page(lexicon.FreshDraws):
  """The random source of one page; values it hands out are never repeated on the page.

  Names come from `lex` (`LEXICON` or `UNSEEN_LEXICON`); the random draws do not depend on it.
  """

  def __init__(self, rng: random.Random, lex: lexicon.Lexicon = LEXICON):
    super().__init__(rng, lex, max_tries=500)

  def number(self, low: int, high: int) -> str:
    """A fresh whole number from `low` to `high`, as text."""
    return self.draw(lambda: str(self.rng.randint(low, high)))


def _from_pool(pool: str) -> Callable[[_Page], str]:
  """A placeholder maker: a fresh word of a lexicon pool."""
  return lambda p: p.name(pool)


def _date(p: _Page) -> str:
  """A date such as "3 May 1921" (its year is fresh on the page)."""
  return f"{p.rng.randint(1, 28)} {p.rng.choice(MONTHS)} {p.number(1700, 2015)}"


# Placeholder kind -> maker. Templates name them as {kind} or {kind2}, {kind3} for more.
_PLACEHOLDERS: Dict[str, Callable[[_Page], str]] = {
    **{pool: _from_pool(pool) for pool in _POOLS},
    "person": lambda p: f"{p.name('first')} {p.name('last')}",
    "company": lambda p: f"{p.name('company')} {p.rng.choice(COMPANY_SUFFIXES)}",
    "year": lambda p: p.number(1700, 2015),
    "old_year": lambda p: p.number(1100, 1699),
    "date": _date,
    "count": lambda p: p.number(3, 60),
    "million": lambda p: p.number(2, 95),
    "thousands": lambda p: f"{p.number(2, 95)},{p.rng.randint(1, 9)}00",
    "metres": lambda p: p.number(61, 2400),
    "occupation": lambda p: p.pick(OCCUPATIONS),
    "industry": lambda p: p.pick(INDUSTRIES),
    "animal": lambda p: p.pick(ANIMALS),
    "landmark": lambda p: p.pick(LANDMARKS),
    "product": lambda p: p.pick(PRODUCTS),
    "slogan": lambda p: p.pick(SLOGANS),
    "children": lambda p: p.pick(CHILDREN),
    "title": lambda p: f"The {p.pick(TITLE_WORDS[0])} {p.pick(TITLE_WORDS[1])}",
    "month": lambda p: p.rng.choice(MONTHS),
    "direction": lambda p: p.rng.choice(DIRECTIONS),
}


def _fill(page: _Page, template: str, subject: str) -> str:
  """The template with {s} as the subject and every other placeholder freshly drawn."""
  values = {"s": subject}
  for _, field, _, _ in _FORMATTER.parse(template):
    if field and field not in values:
      values[field] = _PLACEHOLDERS[field.rstrip("0123456789")](page)
  return template.format(**values)


# ----------------------------------------------------------------------------- entity types


@dataclasses.dataclass(frozen=True)
class Relation:
  """A fact with a short value; its questions share a keyword with `sentence` and `label`."""
  name: str
  label: str  # the table header (<Th>)
  sentence: str  # with {s} (subject) and {v} (value)
  questions: Tuple[str, ...]  # with {s}
  yes_no: str  # with {s} and {v}
  value: str  # a placeholder template for the value


@dataclasses.dataclass(frozen=True)
class Topic:
  """A paragraph-long subject (history, economy, ...), the target of long-only questions."""
  name: str
  questions: Tuple[str, ...]
  sentences: Tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class EntityType:
  """What a page can say about one kind of entity."""
  name: str
  subject: str
  intros: Tuple[str, ...]
  relations: Tuple[Relation, ...]
  topics: Tuple[Topic, ...]
  fillers: Tuple[str, ...]  # sentences stating no relation
  rows: Tuple[Tuple[str, str], ...]  # (label, value template) table rows stating no relation


_R, _T = Relation, Topic

COUNTRY = EntityType(
    name="country", subject="{country}",
    intros=("{s} is a country in the {direction} of the {word} region.",
            "{s} is a small country bordered by {country} and {country2}."),
    relations=(
        _R("capital", "Capital", "The capital of {s} is {v}.",
           ("what is the capital of {s}", "what is the capital city of {s}"),
           "is {v} the capital of {s}", "{town}"),
        _R("largest_city", "Largest city", "The largest city in {s} is {v}.",
           ("what is the largest city in {s}", "which city is the largest in {s}"),
           "is {v} the largest city in {s}", "{town}"),
        _R("currency", "Currency", "The currency of {s} is the {v}.",
           ("what is the currency of {s}", "what currency is used in {s}"),
           "is the {v} the currency of {s}", "{coin}"),
        _R("language", "Official language", "The official language of {s} is {v}.",
           ("what is the official language of {s}", "what language is spoken in {s}"),
           "is {v} the official language of {s}", "{language}"),
        _R("independence", "Independence", "{s} gained independence in {v}.",
           ("when did {s} gain independence", "in what year did {s} gain independence"),
           "did {s} gain independence in {v}", "{year}"),
        _R("president", "President", "The current president of {s} is {v}.",
           ("who is the president of {s}", "who is the current president of {s}"),
           "is {v} the president of {s}", "{person}"),
        _R("river", "Longest river", "The longest river in {s} is the {v}.",
           ("what is the longest river in {s}", "which river in {s} is the longest"),
           "is the {v} the longest river in {s}", "{river}"),
        _R("mountain", "Highest mountain", "The highest mountain in {s} is {v}.",
           ("what is the highest mountain in {s}", "which mountain is the highest in {s}"),
           "is {v} the highest mountain in {s}", "Mount {word}"),
        _R("population", "Population", "{s} has a population of about {v}.",
           ("what is the population of {s}", "what is the current population of {s}"),
           "is the population of {s} about {v}", "{million} million"),
        _R("anthem", "National anthem", "The national anthem of {s} is {v}.",
           ("what is the national anthem of {s}", "what is the anthem of {s}"),
           "is {v} the national anthem of {s}", "Ode to {word}"),
        _R("dish", "National dish", "The national dish of {s} is {v}.",
           ("what is the national dish of {s}", "which dish is the national dish of {s}"),
           "is {v} the national dish of {s}", "{food} stew"),
        _R("animal", "National animal", "The national animal of {s} is the {v}.",
           ("what is the national animal of {s}", "which animal is the symbol of {s}"),
           "is the {v} the national animal of {s}", "{animal}"),
    ),
    topics=(
        _T("history", ("history of {s}", "what is the history of {s}"),
           ("The history of {s} reaches back to the {word} tribes of the {direction}.",
            "In {old_year}, the old kingdom was divided after a long war with {country}.",
            "The years after {year} are often called a golden age.",
            "A new constitution was adopted in {year2} after years of unrest.")),
        _T("economy", ("economy of {s}", "what is the economy of {s} based on"),
           ("The economy of {s} rests on trade and the sea.",
            "Its main exports are timber, wool and grain.",
            "Since {year}, banking and shipping have grown quickly.",
            "Many workers are employed in the ports along the coast.")),
        _T("climate", ("climate of {s}", "what is the climate like in {s}"),
           ("The climate of {s} is mild near the coast and cold in the hills.",
            "Winters are long and snowy in the {direction}.",
            "Most rain falls between {month} and {month2}.",
            "Summer temperatures rarely rise above thirty degrees.")),
        _T("culture", ("culture of {s}", "what is the culture of {s} known for"),
           ("The culture of {s} is famous for its folk music and dances.",
            "Painters of the {word} school are admired across the region.",
            "A great song festival takes place every summer in {town}.",
            "Wooden houses are still built in the old style in the villages.")),
    ),
    fillers=("{s} is divided into {count} provinces.",
             "Visitors often come to see the {word} lakes in summer.",
             "The {word} family ruled the region for many generations.",
             "A railway line links {town} with the coast.",
             "The national library holds more than {count} thousand books.",
             "Relations with {country} have been friendly since {year}.",
             "The flag of {s} shows a white star on a blue field.",
             "Many old churches stand in the villages of the {direction}.",
             "The poet {person} wrote many songs about the land.",
             "Skiing and rowing are popular sports in {s}.",
             "Tea and rye bread are part of most meals.",
             "The {word} forest covers much of the {direction}.",
             "A ferry runs from {town} to the islands."),
    rows=(("Area", "{count} thousand square kilometres"), ("Calling code", "+{count}"),
          ("Established", "{old_year}")),
)

TOWN = EntityType(
    name="town", subject="{town}",
    intros=("{s} is a small town in the {direction} of its province.",
            "{s} is an old market town with narrow streets."),
    relations=(
        _R("country", "Country", "{s} is a town in the country of {v}.",
           ("what country is {s} in", "in which country is {s}"),
           "is {s} in the country of {v}", "{country}"),
        _R("river", "River", "{s} stands on the {v} River.",
           ("what river flows through {s}", "which river is {s} on"),
           "is {s} on the {v} river", "{river}"),
        _R("founded", "Founded", "{s} was founded in {v}.",
           ("when was {s} founded", "what year was {s} founded"),
           "was {s} founded in {v}", "{old_year}"),
        _R("mayor", "Mayor", "The mayor of {s} is {v}.",
           ("who is the mayor of {s}", "who is the current mayor of {s}"),
           "is {v} the mayor of {s}", "{person}"),
        _R("population", "Population", "{s} has a population of {v}.",
           ("what is the population of {s}", "what is the total population of {s}"),
           "is the population of {s} {v}", "{thousands}"),
        _R("club", "Football club", "The football club of {s} is {v}.",
           ("what is the football club of {s}", "which football club plays in {s}"),
           "is {v} the football club of {s}", "{word} Rovers"),
        _R("landmark", "Landmark", "The best known landmark in {s} is the {v}.",
           ("what is the best known landmark in {s}", "what landmark is {s} known for"),
           "is the {v} the best known landmark in {s}", "{landmark}"),
        _R("twin", "Twin town", "The twin town of {s} is {v}.",
           ("what is the twin town of {s}", "which town is the twin town of {s}"),
           "is {v} the twin town of {s}", "{town}"),
        _R("industry", "Main industry", "The main industry in {s} is {v}.",
           ("what is the main industry in {s}", "which industry is the main one in {s}"),
           "is {v} the main industry in {s}", "{industry}"),
        _R("elevation", "Elevation", "The elevation of {s} is {v} above sea level.",
           ("what is the elevation of {s}", "what is the elevation of {s} above sea level"),
           "is the elevation of {s} {v}", "{metres} metres"),
        _R("university", "University", "The university in {s} is called {v}.",
           ("what is the name of the university in {s}", "which university is in {s}"),
           "is {v} the university in {s}", "{word} College"),
    ),
    topics=(
        _T("history", ("history of {s}", "what is the history of {s}"),
           ("The history of {s} begins with a small village by a ford.",
            "In {old_year}, a great fire destroyed much of the old town.",
            "The town walls were rebuilt in {old_year2}.",
            "Soldiers occupied the town for two years during the war of {year}.")),
        _T("economy", ("economy of {s}", "what is the economy of {s} like"),
           ("The economy of {s} grew around its busy weekly market.",
            "Local shops sell cheese, cloth and wine to visitors.",
            "Since {year}, many residents have travelled to work in {town}.")),
        _T("geography", ("geography of {s}", "what is the geography of {s} like"),
           ("The geography of {s} is shaped by a wide green valley.",
            "Low hills rise to the {direction} of the town.",
            "Several small lakes lie within walking distance of the centre.")),
    ),
    fillers=("The old market square lies at the heart of {s}.",
             "A bus service connects {s} with {town}.",
             "The local museum opened in {year}.",
             "The painter {person} lived here for several years.",
             "{s} has {count} schools and a public library.",
             "A farmers' market is held every Saturday.",
             "The town hall was rebuilt after a storm in {year}.",
             "The nearest airport is at {town}.",
             "Many houses in the centre have red tiled roofs.",
             "A footpath follows the old walls around {s}.",
             "The {word} bakery has stood on the main street since {year}.",
             "Every summer a brass band plays in the park.",
             "The railway reached {s} in {year}."),
    rows=(("Area", "{count} square kilometres"), ("Postal code", "{count}{count2}0"),
          ("Website", "www.{word}.org")),
)

PERSON = EntityType(
    name="person", subject="{person}",
    intros=("{s} is a public figure from the {word} valley.",
            "{s} is remembered as one of the most admired figures of the age."),
    relations=(
        _R("born", "Born", "{s} was born on {v}.",
           ("when was {s} born", "what date was {s} born"),
           "was {s} born on {v}", "{date}"),
        _R("home_town", "Home town", "The home town of {s} is {v}.",
           ("what is the home town of {s}", "where is the home town of {s}"),
           "is {v} the home town of {s}", "{town}"),
        _R("occupation", "Occupation", "The occupation of {s} was {v}.",
           ("what was the occupation of {s}", "what occupation did {s} have"),
           "was the occupation of {s} {v}", "{occupation}"),
        _R("spouse", "Married to", "{s} was married to {v}.",
           ("who was {s} married to", "who did {s} get married to"),
           "was {s} married to {v}", "{person}"),
        _R("teacher", "Teacher", "The teacher of {s} was {v}.",
           ("who was the teacher of {s}", "which teacher trained {s}"),
           "was {v} the teacher of {s}", "{person}"),
        _R("prize", "Prize won", "{s} won the {v}.",
           ("what prize did {s} win", "which prize was won by {s}"),
           "did {s} win the {v}", "{word} Prize"),
        _R("work", "Best known work", "The best known work of {s} is {v}.",
           ("what is the best known work of {s}", "which work is {s} best known for"),
           "is {v} the best known work of {s}", "{title}"),
        _R("death", "Place of death", "The place of death of {s} was {v}.",
           ("what was the place of death of {s}", "place of death of {s}"),
           "was {v} the place of death of {s}", "{town}"),
        _R("citizenship", "Citizenship", "{s} holds the citizenship of {v}.",
           ("what is the citizenship of {s}", "which citizenship does {s} hold"),
           "does {s} hold the citizenship of {v}", "{country}"),
        _R("children", "Children", "{s} has {v} children.",
           ("how many children does {s} have", "number of children of {s}"),
           "does {s} have {v} children", "{children}"),
        _R("employer", "Employer", "The employer of {s} was {v}.",
           ("who was the employer of {s}", "which employer did {s} work for"),
           "was {v} the employer of {s}", "{company}"),
    ),
    topics=(
        _T("early_life", ("early life of {s}", "what was the early life of {s} like"),
           ("The early life of {s} was spent in a house full of books.",
            "As a child, {s} liked long walks and drawing.",
            "A scholarship in {year} opened the way to further study.")),
        _T("career", ("career of {s}", "how did the career of {s} begin"),
           ("The career of {s} began in {year} with a small exhibition.",
            "Over the next decade, {s} travelled widely and gained many admirers.",
            "Critics praised the pieces produced after {year2}.")),
        _T("later_life", ("what happened to {s}", "what happened to {s} in later life",
                          "later life of {s}"),
           ("In later life, {s} withdrew from public view.",
            "A long illness in {year} ended most public appearances.",
            "{s} spent the final years in a quiet house by the sea.")),
    ),
    fillers=("{s} often spoke about the value of patience.",
             "A portrait of {s} hangs in the museum of {town}.",
             "Friends described {s} as generous and curious.",
             "{s} travelled to {country} in {year}.",
             "Letters between {s} and {person} were published in {year}.",
             "A street in {town} is named after {s}.",
             "{s} kept a diary for more than {count} years.",
             "In {year}, {s} gave a famous lecture in {town}.",
             "{s} enjoyed sailing and chess.",
             "Several schools in {country} teach the ideas of {s}.",
             "A film about {s} was made in {year}.",
             "{s} once shared a studio with {person}."),
    rows=(("Years active", "{year} – {year2}"), ("Movement", "{word} school"),
          ("Languages", "{language}")),
)

COMPANY = EntityType(
    name="company", subject="{company}",
    intros=("{s} is a private company with a long history.",
            "{s} is a family business that grew into a large firm."),
    relations=(
        _R("founder", "Founder", "The founder of {s} is {v}.",
           ("who is the founder of {s}", "who was the founder of {s}"),
           "is {v} the founder of {s}", "{person}"),
        _R("founded", "Founded", "{s} was founded in {v}.",
           ("when was {s} founded", "what year was {s} founded"),
           "was {s} founded in {v}", "{year}"),
        _R("headquarters", "Headquarters", "The headquarters of {s} are in {v}.",
           ("where is the headquarters of {s}", "in which town are the headquarters of {s}"),
           "are the headquarters of {s} in {v}", "{town}"),
        _R("ceo", "Chief executive", "The chief executive of {s} is {v}.",
           ("who is the chief executive of {s}", "who is the current chief executive of {s}"),
           "is {v} the chief executive of {s}", "{person}"),
        _R("product", "Main product", "The main product of {s} is the {v}.",
           ("what is the main product of {s}", "which product is {s} known for"),
           "is the {v} the main product of {s}", "{word} {product}"),
        _R("employees", "Employees", "{s} has about {v} employees.",
           ("how many employees does {s} have", "what is the number of employees at {s}"),
           "does {s} have about {v} employees", "{thousands}"),
        _R("industry", "Industry", "{s} operates in the {v} industry.",
           ("what industry is {s} in", "which industry does {s} work in"),
           "is {s} in the {v} industry", "{industry}"),
        _R("parent", "Parent company", "The parent company of {s} is {v}.",
           ("what is the parent company of {s}", "which company is the parent of {s}"),
           "is {v} the parent company of {s}", "{company}"),
        _R("exchange", "Stock exchange", "{s} is listed on the stock exchange of {v}.",
           ("on which stock exchange is {s} listed", "what stock exchange lists {s}"),
           "is {s} listed on the stock exchange of {v}", "{country}"),
        _R("revenue", "Revenue", "The revenue of {s} is {v} crowns a year.",
           ("what is the revenue of {s}", "what is the yearly revenue of {s}"),
           "is the revenue of {s} {v} crowns a year", "{million} million"),
        _R("slogan", "Slogan", "The slogan of {s} is {v}.",
           ("what is the slogan of {s}", "which slogan does {s} use"),
           "is {v} the slogan of {s}", "{slogan}"),
    ),
    topics=(
        _T("history", ("history of {s}", "what is the history of {s}"),
           ("The history of {s} began in a small workshop in {town}.",
            "In {year}, the company opened its first large factory.",
            "A merger in {year2} doubled the size of the business.")),
        _T("crisis", ("what happened to {s}", "financial crisis of {s}",
                      "what happened to {s} during the financial crisis"),
           ("In {year}, {s} faced a serious financial crisis.",
            "Hundreds of workers lost their jobs during the crisis.",
            "New investors rescued the company in {year2}.")),
        _T("research", ("research at {s}", "what research does {s} do"),
           ("The research centre of {s} tests new materials and designs.",
            "Its engineers have filed many patents since {year}.",
            "The centre works closely with students from {town}.")),
    ),
    fillers=("{s} has offices in {count} cities.",
             "Its logo shows a red circle above the name.",
             "In {year}, {s} opened a branch in {town}.",
             "The company sponsors a youth orchestra.",
             "A small museum about the company opened in {year}.",
             "{s} signed a trade agreement with a firm from {country} in {year}.",
             "Its annual report is published every {month}.",
             "Staff receive training at a centre near {town}.",
             "{s} sells most of its goods abroad.",
             "Its first catalogue appeared in {year}.",
             "The company owns a fleet of delivery vans.",
             "A new warehouse was built near {town} in {year}."),
    rows=(("Type", "Private"), ("Website", "www.{word}.com"),
          ("Area served", "{country} and {country2}")),
)

ENTITY_TYPES = (COUNTRY, TOWN, PERSON, COMPANY)

# ----------------------------------------------------------------------------- unseen names


def _fixed_words() -> Set[str]:
  """The lower-case words of every fixed text a record can hold besides names: the templates
  of the entity types, the word lists, the html tags and the url."""
  texts = [*OCCUPATIONS, *INDUSTRIES, *ANIMALS, *LANDMARKS, *PRODUCTS, *SLOGANS, *TITLE_WORDS[0],
           *TITLE_WORDS[1], *CHILDREN, *COMPANY_SUFFIXES, *MONTHS, *DIRECTIONS,
           *CANDIDATE_TAGS, "HTML BODY H1 Th Td The", _URL, *PADDING_SENTENCES]
  for entity in ENTITY_TYPES:
    texts += [*entity.intros, *entity.fillers, *(text for row in entity.rows for text in row)]
    for r in entity.relations:
      texts += [r.label, r.sentence, *r.questions, r.yes_no, r.value]
    for topic in entity.topics:
      texts += [*topic.questions, *topic.sentences]
  literals = (literal for text in texts for literal, _, _, _ in _FORMATTER.parse(text))
  return {word.lower() for literal in literals for word in re.findall(r"\w+", literal)}


# Pools shaped like `LEXICON`'s; none of their words is a word of `LEXICON` or of the fixed texts
# (building it draws from its own generator: `LEXICON` is unchanged).
UNSEEN_LEXICON = lexicon.build_unseen_lexicon(LEXICON, _UNSEEN_LEXICON_SEED, _SOUNDS, _POOLS,
                                              max_length=10, reserved=_fixed_words())
# The `names` argument of `generate_examples` -> the lexicon the names are drawn from.
NAME_LEXICONS = {"seen": LEXICON, "unseen": UNSEEN_LEXICON}

# ----------------------------------------------------------------------------- page plan


@dataclasses.dataclass
class _Sentence:
  """Text around an optional relation value (`fact` names the relation)."""
  before: str
  value: str = ""
  after: str = ""
  fact: Optional[str] = None


@dataclasses.dataclass
class _Block:
  """A top-level element: "P" (sentences), "Ul" (one sentence per item) or "Table" (rows)."""
  tag: str
  parts: list
  topic: Optional[str] = None


@dataclasses.dataclass
class _Plan:
  """What one page states and what its question asks."""
  entity: EntityType
  kind: str
  subject: str
  table: List[Relation]
  items: List[Relation]
  paragraphs: List[List[Relation]]  # relations per fact paragraph (may be empty)
  topics: List[Topic]
  target: Optional[object]  # a Relation or a Topic


def _plan(page: _Page, entity: EntityType, kind: str, doc_paragraphs: int) -> _Plan:
  """Splits the entity's relations between table, list and paragraphs; picks the target."""
  rng = page.rng
  subject = _fill(page, entity.subject, "")
  n_paragraphs = max(3, doc_paragraphs + rng.randint(-2, 2))
  relations = list(entity.relations)
  rng.shuffle(relations)
  omitted, stated = relations[:NUM_OMITTED], relations[NUM_OMITTED:]
  n_table, n_items = rng.randint(2, 4), rng.randint(1, 3)
  topics = list(entity.topics)
  rng.shuffle(topics)
  n_topics = min(rng.randint(len(topics) - 1, len(topics)), max(1, (n_paragraphs - 1) // 2))
  present, absent = topics[:n_topics], topics[n_topics:]
  slots: List[List[Relation]] = [[] for _ in range(n_paragraphs - 1 - n_topics)]
  for i, relation in enumerate(stated[n_table + n_items:]):
    slots[i % len(slots)].append(relation)
  if kind in ("short", "yes_no"):
    target = rng.choice(stated)
  elif kind == "long":
    target = rng.choice(present)
  else:
    target = rng.choice(absent) if absent and rng.random() < 0.35 else rng.choice(omitted)
  return _Plan(entity, kind, subject, stated[:n_table], stated[n_table:n_table + n_items],
               slots, present, target)


def _fact(page: _Page, relation: Relation, subject: str) -> _Sentence:
  """The relation's sentence with a fresh value."""
  before, after = relation.sentence.split("{v}")
  value = _fill(page, relation.value, subject)
  return _Sentence(before.format(s=subject), value, after.format(s=subject), relation.name)


class _Fillers:
  """Filler sentences without repeats until every template has been used once."""

  def __init__(self, page: _Page, plan: _Plan):
    self.page, self.subject = page, plan.subject
    self.templates = list(plan.entity.fillers)
    self.deck: List[str] = []

  def take(self, count: int) -> List[_Sentence]:
    """The next `count` fillers of the deck, a fresh shuffle when it runs out."""
    sentences = []
    for _ in range(count):
      if not self.deck:
        self.deck = self.page.rng.sample(self.templates, len(self.templates))
      sentences.append(_Sentence(_fill(self.page, self.deck.pop(), self.subject)))
    return sentences


def _blocks(page: _Page, plan: _Plan) -> List[_Block]:
  """The page's top-level blocks in order: the intro paragraph first, unless an infobox."""
  rng, subject, entity = page.rng, plan.subject, plan.entity
  fillers = _Fillers(page, plan)
  intro = _Block("P", [_Sentence(_fill(page, rng.choice(entity.intros), subject))]
                 + fillers.take(rng.randint(1, 2)))
  rows = [(r.label, _Sentence("", _fill(page, r.value, subject), "", r.name))
          for r in plan.table]
  rows += [(label, _Sentence(_fill(page, value, subject)))
           for label, value in rng.sample(entity.rows, rng.randint(1, 2))]
  rng.shuffle(rows)
  table = _Block("Table", rows)
  items = [_fact(page, r, subject) for r in plan.items]
  items += fillers.take(max(0, rng.randint(3, 5) - len(items)))
  rng.shuffle(items)
  blocks = [_Block("Ul", items)]
  for relations in plan.paragraphs:
    sentences = [_fact(page, r, subject) for r in relations]
    sentences += fillers.take(rng.randint(1, 3) if relations else rng.randint(2, 4))
    rng.shuffle(sentences)
    blocks.append(_Block("P", sentences))
  for topic in plan.topics:
    sentences = [_Sentence(_fill(page, text, subject)) for text in topic.sentences]
    blocks.append(_Block("P", sentences + fillers.take(rng.randint(0, 1)), topic.name))
  if rng.random() < 0.5:  # an infobox before the first paragraph, as on many wiki pages
    rng.shuffle(blocks)
    return [table, intro] + blocks
  blocks.append(table)
  rng.shuffle(blocks)
  return [intro] + blocks


def _block_words(blocks: List[_Block]) -> int:
  """The number of words and punctuation marks of the blocks' text (tags left out)."""
  texts = []
  for block in blocks:
    for part in block.parts:
      label, sentence = part if isinstance(part, tuple) else ("", part)
      texts += [label, sentence.before, sentence.value, sentence.after]
  return sum(len(_TOKEN_RE.findall(text)) for text in texts)


def _padding(rng: random.Random, words: int) -> List[_Block]:
  """`<P>` paragraphs of `PADDING_SENTENCES` (six sentences each) holding at least `words`
  words and punctuation marks."""
  blocks, count = [], 0
  while count < words:
    sentences = [_Sentence(rng.choice(PADDING_SENTENCES)) for _ in range(6)]
    count += sum(len(_TOKEN_RE.findall(s.before)) for s in sentences)
    blocks.append(_Block("P", sentences))
  return blocks


# ----------------------------------------------------------------------------- html tokens


class _Html:
  """Builds `document_html` token by token, with byte offsets and long-answer candidates."""

  def __init__(self):
    self._chunks: List[bytes] = []
    self._size = 0
    self.tokens: List[dict] = []
    self.candidates: List[dict] = []
    self._open: List[Tuple[str, int]] = []  # (tag, candidate index or -1)

  @property
  def html(self) -> str:
    """The document html so far."""
    return b"".join(self._chunks).decode("utf-8")

  def innermost(self) -> int:
    """The index of the innermost open candidate, or -1."""
    return next((index for _, index in reversed(self._open) if index >= 0), -1)

  def _emit(self, token: str, html_token: bool, separator: str) -> None:
    """Appends a token, after `separator` unless it is the first."""
    if self._size:
      self._write(separator)
    start = self._size
    self._write(token)
    self.tokens.append({"token": token, "start_byte": start, "end_byte": self._size,
                        "html_token": html_token})

  def _write(self, text: str) -> None:
    """Appends text to the html, counting its UTF-8 bytes."""
    data = text.encode("utf-8")
    self._chunks.append(data)
    self._size += len(data)

  def open(self, tag: str, separator: str = "\n") -> None:
    """Emits an opening tag; a candidate tag starts a long-answer candidate."""
    self._emit(f"<{tag}>", True, separator)
    index = -1
    if tag in CANDIDATE_TAGS:
      index = len(self.candidates)
      self.candidates.append({
          "start_byte": self.tokens[-1]["start_byte"], "end_byte": -1,
          "start_token": len(self.tokens) - 1, "end_token": -1,
          "top_level": self.innermost() < 0})
    self._open.append((tag, index))

  def close(self, separator: str = " ") -> None:
    """Emits the closing tag of the innermost open element, ending its candidate."""
    tag, index = self._open.pop()
    self._emit(f"</{tag}>", True, separator)
    if index >= 0:
      self.candidates[index]["end_byte"] = self.tokens[-1]["end_byte"]
      self.candidates[index]["end_token"] = len(self.tokens)

  def text(self, text: str) -> Tuple[int, int]:
    """Emits the words and punctuation of `text`; returns their token range."""
    start = len(self.tokens)
    for word in _TOKEN_RE.findall(text):
      self._emit(word, False, " ")
    return start, len(self.tokens)


# Relation name -> (candidate index, (start_token, end_token) of the value, value text).
_Facts = Dict[str, Tuple[int, Tuple[int, int], str]]


def _sentence(html: _Html, sentence: _Sentence, facts: _Facts) -> None:
  """Emits a sentence's tokens, recording where its fact's value stands."""
  html.text(sentence.before)
  if sentence.fact:
    facts[sentence.fact] = (html.innermost(), html.text(sentence.value), sentence.value)
  html.text(sentence.after)


def _render_block(html: _Html, block: _Block, subject: str, facts: _Facts,
                  topics: Dict[str, int]) -> None:
  """One `<P>`, `<Ul>` (of `<Li>`) or `<Table>` (title row, then `<Th>`/`<Td>` rows)."""
  html.open(block.tag)
  if block.tag == "P":
    if block.topic:
      topics[block.topic] = html.innermost()
    for sentence in block.parts:
      _sentence(html, sentence, facts)
  elif block.tag == "Ul":
    for sentence in block.parts:
      html.open("Li")
      _sentence(html, sentence, facts)
      html.close()
  else:
    html.open("Tr")
    html.open("Th", " ")
    html.text(subject)
    html.close()
    html.close()
    for label, sentence in block.parts:
      html.open("Tr")
      html.open("Th", " ")
      html.text(label)
      html.close()
      html.open("Td", " ")
      _sentence(html, sentence, facts)
      html.close()
      html.close()
  html.close("\n" if block.tag != "P" else " ")


def _render(subject: str, blocks: List[_Block]):
  """The page as an `_Html`, where each fact is stated and each topic's candidate."""
  html, facts, topics = _Html(), {}, {}
  html.open("HTML")
  html.open("BODY")
  html.open("H1")
  html.text(subject)
  html.close()
  for block in blocks:
    _render_block(html, block, subject, facts, topics)
  html.close("\n")
  html.close("\n")
  return html, facts, topics


# ----------------------------------------------------------------------------- annotations


def _long_answer(candidates: List[dict], index: int) -> dict:
  """The candidate's offsets, or all -1 for a null long answer."""
  if index < 0:
    return {"start_byte": -1, "end_byte": -1, "start_token": -1, "end_token": -1,
            "candidate_index": -1}
  c = candidates[index]
  return {"start_byte": c["start_byte"], "end_byte": c["end_byte"],
          "start_token": c["start_token"], "end_token": c["end_token"],
          "candidate_index": index}


def _annotation(long_answer: dict, short_answers: Sequence[dict] = (),
                yes_no: str = "NONE") -> dict:
  """An annotation in the official format (without its id)."""
  return {"long_answer": long_answer, "short_answers": list(short_answers),
          "yes_no_answer": yes_no}


def _short_answer(tokens: List[dict], span: Tuple[int, int]) -> dict:
  """The offsets of a short answer over a token range (end exclusive)."""
  start, end = span
  return {"start_byte": tokens[start]["start_byte"], "end_byte": tokens[end - 1]["end_byte"],
          "start_token": start, "end_token": end}


def _check(condition: bool, message: str) -> None:
  """An assertion that stays on under `python -O`."""
  if not condition:
    raise AssertionError(message)


def _occurrences(tokens: List[dict], words: List[str]) -> int:
  """How often `words` occur as consecutive tokens."""
  texts = [t["token"] for t in tokens]
  return sum(texts[i:i + len(words)] == words for i in range(len(texts) - len(words) + 1))


def _question_and_gold(page: _Page, plan: _Plan, html: _Html, facts: _Facts,
                       topics: Dict[str, int]) -> Tuple[str, dict]:
  """The question text (lower case, as in NQ) and the gold annotation."""
  target, subject = plan.target, plan.subject
  null = _annotation(_long_answer(html.candidates, -1))
  if plan.kind == "null":
    return page.rng.choice(target.questions).format(s=subject).lower(), null
  if plan.kind == "long":
    question = page.rng.choice(target.questions).format(s=subject)
    return question.lower(), _annotation(_long_answer(html.candidates, topics[target.name]))
  index, span, value = facts[target.name]
  long_answer = _long_answer(html.candidates, index)
  words = _TOKEN_RE.findall(value)
  _check(1 <= len(words) <= 3 and _occurrences(html.tokens, words) == 1,
         f"value {value!r} of {target.name} must be 1-3 tokens stated once")
  if plan.kind == "short":
    question = page.rng.choice(target.questions).format(s=subject)
    return question.lower(), _annotation(long_answer, [_short_answer(html.tokens, span)])
  yes = page.rng.random() < 0.5
  shown = value if yes else _fill(page, target.value, subject)
  question = target.yes_no.format(s=subject, v=shown)
  return question.lower(), _annotation(long_answer, yes_no="YES" if yes else "NO")


def _dev_variants(rng: random.Random, gold: dict, kind: str, candidates: List[dict],
                  count: int) -> List[dict]:
  """`count` annotations: most agree with gold; the others are null or long-answer only."""
  null = _annotation(_long_answer(candidates, -1))
  if kind == "null":
    variants = [gold] * count
    if rng.random() < 0.3:  # one annotator still marks a paragraph
      top = [i for i, c in enumerate(candidates) if c["top_level"]]
      variants[0] = _annotation(_long_answer(candidates, rng.choice(top)))
  else:
    agree = rng.randint(min(count, max(2, (count + 1) // 2)), count)
    partial = _annotation(gold["long_answer"]) if kind in ("short", "yes_no") else null
    variants = [gold] * agree + [partial if rng.random() < 0.35 else null
                                 for _ in range(count - agree)]
  rng.shuffle(variants)
  return [copy.deepcopy(v) for v in variants]


class _Ids:
  """Unique example ids (signed 63-bit) and annotation ids (positive) within one file."""

  def __init__(self, rng: random.Random):
    self.rng = rng
    self.taken: set = set()

  def _draw(self, signed: bool) -> int:
    """A fresh id (negative half the time when `signed`)."""
    while True:
      value = self.rng.getrandbits(63) or 1
      if signed and self.rng.random() < 0.5:
        value = -value
      if value not in self.taken:
        self.taken.add(value)
        return value

  def example(self) -> int:
    """A fresh example id."""
    return self._draw(signed=True)

  def annotation(self) -> int:
    """A fresh annotation id."""
    return self._draw(signed=False)


def _example(rng: random.Random, ids: _Ids, kind: str, num_annotations: int,
             doc_paragraphs: int, lex: lexicon.Lexicon = LEXICON, page_words: int = 0) -> dict:
  """One example of the given question kind in the original NQ format, names drawn from `lex`;
  padding paragraphs at the end bring the page to `page_words` words (0: none)."""
  entity = rng.choice(ENTITY_TYPES)
  page = _Page(rng, lex)
  plan = _plan(page, entity, kind, doc_paragraphs)
  blocks = _blocks(page, plan)
  if page_words:
    blocks += _padding(rng, page_words - _block_words(blocks))
  html, facts, topics = _render(plan.subject, blocks)
  question, gold = _question_and_gold(page, plan, html, facts, topics)
  variants = [gold] if num_annotations == 1 else _dev_variants(
      rng, gold, kind, html.candidates, num_annotations)
  title = plan.subject
  url = _URL.format(title=urllib.parse.quote(title.replace(" ", "_")),
                    oldid=rng.randint(10**8, 10**9 - 1))
  return {
      "example_id": ids.example(),
      "question_text": question,
      "question_tokens": question.split(),
      "document_title": title,
      "document_url": url,
      "document_html": html.html,
      "document_tokens": html.tokens,
      "long_answer_candidates": html.candidates,
      "annotations": [{"annotation_id": ids.annotation(), **v} for v in variants],
  }


# ----------------------------------------------------------------------------- public API


def generate_examples(num_examples: int, seed: int, num_annotations: int = 1,
                      doc_paragraphs: int = DOC_PARAGRAPHS, names: str = "seen",
                      page_words: int = 0) -> List[dict]:
  """Generates synthetic NQ examples in the original format.

  Args:
    num_examples: How many examples.
    seed: The same arguments give identical examples; use different seeds for train and dev.
    num_annotations: 1 as in NQ train, 5 (`NUM_DEV_ANNOTATIONS`) as in NQ dev.
    doc_paragraphs: About how many `<P>` elements per page (each page draws this +-2, at
      least 3); the default gives roughly 250 to 650 tokens.
    names: "seen" draws every name from `LEXICON` (train and dev), "unseen" from
      `UNSEEN_LEXICON`, whose words never occur in "seen" data. Only the names differ: the
      random draws are the same.
    page_words: When positive, paragraphs of neutral sentences (`PADDING_SENTENCES`: no fact,
      value or name) are added at the end of each page until its text has about this many
      words, e.g. 3000 for pages of real NQ size (a conversion benchmark). 0 (the default)
      adds none and leaves the output unchanged.

  Returns:
    Dicts ready for `json.dumps`, with the keys of the original NQ release.
  """
  if num_annotations < 1:
    raise ValueError(f"num_annotations must be >= 1, got {num_annotations}")
  if names not in NAME_LEXICONS:
    raise ValueError(f"names must be one of {sorted(NAME_LEXICONS)}, got {names!r}")
  lex = NAME_LEXICONS[names]
  rng = random.Random(seed)
  ids = _Ids(rng)
  examples, kinds = [], []
  for _ in range(num_examples):
    if not kinds:  # each run of four examples has one question of each kind
      kinds = rng.sample(KINDS, len(KINDS))
    examples.append(_example(rng, ids, kinds.pop(), num_annotations, doc_paragraphs, lex,
                             page_words))
  return examples


def to_simplified(record: dict) -> dict:
  """The simplified-train form of an original record (same token indices, no html/bytes)."""
  def long_answer(la: dict) -> dict:
    """The long answer's token offsets only."""
    return {k: la[k] for k in ("start_token", "end_token", "candidate_index")}

  return {
      "example_id": record["example_id"],
      "question_text": record["question_text"],
      "document_url": record["document_url"],
      "document_text": " ".join(t["token"] for t in record["document_tokens"]),
      "long_answer_candidates": [
          {k: c[k] for k in ("start_token", "end_token", "top_level")}
          for c in record["long_answer_candidates"]],
      "annotations": [{
          "annotation_id": a["annotation_id"],
          "long_answer": long_answer(a["long_answer"]),
          "short_answers": [{k: s[k] for k in ("start_token", "end_token")}
                            for s in a["short_answers"]],
          "yes_no_answer": a["yes_no_answer"],
      } for a in record["annotations"]],
  }


def write_jsonl_gz(records: Iterable[dict], path: str) -> str:
  """Writes one JSON object per line, gzip-compressed (byte-identical for identical records)."""
  return writer.write_jsonl(path, records, compress=True)


def write_dataset(directory: str, num_train: int, num_dev: int, seed: int = 0,
                  doc_paragraphs: int = DOC_PARAGRAPHS) -> Dict[str, str]:
  """Writes train (1 annotation), dev (5 annotations), simplified train and the two splits
  about unseen entities (`num_dev` examples each, 5 annotations, original format).

  Dev uses `seed + DEV_SEED_OFFSET`, so its ids and pages differ from train. The unseen splits
  draw their names from `UNSEEN_LEXICON` and use `seed + UNSEEN_DEV_SEED_OFFSET` and
  `seed + UNSEEN_TEST_SEED_OFFSET`, each with its own random generator, so train and dev are
  the same as without them.

  Returns:
    {"train": path, "dev": path, "train_simplified": path, "dev_unseen": path,
    "test_unseen": path}.
  """
  paths = _paths(directory)
  train = generate_examples(num_train, seed, 1, doc_paragraphs)
  dev = generate_examples(num_dev, seed + DEV_SEED_OFFSET, NUM_DEV_ANNOTATIONS, doc_paragraphs)
  write_jsonl_gz(train, paths["train"])
  write_jsonl_gz(dev, paths["dev"])
  write_jsonl_gz((to_simplified(r) for r in train), paths["train_simplified"])
  for split, offset in (("dev_unseen", UNSEEN_DEV_SEED_OFFSET),
                        ("test_unseen", UNSEEN_TEST_SEED_OFFSET)):
    unseen = generate_examples(num_dev, seed + offset, NUM_DEV_ANNOTATIONS, doc_paragraphs,
                               names="unseen")
    write_jsonl_gz(unseen, paths[split])
  return paths


def _paths(directory: str) -> Dict[str, str]:
  """Split name -> file path."""
  return {"train": os.path.join(directory, TRAIN_FILENAME),
          "dev": os.path.join(directory, DEV_FILENAME),
          "train_simplified": os.path.join(directory, TRAIN_SIMPLIFIED_FILENAME),
          "dev_unseen": os.path.join(directory, DEV_UNSEEN_FILENAME),
          "test_unseen": os.path.join(directory, TEST_UNSEEN_FILENAME)}


def ensure_demo_data(directory: str, num_train: int, num_dev: int, seed: int = 0,
                     doc_paragraphs: int = DOC_PARAGRAPHS) -> Dict[str, str]:
  """Writes the dataset unless `synthetic_info.json` shows the same arguments were used.

  The marker is written after the data, so an interrupted run regenerates everything.

  Returns:
    The paths, as from `write_dataset`.
  """
  paths = _paths(directory)
  info = {"generator_version": GENERATOR_VERSION, "num_train": num_train, "num_dev": num_dev,
          "seed": seed, "doc_paragraphs": doc_paragraphs}
  marker = os.path.join(directory, INFO_FILENAME)
  if not writer.is_current(marker, info, paths.values()):
    write_dataset(directory, num_train, num_dev, seed, doc_paragraphs)
    writer.write_info(marker, info)
  return paths
