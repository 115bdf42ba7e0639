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
`seed + DEV_SEED_OFFSET` for dev, so their pages differ; both name their entities from `LEXICON`,
so a model can score on dev by remembering which invented words make key phrases. Two more
splits test whether it reads the page instead: "dev_unseen" (`DEV_UNSEEN_FILENAME`, seed
`seed + UNSEEN_DEV_SEED_OFFSET`) and "test_unseen" (`TEST_UNSEEN_FILENAME`, seed
`seed + UNSEEN_TEST_SEED_OFFSET`), `num_dev` pages each, name their entities from
`UNSEEN_LEXICON` (`generate_pages(names="unseen")`): the same pools from another seed, none of
whose words occurs in LEXICON, so none occurs in train. Templates and English entity parts
(product nouns, titles of works, tickets, ...) are shared by all splits. Each split has its own
generators, so the unseen splits leave train and dev unchanged. Pure Python: importing this
module or generating pages never loads TensorFlow.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import random
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from synthetic_data import lexicon, writer
from synthetic_data.lexicon import MONTHS, FreshDraws, capitalise
from tasks.openkp.baselines import STOPWORDS, top_ngrams

GENERATOR_VERSION = 1
DEV_SEED_OFFSET = 1_000_003
UNSEEN_DEV_SEED_OFFSET = 2_000_029  # "dev_unseen": pages about entities train never names
UNSEEN_TEST_SEED_OFFSET = 3_000_017  # "test_unseen": the same, held out for a final check
TRAIN_FILENAME = "OpenKPTrain.jsonl"
DEV_FILENAME = "OpenKPDev.jsonl"
DEV_UNSEEN_FILENAME = "OpenKPDevUnseen.jsonl"
TEST_UNSEEN_FILENAME = "OpenKPTestUnseen.jsonl"
SPLIT_FILENAMES = {"train": TRAIN_FILENAME, "dev": DEV_FILENAME,
                   "dev_unseen": DEV_UNSEEN_FILENAME, "test_unseen": TEST_UNSEEN_FILENAME}
INFO_FILENAME = "OpenKPSyntheticInfo.json"
MAX_ELEMENTS = 512  # the most VDOM elements a page may have (the real data's limit)
MAX_PAGE_ELEMENTS = 80  # the most these pages have
MIN_WORDS = 150  # the fewest words of a page
MIN_MAX_WORDS = 200  # the smallest `max_words` accepted
_BOX_FIELDS = ("x", "width", "y", "height", "is_block", "is_inline", "has_heading", "is_leaf",
               "font_size", "is_bold")
FEATURE_NAMES = _BOX_FIELDS + tuple("parent_" + name for name in _BOX_FIELDS)

KINDS = ("product", "place", "person", "event")

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
_SOUNDS = lexicon.Sounds(
    onsets=("b", "br", "d", "dr", "f", "g", "gr", "h", "k", "kr", "l", "m", "n", "p", "r", "s",
            "st", "t", "th", "v", "z", "sk", "tr", "w"),
    vowels=("a", "e", "i", "o", "u", "a", "e", "o", "ai", "ei", "ou"),
    codas=("", "", "", "n", "r", "l", "s", "nd", "rk", "lt"))
_POOLS = {
    "brand": lexicon.Pool(40, 2, ("", "a", "ex", "on", "ia")),
    "model": lexicon.Pool(24, 2, ("", "a", "o", "is")),
    "town": lexicon.Pool(60, 1, ("vik", "holt", "mere", "by", "stad", "dal", "ford", "wick")),
    "word": lexicon.Pool(70, 2),
    "food": lexicon.Pool(24, 2, capitalised=False),
    "first": lexicon.Pool(40, 2, ("", "a", "o", "en", "ine")),
    "last": lexicon.Pool(50, 1, ("sen", "berg", "ley", "ton", "ard", "mont")),
    "site": lexicon.Pool(30, 2),
}
# ASCII letters only; no word is in two pools or among the English words of the pages.
LEXICON = lexicon.build_lexicon(_LEXICON_SEED, _SOUNDS, _POOLS, max_length=9,
                                reserved=_english_words())
# The same pools with none of LEXICON's words: the names of the splits about unseen entities.
# Built from its own seed after LEXICON, so LEXICON (and the seen pages) stay as they were.
_UNSEEN_LEXICON_SEED = 8803
UNSEEN_LEXICON = lexicon.build_unseen_lexicon(LEXICON, _UNSEEN_LEXICON_SEED, _SOUNDS, _POOLS,
                                              max_length=9, reserved=_english_words())
# `generate_pages(names=...)` -> the lexicon its entities are named from.
LEXICONS: Dict[str, lexicon.Lexicon] = {"seen": LEXICON, "unseen": UNSEEN_LEXICON}

# ----------------------------------------------------------------------------- entities

Phrase = Tuple[str, ...]
Entity = Tuple[Phrase, str]  # (words as written in running text, role in MENTIONS)


def _product_entities(rng: random.Random, names: FreshDraws) -> List[Entity]:
  """Main product or brand, then model, feature, award, shop and a rival brand."""
  item = ((rng.choice(PRODUCT_ADJECTIVES), rng.choice(PRODUCT_NOUNS)), "product")
  brand = ((names.name("brand"),), "brand")
  length = rng.choice((3, 4, 5))
  if length == 3:
    award = (names.name("word"), "Design", "Award")
  elif length == 4:
    award = (names.name("town"), names.name("word"), "Design", "Award")
  else:
    award = (names.name("word"), "International", "Product", "Design", "Award")
  model = (names.name("model"), str(rng.choice((2, 3, 5, 7, 9, 12, 300, 500, 700))))
  others = [(model, "product"), (rng.choice(PRODUCT_FEATURES), "feature"), (award, "award"),
            ((names.name("word"), rng.choice(STORE_WORDS)), "shop"),
            ((names.name("brand"),), "brand")]
  return [item, brand] + others if rng.random() < 0.6 else [brand, item] + others


def _place_entities(rng: random.Random, names: FreshDraws) -> List[Entity]:
  """Main town, then landmark, region, dish, river, festival, trail, a neighbouring town."""
  landmark = (names.name("word"), rng.choice(LANDMARKS))
  if rng.random() < 0.3:
    landmark = ("Old",) + landmark
  if rng.random() < 0.5:
    trail = (names.name("word"), names.name("word"), "Coastal", "Hiking", "Trail")
  else:
    trail = (names.name("word"), "Hiking", "Trail")
  return [((names.name("town"),), "place"), (landmark, "landmark"),
          ((names.name("word"), rng.choice(REGION_WORDS)), "place"),
          ((names.name("food"), rng.choice(DISHES)), "dish"),
          ((names.name("word"), "River"), "place"),
          ((names.name("word"),) + rng.choice(FESTIVAL_WORDS), "event"), (trail, "landmark"),
          ((names.name("town"),), "place")]


def _person_entities(rng: random.Random, names: FreshDraws) -> List[Entity]:
  """Main person, then work, group, award, home town, occupation, colleague, school."""
  work = (rng.choice(WORK_ADJECTIVES), rng.choice(WORK_NOUNS))
  if rng.random() < 0.5:
    work = ("The",) + work
  if rng.random() < 0.5:
    award = (names.name("word"), "Prize")
  else:
    award = (names.name("word"), "Lifetime", "Achievement", "Award")
  return [((names.name("first"), names.name("last")), "person"), (work, "work"),
          ((names.name("word"), rng.choice(GROUP_WORDS)), "org"), (award, "award"),
          ((names.name("town"),), "place"), ((rng.choice(OCCUPATIONS),), "occupation"),
          ((names.name("first"), names.name("last")), "person"),
          ((names.name("town"), "Academy", "of", "Fine", "Arts"), "org")]


def _event_entities(rng: random.Random, names: FreshDraws) -> List[Entity]:
  """Main event, then venue, organiser, headliner, sponsor, ticket, a side event."""
  if rng.random() < 0.5:
    organiser = (names.name("word"), "Society")
  else:
    organiser = (names.name("word"), "Arts", "Foundation")
  if rng.random() < 0.5:
    side = (names.name("word"), "Night", "Market")
  else:
    side = (names.name("word"), "Open", "Air", "Cinema", "Night")
  return [((names.name("town"),) + rng.choice(EVENT_WORDS), "event"),
          ((names.name("word"), rng.choice(VENUE_WORDS)), "landmark"), (organiser, "org"),
          ((names.name("first"), names.name("last")), "person"),
          ((names.name("brand"),), "brand"), (rng.choice(TICKETS), "ticket"), (side, "event")]


_ENTITY_MAKERS: Dict[str, Callable[[random.Random, FreshDraws], List[Entity]]] = {
    "product": _product_entities, "place": _place_entities, "person": _person_entities,
    "event": _event_entities}
# Weights for picking the non-main key phrases by length (mostly 1 to 3 words).
_LENGTH_WEIGHTS = {1: 3.0, 2: 4.0, 3: 2.0, 4: 0.7, 5: 0.5}


def _lower(phrase: Sequence[str]) -> Phrase:
  """The phrase's words in lower case."""
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
  """Everything of one page before layout; `_plan` fills it in step by step."""
  kind: str
  site: List[str]
  entities: List[Phrase]  # the main entity (the title's usual subject) first
  roles: List[str]  # each entity's role in MENTIONS
  keys: List[int]
  victim: Optional[int]  # a key phrase kept out of headings and bold spans (no cue)
  menu: List[str] = dataclasses.field(default_factory=list)
  title: List[str] = dataclasses.field(default_factory=list)
  title_subject: Optional[int] = None
  byline: List[str] = dataclasses.field(default_factory=list)
  sections: List[_Section] = dataclasses.field(default_factory=list)
  related_heading: List[str] = dataclasses.field(default_factory=list)
  related: List[List[str]] = dataclasses.field(default_factory=list)
  newsletter: List[str] = dataclasses.field(default_factory=list)
  footer: List[List[str]] = dataclasses.field(default_factory=list)
  capital_headings: bool = False
  capital_bold: bool = False

  def paragraphs(self) -> List[List[_Sentence]]:
    """Every paragraph of every section, in reading order."""
    return [p for section in self.sections for p in section.paragraphs]


def _title_case(words: Sequence[str]) -> List[str]:
  """Capitalises each word's first letter except small words after the first."""
  out = []
  for i, word in enumerate(words):
    out.append(word if i and word.lower() in _SMALL_WORDS else capitalise(word))
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
  words[0] = capitalise(words[0])
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


def _cast(rng: random.Random, names: FreshDraws) -> _Plan:
  """A plan with the page's kind, site name, entities, key phrases and maybe a victim."""
  kind = rng.choice(KINDS)
  site = [names.name("site"), rng.choice(SITE_SUFFIXES[kind])]
  made = _distinct(_ENTITY_MAKERS[kind](rng, names))
  entities = [phrase for phrase, _ in made]
  keys = _choose_keys(rng, entities)
  victim = None
  if rng.random() < 0.1:  # one key phrase gets no visual cue on this page
    victim = rng.choice([k for k in keys if k != 0] or keys)
  return _Plan(kind, site, entities, [role for _, role in made], keys, victim)


def _add_masthead(rng: random.Random, plan: _Plan, names: FreshDraws) -> None:
  """The menu, the title (about the main entity unless it is the victim) and the byline."""
  plan.menu = ["Home"] + rng.sample(MENU_COMMON + MENU_KIND[plan.kind], rng.randint(4, 6))
  if rng.random() < 0.25:
    plan.menu = [w.upper() for w in plan.menu]
  plan.title_subject = 0 if plan.victim != 0 else None
  if plan.title_subject is None:
    title, _ = _fill(rng, rng.choice(GENERIC_TITLES[plan.kind]), plan.site)
  else:
    title, _ = _fill(rng, rng.choice(TITLES[plan.kind]), plan.site, plan.entities[0])
  plan.title = _title_case(title)
  if rng.random() < 0.5:
    byline = ["By", names.name("first"), names.name("last")]
  else:
    byline = ["By"] + plan.site + ["Staff"]
  plan.byline = byline + [rng.choice(MONTHS), str(rng.randint(1, 28)),
                          str(rng.randint(2012, 2024))]


def _body_words(rng: random.Random, plan: _Plan, max_words: int) -> int:
  """The words the sections should have: a drawn page length less the other parts."""
  fixed = (len(plan.site) + len(plan.menu) + len(plan.title) + len(plan.byline)
           + 26)  # adverts, related, footer
  total = int(rng.triangular(170, max_words - 30, min(380, max_words - 60)))
  return max(80, total - fixed)


def _heading_subject(rng: random.Random, first: bool, options: List[int],
                     keys: List[int]) -> Optional[int]:
  """What a section heading is about: a key phrase, another entity or (None) nothing."""
  r = rng.random()
  if first and 0 in options and r < 0.5:
    return 0
  if r < 0.45:
    return rng.choice([i for i in options if i in keys] or [None])
  if r < 0.75:
    return rng.choice([i for i in options if i not in keys] or [None])
  return None


def _add_sections(rng: random.Random, plan: _Plan, body: int) -> None:
  """2 to 5 sections of empty paragraphs under headings; no entity heads two of them."""
  num_sections = max(2, min(5, round(body / 110) + rng.randint(-1, 1)))
  cue = [i for i in range(len(plan.entities)) if i != plan.victim]
  headed = set()
  for index in range(num_sections):
    options = [i for i in cue if i not in headed]
    subject = _heading_subject(rng, index == 0, options, plan.keys)
    if subject is None:
      heading, _ = _fill(rng, rng.choice(GENERIC_HEADINGS[plan.kind]), plan.site)
    else:
      headed.add(subject)
      heading, _ = _fill(rng, rng.choice(ENTITY_HEADINGS), plan.site, plan.entities[subject])
    plan.sections.append(_Section(_title_case(heading), subject,
                                  [[] for _ in range(rng.choice((1, 1, 2, 2, 3)))],
                                  advert=rng.random() < 0.6))


def _add_mentions(rng: random.Random, plan: _Plan, body: int) -> None:
  """Mention sentences of every entity, spread over the paragraphs; bold on some of them."""
  paragraphs = plan.paragraphs()
  counts = _mention_counts(rng, plan.entities, plan.keys, body)
  for i, count in enumerate(counts):
    for _ in range(count):
      templates = MENTIONS[plan.roles[i]] if rng.random() < 0.6 else COMMON_MENTIONS
      sentence = _sentence(rng, rng.choice(templates), plan.site, i, plan.entities[i])
      rate = 0.0 if i == plan.victim else (0.35 if i in plan.keys else 0.15)
      sentence.bold = rng.random() < rate
      rng.choice(paragraphs).append(sentence)


def _add_fillers(rng: random.Random, plan: _Plan, body: int) -> List[str]:
  """Stock sentences up to each paragraph's share of the body words; returns those left."""
  fillers = list(FILLERS[plan.kind] + COMMON_FILLERS) * FILLER_REPEATS
  paragraphs = plan.paragraphs()
  for paragraph in paragraphs:
    target = max(12, int(body / len(paragraphs) * rng.uniform(0.6, 1.4)))
    size = sum(len(s.words) for s in paragraph)
    for _ in range(40):
      if size >= target - 3 or not fillers:
        break
      template = rng.choice(fillers)
      sentence = _sentence(rng, template, plan.site)
      if size + len(sentence.words) <= target + 4 or not paragraph:
        fillers.remove(template)
        paragraph.append(sentence)
        size += len(sentence.words)
  return fillers


def _add_related(rng: random.Random, plan: _Plan) -> None:
  """Related links (other entities and stock titles, no template twice), maybe a newsletter."""
  others = [i for i in range(len(plan.entities)) if i not in plan.keys]
  entity_links, stock_links = list(RELATED), list(GENERIC_RELATED)
  for _ in range(rng.randint(1, 4)):
    if others and rng.random() < 0.6:
      pick = others.pop(rng.randrange(len(others)))
      template = entity_links.pop(rng.randrange(len(entity_links)))
      item, _ = _fill(rng, template, plan.site, plan.entities[pick])
    else:
      item, _ = _fill(rng, stock_links.pop(rng.randrange(len(stock_links))), plan.site)
    plan.related.append(_title_case(item))
  if rng.random() < 0.7:
    plan.newsletter, _ = _fill(rng, rng.choice(NEWSLETTER), plan.site)


def _add_footer(rng: random.Random, plan: _Plan) -> None:
  """The copyright line and 2 to 4 policy links."""
  year = str(rng.randint(2015, 2024))
  plan.footer = [["Copyright", year] + plan.site] + [
      link.split() for link in rng.sample(FOOTER_LINKS, rng.randint(2, 4))]


def _top_up(rng: random.Random, plan: _Plan, fillers: List[str]) -> None:
  """Adds stock sentences from `fillers` to random paragraphs until the page has MIN_WORDS."""
  paragraphs = plan.paragraphs()
  while _word_count(plan) < MIN_WORDS and fillers:
    template = fillers.pop(rng.randrange(len(fillers)))
    rng.choice(paragraphs).append(_sentence(rng, template, plan.site))


def _plan(rng: random.Random, max_words: int, names_from: lexicon.Lexicon) -> _Plan:
  """Draws one page: topic, entities, key phrases, text and which spans are bold.

  Every invented word (the site's, the entities' and the byline's names) comes from `names_from`.
  """
  names = FreshDraws(rng, names_from)  # lexicon words, none twice on a page
  plan = _cast(rng, names)
  _add_masthead(rng, plan, names)
  body = _body_words(rng, plan, max_words)
  _add_sections(rng, plan, body)
  _add_mentions(rng, plan, body)
  fillers = _add_fillers(rng, plan, body)
  _add_related(rng, plan)
  _add_footer(rng, plan)
  plan.related_heading = rng.choice(RELATED_HEADINGS).split()
  plan.capital_headings = rng.random() < 0.2
  plan.capital_bold = rng.random() < 0.25
  _top_up(rng, plan, fillers)
  for paragraph in plan.paragraphs():
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
    """Whether `_trim` may drop the sentence at this stage."""
    if stage == 0:
      return sentence.entity is None
    if stage == 1:
      return sentence.entity not in plan.keys
    return kept[sentence.entity] > 2

  for paragraph in plan.paragraphs():
    for sentence in paragraph:
      if sentence.entity in kept:
        kept[sentence.entity] += 1
  for stage in range(3):
    for paragraph in reversed(plan.paragraphs()):
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
  sentences = [w for p in plan.paragraphs() for w in p]
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
  sentences = [w for p in plan.paragraphs() for w in p]
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
    """The ten features, clipped to plausible values and rounded to 0.1."""
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
    """An element: the words, their box and the parent's box; it takes a fresh id."""
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
    """Appends a run, merging consecutive plain runs."""
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


def _render_nav(rng: random.Random, page: _Layout, plan: _Plan) -> None:
  """The navigation bar: the site's name, then the menu, left to right; the cursor goes below."""
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


def _render_title(rng: random.Random, page: _Layout, plan: _Plan) -> None:
  """The bold title heading and the byline."""
  article = _Box(page.left, page.width, page.y - 8, 200, leaf=0, font=16)
  page.node_id()  # containers consume ids
  title_font = rng.randint(28, 40)
  page.add(plan.title, page.run(plan.title, title_font, heading=1, bold=1), article)
  page.y += 8
  page.add(plan.byline, page.run(plan.byline, rng.choice((12, 13)), block=1), article)


def _render_paragraph(page: _Layout, runs: List[Tuple[List[str], bool]], parent: _Box,
                      font: float) -> None:
  """A plain paragraph as one element, else a paragraph box of inline plain and bold runs."""
  if len(runs) == 1:
    page.add(runs[0][0], page.run(runs[0][0], font), parent)
    return
  page.node_id()
  para = page.run([w for run, _ in runs for w in run], font, leaf=0)
  per_line = max(1, int(page.width / (font * 0.52)))
  line_height = font * 1.45
  offset = 0
  for words, bold in runs:
    chars = len(" ".join(words))
    first, last = offset // per_line, (offset + chars) // per_line
    one_line = first == last
    x = page.left + (offset % per_line) * font * 0.52 if one_line else page.left
    width = chars * font * 0.52 if one_line else page.width
    box = _Box(x, width, para.y + first * line_height, (last - first + 1) * line_height,
               block=0, inline=1, font=font, bold=int(bold))
    page.add(words, box, para)
    offset += chars + 1


def _render_section(rng: random.Random, page: _Layout, plan: _Plan, section: _Section,
                    body_font: float, heading_font: float) -> None:
  """A section: its heading, its paragraphs and maybe an advert slot."""
  page.y += rng.randint(24, 36)
  page.node_id()
  wrapper = _Box(page.left, page.width, page.y - 4, 60, leaf=0, font=body_font)
  heading = [w.upper() for w in section.heading] if plan.capital_headings else section.heading
  page.add(heading, page.run(heading, heading_font, heading=1, bold=1), wrapper)
  for paragraph in section.paragraphs:
    page.y += rng.randint(10, 16)
    _render_paragraph(page, _segments(paragraph, plan), wrapper, body_font)
  if section.advert:
    page.y += 12
    page.add(["Advertisement"], page.run(["Advertisement"], 11, block=1), wrapper)
    page.y += rng.randint(90, 250)  # the advert's picture


def _render_related(rng: random.Random, page: _Layout, plan: _Plan) -> None:
  """Related articles: a small heading, a list of links and maybe the newsletter line."""
  page.y += rng.randint(30, 48)
  page.node_id()
  related = _Box(page.left, page.width, page.y - 4, 40 + 24 * len(plan.related), leaf=0,
                 font=14)
  page.add(plan.related_heading, page.run(plan.related_heading, 18, heading=1, bold=1), related)
  for item in plan.related:
    page.y += 4
    page.add(item, page.run(item, 14, block=0, inline=1), related)
  if plan.newsletter:
    page.y += 16
    page.add(plan.newsletter, page.run(plan.newsletter, 15, bold=rng.randint(0, 1)), related)


def _render_footer(rng: random.Random, page: _Layout, plan: _Plan) -> None:
  """The footer: small inline links on one or two rows."""
  page.y += rng.randint(40, 60)
  page.node_id()
  footer = _Box(0, 1200, page.y - 16, rng.randint(80, 120), leaf=0, font=12)
  x, font = float(page.left), rng.choice((11, 12))
  for words in plan.footer:
    width = len(" ".join(words)) * font * 0.55 + 16
    if x + width > 1180:
      x, page.y = float(page.left), page.y + font * 1.8
    page.add(words, _Box(x, width, page.y, font * 1.5, block=0, inline=1, font=font), footer)
    x += width + 20


def _render(rng: random.Random, plan: _Plan) -> _Layout:
  """Lays the page out, top to bottom; returns the words and elements."""
  page = _Layout(rng)
  _render_nav(rng, page, plan)
  _render_title(rng, page, plan)
  body_font = rng.choice((14, 15, 16))
  heading_font = rng.randint(20, 26)
  for section in plan.sections:
    _render_section(rng, page, plan, section, body_font, heading_font)
  _render_related(rng, page, plan)
  _render_footer(rng, page, plan)
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


def _page(rng: random.Random, seed: int, index: int, max_words: int,
          names_from: lexicon.Lexicon) -> dict:
  """One record in the official format, its names drawn from `names_from`."""
  plan = _plan(rng, max_words, names_from)
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
                   duplicate_rate: float = 0.0, names: str = "seen") -> List[dict]:
  """Generates OpenKP-style pages.

  Args:
    num: How many records (lines).
    seed: The same arguments give identical records; use different seeds for train and dev.
    max_words: Upper bound on the words of a page (at least `MIN_MAX_WORDS`); pages have
      about 150 words or more.
    empty_rate: Chance that a record's `KeyPhrases` is `[]` (the page is unchanged).
    duplicate_rate: Chance that a record (not the first) reuses the `url` of a random earlier
      record, with its own fresh page, so readers can check that the last record wins.
    names: "seen" names the entities from `LEXICON` (train, dev); "unseen" from
      `UNSEEN_LEXICON`, none of whose words occurs on a "seen" page (the unseen splits). The
      English words are the same either way.

  Returns:
    A list of dicts with the official keys `url`, `text`, `VDOM` (a JSON string) and
    `KeyPhrases` (lists of lower-case words).

  Raises:
    ValueError: If `max_words` is below `MIN_MAX_WORDS`, a rate is outside [0, 1] or `names`
      is not a key of `LEXICONS`.
  """
  if max_words < MIN_MAX_WORDS:
    raise ValueError(f"max_words must be at least {MIN_MAX_WORDS}, got {max_words}")
  for name, rate in (("empty_rate", empty_rate), ("duplicate_rate", duplicate_rate)):
    if not 0.0 <= rate <= 1.0:
      raise ValueError(f"{name} must be in [0, 1], got {rate}")
  if names not in LEXICONS:
    raise ValueError(f"names must be one of {sorted(LEXICONS)}, got {names!r}")
  rng = random.Random(seed)
  flags = random.Random(f"synthetic-openkp-flags:{seed}")
  pages = []
  for index in range(num):
    page = _page(rng, seed, index, max_words, LEXICONS[names])
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
  """The task's frequent n-gram baseline on a raw record (tasks.openkp.baselines.top_ngrams)."""
  return top_ngrams([w for w in page["text"].split(" ") if w], k, max_n)


def _splits(num_train: int, num_dev: int, seed: int) -> Dict[str, Tuple[int, int, str]]:
  """Split name -> (pages, seed, names) in `write_dataset`'s order; each split draws from its
  own generators, so adding a split never changes another."""
  return {"train": (num_train, seed, "seen"),
          "dev": (num_dev, seed + DEV_SEED_OFFSET, "seen"),
          "dev_unseen": (num_dev, seed + UNSEEN_DEV_SEED_OFFSET, "unseen"),
          "test_unseen": (num_dev, seed + UNSEEN_TEST_SEED_OFFSET, "unseen")}


def _paths(directory: str) -> Dict[str, str]:
  """Split name -> file path."""
  return {split: os.path.join(directory, filename) for split, filename in SPLIT_FILENAMES.items()}


def _info(num_train: int, num_dev: int, seed: int) -> dict:
  """What the info file records about a dataset."""
  splits = _splits(num_train, num_dev, seed)
  return {"generator_version": GENERATOR_VERSION, "num_train": num_train, "num_dev": num_dev,
          "seed": seed, "dev_seed": splits["dev"][1],
          "unseen_dev_seed": splits["dev_unseen"][1],
          "unseen_test_seed": splits["test_unseen"][1],
          "unseen_lexicon_seed": _UNSEEN_LEXICON_SEED}


def write_dataset(directory: str, num_train: int, num_dev: int,
                  seed: int = 0) -> Dict[str, str]:
  """Writes the train, dev and unseen-entity JSONL files, then `INFO_FILENAME` describing them.

  Each file is written under a temporary name and renamed into place; the info file comes
  last, so an interrupted run leaves no info file that matches.

  Args:
    directory: Output folder (created if missing).
    num_train: Pages in the train file.
    num_dev: Pages in the dev file and in each unseen split.
    seed: Train seed; dev uses `seed + DEV_SEED_OFFSET`, "dev_unseen"
      `seed + UNSEEN_DEV_SEED_OFFSET` and "test_unseen" `seed + UNSEEN_TEST_SEED_OFFSET`, the
      last two with `names="unseen"`.

  Returns:
    {"train": path, "dev": path, "dev_unseen": path, "test_unseen": path}.
  """
  paths = _paths(directory)
  for split, (num, split_seed, names) in _splits(num_train, num_dev, seed).items():
    writer.write_jsonl(paths[split], generate_pages(num, split_seed, names=names))
  writer.write_info(os.path.join(directory, INFO_FILENAME), _info(num_train, num_dev, seed))
  return paths


def ensure_demo_data(directory: str, num_train: int, num_dev: int,
                     seed: int = 0) -> Dict[str, str]:
  """Writes the dataset unless `INFO_FILENAME` shows the same arguments and version.

  Args:
    directory: Folder of the train, dev, unseen-entity and info files.
    num_train: Pages in the train file.
    num_dev: Pages in the dev file and in each unseen split.
    seed: Train seed; the other splits' seeds are offsets of it (see `write_dataset`).

  Returns:
    {"train": path, "dev": path, "dev_unseen": path, "test_unseen": path}, as from
    `write_dataset`.
  """
  paths = _paths(directory)
  info_path = os.path.join(directory, INFO_FILENAME)
  if writer.is_current(info_path, _info(num_train, num_dev, seed), paths.values()):
    return paths
  return write_dataset(directory, num_train, num_dev, seed)
