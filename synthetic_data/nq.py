"""Synthetic Natural Questions in the official original format: wiki-like pages written by five
template families, in two presets (`PRESETS`, knobs in `Preset`).

Records are gzipped JSON lines with the release's keys, which `tasks/nq/data.py` reads unchanged.
docs/synthetic_data/nq.md has the format (tokens, offsets, candidates, annotations), the
families, the splits, the presets' length targets and what was measured.

Every stated fact's value is a fresh draw that occurs exactly once on the page (checked; a page
that fails is drawn again), a yes/no NO value never occurs on the page, and distractors state
the question's relation about other entities, so word overlap alone does not find the answer.
The same arguments give identical records (one `random.Random` per split, no `hash()`, no set
order in the output). Pure Python: never loads TensorFlow.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
import random
import re
import urllib.parse
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from synthetic_data import lexicon, writer
from synthetic_data.lexicon import DIRECTIONS, MONTHS, capitalise

GENERATOR_VERSION = 1
SPLITS = writer.SPLITS
# Every split has its own random generator, seeded with seed + its offset.
SEED_OFFSETS = {"train": 0, "dev": 1_000_003, "dev_unseen": 2_000_003,
                "dev_unseen_templates": 4_000_037, "test_unseen_templates": 5_000_011}
FILENAMES = {split: f"nq-benchmark-{split.replace('_', '-')}.jsonl.gz" for split in SPLITS}
INFO_FILENAME = "synthetic_benchmark_info.json"
NUM_DEV_ANNOTATIONS = 5
CANDIDATE_TAGS = ("P", "Ul", "Li", "Table", "Tr")
# Answer kinds and their shares in the benchmark preset (docs/synthetic_data/nq.md).
KIND_SHARES = (("short", 0.35), ("yes_no", 0.01), ("long", 0.13), ("null", 0.51))
_MAX_TRIES = 20
_URL = "https://en.wikipedia.org//w/index.php?title={title}&oldid={oldid}"
_TOKEN_RE = re.compile(r"\w+|[^\w\s]")
_SLOT_RE = re.compile(r"\{(\w+)\}")

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

# Word lists of fact values (fresh on a page, like names).
OCCUPATIONS = ("painter", "sculptor", "poet", "novelist", "composer", "chemist", "botanist",
               "photographer", "historian", "violinist", "journalist", "cartographer",
               "singer", "surgeon", "tailor", "potter")
INDUSTRIES = ("fishing", "mining", "brewing", "tourism", "shipbuilding", "weaving", "farming",
              "glassmaking", "printing", "forestry")
LANDMARKS = ("clock tower", "stone bridge", "wool market", "round church", "salt mill",
             "old lighthouse", "glass house", "iron gate", "rose garden", "bell tower")
PRODUCTS = ("lamp", "engine", "loom", "kettle", "radio", "bicycle", "clock", "stove", "tractor",
            "camera")
SLOGANS = ("Built to last", "Made with care", "Light for all", "Quality comes first",
           "Power for everyone", "Always moving forward", "Simply better", "Forward together")
TITLE_WORDS = (("Silent", "Golden", "Last", "Northern", "Quiet", "Broken", "Hidden", "Distant"),
               ("Harbour", "Garden", "Winter", "Letter", "Mirror", "Lantern", "Orchard",
                "Voyage"))
COMPANY_SUFFIXES = ("Works", "Mills", "Press", "Motors", "Foundry", "Textiles", "Holdings",
                    "Records")

# ----------------------------------------------------------------------------- relations


@dataclasses.dataclass(frozen=True)
class Rel:
  """A fact of the page's subject with a short value.

  `cls` is "noun" ("the <noun> of <s> is <v>") or "event" ("<s> was founded in <v>"). Families
  phrase it from these parts, so one relation reads differently in every family.
  """
  name: str
  cls: str
  label: str  # the table label of the train families
  nouns: Tuple[str, ...]  # noun: synonyms; event: the event noun ("founding")
  value: str  # a `_PLACEHOLDERS` template for the value
  wh: str = "what"  # noun: who / what / where
  tense: str = "is"  # noun: is / was
  art: str = ""  # noun: an article before the value in sentences ("the ")
  vp: str = ""  # event: "was founded"
  q: str = ""  # event: "was {s} founded"
  prep: str = "in"  # event: in / on
  unit: str = "year"  # event: year / date

  def detail(self, noun: str) -> str:
    """What a value is, as a "td_rev" row says: the noun, or the event and its unit."""
    return noun if self.cls == "noun" else f"{noun} {self.unit}"


def _n(name, label, nouns, value, wh="what", tense="is", art=""):
  return Rel(name, "noun", label, nouns, value, wh=wh, tense=tense, art=art)


def _e(name, label, event, value, vp, q, prep="in", unit="year"):
  return Rel(name, "event", label, (event,), value, vp=vp, q=q, prep=prep, unit=unit)


@dataclasses.dataclass(frozen=True)
class Topic:
  """A section: its heading, the noun questions use, and its sentence patterns."""
  name: str
  heading: str
  noun: str
  sentences: Tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Kind:
  """One kind of page subject."""
  name: str
  pool: str  # the subject's placeholder kind
  person: bool
  intros: Tuple[str, ...]
  relations: Tuple[Rel, ...]
  topics: Tuple[Topic, ...]
  rows: Tuple[Tuple[str, str], ...]  # table rows stating no relation (label, slot template)


# Slots of background sentences (filled by `_Page.fill`): {s} the subject; {town} {country}
# {person} {company} {river} {word} {food} {language} names; {year} {decade} {num} {big} {pct}
# {month} {direction} numbers and words; {when} {agent} {adj} {deed} {place} phrase pools.
WHEN = ("In {year}", "During the {decade}s", "By {year}", "Shortly after {year}", "Around {year}",
        "Early in {year}", "Late in {year}", "In the spring of {year}", "In the winter of {year}",
        "Some years later", "At that time", "Over the following decade", "Within a few years",
        "In the autumn of {year}", "After the floods of {year}", "Before {year}")
AGENTS = ("local merchants", "a group of settlers", "the regional council", "volunteers",
          "a team of engineers", "the writer {person}", "the architect {person}",
          "traders from {town}", "a committee of residents", "two brothers from {town}",
          "a charity based in {town}", "builders from {country}", "the engineer {person}",
          "a young teacher", "the local newspaper", "a trading firm from {country}",
          "a small group of monks", "the city guild", "students from {town}", "{person}")
DEEDS = ("built a new road to {town}", "repaired the old harbour walls",
         "opened a small school near {town}", "planted rows of oak trees along the main road",
         "published a short guide to the area", "organised the first summer fair",
         "restored a row of wooden houses", "dug a canal to drain the marshes",
         "collected old songs and stories", "set up a weekly newspaper",
         "laid the first telegraph line", "drew a detailed map of the district",
         "raised money for a new hospital", "moved the market to a larger square",
         "built a pier on the {direction} shore", "opened a reading room for workers",
         "started a choir that still sings today", "replaced the wooden footbridge",
         "paved the streets around the square", "set up a fire brigade",
         "opened a ferry line to {town}", "began a survey of the {direction} coast",
         "printed the first local almanac", "bought land for a public park")
ADJ = ("quiet", "busy", "modest", "remarkable", "lively", "crowded", "peaceful", "prosperous",
       "difficult", "uncertain", "steady", "hopeful")
PLACES = ("near the river", "on the edge of {town}", "along the {direction} road",
          "close to the old square", "in the hills above {town}", "by the harbour",
          "outside the city walls", "in the {direction} quarter")
_NAME_SLOTS = ("town", "country", "person", "company", "river", "word", "food", "language")
_RANGE_SLOTS = {"year": (1700, 2015), "num": (3, 999), "pct": (2, 97), "day": (1, 28),
                "small": (2, 30), "hour": (1, 12)}
_WORD_SLOTS = {"month": MONTHS, "direction": DIRECTIONS}
_PHRASE_SLOTS = {"when": WHEN, "agent": AGENTS, "adj": ADJ, "deed": DEEDS, "place": PLACES}

GENERIC = (
    "{When}, {agent} {deed}.",
    "{When}, {agent} {deed} {place}.",
    "The {decade}s were a {adj} period for {s}.",
    "A report from {year} describes {s} as {adj} and well kept.",
    "Older accounts of {s} mention {agent} and the events of {year}.",
    "Much of what is known about this period comes from letters kept in {town}.",
    "Visitors from {country} described the area as {adj} in the {decade}s.",
    "{Agent} {deed} in {year}, a step that was widely praised.",
    "According to a survey of {year}, about {pct} percent of residents supported the plan.",
    "The {word} archive in {town} holds {num} documents from this time.",
    "A small exhibition about this period opened in {town} in {year}.",
    "The events of {year} are still discussed by local historians.",
    "Several of these buildings were damaged in a storm in {month} {year}.",
    "This was described in a pamphlet printed in {town} in {year}.",
)

# Composed sentences: enough combinations that a long page need not repeat one.
COMPOSED = ("{When}, {agent} {deed}.", "{When}, {agent} {deed} {place}.",
            "{Agent} {deed} {place} in {year}.", "{When}, {agent} {deed}, which was {adj} work.")

# Topic sentence patterns: the prose of sections. No sentence names a value of a relation.
_HISTORY = (
    "The earliest records of {s} date from the {decade}s.",
    "{When}, {agent} {deed}.",
    "A long dispute with {country} ended with a treaty signed in {year}.",
    "In {year}, a fire destroyed {num} houses and the old granary.",
    "The {word} family held great influence over the area for several generations.",
    "Trade with {country} grew steadily after {year}.",
    "During the war of {year}, soldiers were quartered in the {direction} districts.",
    "A period of unrest followed the poor harvests of {year} and {year2}.",
    "{When}, the first printed map of {s} appeared.",
    "The old walls were pulled down in the {decade}s to make room for new streets.",
    "Refugees from {country} settled here around {year}.",
    "By {year}, the area had recovered from the plague of {year2}.",
)
_GEOGRAPHY = (
    "{s} lies in a wide valley surrounded by low hills.",
    "The {word} hills rise to the {direction}, reaching {num} metres in places.",
    "Several small lakes lie within a short walk of {town}.",
    "The soil in the {direction} is sandy, while the valleys are rich and green.",
    "Much of the land was covered by forest until the {decade}s.",
    "A chain of marshes stretches along the {direction} border.",
    "The coast is rocky and broken by narrow bays.",
    "Heavy snow closes the mountain passes for {num} days in an average year.",
    "The {word} plain is the flattest part of the region.",
    "Springs of warm water rise near {town}.",
)
_ECONOMY = (
    "Trade, banking and transport employ most of the working population.",
    "The {word} market in {town} handles about {big} tonnes of grain each year.",
    "Exports rose by {pct} percent between {year} and {year2}.",
    "Small family firms make up most of the local businesses.",
    "A new business park opened near {town} in {year}.",
    "Wages rose slowly during the {decade}s.",
    "Many residents commute to work in {town}.",
    "Farmers grow rye, potatoes and apples in the valleys.",
    "The port handled {big} containers in {year}.",
    "Tax reforms in {year} encouraged foreign investment from {country}.",
    "Shops along the main street sell cheese, bread and wine.",
    "Unemployment fell to {pct} percent in {year}.",
)
_CULTURE = (
    "Folk music and dancing remain popular at village festivals.",
    "A song festival has been held in {town} every summer since {year}.",
    "The {word} theatre stages plays in {language} and in other languages.",
    "Local cooks are proud of {food} and of fresh river fish.",
    "Wooden churches painted in bright colours stand in many villages.",
    "The annual book fair attracts about {big} visitors.",
    "Many old customs are linked to the harvest in {month}.",
    "Writers from {country} often visited the cafes of {town}.",
    "The national gallery in {town} holds {num} works from the {decade}s.",
    "Children learn traditional songs at school.",
)
_TRANSPORT = (
    "A railway line links {town} with the coast.",
    "The main road to {town} was widened in {year}.",
    "Buses run every {num} minutes between the centre and the suburbs.",
    "A ferry crosses to the islands in summer.",
    "The nearest airport is at {town}, about {num} kilometres away.",
    "Cycle paths follow the banks of the {river}.",
    "A tram service operated between {year} and {year2}.",
    "Freight trains carry timber and grain to the ports.",
)
_EDUCATION = (
    "Schooling is free and compulsory from the age of six.",
    "There are {num} primary schools and several colleges.",
    "The public library opened in {year} and lends about {big} books a year.",
    "A technical school opened its doors in {town} in {year}.",
    "Many students continue their studies in {country}.",
    "Evening classes for adults began in the {decade}s.",
    "The old grammar school building now houses a museum.",
)
_SPORT = (
    "Skiing, rowing and cycling are popular pastimes.",
    "A marathon through the streets of {town} has been run since {year}.",
    "The local rowing club won a national title in {year}.",
    "An indoor swimming pool opened in {year}.",
    "Chess clubs meet every week in the town hall.",
    "The stadium near {town} seats about {big} spectators.",
    "A cycling race passes through the region every {month}.",
)
_CLIMATE = (
    "Winters are long and cold, with snow from {month} onwards.",
    "Summers are mild and often wet near the coast.",
    "Most rain falls between {month} and {month2}.",
    "Temperatures rarely rise above thirty degrees.",
    "Strong winds from the {direction} bring storms in autumn.",
    "The dry summer of {year} caused great damage to the crops.",
)
_POLITICS = (
    "The parliament has {num} seats and meets in {town}.",
    "Elections are held every four years.",
    "A new constitution was adopted in {year} after long debate.",
    "The country is divided into {num} districts.",
    "Relations with {country} have been friendly since {year}.",
    "Women gained the right to vote in {year}.",
    "Local councils manage schools, roads and water.",
)
_EARLY = (
    "{s} grew up in a house full of books near {town}.",
    "As a child, {s} liked long walks and drawing.",
    "A scholarship in {year} opened the way to further study.",
    "The family moved to {town} in {year}.",
    "{s} spent the summers of childhood with relatives in {country}.",
    "At the age of {small}, {s} left school to help in the family shop.",
    "Early letters show a keen interest in music and mathematics.",
)
_CAREER = (
    "The first public success of {s} came in {year}.",
    "Over the next decade, {s} travelled widely and gained many admirers.",
    "Critics praised the pieces produced after {year}.",
    "{s} worked for some years in {town} before moving to {country}.",
    "A long tour in {year} made the name of {s} known abroad.",
    "{s} gave more than {num} public lectures during these years.",
    "Colleagues in {town} remembered {s} as patient and demanding.",
    "A serious quarrel with {person} in {year} ended a long friendship.",
)
_PERSONAL = (
    "{s} enjoyed sailing and chess.",
    "Friends described {s} as generous and curious.",
    "{s} kept a diary for more than {small} years.",
    "Letters between {s} and {person} were published in {year}.",
    "{s} lived for many years in a flat overlooking the square in {town}.",
    "A portrait of {s} hangs in the museum of {town}.",
)
_LATER = (
    "In later life, {s} withdrew from public view.",
    "A long illness in {year} ended most public appearances.",
    "{s} spent the final years in a quiet house by the sea.",
    "Visitors in the {decade}s found {s} still working every morning.",
    "The last public appearance of {s} was in {town} in {year}.",
)
_LEGACY = (
    "A street in {town} is named after {s}.",
    "Several schools in {country} teach the ideas of {s}.",
    "A film about {s} was made in {year}.",
    "The papers of {s} are kept in the {word} archive.",
    "Admirers gather in {town} every {month} to remember {s}.",
    "A prize for young artists was set up in memory of {s} in {year}.",
)
_COMPANY_HISTORY = (
    "{s} began in a small workshop in {town}.",
    "In {year}, the firm opened its first large factory near {town}.",
    "A merger in {year} doubled the size of the business.",
    "The firm survived the crisis of {year} by selling its shipping arm.",
    "During the {decade}s, {s} expanded into {country}.",
    "A fire in {year} destroyed the old warehouse.",
    "New investors bought a share of {s} in {year}.",
)
_PRODUCTS = (
    "The catalogue of {s} lists more than {num} items.",
    "Spare parts are made at a plant near {town}.",
    "Most goods are sold abroad, mainly in {country}.",
    "A cheaper range was introduced in {year}.",
    "Designs from the {decade}s are now sought by collectors.",
    "The firm offers repairs for all of its older models.",
)
_OPERATIONS = (
    "{s} has offices in {num} cities.",
    "Staff receive training at a centre near {town}.",
    "The company owns a fleet of about {num} delivery vans.",
    "A new warehouse was built near {town} in {year}.",
    "Its annual report is published every {month}.",
    "About {pct} percent of its goods are shipped by rail.",
)
_FINANCES = (
    "Profits fell by {pct} percent in {year}.",
    "Shares of {s} have paid a dividend every year since {year}.",
    "Debts were reduced after the sale of a plant in {town}.",
    "Sales abroad rose sharply in the {decade}s.",
    "A loan from a bank in {country} financed the new plant.",
)
_SOCIETY = (
    "{s} sponsors a youth orchestra in {town}.",
    "Workers went on strike for {num} days in {year}.",
    "A dispute over wages was settled in {year}.",
    "The firm was criticised in {year} for polluting the {river}.",
    "A small museum about {s} opened in {year}.",
)


def _t(heading, sentences, noun="", name=""):
  """A topic; its noun defaults to the heading in lower case, its name to the noun."""
  noun = noun or heading.lower()
  return Topic(name or noun.replace(" ", "_"), heading, noun, sentences)


_PLACE_TOPICS = (_t("History", _HISTORY), _t("Geography", _GEOGRAPHY), _t("Economy", _ECONOMY),
                 _t("Culture", _CULTURE), _t("Transport", _TRANSPORT),
                 _t("Education", _EDUCATION), _t("Sport", _SPORT), _t("Climate", _CLIMATE))

COUNTRY = Kind(
    "country", "country", False,
    ("{s} is a country in the {direction} of the {word} region.",
     "{s} is a small country bordered by {country} and {country2}.",
     "{s} is a sovereign state on the {direction} coast of the {word} sea."),
    (_n("capital", "Capital", ("capital", "capital city", "seat of government"), "{town}"),
     _n("currency", "Currency", ("currency", "official currency", "national currency"),
        "{coin}", art="the "),
     _n("language", "Official language", ("official language", "national language"),
        "{language}"),
     _n("president", "President", ("president", "head of state"), "{person}", wh="who"),
     _n("river", "Longest river", ("longest river", "longest waterway"), "{river}",
        art="the "),
     _n("mountain", "Highest point", ("highest mountain", "highest peak"), "Mount {word}"),
     _n("anthem", "Anthem", ("national anthem", "anthem"), "Ode to {word}"),
     _n("dish", "National dish", ("national dish", "best known dish"), "{food} stew"),
     _e("independence", "Independence", "independence", "{year}", "gained independence",
        "did {s} gain independence")),
    _PLACE_TOPICS + (_t("Politics", _POLITICS),),
    (("Area", "{num} thousand square kilometres"), ("Calling code", "+{num}"),
     ("Driving side", "right"), ("Time zone", "UTC + {hour}")),
)

TOWN = Kind(
    "town", "town", False,
    ("{s} is a small town in the {direction} of {country}.",
     "{s} is an old market town with narrow streets.",
     "{s} is a town on the {direction} bank of the {river}."),
    (_n("mayor", "Mayor", ("mayor", "current mayor"), "{person}", wh="who"),
     _n("club", "Football club", ("football club", "main football team"), "{word} Rovers"),
     _n("landmark", "Landmark", ("best known landmark", "most famous sight"), "{landmark}",
        art="the "),
     _n("twin", "Twin town", ("twin town", "sister town"), "{town}"),
     _n("industry", "Main industry", ("main industry", "chief industry"), "{industry}"),
     _n("elevation", "Elevation", ("elevation", "height above sea level"), "{metres} metres"),
     _n("university", "University", ("university", "main college"), "{word} College"),
     _n("population", "Population", ("population", "number of inhabitants"), "{thousands}"),
     _e("founded", "Founded", "founding", "{old_year}", "was founded", "was {s} founded")),
    _PLACE_TOPICS,
    (("Area", "{num} square kilometres"), ("Postal code", "{num}{num2}0"),
     ("Website", "www.{word}.org"), ("Dialling code", "0{num}")),
)

PERSON = Kind(
    "person", "person", True,
    ("{s} was a public figure from the {word} valley.",
     "{s} is remembered as one of the most admired figures of the age.",
     "{s} was a well known figure from {country}."),
    (_n("home_town", "Home town", ("home town", "birthplace town"), "{town}", tense="was"),
     _n("occupation", "Occupation", ("occupation", "profession"), "{occupation}", tense="was"),
     _n("spouse", "Spouse", ("spouse", "marriage partner"), "{person}", wh="who", tense="was"),
     _n("teacher", "Teacher", ("teacher", "first teacher"), "{person}", wh="who",
        tense="was"),
     _n("prize", "Awards", ("best known award", "most important prize"), "{word} Prize",
        tense="was", art="the "),
     _n("work", "Notable work", ("best known work", "most famous work"), "{title}",
        tense="was"),
     _n("death", "Place of death", ("place of death", "death place"), "{town2}", tense="was"),
     _n("employer", "Employer", ("employer", "longtime employer"), "{company}", wh="who",
        tense="was"),
     _e("born", "Born", "birth", "{date}", "was born", "was {s} born", prep="on",
        unit="date")),
    (_t("Early life", _EARLY), _t("Career", _CAREER), _t("Personal life", _PERSONAL),
     _t("Later life", _LATER), _t("Legacy", _LEGACY),
     _t("Education", _EDUCATION[3:] + _EARLY[:2])),
    (("Years active", "{year} – {year2}"), ("Movement", "{word} school"),
     ("Languages", "{language}"), ("Resting place", "{town}")),
)

COMPANY = Kind(
    "company", "company", False,
    ("{s} is a private company with a long history.",
     "{s} is a family business that grew into a large firm.",
     "{s} is a manufacturer based in {country}."),
    (_n("founder", "Founder", ("founder", "original founder"), "{person}", wh="who",
        tense="was"),
     _n("headquarters", "Headquarters", ("headquarters", "head office"), "{town}",
        wh="where"),
     _n("ceo", "Chief executive", ("chief executive", "managing director"), "{person}",
        wh="who"),
     _n("product", "Products", ("main product", "flagship product"), "{word} {product}",
        art="the "),
     _n("employees", "Employees", ("number of employees", "workforce"), "{thousands}"),
     _n("parent", "Parent", ("parent company", "owner"), "{company}"),
     _n("revenue", "Revenue", ("annual revenue", "yearly turnover"),
        "{million} million crowns"),
     _n("slogan", "Slogan", ("slogan", "advertising motto"), "{slogan}"),
     _e("founded", "Founded", "founding", "{year}", "was founded", "was {s} founded")),
    (_t("History", _COMPANY_HISTORY), _t("Products", _PRODUCTS), _t("Operations", _OPERATIONS),
     _t("Finances", _FINANCES),
     _t("Sponsorship and disputes", _SOCIETY, "controversies", name="society"),
     _t("Research",
        ("Its engineers have filed {num} patents since {year}.",
         "The research centre near {town} tests new materials.",
         "The centre works closely with students from {town}.",
         "A joint project with a firm from {country} began in {year}."))),
    (("Type", "Private"), ("Website", "www.{word}.com"), ("Area served", "{country}"),
     ("Legal form", "limited company")),
)

KINDS = (COUNTRY, TOWN, PERSON, COMPANY)

# ----------------------------------------------------------------------------- families


@dataclasses.dataclass(frozen=True)
class Family:
  """One independent way of writing facts, questions and pages (see the module docstring).

  Fact patterns: {s} subject, {v} value, {n} noun, {be} is/was, {has} has/had, {poss}
  its/their, {art} article; event patterns: {vp} "was founded", {prep}, {event} "founding".
  Question patterns add {wh}, {does}, {q} ("was {s} founded"), {unit} year/date, {t} topic.
  A capitalised slot ({Art}, {Poss}, {Prep}) is capitalised after filling.
  """
  name: str
  noun_facts: Tuple[str, ...]
  event_facts: Tuple[str, ...]
  row: str  # how a fact table row or list item is written: th, li, td_of, td_rev
  questions: Tuple[str, ...]
  event_questions: Tuple[str, ...]
  yes_no: Tuple[str, ...]
  topic_questions: Tuple[str, ...]
  distractors: Tuple[str, ...]  # openings of facts about other entities
  box_heading: str  # the heading of the fact table or list ("" for an infobox)
  places: Tuple[float, float, float]  # shares of facts in the box, the lead, the sections
  box_at: str  # where the box stands: top, after_lead, middle, late
  early: bool  # facts in sections favour the first sections


FAMILIES_BY_NAME = {f.name: f for f in (
    Family(
        "infobox",
        ("The {n} of {s} {be} {art}{v}.", "{s}'s {n} {be} {art}{v}."),
        ("{s} {vp} {prep} {v}.", "{s} {vp} {prep} {v}, as most sources agree."),
        "th",
        ("{wh} {be} the {n} of {s}",),
        ("when {q}",),
        ("{be} {art}{v} the {n} of {s}",),
        ("{t} of {s}",),
        ("By comparison, ", "For comparison, "),
        "", (0.5, 0.2, 0.3), "top", True),
    Family(
        "lead",
        ("{Art}{v} {be} the {n} of {s}.", "{s} {has} {art}{v} as {poss} {n}."),
        ("{Prep} {v}, {s} {vp}.",),
        "th",
        ("{s} {n}", "{n} {s}"),
        ("what {unit} {q}",),
        ("{be} the {n} of {s} {art}{v}",),
        ("{s} {t}",),
        ("Elsewhere, ", "In contrast, "),
        "Key facts", (0.25, 0.25, 0.5), "after_lead", True),
    Family(
        "lists",
        ("For {s}, the {n} {be} {art}{v}.", "{s} {has} {art}{v} for {poss} {n}."),
        ("It was {prep} {v} that {s} {vp}.",),
        "li",
        ("{wh} {be} {s}'s {n}", "{wh} {be} the name of the {n} of {s}"),
        ("{s} {event} {unit}",),
        ("{be} {s}'s {n} {art}{v}",),
        ("what is known about the {t} of {s}",),
        ("Similarly, ", "Likewise, "),
        "At a glance", (0.5, 0.15, 0.35), "after_lead", True),
    Family(
        "chronicle",
        ("Much has been written about {s}. {Poss} {n} {be} {art}{v}.",
         "{s} {has} a notable {n} in {art}{v}."),
        ("The {event} of {s} took place {prep} {v}.",
         "{s} is well documented. {Poss} {event} came {prep} {v}."),
        "td_of",
        ("name the {n} of {s}", "tell me the {n} of {s}"),
        ("{which} {q}",),
        ("{does} {s} have {art}{v} as {poss} {n}",),
        ("tell me about the {t} of {s}",),
        ("Meanwhile, ", "At the same time, "),
        "Records", (0.3, 0.0, 0.7), "middle", False),
    Family(
        "almanac",
        ("{Art}{v}, the {n} of {s}, is often named in official records.",
         "Records name {art}{v} as the {n} of {s}."),
        ("{v} marks the {event} of {s}.", "Records date the {event} of {s} to {v}."),
        "td_rev",
        ("{wh} {be} known as the {n} of {s}", "{wh} {does} {s} have as {poss} {n}"),
        ("{event} {unit} of {s}",),
        ("{be} it true that {art}{v} {be} the {n} of {s}",),
        ("describe the {t} of {s}", "overview of the {t} of {s}"),
        ("Records also show that ", "It is also recorded that "),
        "Summary", (0.4, 0.2, 0.4), "late", True),
)}
FAMILIES = tuple(FAMILIES_BY_NAME)
TRAIN_FAMILIES = FAMILIES[:3]
HELD_OUT_FAMILIES = FAMILIES[3:]

# ----------------------------------------------------------------------------- presets


@dataclasses.dataclass(frozen=True)
class Preset:
  """The knobs a preset sets; everything else (kinds, families, layouts, checks) is shared."""
  train_families: Tuple[str, ...]  # the default families of train, dev and dev_unseen
  held_out_families: Tuple[str, ...]  # the families of the *_unseen_templates splits
  median_tokens: int  # page length target: log-normal over document tokens (median, p90) ...
  p90_tokens: int
  min_tokens: int  # ... clipped to [min_tokens, max_tokens]
  max_tokens: int
  min_sections: int  # topic sections (`<H2>` with paragraphs) a page has at least
  sentences: Tuple[int, int]  # background sentences per paragraph (fewest, most)
  kind_shares: Tuple[Tuple[str, float], ...]  # answer kinds and their shares

  @property
  def sigma(self) -> float:
    """The log-normal's sigma: p90 is 1.2816 standard deviations above the median."""
    return math.log(self.p90_tokens / self.median_tokens) / 1.2816


PRESETS = ("benchmark", "short")
PRESET_SETTINGS = {
    "benchmark": Preset(TRAIN_FAMILIES, HELD_OUT_FAMILIES, 3500, 8000, 900, 30000, 3, (3, 7),
                        KIND_SHARES),
    # About 370 text words a page (the short demo pages were 330). Almanac is the held-out
    # family because its pages are as long as infobox's (chronicle's timeline and facts buried
    # in many paragraphs make it 45% longer). Equal answer kinds: a few dozen records hold each.
    "short": Preset(("infobox",), ("almanac",), 400, 520, 300, 700, 2, (1, 2),
                    (("short", 0.25), ("yes_no", 0.25), ("long", 0.25), ("null", 0.25))),
}


# ----------------------------------------------------------------------------- phrasing


def _words(rel: Rel, subject: str, value: str, noun: str, person: bool) -> Dict[str, str]:
  """The slot values of a relation's patterns."""
  past = rel.tense == "was"
  return {"s": subject, "v": value, "n": noun, "be": rel.tense, "has": "had" if past else "has",
          "does": "did" if past else "does", "poss": "their" if person else "its",
          "art": rel.art, "wh": rel.wh, "vp": rel.vp, "prep": rel.prep, "event": rel.nouns[0],
          "unit": rel.unit, "q": rel.q.replace("{s}", subject),
          "which": "on which date" if rel.unit == "date" else "in which year"}


def _format(pattern: str, words: Dict[str, str]) -> str:
  """Fills {slot} and {Slot} (capitalised) from `words`."""
  def one(match):
    key = match.group(1)
    return words[key] if key in words else capitalise(words[key.lower()])
  text = _SLOT_RE.sub(one, pattern)
  # A capitalised opening slot left empty ("{Art}" without an article) capitalises what follows.
  return capitalise(text) if pattern[:1] == "{" and pattern[1:2].isupper() else text


def template_skeletons(family: str) -> List[str]:
  """Every fact template of a family with the relation words filled in and the entity slots
  ({s} subject, {v} value) left as "\\x00", as token sequences joined by spaces (tags
  included): what the held-out disjointness test searches for."""
  fam = FAMILIES_BY_NAME[family]
  out = []
  for kind in KINDS:
    for rel in kind.relations:
      patterns = fam.noun_facts if rel.cls == "noun" else fam.event_facts
      for noun in rel.nouns:
        words = _words(rel, "\x00", "\x00", noun, kind.person)
        out += [" ".join(_TOKEN_RE.findall(_format(pattern, words))) for pattern in patterns]
        cells = _row_cells(fam.row, rel.label, "\x00", "\x00", rel.detail(noun))
        out.append(" ".join(_cells_tokens(fam.row, cells)))
  return [s.replace("\x00 \x00", "\x00") for s in out]


def question_patterns(family: str) -> List[str]:
  """The question patterns of a family (for the disjointness test)."""
  fam = FAMILIES_BY_NAME[family]
  return [*fam.questions, *fam.event_questions, *fam.yes_no, *fam.topic_questions]


def _row_cells(row: str, label: str, subject: str, value: object,
               detail: str) -> List[Tuple[str, object]]:
  """A row of a fact table (or for "li" a list item's label and value) as (tag, text) cells;
  the value cell holds exactly `value`, `detail` says what it is (the other cell of "td_rev")."""
  if row == "th":
    return [("Th", label), ("Td", value)]
  if row == "li":
    return [("Li", f"{label}:"), ("Li", value)]
  if row == "td_of":
    return [("Td", f"{label} ({subject})"), ("Td", value)]
  return [("Td", value), ("Td", detail)]


def _cells_tokens(row: str, cells: List[Tuple[str, str]]) -> List[str]:
  """The tokens of a row as rendered (for `template_skeletons`)."""
  if row == "li":
    return ["<Li>", *_TOKEN_RE.findall(cells[0][1]), cells[1][1], "</Li>"]
  tokens = ["<Tr>"]
  for tag, text in cells:
    tokens += [f"<{tag}>", *_TOKEN_RE.findall(text), f"</{tag}>"]
  return tokens + ["</Tr>"]


# ----------------------------------------------------------------------------- page draws


class _Page(lexicon.FreshDraws):
  """The random source of one page. Fresh draws (values, the subject, the cast) are never
  repeated on the page; loose draws (background text) may repeat but never equal a fresh one,
  so a value occurs where it is stated. Names come from `lex` (`LEXICON` or `UNSEEN_LEXICON`);
  the random draws do not depend on it."""

  def __init__(self, rng: random.Random, lex: lexicon.Lexicon):
    super().__init__(rng, lex, max_tries=500)
    self.cast: Dict[str, List[str]] = {}

  def number(self, low: int, high: int) -> str:
    """A fresh whole number from `low` to `high`, as text."""
    return self.draw(lambda: str(self.rng.randint(low, high)))

  def fresh(self, template: str) -> str:
    """A fresh value of a `_PLACEHOLDERS` template ("{town}", "Mount {word}"): each placeholder
    is a fresh draw, and the whole value is marked used too, so no loose draw can repeat it."""
    values: Dict[str, str] = {}
    for field in _SLOT_RE.findall(template):
      if field not in values:
        values[field] = _PLACEHOLDERS[field.rstrip("0123456789")](self)
    value = template.format(**values)
    self.used.add(value)
    return value

  def loose(self, make: Callable[[], str]) -> str:
    for _ in range(200):
      value = make()
      if value not in self.used:
        return value
    raise RuntimeError("no loose value left")

  def name_like(self, kind: str) -> str:
    """A cast member of the page most of the time, else a loose name."""
    cast = self.cast.get(kind)
    if cast and self.rng.random() < 0.7:
      return self.rng.choice(cast)
    lex = self.lexicon
    parts = {"person": (lex["first"], lex["last"]),
             "company": (lex["company"], COMPANY_SUFFIXES)}.get(kind) or (lex[kind],)
    return self.loose(lambda: " ".join(self.rng.choice(words) for words in parts))

  def slot(self, key: str, subject: str) -> str:
    """The value of one background slot."""
    base = key.rstrip("0123456789")
    rng = self.rng
    if base == "s":
      return subject
    if base in _NAME_SLOTS:
      return self.name_like(base)
    if base in ("year", "num"):  # loose: background years and counts never state a value
      return self.loose(lambda: str(rng.randint(*_RANGE_SLOTS[base])))
    if base == "big":
      return self.loose(lambda: f"{rng.randint(2, 950)},{rng.randint(0, 9)}00")
    if base == "decade":
      return str(rng.randint(170, 201) * 10)
    if base in _RANGE_SLOTS:
      return str(rng.randint(*_RANGE_SLOTS[base]))
    if base in _WORD_SLOTS:
      return rng.choice(_WORD_SLOTS[base])
    return self.fill(rng.choice(_PHRASE_SLOTS[base]), subject)

  def fill(self, template: str, subject: str) -> str:
    """A background pattern with every slot filled (a capitalised slot is capitalised)."""
    def one(match):
      key = match.group(1)
      value = self.slot(key.lower(), subject)
      return capitalise(value) if key[0].isupper() else value
    return _SLOT_RE.sub(one, template)


def _date(p: _Page) -> str:
  """A date such as "3 May 1921" (its year is fresh on the page)."""
  return f"{p.rng.randint(1, 28)} {p.rng.choice(MONTHS)} {p.number(1700, 2015)}"


# Placeholder kind of a fact value -> its maker. Templates name them as {kind} or {kind2}, ...
_PLACEHOLDERS: Dict[str, Callable[[_Page], str]] = {
    **{pool: (lambda pool: lambda p: p.name(pool))(pool) for pool in _POOLS},
    "person": lambda p: f"{p.name('first')} {p.name('last')}",
    "company": lambda p: f"{p.name('company')} {p.rng.choice(COMPANY_SUFFIXES)}",
    "year": lambda p: p.number(1700, 2015),
    "old_year": lambda p: p.number(1100, 1699),
    "date": _date,
    "million": lambda p: p.number(2, 95),
    "thousands": lambda p: f"{p.number(2, 95)},{p.rng.randint(1, 9)}00",
    "metres": lambda p: p.number(61, 2400),
    "occupation": lambda p: p.pick(OCCUPATIONS),
    "industry": lambda p: p.pick(INDUSTRIES),
    "landmark": lambda p: p.pick(LANDMARKS),
    "product": lambda p: p.pick(PRODUCTS),
    "slogan": lambda p: p.pick(SLOGANS),
    "title": lambda p: f"The {p.pick(TITLE_WORDS[0])} {p.pick(TITLE_WORDS[1])}",
}


class _Deck:
  """Patterns dealt without repeats until all were used, then reshuffled."""

  def __init__(self, rng: random.Random, patterns: Sequence[str]):
    self.rng, self.patterns, self.cards = rng, list(patterns), []

  def deal(self) -> str:
    if not self.cards:
      self.cards = self.rng.sample(self.patterns, len(self.patterns))
    return self.cards.pop()


# ----------------------------------------------------------------------------- page plan


@dataclasses.dataclass
class _Fact:
  """A sentence (or table row / list item) stating a value; `key` names the subject's
  relation, None for a distractor about another entity."""
  before: str
  value: str
  after: str
  key: Optional[str] = None


@dataclasses.dataclass
class _Plan:
  kind: Kind
  family: Family
  answer: str  # short, yes_no, long, null
  subject: str
  target: object  # a Rel or a Topic
  values: Dict[str, str]
  box: List[Rel]
  lead: List[Rel]
  sections: List[Topic]
  in_section: Dict[int, List[Rel]]
  distractors: Dict[int, List[_Fact]]  # section index -> distractor facts
  target_tokens: int
  preset: Preset


def _draw_kind(rng: random.Random, shares: Sequence[Tuple[str, float]]) -> str:
  x, total = rng.random(), 0.0
  for answer, share in shares:
    total += share
    if x < total:
      return answer
  return shares[-1][0]


def _fact_sentence(page: _Page, fam: Family, rel: Rel, subject: str, value: str, person: bool,
                   key: Optional[str]) -> _Fact:
  noun = page.rng.choice(rel.nouns)
  words = _words(rel, subject, value, noun, person)
  pattern = page.rng.choice(fam.noun_facts if rel.cls == "noun" else fam.event_facts)
  # Filled around the value, which stays exactly as drawn even where it opens the sentence.
  before, after = (_format(part, words) for part in pattern.split("{v}"))
  return _Fact(before, value, after, key)


def _plan(page: _Page, kind: Kind, fam: Family, answer: str, preset: Preset) -> _Plan:
  """Draws the subject, the values, where each fact stands and the question's target."""
  rng = page.rng
  subject = page.fresh("{" + kind.pool + "}")
  # The cast: other entities the background text keeps mentioning.
  for pool, count in (("town", 4), ("country", 2), ("person", 4), ("company", 2), ("river", 1),
                      ("word", 3)):
    page.cast[pool] = [page.fresh("{" + pool + "}") for _ in range(count)]
  target_tokens = int(min(preset.max_tokens, max(preset.min_tokens, rng.lognormvariate(
      math.log(preset.median_tokens), preset.sigma))))
  relations = list(kind.relations)
  rng.shuffle(relations)
  n_omit = rng.randint(2, 3)
  omitted, stated = relations[:n_omit], relations[n_omit:]
  values = {rel.name: page.fresh(rel.value) for rel in stated}
  topics = list(kind.topics)
  rng.shuffle(topics)
  # Fewer sections on short pages; at least one topic stays absent (null "tell me about").
  n_sections = max(preset.min_sections, min(len(topics) - 1, round(target_tokens / 520)))
  sections, absent = topics[:n_sections], topics[n_sections:]
  if answer in ("short", "yes_no"):
    target = rng.choice([r for r in stated if answer == "short" or r.cls == "noun"])
  elif answer == "long":
    target = rng.choice(sections)
  else:
    target = rng.choice(absent) if rng.random() < 0.3 else rng.choice(omitted)
  box, lead, in_section = [], [], {}
  weights = fam.places
  for rel in stated:
    x = rng.random() * sum(weights)
    if x < weights[0]:
      box.append(rel)
    elif x < weights[0] + weights[1] and len(lead) < 2:
      lead.append(rel)
    else:
      n = len(sections)
      index = min(rng.randrange(n), rng.randrange(n)) if fam.early else rng.randrange(n // 3, n)
      in_section.setdefault(index, []).append(rel)
  # Distractors: the same relations stated about other entities of the same kind (the
  # target's relation and the relation a null question asks about, when there is one).
  distractors: Dict[int, List[_Fact]] = {}
  chosen = rng.sample([r for r in relations if r is not target], rng.randint(1, 3))
  if isinstance(target, Rel) and rng.random() < 0.6:
    chosen.append(target)
  for rel in chosen:
    other = rng.choice(page.cast[kind.pool])  # every kind's pool has a cast
    fact = _fact_sentence(page, fam, rel, other, page.fresh(rel.value), kind.person, None)
    if not fact.before.startswith(other):  # a name opening the sentence keeps its capital
      fact.before = fact.before[:1].lower() + fact.before[1:]
    fact.before = rng.choice(fam.distractors) + fact.before
    distractors.setdefault(rng.randrange(len(sections)), []).append(fact)
  return _Plan(kind, fam, answer, subject, target, values, box, lead, sections, in_section,
               distractors, target_tokens, preset)


# ----------------------------------------------------------------------------- html tokens


class _Html:
  """Builds `document_html` token by token, with byte offsets and long-answer candidates."""

  def __init__(self):
    self._chunks: List[str] = []
    self._size = 0  # in UTF-8 bytes
    self.tokens: List[dict] = []
    self.candidates: List[dict] = []
    self._open: List[Tuple[str, int]] = []  # (tag, candidate index or -1)

  @property
  def html(self) -> str:
    """The document html so far."""
    return "".join(self._chunks)

  def innermost(self) -> int:
    """The index of the innermost open candidate, or -1."""
    return next((index for _, index in reversed(self._open) if index >= 0), -1)

  def _emit(self, token: str, html_token: bool, separator: str) -> None:
    """Appends a token, after `separator` (ASCII) unless it is the first."""
    if self._chunks:
      self._chunks.append(separator)
      self._size += len(separator)
    start = self._size
    self._chunks.append(token)
    self._size += len(token.encode("utf-8"))
    self.tokens.append({"token": token, "start_byte": start, "end_byte": self._size,
                        "html_token": html_token})

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


# ----------------------------------------------------------------------------- rendering


class _Builder:
  """Renders blocks into an `_Html`, recording where facts and topic paragraphs stand."""

  def __init__(self, page: _Page, plan: _Plan):
    self.page, self.plan, self.rng = page, plan, page.rng
    self.html = _Html()
    # Relation name -> (innermost candidate, top-level candidate, value token span).
    self.facts: Dict[str, Tuple[int, int, Tuple[int, int]]] = {}
    self.topics: Dict[str, int] = {}
    self.top = -1
    self.generic = _Deck(self.rng, GENERIC)
    self.decks: Dict[str, _Deck] = {}
    self.said: set = set()  # background sentences of the page (membership only, never output)

  def open_top(self, tag: str) -> None:
    self.top = len(self.html.candidates)
    self.html.open(tag)

  def part(self, part: object) -> None:
    """Emits text, or a fact (recording where a subject's fact states its value)."""
    if not isinstance(part, _Fact):
      self.html.text(part)
      return
    self.html.text(part.before)
    span = self.html.text(part.value)
    self.html.text(part.after)
    if part.key:
      self.facts[part.key] = (self.html.innermost(), self.top, span)

  def element(self, tag: str, content: object, before: str = "\n", after: str = " ") -> None:
    """An element holding text or a fact; `before` and `after` precede its two tags."""
    self.html.open(tag, before)
    self.part(content)
    self.html.close(after)

  def sentence(self, topic: Optional[Topic]) -> str:
    """One background sentence not said before on the page: mostly of the section's topic,
    sometimes generic; when the topic's patterns are worn out (long pages), a composed one."""
    for _ in range(3):
      if topic is None or self.rng.random() < 0.2:
        deck = self.generic
      else:
        deck = self.decks.setdefault(topic.name, _Deck(self.rng, topic.sentences))
      text = self.page.fill(deck.deal(), self.plan.subject)
      if text not in self.said:
        break
    while text in self.said:
      text = self.page.fill(self.rng.choice(COMPOSED), self.plan.subject)
    self.said.add(text)
    return text

  def paragraph(self, topic: Optional[Topic], facts: Sequence[_Fact] = (),
                first: str = "") -> None:
    self.open_top("P")
    parts: List[object] = [self.sentence(topic)
                           for _ in range(self.rng.randint(*self.plan.preset.sentences))]
    for fact in facts:
      parts.insert(self.rng.randint(0, len(parts)), fact)
    if first:
      parts.insert(0, first)
    for part in parts:
      self.part(part)
    self.html.close("\n")

  def heading(self, tag: str, text: str) -> None:
    self.element(tag, text, after="\n")

  def bullet_list(self, items: Sequence[object]) -> None:
    self.open_top("Ul")
    for item in items:
      self.element("Li", item)
    self.html.close("\n")

  def table(self, rows: Sequence[Sequence[Tuple[str, object]]]) -> None:
    """A `<Table>` of `<Tr>` rows of (tag, text or fact) cells."""
    self.open_top("Table")
    for row in rows:
      self.html.open("Tr")
      for tag, cell in row:
        self.element(tag, cell, before=" ")
      self.html.close()
    self.html.close("\n")


def _box(b: _Builder) -> None:
  """The family's fact table or list: the box facts among background rows."""
  plan, page, rng = b.plan, b.page, b.rng
  fam, subject = plan.family, plan.subject
  facts = [_row_cells(fam.row, rel.label, subject, _Fact("", plan.values[rel.name], "", rel.name),
                      rel.detail(rng.choice(rel.nouns))) for rel in plan.box]
  kind_rows = plan.kind.rows
  rows = [_row_cells(fam.row, label, subject, page.fill(template, subject), label.lower())
          for label, template in rng.sample(kind_rows, rng.randint(2, len(kind_rows)))] + facts
  rng.shuffle(rows)
  if fam.box_heading:
    b.heading("H2", fam.box_heading)
  if fam.row == "li":
    items = [_Fact(f"{label} ", value.value, "", value.key) if isinstance(value, _Fact)
             else f"{label} {value}" for (_, label), (_, value) in rows]
    for _ in range(rng.randint(2, 5)):
      items.insert(rng.randint(0, len(items)), b.sentence(None))
    b.bullet_list(items)
    return
  title = [("Th", subject)] + ([("Th", "Detail")] if fam.row == "td_rev" else [])
  b.table([title] + rows)


def _lead(b: _Builder) -> None:
  plan, page = b.plan, b.page
  intro = page.fill(b.rng.choice(plan.kind.intros), plan.subject)
  facts = [_fact_sentence(page, plan.family, rel, plan.subject, plan.values[rel.name],
                          plan.kind.person, rel.name) for rel in plan.lead]
  b.paragraph(None, facts, first=intro)
  if plan.target_tokens > 2500:
    b.paragraph(None)


def _data_table(b: _Builder) -> None:
  """A multi-column table of numbers (population, results, works) inside a section."""
  page, rng = b.page, b.rng
  header = rng.choice((("Year", "Visitors", "Change"), ("Year", "Output", "Share"),
                       ("Year", "Members", "Notes"), ("Year", "Events", "Place")))
  rows = [[("Th", h) for h in header]]
  for _ in range(rng.randint(4, 12)):
    if header[2] in ("Change", "Share"):
      third = f"{page.slot('pct', '')} %"
    else:
      third = rng.choice(ADJ) if header[2] == "Notes" else page.slot("town", "")
    rows.append([("Td", page.slot("year", "")), ("Td", page.slot("big", "")), ("Td", third)])
  b.table(rows)


def _section(b: _Builder, index: int, topic: Topic, budget: int) -> None:
  plan, rng, fam = b.plan, b.rng, b.plan.family
  start = len(b.html.tokens)
  b.heading("H2", topic.heading)
  facts = [_fact_sentence(b.page, fam, rel, plan.subject, plan.values[rel.name],
                          plan.kind.person, rel.name) for rel in plan.in_section.get(index, [])]
  facts += plan.distractors.get(index, [])
  rng.shuffle(facts)
  # The facts go into the first few paragraphs of the section (one paragraph may hold two).
  paragraphs = 0
  while not paragraphs or len(b.html.tokens) - start < budget:
    if paragraphs % 4 == 3 and fam.name in ("infobox", "chronicle"):
      b.heading("H3", b.page.fill(rng.choice(SUBHEADINGS), plan.subject))
    take = facts[:rng.randint(1, 2)] if facts else []
    facts = facts[len(take):]
    if not paragraphs:
      b.topics[topic.name] = len(b.html.candidates)
    b.paragraph(topic, take)
    paragraphs += 1
    if paragraphs == 2 and fam.name == "lists":
      b.bullet_list([b.sentence(topic) for _ in range(rng.randint(3, 6))])
    elif paragraphs % 3 == 2 and rng.random() < 0.35:
      _data_table(b)
  for fact in facts:  # a short section: the rest in one more paragraph
    b.paragraph(topic, [fact])


SUBHEADINGS = ("Early period", "Modern era", "Recent years", "Since {year}", "Before {year}",
               "The {decade}s", "Developments", "Overview")
REF_PATTERNS = (
    "{person} ( {year} ) . The story of {s} . {town} : {company} . p . {num} .",
    "{person} ; {person2} ( {year} ) . \" {Word} and its people \" . Journal of {Word2} "
    "Studies . {num} ( {num2} ) : {num3} – {num4} .",
    "\" {s} \" . {Word} Gazette . {day} {month} {year} . Retrieved {day2} {month2} {year2} .",
    "{person} ( {year} ) . A short history of the {direction} . {town} : {company} .",
    "Report on the region ( Report ) . {town} : Office of Statistics . {year} .",
)
_NAVBOX_ROWS = {"Places": "town", "People": "person", "Firms": "company", "Rivers": "river",
                "Topics": "word"}


def _navbox(b: _Builder) -> None:
  rows = []
  for label in b.rng.sample(tuple(_NAVBOX_ROWS), 3):
    names: List[str] = []
    for _ in range(b.rng.randint(4, 9)):  # distinct names; six tries each
      for _ in range(6):
        name = b.page.slot(_NAVBOX_ROWS[label], "")
        if name not in names:
          names.append(name)
          break
    rows.append([("Th", label), ("Td", " · ".join(names))])
  b.table(rows)


def _render(page: _Page, plan: _Plan) -> _Builder:
  """The whole page, in the family's layout."""
  b = _Builder(page, plan)
  html, fam, rng = b.html, plan.family, b.rng
  html.open("HTML")
  html.open("BODY")
  b.heading("H1", plan.subject)
  n = len(plan.sections)
  budget = max(120, int(plan.target_tokens * 0.84) - 400) // n
  box_after = {"top": -2, "after_lead": -1, "middle": n // 2, "late": n - 2}[fam.box_at]
  if box_after == -2:
    _box(b)
  _lead(b)
  if box_after == -1:
    _box(b)
  for index, topic in enumerate(plan.sections):
    _section(b, index, topic, budget)
    if index == box_after:
      _box(b)
  if fam.name in ("lists", "chronicle"):
    b.heading("H2", "Timeline")
    b.bullet_list([f"{page.slot('year', '')} : " + page.fill(
        rng.choice(("{Agent} {deed}.", "{Agent} {deed} {place}.")), plan.subject)
        for _ in range(rng.randint(4, 10))])
  if fam.name != "almanac":
    b.heading("H2", "See also")
    b.bullet_list([f"List of {rng.choice(('places', 'people', 'firms', 'buildings'))} in "
                   f"{page.slot('country', '')}" for _ in range(rng.randint(2, 4))])
  b.heading("H2", rng.choice(("References", "Notes", "Sources")))
  b.bullet_list([page.fill(rng.choice(REF_PATTERNS), plan.subject)
                 for _ in range(max(3, int(plan.target_tokens * 0.1 / 24)))])
  if fam.name in ("infobox", "chronicle") or rng.random() < 0.3:
    _navbox(b)
  html.close("\n")
  html.close("\n")
  return b


# ----------------------------------------------------------------------------- unseen names


def _fixed_words() -> Set[str]:
  """The lower-case words of the fixed texts a record can hold besides names: the kinds'
  relations, topics and rows, the families' patterns, the background pools, the value word
  lists, tags and the url (slot names such as {town} left out)."""
  texts = lexicon.strings((KINDS, FAMILIES_BY_NAME, WHEN, AGENTS, DEEDS, ADJ, PLACES, GENERIC,
                           COMPOSED, SUBHEADINGS, REF_PATTERNS, OCCUPATIONS, INDUSTRIES,
                           LANDMARKS, PRODUCTS, SLOGANS, TITLE_WORDS, COMPANY_SUFFIXES, MONTHS,
                           DIRECTIONS, CANDIDATE_TAGS, "HTML BODY H1 H2 H3 Th Td", _URL))
  return {word.lower() for text in texts for word in re.findall(r"\w+", _SLOT_RE.sub(" ", text))}


# The names of the unseen splits: pools shaped like `LEXICON`'s; none of their words is a word of
# `LEXICON` or of the fixed texts (built from a seed of its own: `LEXICON` is unchanged).
_UNSEEN_LEXICON_SEED = 40_127
UNSEEN_LEXICON = lexicon.build_unseen_lexicon(LEXICON, _UNSEEN_LEXICON_SEED, _SOUNDS, _POOLS,
                                              max_length=10, reserved=_fixed_words())
# The `names` argument of `generate_examples` -> the lexicon the names are drawn from.
NAME_LEXICONS = {"seen": LEXICON, "unseen": UNSEEN_LEXICON}

# ----------------------------------------------------------------------------- examples


def _long_answer(candidates: List[dict], index: int) -> dict:
  """The candidate's offsets, or all -1 for a null long answer (`index` -1)."""
  offsets = ("start_byte", "end_byte", "start_token", "end_token")
  return {**{k: candidates[index][k] if index >= 0 else -1 for k in offsets},
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


def _occurrences(tokens: List[dict], words: List[str]) -> int:
  """How often `words` occur as consecutive tokens."""
  texts = [t["token"] for t in tokens]
  return sum(texts[i:i + len(words)] == words for i in range(len(texts) - len(words) + 1))


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

  def draw(self, signed: bool) -> int:
    """A fresh id (negative half the time when `signed`, as example ids are)."""
    while True:
      value = self.rng.getrandbits(63) or 1
      if signed and self.rng.random() < 0.5:
        value = -value
      if value not in self.taken:
        self.taken.add(value)
        return value


class _Retry(Exception):
  """A page broke a consistency check; it is drawn again."""


def _question(page: _Page, plan: _Plan) -> Tuple[str, Optional[str]]:
  """The question text (lower case) and, for yes/no, the value it names."""
  rng, fam, target = page.rng, plan.family, plan.target
  if isinstance(target, Topic):
    return _format(rng.choice(fam.topic_questions),
                   {"t": target.noun, "s": plan.subject}).lower(), None
  noun = rng.choice(target.nouns)
  value, patterns = None, fam.questions if target.cls == "noun" else fam.event_questions
  if plan.answer == "yes_no":
    value = plan.values[target.name] if rng.random() < 0.5 else page.fresh(target.value)
    patterns = fam.yes_no
  words = _words(target, plan.subject, value or "", noun, plan.kind.person)
  return _format(rng.choice(patterns), words).lower(), value


def _gold(plan: _Plan, b: _Builder, yes_no_value: Optional[str]) -> dict:
  candidates, tokens, rng = b.html.candidates, b.html.tokens, b.rng
  target = plan.target
  if plan.answer == "null":
    return _annotation(_long_answer(candidates, -1))
  if plan.answer == "long":
    return _annotation(_long_answer(candidates, b.topics[target.name]))
  inner, top, span = b.facts[target.name]
  value = plan.values[target.name]
  words = [t["token"] for t in tokens[span[0]:span[1]]]
  if words != _TOKEN_RE.findall(value) or _occurrences(tokens, words) != 1:
    raise _Retry(f"value {value!r} must be stated exactly once")
  tag = tokens[candidates[inner]["start_token"]]["token"]
  # Long answers are mostly top-level: a table row is answered by its table 90% of the time,
  # a list item by its list half of the time.
  share = {"<Tr>": 0.9, "<Li>": 0.5}.get(tag, 1.0)
  index = top if rng.random() < share else inner
  long_answer = _long_answer(candidates, index)
  if plan.answer == "short":
    return _annotation(long_answer, [_short_answer(tokens, span)])
  yes = yes_no_value == value
  if not yes and _occurrences(tokens, _TOKEN_RE.findall(yes_no_value)):
    raise _Retry("a NO value must not occur on the page")
  return _annotation(long_answer, yes_no="YES" if yes else "NO")


def _example(rng: random.Random, ids: _Ids, fam: Family, num_annotations: int,
             lex: lexicon.Lexicon, preset: Preset) -> Tuple[dict, dict]:
  """One record in the original NQ format, and what it was made from (for tests)."""
  answer = _draw_kind(rng, preset.kind_shares)
  kind = rng.choice(KINDS)
  for _ in range(_MAX_TRIES):
    page = _Page(rng, lex)
    plan = _plan(page, kind, fam, answer, preset)
    question, yes_no_value = _question(page, plan)
    b = _render(page, plan)
    try:
      gold = _gold(plan, b, yes_no_value)
      break
    except _Retry:
      pass
  else:
    raise RuntimeError("could not draw a consistent page")
  html = b.html
  variants = [gold] if num_annotations == 1 else _dev_variants(
      rng, gold, answer, html.candidates, num_annotations)
  url = _URL.format(title=urllib.parse.quote(plan.subject.replace(" ", "_")),
                    oldid=rng.randint(10**8, 10**9 - 1))
  record = {
      "example_id": ids.draw(signed=True),
      "question_text": question,
      "question_tokens": question.split(),
      "document_title": plan.subject,
      "document_url": url,
      "document_html": html.html,
      "document_tokens": html.tokens,
      "long_answer_candidates": html.candidates,
      "annotations": [{"annotation_id": ids.draw(signed=False), **v} for v in variants],
  }
  target = plan.target
  meta = {"family": fam.name, "kind": answer, "entity": kind.name,
          "target": target.name, "value": plan.values.get(target.name),
          "nouns": target.nouns if isinstance(target, Rel) else (target.noun,),
          "label": target.label if isinstance(target, Rel) else target.heading,
          "vp": target.vp if isinstance(target, Rel) else "", "asked": yes_no_value}
  return record, meta


def generate_with_meta(num: int, seed: int = 0, split: str = "train", names: str = "seen",
                       families: Optional[Sequence[str]] = None,
                       preset: str = "benchmark") -> List[Tuple[dict, dict]]:
  """As `generate_examples`, with each record's family, answer kind and target (for tests;
  the records themselves carry no family id)."""
  knobs = writer.preset_settings(PRESET_SETTINGS, preset)
  families = knobs.train_families if families is None else families
  writer.check_generator_arguments(num, split, SPLITS, names, sorted(NAME_LEXICONS), families,
                                   FAMILIES_BY_NAME)
  rng = random.Random(seed)
  ids = _Ids(rng)
  count = 1 if split == "train" else NUM_DEV_ANNOTATIONS
  lex = NAME_LEXICONS[names]
  fams = [FAMILIES_BY_NAME[f] for f in families]
  return [_example(rng, ids, rng.choice(fams), count, lex, knobs) for _ in range(num)]


def generate_examples(num: int, seed: int = 0, split: str = "train", names: str = "seen",
                      families: Optional[Sequence[str]] = None,
                      preset: str = "benchmark") -> List[dict]:
  """`num` records in the original NQ format.

  Args:
    num: How many records.
    seed: The same arguments give identical records.
    split: "train" gives 1 annotation per record, every other split 5 (as NQ dev).
    names: "seen" draws names from `LEXICON`, "unseen" from `UNSEEN_LEXICON`.
    families: The template families to draw from (each record uses one); None: the preset's
      train families (`TRAIN_FAMILIES` in the benchmark preset).
    preset: One of `PRESETS`: "benchmark" (real NQ length) or "short" (about 330 words).
  """
  return [record for record, _ in generate_with_meta(num, seed, split, names, families, preset)]


# `split_plan(num_train, num_dev, seed, preset, train_families)` and
# `ensure_demo_data(directory, num_train, num_dev, seed, train_families, preset)`: the five
# splits and the folder that holds them (`writer.DemoData`).
_DEMO_DATA = writer.DemoData("nq", GENERATOR_VERSION, generate_examples,
                             functools.partial(writer.write_jsonl, compress=True),
                             PRESET_SETTINGS, SEED_OFFSETS, FILENAMES, INFO_FILENAME)
split_plan, ensure_demo_data = _DEMO_DATA.split_plan, _DEMO_DATA.ensure


def to_simplified(record: dict) -> dict:
  """The simplified-train form of an original record (same token indices, no html or bytes), as
  in NQ's simplified training file."""
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
          "long_answer": {k: a["long_answer"][k]
                          for k in ("start_token", "end_token", "candidate_index")},
          "short_answers": [{k: s[k] for k in ("start_token", "end_token")}
                            for s in a["short_answers"]],
          "yes_no_answer": a["yes_no_answer"],
      } for a in record["annotations"]],
  }


# ----------------------------------------------------------------------------- statistics


def text_of(record: dict) -> str:
  """The text a model reads: the question and the page's non-html tokens."""
  return " ".join([record["question_text"]] + [t["token"] for t in record["document_tokens"]
                                              if not t["html_token"]])


def length_statistics(records: Sequence[dict]) -> dict:
  """Words per item (whitespace tokens of the question and of the page text, tags left out;
  NQ tokens, so punctuation marks count), document tokens with tags, candidates, answer kinds."""
  kinds = {"short": 0, "yes_no": 0, "long": 0, "null": 0}
  for r in records:
    answered = [a for a in r["annotations"] if a["long_answer"]["candidate_index"] >= 0]
    if len(answered) < min(2, len(r["annotations"])):
      kinds["null"] += 1
    elif any(a["yes_no_answer"] != "NONE" for a in answered):
      kinds["yes_no"] += 1
    elif any(a["short_answers"] for a in answered):
      kinds["short"] += 1
    else:
      kinds["long"] += 1
  candidates = [r["long_answer_candidates"] for r in records]
  top_level = [sum(c["top_level"] for c in cs) for cs in candidates]
  return {"items": len(records),
          **writer.spread("words", [len(text_of(r).split()) for r in records]),
          **writer.spread("document_tokens", [len(r["document_tokens"]) for r in records]),
          **writer.spread("candidates", [len(c) for c in candidates]),
          **writer.spread("top_level_candidates", top_level),
          "kinds": {k: v / len(records) for k, v in kinds.items()}}
