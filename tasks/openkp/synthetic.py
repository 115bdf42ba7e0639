"""Small synthetic OpenKP (MS MARCO OpenKeyPhrase) data in the official JSONL format.

Why: tests and a CPU demo need keyphrase-extraction pages without downloading the real release.
Each line is one web page: `url` (the key), `text` (its words joined by single spaces, letters
and digits only), `VDOM` (a JSON string: the page's text elements in reading order, each with an
`Id`, its `text`, word offsets `start_idx`/`end_idx` into `text.split(" ")` (end exclusive) and
20 visual features: x, width, y, height, is_block, is_inline, has_heading, is_leaf, font_size,
is_bold of the element, then the same ten of its parent) and `KeyPhrases` (a list of 1 to 3
phrases, each a list of lower-case words; `empty_rate` of the pages have none). The elements
never overlap and together cover every word of `text` exactly once.

Every page is about one invented topic of four kinds: a product review, a travel guide, a
biography or an event announcement. Its entities (brands, models, towns, landmarks, dishes,
people, works, venues, awards, ...) combine one fixed lexicon of invented words (drawn from its
own seed, the same for every data seed, ASCII letters only) with common English words. A page
reads from top to bottom: a navigation bar (the site's name and menu words, small inline text),
a bold title heading, a byline, 2 to 5 sections (a bold heading, then paragraphs with some bold
inline spans, sometimes an "Advertisement" slot), a "related articles" list with a newsletter
line and a footer (copyright and policy links). Pages have 150 to `max_words` (700) words and
15 to 80 elements; boxes are plausible pixel values (x 0-1200, width 50-1200, height 10-200,
y growing down the page in reading order, font size 11-40, flags 0 or 1).

The 1 to 3 key phrases (1 to 5 words, mostly 1 to 3) are entities of the page's topic. They are
learnable from visual and text cues: on about nine pages in ten every key phrase sits in the
title, a section heading or a bold span, and each one recurs 2 to 5 times in the body. It is not
trivial: the other entities of the page also get headings, bold spans and related links, the main
entity is sometimes not a key phrase although it is in the title, and boilerplate (the site's
name in the navigation bar, byline and footer, stock sentences such as "one of the best") makes
frequent n-grams that are not key phrases. The navigation bar comes first, so the first words
of a page are never a key phrase. Some pages write the menu, headings or bold spans in capitals;
titles and headings use title case, so the text's case often differs from the lower-case
`KeyPhrases`.

The same arguments always give identical pages (one `random.Random(seed)` for the content and
one derived from the seed for the empty and duplicate draws, so those rates change only the
`KeyPhrases` and `url` fields). `ensure_demo_data` uses `seed` for train and
`seed + DEV_SEED_OFFSET` for dev, so their pages differ. Pure Python: importing this module or
generating pages never loads TensorFlow.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import random
from typing import Callable, Dict, List, Optional, Sequence, Tuple

GENERATOR_VERSION = 1
DEV_SEED_OFFSET = 1_000_003
TRAIN_FILENAME = "OpenKPTrain.jsonl"
DEV_FILENAME = "OpenKPDev.jsonl"
INFO_FILENAME = "OpenKPSyntheticInfo.json"
MAX_ELEMENTS = 512  # the most VDOM elements a page may have (the real data's limit)
MAX_PAGE_ELEMENTS = 80  # the most these pages have
MIN_WORDS = 150  # the fewest words of a page
MIN_MAX_WORDS = 200  # the smallest `max_words` accepted
_BOX_FIELDS = ("x", "width", "y", "height", "is_block", "is_inline", "has_heading", "is_leaf",
               "font_size", "is_bold")
FEATURE_NAMES = _BOX_FIELDS + tuple("parent_" + name for name in _BOX_FIELDS)
STOPWORDS = frozenset("""
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each even ever every
    few for from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just least less may me might more most much must my myself no nor not
    now of off on once only or other our ours ourselves out over own per please quite rather same
    she should since so some still such than that the their theirs them themselves then there
    these they this those though through to too under until up upon us very was we well were what
    when where whether which while who whom whose why will with within without would yet you your
    yours yourself yourselves
    """.split())

KINDS = ("product", "place", "person", "event")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")

# ----------------------------------------------------------------------------- English words

# Entity parts. Title-case parts are written capitalised in running text, lower-case ones not.
PRODUCT_ADJECTIVES = ("solar", "electric", "folding", "compact", "cordless", "portable",
                      "wireless", "ceramic", "smart", "rechargeable")
PRODUCT_NOUNS = ("kettle", "bicycle", "lamp", "grinder", "speaker", "heater", "blender",
                 "camera", "drill", "scooter", "backpack", "tent", "projector", "fan")
PRODUCT_FEATURES = (("battery", "pack"), ("carbon", "frame"), ("touch", "panel"),
                    ("safety", "lock"), ("charging", "dock"), ("noise", "filter"),
                    ("heat", "shield"), ("water", "tank"), ("quick", "release", "clamp"),
                    ("dual", "speed", "motor"))
STORE_WORDS = ("Outlet", "Market", "Store", "Depot")
LANDMARKS = ("Lighthouse", "Bridge", "Castle", "Harbour", "Abbey", "Tower", "Gardens")
REGION_WORDS = ("Valley", "Coast", "Highlands", "Islands", "Forest")
DISHES = ("stew", "pie", "bread", "cake", "soup", "dumplings")
FESTIVAL_WORDS = (("Lantern", "Festival"), ("Summer", "Music", "Festival"), ("Harvest", "Fair"))
OCCUPATIONS = ("cellist", "novelist", "architect", "photographer", "sculptor", "chef",
               "botanist", "filmmaker")
WORK_ADJECTIVES = ("Silent", "Golden", "Northern", "Quiet", "Hidden", "Distant", "Paper", "Salt")
WORK_NOUNS = ("Harbour", "Winter", "Letters", "Mirror", "Lantern", "Orchard", "Voyage", "Rooms")
GROUP_WORDS = ("Quartet", "Ensemble", "Players", "Collective")
EVENT_WORDS = (("Jazz", "Festival"), ("Film", "Week"), ("Food", "Festival"), ("Book", "Fair"),
               ("City", "Marathon"))
VENUE_WORDS = ("Arena", "Hall", "Park", "Pavilion")
TICKETS = (("early", "bird", "ticket"), ("weekend", "pass"), ("family", "ticket"),
           ("day", "pass"))
SITE_SUFFIXES = {
    "product": ("Reviews", "Tech", "Gear", "Home"),
    "place": ("Travel", "Guide", "Journeys", "Trips"),
    "person": ("News", "Times", "Daily", "Post"),
    "event": ("Events", "Daily", "Tonight", "Weekly"),
}

# Menus: "Home" first, then 4 to 6 of the common and the kind's words.
MENU_COMMON = ("About", "Contact", "Login", "Blog", "Search", "Shop", "Help", "Subscribe")
MENU_KIND = {
    "product": ("Reviews", "Deals", "Guides", "Compare"),
    "place": ("Destinations", "Hotels", "Maps", "Tips"),
    "person": ("People", "Culture", "Opinion", "Archive"),
    "event": ("Calendar", "Tickets", "Venues", "Listings"),
}

# Templates: "{x}" is the entity, "{n}" a small number, "{year}" a year, "{site}" the site.
TITLES = {
    "product": ("{x} Review", "{x} Review {year}", "Hands On With the {x}",
                "Is the {x} Worth It", "The {x} Tested", "Our Verdict on {x}"),
    "place": ("Travel Guide to {x}", "{x} Travel Guide", "A Weekend in {x}",
              "Things to Do in {x}", "Visiting {x}", "Why We Love {x}"),
    "person": ("{x} Biography", "The Life of {x}", "Who Is {x}", "{x} Interview",
               "Remembering {x}", "Meet {x}"),
    "event": ("{x} {year}", "{x} {year} Guide", "Everything About {x}",
              "{x} Returns This Summer", "What to Expect at {x}"),
}
GENERIC_TITLES = {
    "product": ("Our Latest Product Review", "This Week in Gadgets", "Tested This Month"),
    "place": ("Weekend Travel Notes", "Where to Go Next", "Our Favourite Trip"),
    "person": ("Profile of the Week", "Portrait Series", "Lives Worth Telling"),
    "event": ("What Is On This Weekend", "Dates for Your Diary", "Coming Up Soon"),
}
ENTITY_HEADINGS = ("{x}", "About {x}", "Why {x} Matters", "More About {x}", "{x} at a Glance",
                   "A Closer Look at {x}", "{x} Explained", "Notes on {x}")
GENERIC_HEADINGS = {
    "product": ("Design and Build", "Price and Availability", "Battery Life", "Final Verdict",
                "Pros and Cons", "Specifications", "Overview", "Final Thoughts"),
    "place": ("Getting There", "Where to Stay", "Things to Do", "Food and Drink",
              "When to Visit", "Practical Tips", "Overview", "Final Thoughts"),
    "person": ("Early Life", "Career", "Later Years", "Awards", "Legacy", "Personal Life",
               "Overview", "Final Thoughts"),
    "event": ("Tickets", "Programme", "Getting There", "Food and Drink", "Schedule",
              "Questions and Answers", "Overview", "Final Thoughts"),
}
# Mention sentences by the entity's role, then ones that fit any entity. "{a}" is "a" or "an".
MENTIONS = {
    "person": ("{x} spoke to us about the early days", "friends describe {x} as patient and "
               "curious", "{x} keeps a busy schedule", "critics have praised {x} for years",
               "{x} grew up far from the big cities", "the work of {x} changed how people "
               "see the field"),
    "brand": ("{x} has made tools and home goods for decades", "the team at {x} answered all "
              "our questions", "{x} is a brand many readers trust", "{x} sells mostly through "
              "small shops"),
    "product": ("we tested the {x} for {n} weeks at home", "the {x} is easy to use and feels "
                "solid", "owners say the {x} holds up well", "you can order the {x} online or "
                "in store", "the {x} comes with a {n} year warranty"),
    "feature": ("the {x} works better than expected", "we liked the {x} most of all",
                "a good {x} makes a real difference", "the {x} can be replaced at home"),
    "shop": ("{x} had the best price we found", "we bought our test unit at {x}",
             "{x} offers free returns for {n} days"),
    "place": ("many visitors say {x} is worth the trip", "{x} is easy to reach by bus",
              "plan at least a day for {x}", "{x} gets busy on summer weekends"),
    "landmark": ("the views from {x} are famous", "a morning walk to {x} is a good start",
                 "{x} is open to visitors most days", "entry to {x} is free on Sundays"),
    "org": ("{x} was founded by a small group of friends", "{x} brings people together every "
            "season", "members of {x} meet every week", "{x} has a small office in the old "
            "town"),
    "award": ("{x} is given once a year", "winning {x} brought a lot of attention",
              "the jury of {x} is known to be strict", "{x} came with a small cash prize"),
    "work": ("{x} was written over {n} years", "many readers call {x} a turning point",
             "{x} has been translated into {n} languages", "a new edition of {x} is planned"),
    "event": ("{x} is expected to draw a big crowd", "the organisers of {x} promise a full "
              "programme", "{x} starts on a Friday evening", "last year {x} sold out in {n} "
              "days", "{x} has grown every year"),
    "dish": ("you should try {x} at least once", "every family has its own recipe for {x}",
             "{x} is served in most cafes", "a bowl of {x} costs very little"),
    "occupation": ("the life of {a} {x} is rarely quiet", "training as {a} {x} takes many "
                   "years", "few people know what {a} {x} really does", "being {a} {x} means "
                   "long days"),
    "ticket": ("{a} {x} costs less if you book early", "you can buy {a} {x} at the gate",
               "the {x} includes all concerts", "we recommend the {x} for most visitors"),
}
COMMON_MENTIONS = ("people keep talking about {x}", "there is a lot to say about {x}",
                   "{x} is worth a closer look", "readers often ask us about {x}",
                   "we will come back to {x} below", "{x} is one of the best known names "
                   "around here")
FILLERS = {
    "product": ("the battery lasts about {n} hours", "shipping takes {n} to {n} days",
                "the box includes a manual and a cable", "build quality is good for the price",
                "customer service answered within a day", "it comes in black white and blue",
                "setup takes only a few minutes", "the buttons are large and clearly marked",
                "cleaning it takes a minute or two", "it weighs a little more than we hoped"),
    "place": ("the weather is mild from May to September", "the train from the city takes "
              "about {n} hours", "local guides offer walking tours every morning",
              "hotels fill up quickly in summer", "the old town is small enough to explore "
              "on foot", "most shops close early on Sundays", "bring good shoes and a jacket",
              "the tourist office has free maps", "boats leave the harbour every hour",
              "cash is still useful in small villages"),
    "person": ("the early years were not easy", "critics were divided at first",
               "the family moved several times", "many fans still write letters",
               "in interviews the answers are short and careful", "the first big break came "
               "in {year}", "a new project is planned for next year", "long walks are part "
               "of every working day", "the studio is full of old notebooks",
               "success came slowly and then all at once"),
    "event": ("doors open at {n} pm", "tickets sell out fast every year", "there will be food "
              "stalls and games for children", "parking is limited so take the bus",
              "the full programme will be published next month", "volunteers are still "
              "needed", "entry is free for children under {n}", "the main stage is next to "
              "the river", "bring a blanket for the evening shows",
              "the last bus leaves at midnight"),
}
COMMON_FILLERS = ("we think this is one of the best choices this year", "for more information "
                  "please contact us", "click here to read the full story", "prices and "
                  "details may change without notice", "sign up for our newsletter to get "
                  "the latest news", "this article was updated with new information",
                  "as always we would love to hear what you think", "here is what you need "
                  "to know", "it is one of the best things we have seen in a while",
                  "read more about this in our guide", "the best part is the details",
                  "share this story with your friends", "our editors check every fact",
                  "we may earn a small fee from links on this page", "leave a comment below "
                  "and tell us your story", "the photos on this page are our own")
FILLER_REPEATS = 2  # a stock sentence occurs at most this often on one page
RELATED = ("More on {x}", "Top {n} Facts About {x}", "Inside {x}", "{x} in Pictures",
           "The Story of {x}")
GENERIC_RELATED = ("Top {n} Picks for {year}", "Our Best Stories of {year}", "Readers Choice "
                   "{year}", "The Best of the Week")
NEWSLETTER = ("Get the {site} newsletter", "Subscribe to {site} for free",
              "Follow {site} for more stories")
RELATED_HEADINGS = ("Related Articles", "You May Also Like", "Popular Posts", "More Stories")
FOOTER_LINKS = ("All rights reserved", "Privacy Policy", "Terms of Use", "Cookie Settings",
                "Contact Us", "Follow Us")
_SMALL_WORDS = ("a", "an", "and", "at", "for", "in", "is", "it", "of", "on", "the", "to",
                "with")


_TEXTS = (MONTHS, PRODUCT_ADJECTIVES, PRODUCT_NOUNS, PRODUCT_FEATURES, STORE_WORDS, LANDMARKS,
          REGION_WORDS, DISHES, FESTIVAL_WORDS, OCCUPATIONS, WORK_ADJECTIVES, WORK_NOUNS,
          GROUP_WORDS, EVENT_WORDS, VENUE_WORDS, TICKETS, SITE_SUFFIXES, MENU_COMMON, MENU_KIND,
          TITLES, GENERIC_TITLES, ENTITY_HEADINGS, GENERIC_HEADINGS, MENTIONS, COMMON_MENTIONS,
          FILLERS, COMMON_FILLERS, RELATED, GENERIC_RELATED, NEWSLETTER, RELATED_HEADINGS,
          FOOTER_LINKS, ("Home Advertisement Copyright By Staff Old Coastal Hiking Trail River "
                         "Lifetime Achievement Prize Academy of Fine Arts Society Night Market "
                         "Open Air Cinema Design Award International Product",))


def _english_words() -> frozenset:
  """Every English word the module writes, lower-case (the invented lexicon avoids them)."""
  texts: List[str] = []
  stack: List[object] = [_TEXTS]
  while stack:
    item = stack.pop()
    if isinstance(item, str):
      texts.append(item)
    elif isinstance(item, dict):
      stack.extend(item.values())
    else:
      stack.extend(item)
  return STOPWORDS | frozenset(w.strip("{}").lower() for text in texts for w in text.split())


# ----------------------------------------------------------------------------- lexicon

_LEXICON_SEED = 6211
_ONSETS = ("b", "br", "d", "dr", "f", "g", "gr", "h", "k", "kr", "l", "m", "n", "p", "r", "s",
           "st", "t", "th", "v", "z", "sk", "tr", "w")
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o", "ai", "ei", "ou")
_CODAS = ("", "", "", "n", "r", "l", "s", "nd", "rk", "lt")
# Pool -> (size, syllables, endings, capitalised). No word occurs in two pools.
_POOLS = {
    "brand": (40, 2, ("", "a", "ex", "on", "ia"), True),
    "model": (24, 2, ("", "a", "o", "is"), True),
    "town": (60, 1, ("vik", "holt", "mere", "by", "stad", "dal", "ford", "wick"), True),
    "word": (70, 2, ("",), True),
    "food": (24, 2, ("",), False),
    "first": (40, 2, ("", "a", "o", "en", "ine"), True),
    "last": (50, 1, ("sen", "berg", "ley", "ton", "ard", "mont"), True),
    "site": (30, 2, ("",), True),
}


def _syllable(rng: random.Random) -> str:
  """One onset-vowel-coda syllable."""
  return rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)


def _build_lexicon() -> Dict[str, Tuple[str, ...]]:
  """The fixed invented-word pools, drawn from their own seed (the same for every data seed)."""
  rng = random.Random(_LEXICON_SEED)
  english = _english_words()
  seen = set()
  lexicon = {}
  for pool, (size, syllables, endings, capitalised) in _POOLS.items():
    names: List[str] = []
    while len(names) < size:
      word = "".join(_syllable(rng) for _ in range(syllables)) + rng.choice(endings)
      if not 4 <= len(word) <= 9 or word in seen or word in english:
        continue
      seen.add(word)
      names.append(word.capitalize() if capitalised else word)
    lexicon[pool] = tuple(names)
  return lexicon


LEXICON = _build_lexicon()

# ----------------------------------------------------------------------------- entities

Phrase = Tuple[str, ...]
Entity = Tuple[Phrase, str]  # (words as written in running text, role in MENTIONS)


class _Names:
  """Draws lexicon words without repeats within one page."""

  def __init__(self, rng: random.Random):
    self.rng = rng
    self.used = set()

  def pick(self, pool: str) -> str:
    word = self.rng.choice(LEXICON[pool])
    while word in self.used:
      word = self.rng.choice(LEXICON[pool])
    self.used.add(word)
    return word


def _product_entities(rng: random.Random, names: _Names) -> List[Entity]:
  """Main product or brand, then model, feature, award, shop and a rival brand."""
  item = ((rng.choice(PRODUCT_ADJECTIVES), rng.choice(PRODUCT_NOUNS)), "product")
  brand = ((names.pick("brand"),), "brand")
  length = rng.choice((3, 4, 5))
  if length == 3:
    award = (names.pick("word"), "Design", "Award")
  elif length == 4:
    award = (names.pick("town"), names.pick("word"), "Design", "Award")
  else:
    award = (names.pick("word"), "International", "Product", "Design", "Award")
  model = (names.pick("model"), str(rng.choice((2, 3, 5, 7, 9, 12, 300, 500, 700))))
  others = [(model, "product"), (rng.choice(PRODUCT_FEATURES), "feature"), (award, "award"),
            ((names.pick("word"), rng.choice(STORE_WORDS)), "shop"),
            ((names.pick("brand"),), "brand")]
  return [item, brand] + others if rng.random() < 0.6 else [brand, item] + others


def _place_entities(rng: random.Random, names: _Names) -> List[Entity]:
  """Main town, then landmark, region, dish, river, festival, trail, a neighbouring town."""
  landmark = (names.pick("word"), rng.choice(LANDMARKS))
  if rng.random() < 0.3:
    landmark = ("Old",) + landmark
  if rng.random() < 0.5:
    trail = (names.pick("word"), names.pick("word"), "Coastal", "Hiking", "Trail")
  else:
    trail = (names.pick("word"), "Hiking", "Trail")
  return [((names.pick("town"),), "place"), (landmark, "landmark"),
          ((names.pick("word"), rng.choice(REGION_WORDS)), "place"),
          ((names.pick("food"), rng.choice(DISHES)), "dish"),
          ((names.pick("word"), "River"), "place"),
          ((names.pick("word"),) + rng.choice(FESTIVAL_WORDS), "event"), (trail, "landmark"),
          ((names.pick("town"),), "place")]


def _person_entities(rng: random.Random, names: _Names) -> List[Entity]:
  """Main person, then work, group, award, home town, occupation, colleague, school."""
  work = (rng.choice(WORK_ADJECTIVES), rng.choice(WORK_NOUNS))
  if rng.random() < 0.5:
    work = ("The",) + work
  if rng.random() < 0.5:
    award = (names.pick("word"), "Prize")
  else:
    award = (names.pick("word"), "Lifetime", "Achievement", "Award")
  return [((names.pick("first"), names.pick("last")), "person"), (work, "work"),
          ((names.pick("word"), rng.choice(GROUP_WORDS)), "org"), (award, "award"),
          ((names.pick("town"),), "place"), ((rng.choice(OCCUPATIONS),), "occupation"),
          ((names.pick("first"), names.pick("last")), "person"),
          ((names.pick("town"), "Academy", "of", "Fine", "Arts"), "org")]


def _event_entities(rng: random.Random, names: _Names) -> List[Entity]:
  """Main event, then venue, organiser, headliner, sponsor, ticket, a side event."""
  if rng.random() < 0.5:
    organiser = (names.pick("word"), "Society")
  else:
    organiser = (names.pick("word"), "Arts", "Foundation")
  if rng.random() < 0.5:
    side = (names.pick("word"), "Night", "Market")
  else:
    side = (names.pick("word"), "Open", "Air", "Cinema", "Night")
  return [((names.pick("town"),) + rng.choice(EVENT_WORDS), "event"),
          ((names.pick("word"), rng.choice(VENUE_WORDS)), "landmark"), (organiser, "org"),
          ((names.pick("first"), names.pick("last")), "person"),
          ((names.pick("brand"),), "brand"), (rng.choice(TICKETS), "ticket"), (side, "event")]


_ENTITY_MAKERS: Dict[str, Callable[[random.Random, _Names], List[Entity]]] = {
    "product": _product_entities, "place": _place_entities, "person": _person_entities,
    "event": _event_entities}
# Weights for picking the non-main key phrases by length (mostly 1 to 3 words).
_LENGTH_WEIGHTS = {1: 3.0, 2: 4.0, 3: 2.0, 4: 0.7, 5: 0.5}


def _lower(phrase: Sequence[str]) -> Phrase:
  return tuple(w.lower() for w in phrase)


def _contains(outer: Sequence[str], inner: Sequence[str]) -> bool:
  """Whether `inner` occurs in `outer` as consecutive words (case-insensitive)."""
  outer, inner = _lower(outer), _lower(inner)
  n = len(inner)
  return any(outer[i:i + n] == inner for i in range(len(outer) - n + 1))


def _distinct(entities: List[Entity]) -> List[Entity]:
  """Drops entities whose words repeat, contain or are contained in an earlier one's."""
  kept: List[Entity] = []
  for phrase, role in entities:
    if not any(_contains(phrase, p) or _contains(p, phrase) for p, _ in kept):
      kept.append((phrase, role))
  return kept


# ----------------------------------------------------------------------------- page plan


@dataclasses.dataclass
class _Sentence:
  """Words of one sentence; `entity` (an index) is mentioned at `mention` (a word slice)."""
  words: List[str]
  entity: Optional[int] = None
  mention: Tuple[int, int] = (0, 0)
  bold: bool = False


@dataclasses.dataclass
class _Section:
  """A heading (about entity `subject`, if any), paragraphs and maybe an advert slot after."""
  heading: List[str]
  subject: Optional[int]
  paragraphs: List[List[_Sentence]]
  advert: bool = False


@dataclasses.dataclass
class _Plan:
  """Everything of one page before layout."""
  kind: str
  site: List[str]
  entities: List[Phrase]  # the main entity (the title's usual subject) first
  keys: List[int]
  victim: Optional[int]  # a key phrase kept out of headings and bold spans (no cue)
  menu: List[str]
  title: List[str]
  title_subject: Optional[int]
  byline: List[str]
  sections: List[_Section]
  related_heading: List[str]
  related: List[List[str]]
  newsletter: List[str]
  footer: List[List[str]]
  capital_headings: bool
  capital_bold: bool


def _title_case(words: Sequence[str]) -> List[str]:
  """Capitalises each word's first letter except small words after the first."""
  out = []
  for i, word in enumerate(words):
    out.append(word if i and word.lower() in _SMALL_WORDS else word[:1].upper() + word[1:])
  return out


def _fill(rng: random.Random, template: str, site: Sequence[str],
          x: Sequence[str] = ()) -> Tuple[List[str], Tuple[int, int]]:
  """The template's words and the word slice where `x` went ("{a}" must come before "{x}")."""
  words: List[str] = []
  span = (0, 0)
  for token in template.split():
    if token == "{a}":  # the article before "{x}"
      words.append("an" if x and x[0][:1].lower() in "aeiou" else "a")
    elif token == "{x}":
      span = (len(words), len(words) + len(x))
      words.extend(x)
    elif token == "{n}":
      words.append(str(rng.randint(2, 12)))
    elif token == "{year}":
      words.append(str(rng.randint(2012, 2024)))
    elif token == "{site}":
      words.extend(site)
    else:
      words.append(token)
  return words, span


def _sentence(rng: random.Random, template: str, site: Sequence[str],
              entity: Optional[int] = None, phrase: Phrase = ()) -> _Sentence:
  """A sentence with its first letter capitalised."""
  words, span = _fill(rng, template, site, phrase)
  words[0] = words[0][:1].upper() + words[0][1:]
  return _Sentence(words, entity, span)


def _choose_keys(rng: random.Random, entities: List[Phrase]) -> List[int]:
  """1 to 3 key phrases; usually the main entity (index 0) is one of them."""
  count = rng.choices((1, 2, 3), weights=(3, 4, 3))[0]
  keys = [0] if rng.random() < 0.85 else []
  pool = list(range(1, len(entities)))
  while len(keys) < count:
    weights = [_LENGTH_WEIGHTS[len(entities[i])] for i in pool]
    pick = rng.choices(pool, weights=weights)[0]
    pool.remove(pick)
    keys.append(pick)
  return keys


def _mention_counts(rng: random.Random, entities: List[Phrase], keys: List[int],
                    body_words: int) -> List[int]:
  """Body mentions per entity: key phrases recur more, scaled down for short pages."""
  counts = []
  for i in range(len(entities)):
    if i in keys:
      counts.append(rng.randint(2, 5) if i == 0 else rng.randint(2, 4))
    elif i == 0:
      counts.append(rng.randint(2, 4))
    else:
      counts.append(rng.choices((0, 1, 2, 3, 4), weights=(2, 4, 3, 2, 1.5))[0])
  limit = max(2 * len(keys), int(body_words * 0.75 / 10))
  while sum(counts) > limit:
    # Drop a mention of the most-mentioned entity that can spare one (key phrases keep 2).
    spare = [i for i in range(len(counts)) if counts[i] > (2 if i in keys else 0)]
    if not spare:
      break
    counts[max(spare, key=lambda i: (counts[i] - (2 if i in keys else 0), -i))] -= 1
  return counts


def _plan(rng: random.Random, max_words: int) -> _Plan:
  """Draws one page: topic, entities, key phrases, text and which spans are bold."""
  kind = rng.choice(KINDS)
  names = _Names(rng)
  site = [names.pick("site"), rng.choice(SITE_SUFFIXES[kind])]
  made = _distinct(_ENTITY_MAKERS[kind](rng, names))
  entities, roles = [phrase for phrase, _ in made], [role for _, role in made]
  keys = _choose_keys(rng, entities)
  victim = None
  if rng.random() < 0.1:  # one key phrase gets no visual cue on this page
    victim = rng.choice([k for k in keys if k != 0] or keys)
  cue = [i for i in range(len(entities)) if i != victim]

  menu = ["Home"] + rng.sample(MENU_COMMON + MENU_KIND[kind], rng.randint(4, 6))
  if rng.random() < 0.25:
    menu = [w.upper() for w in menu]
  title_subject = 0 if victim != 0 else None
  if title_subject is None:
    title, _ = _fill(rng, rng.choice(GENERIC_TITLES[kind]), site)
  else:
    title, _ = _fill(rng, rng.choice(TITLES[kind]), site, entities[0])
  title = _title_case(title)
  if rng.random() < 0.5:
    byline = ["By", names.pick("first"), names.pick("last")]
  else:
    byline = ["By"] + site + ["Staff"]
  byline += [rng.choice(MONTHS), str(rng.randint(1, 28)), str(rng.randint(2012, 2024))]

  fixed = len(site) + len(menu) + len(title) + len(byline) + 26  # adverts, related, footer
  total = int(rng.triangular(170, max_words - 30, min(380, max_words - 60)))
  body = max(80, total - fixed)
  num_sections = max(2, min(5, round(body / 110) + rng.randint(-1, 1)))

  # Section headings: about a key phrase, another entity or nothing in particular.
  sections = []
  headed = set()
  for index in range(num_sections):
    r = rng.random()
    options = [i for i in cue if i not in headed]
    if index == 0 and 0 in options and r < 0.5:
      subject = 0
    elif r < 0.45:
      subject = rng.choice([i for i in options if i in keys] or [None])
    elif r < 0.75:
      subject = rng.choice([i for i in options if i not in keys] or [None])
    else:
      subject = None
    if subject is None:
      heading, _ = _fill(rng, rng.choice(GENERIC_HEADINGS[kind]), site)
    else:
      headed.add(subject)
      heading, _ = _fill(rng, rng.choice(ENTITY_HEADINGS), site, entities[subject])
    sections.append(_Section(_title_case(heading), subject,
                             [[] for _ in range(rng.choice((1, 1, 2, 2, 3)))],
                             advert=rng.random() < 0.6))

  # Mention sentences, spread over the paragraphs; bold on some of them.
  paragraphs = [p for section in sections for p in section.paragraphs]
  counts = _mention_counts(rng, entities, keys, body)
  for i, count in enumerate(counts):
    for _ in range(count):
      templates = MENTIONS[roles[i]] if rng.random() < 0.6 else COMMON_MENTIONS
      sentence = _sentence(rng, rng.choice(templates), site, i, entities[i])
      rate = 0.0 if i == victim else (0.35 if i in keys else 0.15)
      sentence.bold = rng.random() < rate
      rng.choice(paragraphs).append(sentence)
  # Fillers up to each paragraph's share of the body words.
  fillers = list(FILLERS[kind] + COMMON_FILLERS) * FILLER_REPEATS
  for paragraph in paragraphs:
    target = max(12, int(body / len(paragraphs) * rng.uniform(0.6, 1.4)))
    size = sum(len(s.words) for s in paragraph)
    for _ in range(40):
      if size >= target - 3 or not fillers:
        break
      template = rng.choice(fillers)
      sentence = _sentence(rng, template, site)
      if size + len(sentence.words) <= target + 4 or not paragraph:
        fillers.remove(template)
        paragraph.append(sentence)
        size += len(sentence.words)

  # Related links: other entities of the page and stock titles, each template at most once.
  related = []
  others = [i for i in range(len(entities)) if i not in keys]
  entity_links, stock_links = list(RELATED), list(GENERIC_RELATED)
  for _ in range(rng.randint(1, 4)):
    if others and rng.random() < 0.6:
      pick = others.pop(rng.randrange(len(others)))
      template = entity_links.pop(rng.randrange(len(entity_links)))
      item, _ = _fill(rng, template, site, entities[pick])
    else:
      item, _ = _fill(rng, stock_links.pop(rng.randrange(len(stock_links))), site)
    related.append(_title_case(item))
  newsletter = []
  if rng.random() < 0.7:
    newsletter, _ = _fill(rng, rng.choice(NEWSLETTER), site)
  year = str(rng.randint(2015, 2024))
  footer = [["Copyright", year] + site] + [
      link.split() for link in rng.sample(FOOTER_LINKS, rng.randint(2, 4))]
  plan = _Plan(kind=kind, site=site, entities=entities, keys=keys, victim=victim, menu=menu,
               title=title, title_subject=title_subject, byline=byline, sections=sections,
               related_heading=rng.choice(RELATED_HEADINGS).split(), related=related,
               newsletter=newsletter,
               footer=footer, capital_headings=rng.random() < 0.2,
               capital_bold=rng.random() < 0.25)
  while _word_count(plan) < MIN_WORDS and fillers:  # top up short pages
    template = fillers.pop(rng.randrange(len(fillers)))
    rng.choice(paragraphs).append(_sentence(rng, template, site))
  for paragraph in paragraphs:
    rng.shuffle(paragraph)
  _trim(plan, max_words)
  _ensure_cues(rng, plan)
  _limit_elements(rng, plan)
  return plan


def _word_count(plan: _Plan) -> int:
  """Words of the whole page."""
  body = sum(len(s.heading) + sum(len(w.words) for p in s.paragraphs for w in p) + s.advert
             for s in plan.sections)
  return (len(plan.site) + len(plan.menu) + len(plan.title) + len(plan.byline) + body
          + len(plan.related_heading) + sum(map(len, plan.related)) + len(plan.newsletter)
          + sum(map(len, plan.footer)))


def _trim(plan: _Plan, max_words: int) -> None:
  """Drops fillers, then other entities' mentions, then extra key mentions, to fit max_words."""
  kept = {k: 0 for k in plan.keys}

  def removable(sentence: _Sentence, stage: int) -> bool:
    if stage == 0:
      return sentence.entity is None
    if stage == 1:
      return sentence.entity not in plan.keys
    return kept[sentence.entity] > 2

  for paragraph in (p for s in plan.sections for p in s.paragraphs):
    for sentence in paragraph:
      if sentence.entity in kept:
        kept[sentence.entity] += 1
  for stage in range(3):
    for paragraph in reversed([p for s in plan.sections for p in s.paragraphs]):
      for sentence in list(reversed(paragraph)):
        if _word_count(plan) <= max_words:
          return
        if len(paragraph) > 1 and removable(sentence, stage):
          paragraph.remove(sentence)
          if sentence.entity in kept:
            kept[sentence.entity] -= 1
  if _word_count(plan) > max_words:
    raise ValueError(f"cannot fit a page into max_words={max_words}")


def _ensure_cues(rng: random.Random, plan: _Plan) -> None:
  """Every key phrase but the victim gets a bold span unless a heading shows it already."""
  sentences = [w for s in plan.sections for p in s.paragraphs for w in p]
  for k in plan.keys:
    if k == plan.victim:
      continue
    headed = k == plan.title_subject or any(s.subject == k for s in plan.sections)
    mentions = [s for s in sentences if s.entity == k]
    if not headed and not any(s.bold for s in mentions):
      rng.choice(mentions).bold = True


def _element_count(plan: _Plan) -> int:
  """How many VDOM elements `_render` makes of the plan."""
  body = sum(1 + s.advert + sum(len(_segments(p, plan)) for p in s.paragraphs)
             for s in plan.sections)
  head = 1 + len(plan.menu) + 2  # site name, menu, title, byline
  return (head + body + 1 + len(plan.related) + bool(plan.newsletter)  # related block
          + len(plan.footer))


def _limit_elements(rng: random.Random, plan: _Plan) -> None:
  """Turns bold spans back into plain text until the page has at most MAX_PAGE_ELEMENTS.

  Spans of other entities go first; a key phrase keeps one cue (a heading or a bold span).
  """
  sentences = [w for s in plan.sections for p in s.paragraphs for w in p]
  while _element_count(plan) > MAX_PAGE_ELEMENTS:
    bold = [w for w in sentences if w.bold]
    spare = [w for w in bold if w.entity not in plan.keys]
    if not spare:
      headed = {s.subject for s in plan.sections} | {plan.title_subject}
      spare = [w for w in bold if w.entity in headed
               or sum(v.entity == w.entity for v in bold) > 1]
    if not spare:
      raise AssertionError("cannot fit the page into the element limit")
    rng.choice(spare).bold = False


# ----------------------------------------------------------------------------- layout


@dataclasses.dataclass
class _Box:
  """A DOM node's rendered box and flags (the ten features, in FEATURE_NAMES order)."""
  x: float
  width: float
  y: float
  height: float
  block: int = 1
  inline: int = 0
  heading: int = 0
  leaf: int = 1
  font: float = 15.0
  bold: int = 0

  def features(self) -> List[float]:
    width = round(min(1200.0, max(50.0, self.width)), 1)
    height = min(200.0, max(10.0, self.height))
    x = min(round(max(0.0, self.x), 1), 1200.0 - width)
    return [round(float(v), 1) for v in (x, width, self.y, height, self.block, self.inline,
                                         self.heading, self.leaf, self.font, self.bold)]


class _Layout:
  """Collects elements (word spans with boxes) in reading order, top to bottom."""

  def __init__(self, rng: random.Random):
    self.rng = rng
    self.words: List[str] = []
    self.elements: List[Tuple[int, int, _Box, _Box]] = []
    self.ids: List[int] = []
    self.next_id = 0
    self.y = 0.0
    self.left = rng.randint(40, 240)
    self.width = rng.randint(660, min(900, 1180 - self.left))

  def node_id(self) -> int:
    """A fresh DOM id; containers take ids too, so element ids increase with gaps."""
    self.next_id += self.rng.randint(1, 3)
    return self.next_id

  def add(self, words: Sequence[str], box: _Box, parent: _Box) -> None:
    start = len(self.words)
    self.words.extend(words)
    self.elements.append((start, len(self.words), box, parent))
    self.ids.append(self.node_id())

  def run(self, words: Sequence[str], font: float, **flags: int) -> _Box:
    """A block of text in the content column at the cursor; moves the cursor below it."""
    chars = len(" ".join(words))
    per_line = max(1, int(self.width / (font * 0.52)))
    lines = math.ceil(chars / per_line)
    width = self.width if lines > 1 else chars * font * 0.52 + 8
    box = _Box(self.left, width, self.y, lines * font * 1.45, font=font, **flags)
    self.y += box.height
    return box


def _segments(paragraph: List[_Sentence], plan: _Plan) -> List[Tuple[List[str], bool]]:
  """The paragraph's words as alternating plain and bold runs."""
  runs: List[Tuple[List[str], bool]] = []

  def push(words: List[str], bold: bool) -> None:
    if not words:
      return
    if runs and runs[-1][1] == bold and not bold:
      runs[-1][0].extend(words)
    else:
      runs.append((list(words), bold))

  for sentence in paragraph:
    start, end = sentence.mention
    if not sentence.bold:
      push(sentence.words, False)
      continue
    span = sentence.words[start:end]
    if plan.capital_bold:
      span = [w.upper() for w in span]
    push(sentence.words[:start], False)
    push(span, True)
    push(sentence.words[end:], False)
  return runs


def _render(rng: random.Random, plan: _Plan) -> _Layout:
  """Lays the page out; returns the words and elements."""
  page = _Layout(rng)
  # Navigation bar: the site's name, then the menu, left to right.
  nav = _Box(0, 1200, 0, rng.randint(48, 64), leaf=0, font=14)
  nav_font = rng.choice((12, 13, 14))
  logo_font = rng.randint(18, 24)
  x = float(page.left)
  logo_width = len(" ".join(plan.site)) * logo_font * 0.55 + 10
  page.add(plan.site, _Box(x, logo_width, 12, logo_font * 1.4, block=0, inline=1,
                           font=logo_font, bold=rng.randint(0, 1)), nav)
  x += logo_width + rng.randint(30, 60)
  for word in plan.menu:
    width = len(word) * nav_font * 0.6 + 24
    page.add([word], _Box(min(x, 1150), width, 16, nav_font * 1.6, block=0, inline=1,
                          font=nav_font), nav)
    x += width + rng.randint(6, 14)
  page.y = nav.height + rng.randint(24, 40)
  node_id = page.node_id  # containers consume ids

  # Title and byline.
  article = _Box(page.left, page.width, page.y - 8, 200, leaf=0, font=16)
  node_id()
  title_font = rng.randint(28, 40)
  page.add(plan.title, page.run(plan.title, title_font, heading=1, bold=1), article)
  page.y += 8
  page.add(plan.byline, page.run(plan.byline, rng.choice((12, 13)), block=1), article)

  # Sections: heading, then paragraphs of plain and bold runs.
  body_font = rng.choice((14, 15, 16))
  heading_font = rng.randint(20, 26)
  for section in plan.sections:
    page.y += rng.randint(24, 36)
    node_id()
    wrapper = _Box(page.left, page.width, page.y - 4, 60, leaf=0, font=body_font)
    heading = [w.upper() for w in section.heading] if plan.capital_headings else section.heading
    page.add(heading, page.run(heading, heading_font, heading=1, bold=1), wrapper)
    for paragraph in section.paragraphs:
      page.y += rng.randint(10, 16)
      runs = _segments(paragraph, plan)
      if len(runs) == 1:
        page.add(runs[0][0], page.run(runs[0][0], body_font), wrapper)
        continue
      node_id()
      all_words = [w for run, _ in runs for w in run]
      para = page.run(all_words, body_font, leaf=0)
      per_line = max(1, int(page.width / (body_font * 0.52)))
      line_height = body_font * 1.45
      offset = 0
      for words, bold in runs:
        chars = len(" ".join(words))
        first, last = offset // per_line, (offset + chars) // per_line
        width = chars * body_font * 0.52 if first == last else page.width
        box = _Box(page.left + (offset % per_line) * body_font * 0.52 if first == last
                   else page.left, width, para.y + first * line_height,
                   (last - first + 1) * line_height, block=0, inline=1, font=body_font,
                   bold=int(bold))
        page.add(words, box, para)
        offset += chars + 1
    if section.advert:
      page.y += 12
      page.add(["Advertisement"], page.run(["Advertisement"], 11, block=1), wrapper)
      page.y += rng.randint(90, 250)  # the advert's picture

  # Related articles: a small heading and a list of links.
  page.y += rng.randint(30, 48)
  node_id()
  related = _Box(page.left, page.width, page.y - 4, 40 + 24 * len(plan.related), leaf=0,
                 font=14)
  page.add(plan.related_heading, page.run(plan.related_heading, 18, heading=1, bold=1), related)
  for item in plan.related:
    page.y += 4
    page.add(item, page.run(item, 14, block=0, inline=1), related)
  if plan.newsletter:
    page.y += 16
    page.add(plan.newsletter, page.run(plan.newsletter, 15, bold=rng.randint(0, 1)), related)

  # Footer: small inline links on one or two rows.
  page.y += rng.randint(40, 60)
  node_id()
  footer = _Box(0, 1200, page.y - 16, rng.randint(80, 120), leaf=0, font=12)
  x, font = float(page.left), rng.choice((11, 12))
  for words in plan.footer:
    width = len(" ".join(words)) * font * 0.55 + 16
    if x + width > 1180:
      x, page.y = float(page.left), page.y + font * 1.8
    page.add(words, _Box(x, width, page.y, font * 1.5, block=0, inline=1, font=font), footer)
    x += width + 20
  return page


# ----------------------------------------------------------------------------- records


def _url(plan: _Plan, seed: int, index: int) -> str:
  """A fresh url: the site's domain, a slug of the title and a digest of (seed, index)."""
  digest = hashlib.sha1(f"synthetic-openkp:{seed}:{index}".encode("utf-8")).hexdigest()
  domain = "".join(plan.site).lower()
  slug = "-".join(w.lower() for w in plan.title[:6])
  tld = (".com", ".net", ".org")[int(digest[-1], 16) % 3]
  return f"http://www.{domain}{tld}/{slug}-{digest[:10]}"


def _check(condition: bool, message: str) -> None:
  """An assertion that stays on under `python -O`."""
  if not condition:
    raise AssertionError(message)


def _page(rng: random.Random, seed: int, index: int, max_words: int) -> dict:
  """One record in the official format."""
  plan = _plan(rng, max_words)
  layout = _render(rng, plan)
  words = layout.words
  _check(all(w and w.isalnum() and w.isascii() for w in words), "bad word")
  _check(15 <= len(layout.elements) == _element_count(plan) <= MAX_PAGE_ELEMENTS,
         f"{len(layout.elements)} elements")
  _check(MIN_WORDS <= len(words) <= max_words, f"{len(words)} words")
  vdom = []
  for node_id, (start, end, box, parent) in zip(layout.ids, layout.elements):
    vdom.append({"Id": node_id, "text": " ".join(words[start:end]),
                 "feature": box.features() + parent.features(), "start_idx": start,
                 "end_idx": end})
  phrases = [list(_lower(plan.entities[k])) for k in plan.keys]
  lowered = [w.lower() for w in words]
  for phrase in phrases:
    _check(_contains(lowered, phrase), f"{phrase} not on the page")
  return {"url": _url(plan, seed, index), "text": " ".join(words), "VDOM": json.dumps(vdom),
          "KeyPhrases": phrases}


# ----------------------------------------------------------------------------- public API


def generate_pages(num: int, seed: int = 0, max_words: int = 700, empty_rate: float = 0.0,
                   duplicate_rate: float = 0.0) -> List[dict]:
  """Generates OpenKP-style pages.

  Args:
    num: How many records (lines).
    seed: The same arguments give identical records; use different seeds for train and dev.
    max_words: Upper bound on the words of a page (at least `MIN_MAX_WORDS`); pages have
      about 150 words or more.
    empty_rate: Chance that a record's `KeyPhrases` is `[]` (the page is unchanged).
    duplicate_rate: Chance that a record (not the first) reuses the `url` of a random earlier
      record, with its own fresh page, so readers can check that the last record wins.

  Returns:
    A list of dicts with the official keys `url`, `text`, `VDOM` (a JSON string) and
    `KeyPhrases` (lists of lower-case words).

  Raises:
    ValueError: If `max_words` is below `MIN_MAX_WORDS` or a rate is outside [0, 1].
  """
  if max_words < MIN_MAX_WORDS:
    raise ValueError(f"max_words must be at least {MIN_MAX_WORDS}, got {max_words}")
  for name, rate in (("empty_rate", empty_rate), ("duplicate_rate", duplicate_rate)):
    if not 0.0 <= rate <= 1.0:
      raise ValueError(f"{name} must be in [0, 1], got {rate}")
  rng = random.Random(seed)
  flags = random.Random(f"synthetic-openkp-flags:{seed}")
  pages = []
  for index in range(num):
    page = _page(rng, seed, index, max_words)
    if flags.random() < empty_rate:
      page["KeyPhrases"] = []
    earlier = flags.randrange(index) if index else 0
    if index and flags.random() < duplicate_rate:
      page["url"] = pages[earlier]["url"]
    pages.append(page)
  return pages


def first_words_baseline(page: dict, k: int = 5) -> List[List[str]]:
  """The first `k` words of the text as one-word phrases (lower-case)."""
  return [[w.lower()] for w in page["text"].split(" ")[:k] if w]


def frequent_ngrams_baseline(page: dict, k: int = 5, max_n: int = 3) -> List[List[str]]:
  """The `k` most frequent n-grams of the text, n = 1..max_n.

  Words are lower-cased; n-grams made only of STOPWORDS are skipped. Ties go to the n-gram
  that occurs first (earlier start, then the shorter one).

  Args:
    page: A record with a `text`.
    k: How many phrases.
    max_n: The longest n-gram.

  Returns:
    Up to `k` phrases, each a list of words, most frequent first.
  """
  words = [w.lower() for w in page["text"].split(" ") if w]
  counts: Dict[Tuple[str, ...], int] = {}
  first: Dict[Tuple[str, ...], Tuple[int, int]] = {}
  for i in range(len(words)):
    for n in range(1, max_n + 1):
      if i + n > len(words):
        break
      gram = tuple(words[i:i + n])
      if all(w in STOPWORDS for w in gram):
        continue
      counts[gram] = counts.get(gram, 0) + 1
      first.setdefault(gram, (i, n))
  ranked = sorted(counts, key=lambda g: (-counts[g], first[g]))
  return [list(g) for g in ranked[:k]]


def _replace_atomically(path: str, write: Callable[[str], None]) -> str:
  """Runs `write(path + ".tmp")` and renames the result over `path`; returns `path`."""
  os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
  tmp = path + ".tmp"
  try:
    write(tmp)
    os.replace(tmp, path)
  except BaseException:
    if os.path.exists(tmp):
      os.remove(tmp)
    raise
  return path


def _write_jsonl(records: List[dict], path: str) -> str:
  """One JSON object per line, UTF-8."""
  def write(tmp: str) -> None:
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
      for record in records:
        f.write(json.dumps(record, ensure_ascii=False) + "\n")

  return _replace_atomically(path, write)


def _paths(directory: str) -> Dict[str, str]:
  return {"train": os.path.join(directory, TRAIN_FILENAME),
          "dev": os.path.join(directory, DEV_FILENAME)}


def _info(num_train: int, num_dev: int, seed: int) -> dict:
  return {"generator_version": GENERATOR_VERSION, "num_train": num_train, "num_dev": num_dev,
          "seed": seed, "dev_seed": seed + DEV_SEED_OFFSET}


def write_dataset(directory: str, num_train: int, num_dev: int,
                  seed: int = 0) -> Dict[str, str]:
  """Writes the train and dev JSONL files, then `INFO_FILENAME` describing them.

  Each file is written under a temporary name and renamed into place; the info file comes
  last, so an interrupted run leaves no info file that matches.

  Args:
    directory: Output folder (created if missing).
    num_train: Pages in the train file.
    num_dev: Pages in the dev file.
    seed: Train seed; dev uses `seed + DEV_SEED_OFFSET`.

  Returns:
    {"train": path, "dev": path}.
  """
  paths = _paths(directory)
  _write_jsonl(generate_pages(num_train, seed), paths["train"])
  _write_jsonl(generate_pages(num_dev, seed + DEV_SEED_OFFSET), paths["dev"])

  def write(tmp: str) -> None:
    with open(tmp, "w", encoding="utf-8") as f:
      json.dump(_info(num_train, num_dev, seed), f, indent=2, sort_keys=True)

  _replace_atomically(os.path.join(directory, INFO_FILENAME), write)
  return paths


def ensure_demo_data(directory: str, num_train: int, num_dev: int,
                     seed: int = 0) -> Dict[str, str]:
  """Writes the dataset unless `INFO_FILENAME` shows the same arguments and version.

  Args:
    directory: Folder of the train, dev and info files.
    num_train: Pages in the train file.
    num_dev: Pages in the dev file.
    seed: Train seed; dev uses `seed + DEV_SEED_OFFSET`.

  Returns:
    {"train": path, "dev": path}, as from `write_dataset`.
  """
  paths = _paths(directory)
  try:
    with open(os.path.join(directory, INFO_FILENAME), encoding="utf-8") as f:
      if (json.load(f) == _info(num_train, num_dev, seed)
          and all(os.path.exists(p) for p in paths.values())):
        return paths
  except (OSError, ValueError):
    pass
  return write_dataset(directory, num_train, num_dev, seed)
