"""Small synthetic WikiHop (QAngaroo v1.1) data in the official JSON format.

Why: tests and a CPU demo need WikiHop files without the real release. A raw file is one JSON
array; every item is a dict with
* `id`: "WH_train_0", "WH_dev_17", ... (the split is the prefix),
* `query`: "<relation> <subject>", lower case, the relation's words joined by underscores,
  e.g. "country_of_citizenship mara veldt",
* `candidates`: 2 to `max_candidates` distinct lower-case entity names of the answer's kind,
* `supports`: 2 to 8 short Wikipedia-like documents (1 to 5 sentences each, sentence case),
* `answer`: one of the candidates,
* `annotations` (dev only): three small annotator judgements, ignored by readers.

Each item is a small invented world of people, towns, regions, countries, companies and bodies
of water, consistent within the item (a person's citizenship is the country of their birthplace,
a town's country is the country of its region, ...). The names come from one fixed lexicon of
invented words (its own seed, the same for every data seed), so a small WordPiece vocabulary
covers train and dev alike, while the facts are drawn afresh for every item: answers must be
read, not memorised. People, companies and bodies of water have two-word names; so do some
towns and regions.

The answer is stated by the supports with a cue phrase of its relation: in single-hop items one
sentence links the subject to the answer ("Mara Veldt holds citizenship of Oskaria."); in
two-hop items (share `two_hop_rate`) no sentence names both, and a bridge entity links them
("Mara Veldt was born in Brenholt." and, in another document, "Brenholt is a town in
Oskaria."). The other candidates are mentioned too: as the same relation's value for other
subjects of the same kind (confusers), next to the subject in sentences with other cue phrases
("Mara Veldt moved to Tessania in 1961."), in short documents about themselves, or in lists.
In a good share of items some distractor is mentioned more often than the answer, so counting
mentions (`most_mentioned_candidate`) is a weak baseline, while the stated facts still fix the
answer uniquely. A few items are long (up to about 400 words) and a few candidates are never
mentioned, as in the real data.

Splits about unseen entities: `UNSEEN_LEXICON` has pools shaped like `LEXICON`'s (its own
seed) none of whose words is a word of `LEXICON`. Items generated with `names="unseen"` name only
such entities (the English words of the templates, "Lake", "River" and the company suffixes stay
shared), so no word of their names occurs in the train split: a model must read them, not
remember them. `ensure_demo_data` writes two such splits next to train and dev, `dev_unseen` and
`test_unseen` (laid out like dev: answers and annotations), while the "seen" dev keeps sharing
the names of train, as the comparison.

The same arguments always give identical items (one `random.Random(seed)`, fixed-order lists).
Generate train and dev with different seeds: `write_dataset` uses `seed` and
`seed + DEV_SEED_OFFSET`, and the unseen splits `seed + UNSEEN_DEV_SEED_OFFSET` and
`seed + UNSEEN_TEST_SEED_OFFSET` (generators of their own: writing them leaves train and dev
byte for byte as they were). Pure Python (standard library only): importing this module or
generating items never loads TensorFlow.
"""

from __future__ import annotations

import dataclasses
import os
import random
import re
from typing import Dict, List, Optional, Sequence, Tuple

from synthetic_data import lexicon, writer
from synthetic_data.lexicon import capitalise

GENERATOR_VERSION = 2  # 2: the unseen-entity splits (train and dev as in version 1)
DEV_SEED_OFFSET = 1_000_003
UNSEEN_DEV_SEED_OFFSET = 2_000_003
UNSEEN_TEST_SEED_OFFSET = 3_000_017
TRAIN_FILENAME = "train.json"
DEV_FILENAME = "dev.json"
DEV_UNSEEN_FILENAME = "dev_unseen.json"
TEST_UNSEEN_FILENAME = "test_unseen.json"
SPLITS = ("train", "dev", "dev_unseen", "test_unseen")
INFO_FILENAME = "synthetic_info.json"
DEFAULT_MAX_CANDIDATES = 40
MAX_SUPPORTS = 8
MAX_SENTENCES = 5
MAX_WORDS = 400

RELATIONS = (
    "country_of_citizenship",
    "place_of_birth",
    "employer",
    "located_in_the_administrative_territorial_entity",
    "country",
    "headquarters_location",
    "located_next_to_body_of_water",
    "founded_by",
)
_ADMIN = "located_in_the_administrative_territorial_entity"

# Stored links of the world: (relation, subject kind) -> object kind.
BASE_RELATIONS = {
    ("place_of_birth", "person"): "town",
    ("employer", "person"): "company",
    (_ADMIN, "town"): "region",
    ("located_next_to_body_of_water", "town"): "water",
    ("country", "region"): "country",
    ("headquarters_location", "company"): "town",
    ("founded_by", "company"): "person",
}
# Derived relations: (relation, subject kind) -> (first hop, second hop). These are also the
# queries of two-hop items, answered through the first hop's value (the bridge).
TWO_HOP_CHAINS = {
    ("country_of_citizenship", "person"): ("place_of_birth", "country"),
    ("country", "town"): (_ADMIN, "country"),
    (_ADMIN, "company"): ("headquarters_location", _ADMIN),
    ("country", "company"): ("headquarters_location", "country"),
}
# Sentences stating a fact: (relation, subject kind) -> templates with {s} subject, {o} object.
# Their keys are the queries of single-hop items.
FACT_TEMPLATES = {
    ("country_of_citizenship", "person"): ("{s} holds citizenship of {o}.",
                                           "{s} is a citizen of {o}."),
    ("place_of_birth", "person"): ("{s} was born in {o}.", "{s} was born in the town of {o}."),
    ("employer", "person"): ("{s} works for {o}.", "{s} was employed by {o}."),
    (_ADMIN, "town"): ("{s} lies in the region of {o}.", "{s} belongs to the {o} region."),
    ("country", "town"): ("{s} is a town in {o}.", "{s} is a market town in {o}."),
    ("country", "region"): ("{s} is a region of {o}.", "{s} is a province of {o}."),
    ("headquarters_location", "company"): ("{s} has its headquarters in {o}.",
                                           "{s} is based in {o}."),
    ("located_next_to_body_of_water", "town"): ("{s} lies on {o}.", "{s} was built beside {o}."),
    ("founded_by", "company"): ("{s} was founded by {o}.", "{o} founded {s}."),
}
_ONE_HOP_QUERIES = tuple(FACT_TEMPLATES)
_TWO_HOP_QUERIES = tuple(TWO_HOP_CHAINS)

# Sentences with other cue phrases (never facts of the world): (subject kind, object kind) ->
# templates. For every query there is one with the answer's kind, so a distractor can stand
# next to the subject. {y} and {z} are years.
NOISE_TEMPLATES = {
    ("person", "country"): ("{s} moved to {o} in {y}.", "{s} spent a year in {o} in {y}."),
    ("person", "town"): ("{s} studied in {o}.", "{s} died in {o} in {y}."),
    ("person", "company"): ("{s} bought shares in {o}.", "{s} once wrote an article on {o}."),
    ("person", "person"): ("{s} married {o} in {y}.",),
    ("person", "region"): ("{s} travelled widely in {o}.",),
    ("person", "water"): ("{s} liked to swim in {o}.",),
    ("town", "town"): ("{s} is twinned with {o}.",),
    ("town", "country"): ("{s} trades mainly with {o}.",),
    ("town", "region"): ("Many visitors to {s} come from {o}.",),
    ("town", "water"): ("A canal links {s} with {o}.",),
    ("town", "person"): ("{o} opened a new school in {s} in {y}.",),
    ("town", "company"): ("{o} runs a factory in {s}.",),
    ("region", "region"): ("{s} borders {o}.",),
    ("region", "country"): ("{s} has close ties with {o}.",),
    ("region", "town"): ("{s} has a rail link to {o}.",),
    ("region", "person"): ("{o} governed {s} from {y} to {z}.",),
    ("region", "company"): ("{o} sponsors a football club in {s}.",),
    ("country", "country"): ("{s} borders {o}.",),
    ("country", "town"): ("{s} opened a consulate in {o} in {y}.",),
    ("country", "company"): ("{o} exports goods to {s}.",),
    ("company", "company"): ("{s} merged with {o} in {y}.",),
    ("company", "town"): ("{s} opened an office in {o} in {y}.",),
    ("company", "country"): ("{s} exports goods to {o}.",),
    ("company", "person"): ("{o} led {s} from {y} to {z}.",),
    ("company", "region"): ("{s} sells most of its goods in {o}.",),
    ("company", "water"): ("{s} ran ferries on {o}.",),
    ("water", "country"): ("{s} rises in {o}.",),
    ("water", "water"): ("{s} drains into {o}.",),
    ("water", "person"): ("{o} wrote a book about {s}.",),
}
# Lists of names of one kind; {y} is a year.
LIST_TEMPLATES = {
    "person": ("{list} attended the opening ceremony in {y}.",
               "The guests in {y} included {list}."),
    "town": ("The cycling tour of {y} passed through {list}.",
             "A bus line connects {list}."),
    "region": ("{list} took part in the regional games of {y}.",),
    "country": ("Delegates from {list} met in {y}.", "The treaty of {y} was signed by {list}."),
    "company": ("{list} exhibited at the trade fair of {y}.",),
    "water": ("Anglers often fish in {list}.", "Visitors in {y} could take boat trips on {list}."),
}
# Sentences about one entity that name nothing else: {s} is the name (or a pronoun), {n} a
# number, {y} a year, {w} a word from the kind's list.
FILLER_TEMPLATES = {
    "person": ("{s} wrote {n} books.", "{s} trained as a {w}.", "{s} retired in {y}.",
               "{s} won a national prize in {y}.", "{s} spoke {n} languages."),
    "town": ("{s} was first recorded in {y}.", "{s} had {n},{n}00 inhabitants in {y}.",
             "{s} is known for its {w}.", "A market is held in {s} every week."),
    "region": ("{s} covers {n}00 square kilometres.", "{s} is known for its {w}.",
               "About {n}0,000 people live in {s}."),
    "country": ("{s} became independent in {y}.", "{s} has about {n} million inhabitants.",
                "The flag of {s} shows a {w}."),
    "company": ("{s} was established in {y}.", "{s} employs about {n}00 people.",
                "The best-known product of {s} is the {w}."),
    "water": ("{s} is {n}0 kilometres long.", "{s} is home to many {w}."),
}
# Longer sentences of the same kind, used to pad the few long items.
LONG_FILLER_TEMPLATES = {
    "person": ("{s} spent several years travelling through the northern provinces, collecting "
               "old songs and stories from farmers and fishermen.",
               "In {y}, {s} gave a series of public lectures that drew large crowds and were "
               "later printed as a small book."),
    "town": ("{s} grew quickly after the railway arrived, and many of the old wooden houses near "
             "the harbour were replaced by brick buildings.",
             "Every summer {s} holds a music festival that attracts visitors from all over the "
             "country and fills the small hotels."),
    "region": ("The economy of {s} depends largely on farming, although tourism has grown "
               "steadily since the new roads were opened in {y}.",),
    "country": ("{s} is governed by an elected parliament with {n}0 members, which meets in a "
                "large hall built in {y}.",),
    "company": ("{s} began as a small family workshop and grew into one of the largest "
                "employers in the area within a few decades.",
                "During the hard years after {y}, {s} survived by making simple tools and spare "
                "parts for farmers."),
    "water": ("{s} freezes in most winters, and the ice is often thick enough for skating for "
              "several weeks each year.",),
}
_FILLER_WORDS = {
    "person": ("painter", "poet", "chemist", "composer", "surgeon", "cartographer", "tailor"),
    "town": ("clock tower", "stone bridge", "wool market", "salt mill", "rose garden"),
    "region": ("vineyards", "apples", "cheese", "forests", "hot springs", "marble"),
    "country": ("white star", "red lion", "green oak", "golden sun", "blue wave"),
    "company": ("lamp", "loom", "kettle", "radio", "bicycle", "stove", "camera"),
    "water": ("trout", "pike", "herons", "otters", "swans", "eels"),
}
COMPANY_SUFFIXES = ("Works", "Mills", "Foundry", "Press", "Motors", "Textiles", "Shipping")

# Generation knobs (shares of items unless said otherwise).
_LARGE_RATE = 0.1  # items with 13 to max_candidates candidates
_LONG_RATE = 0.06  # items padded towards MAX_WORDS with filler sentences
_POPULAR_RATE = 0.45  # items where one distractor gets a document of its own
_ANSWER_DOC_RATE = 0.3  # items where the answer gets a document of its own
_NEAR_SUBJECT_RATE = 0.45  # items with a distractor next to the subject (another cue phrase)
_SHARED_ANSWER_RATE = 0.15  # items where a confuser shares the answer
_ANSWER_IN_LIST_RATE = 0.3  # items with a list that also names the answer
_UNMENTIONED_RATE = 0.035  # distractors left out of the supports
_REUSE_RATE = 0.25  # links to an entity already in the world rather than a new one

# ----------------------------------------------------------------------------- lexicon

_LEXICON_SEED = 90511
_UNSEEN_LEXICON_SEED = 270611
_MAX_WORD_LENGTH = 10
_SOUNDS = lexicon.Sounds(
    onsets=("b", "br", "d", "dr", "f", "g", "gl", "h", "k", "kr", "l", "m", "n", "p", "pr", "r",
            "s", "sk", "t", "tr", "v", "w", "z", "th"),
    vowels=("a", "e", "i", "o", "u", "a", "e", "o", "ai", "ou", "ea"),
    codas=("", "", "", "n", "r", "l", "s", "m", "nd", "rt", "sk"))
_POOLS = {
    "first": lexicon.Pool(60, 2, ("", "a", "o", "an", "is", "ette")),
    "last": lexicon.Pool(80, 1, ("veldt", "mann", "quist", "wood", "rick", "dottir", "ov", "ard")),
    "town": lexicon.Pool(150, 1, ("holt", "dal", "mar", "sted", "wyn", "ness", "gard", "ik",
                                  "burn")),
    "region": lexicon.Pool(70, 1, ("mark", "shire", "land", "oria", "avia", "ey")),
    "country": lexicon.Pool(80, 1, ("ania", "ovia", "ara", "esh", "istan", "onia", "ica")),
    "water": lexicon.Pool(70, 2),
    "company": lexicon.Pool(80, 2, ("", "co", "ex")),
    "second": lexicon.Pool(24, 1, min_length=3),  # second words of two-word towns and regions
}
_TWO_WORD_RATE = {"town": 0.15, "region": 0.12}


def _template_words() -> set:
  """Every lower-case word used in the sentence templates (lexicon words must differ)."""
  texts = []
  for group in (FACT_TEMPLATES, NOISE_TEMPLATES, LIST_TEMPLATES, FILLER_TEMPLATES,
                LONG_FILLER_TEMPLATES, _FILLER_WORDS):
    for templates in group.values():
      texts.extend(templates)
  texts.extend(COMPANY_SUFFIXES)
  texts.extend(("the", "river", "lake", "he", "she", "it", "and"))
  return {w for text in texts for w in re.findall(r"[a-z]+", text.lower())}


# No lexicon word is in two pools or in a template.
LEXICON = lexicon.build_lexicon(_LEXICON_SEED, _SOUNDS, _POOLS, max_length=_MAX_WORD_LENGTH,
                                reserved=_template_words())
# The names of the unseen splits: the same kinds of words, none of them a word of LEXICON.
UNSEEN_LEXICON = lexicon.build_unseen_lexicon(LEXICON, _UNSEEN_LEXICON_SEED, _SOUNDS, _POOLS,
                                              max_length=_MAX_WORD_LENGTH,
                                              reserved=_template_words())
# The `names` argument of `generate_examples` -> its lexicon.
LEXICONS = {"seen": LEXICON, "unseen": UNSEEN_LEXICON}

# ----------------------------------------------------------------------------- the world


@dataclasses.dataclass(eq=False)
class _Entity:
  """One entity of an item's world and its stored links (relation -> entity)."""
  kind: str
  name: str
  female: bool = False
  lake: bool = False
  links: Dict[str, "_Entity"] = dataclasses.field(default_factory=dict)

  @property
  def candidate(self) -> str:
    """The name as a candidate string: lower case."""
    return self.name.lower()

  def ref(self) -> str:
    """The name inside a sentence ("the Tolva River" for rivers)."""
    return "the " + self.name if self.kind == "water" and not self.lake else self.name

  def pronoun(self) -> str:
    """"He", "She" or "It"."""
    if self.kind == "person":
      return "She" if self.female else "He"
    return "It"


class _World:
  """The entities of one item: unique names, links set once, so the facts never disagree.

  Every name comes from `names` (LEXICON or UNSEEN_LEXICON) and the shared English words
  ("Lake", "River", COMPANY_SUFFIXES).
  """

  def __init__(self, rng: random.Random, names: lexicon.Lexicon):
    self.rng = rng
    self.lexicon = names
    self.entities: Dict[str, List[_Entity]] = {kind: [] for kind in LIST_TEMPLATES}
    self.names = set()
    self.words = set()

  def _name(self, kind: str) -> Tuple[str, bool]:
    """A random name of a kind and, for bodies of water, whether it is a lake."""
    rng, lex = self.rng, self.lexicon
    if kind == "person":
      return f"{rng.choice(lex['first'])} {rng.choice(lex['last'])}", False
    if kind == "company":
      return f"{rng.choice(lex['company'])} {rng.choice(COMPANY_SUFFIXES)}", False
    if kind == "water":
      word = rng.choice(lex["water"])
      lake = rng.random() < 0.35
      return (f"Lake {word}" if lake else f"{word} River"), lake
    word = rng.choice(lex[kind])
    if rng.random() < _TWO_WORD_RATE.get(kind, 0.0):
      word += " " + rng.choice(lex["second"])
    return word, False

  def new(self, kind: str) -> _Entity:
    """A new entity whose name shares no word with other names (people: no full name)."""
    for _ in range(10_000):
      name, lake = self._name(kind)
      if kind == "person":
        ok = name not in self.names
        words = set()
      else:
        words = {w for w in name.split() if w not in ("Lake", "River", *COMPANY_SUFFIXES)}
        ok = not words & self.words
      if ok:
        break
    else:
      raise RuntimeError(f"the lexicon has too few {kind} names")
    self.names.add(name)
    self.words |= words
    entity = _Entity(kind, name, female=self.rng.random() < 0.5, lake=lake)
    self.entities[kind].append(entity)
    return entity

  def _pick(self, kind: str) -> _Entity:
    """An existing entity of a kind now and then, else a new one."""
    if self.entities[kind] and self.rng.random() < _REUSE_RATE:
      return self.rng.choice(self.entities[kind])
    return self.new(kind)

  def value(self, entity: _Entity, relation: str) -> _Entity:
    """The object of a relation, creating links on first use."""
    key = (relation, entity.kind)
    if key in TWO_HOP_CHAINS:
      first, second = TWO_HOP_CHAINS[key]
      return self.value(self.value(entity, first), second)
    if relation not in entity.links:
      entity.links[relation] = self._pick(BASE_RELATIONS[key])
    return entity.links[relation]

  def assign(self, entity: _Entity, relation: str, target: _Entity) -> None:
    """Makes `target` the object of a relation of a new entity (new bridges for chains)."""
    key = (relation, entity.kind)
    if key in TWO_HOP_CHAINS:
      first, second = TWO_HOP_CHAINS[key]
      _check(first not in entity.links, f"{entity.name} already has {first}")
      bridge = self.new(_object_kind(first, entity.kind))
      self.assign(bridge, second, target)
      entity.links[first] = bridge
    else:
      _check(relation not in entity.links, f"{entity.name} already has {relation}")
      entity.links[relation] = target


def _object_kind(relation: str, kind: str) -> str:
  """The kind of a relation's object for a subject kind."""
  key = (relation, kind)
  if key in BASE_RELATIONS:
    return BASE_RELATIONS[key]
  first, second = TWO_HOP_CHAINS[key]
  return _object_kind(second, _object_kind(first, kind))


def _check(condition: bool, message: str) -> None:
  """An assertion that stays on under `python -O`."""
  if not condition:
    raise AssertionError(message)


# ----------------------------------------------------------------------------- sentences


def _year(rng: random.Random) -> int:
  """A year for dates in sentences."""
  return rng.randint(1850, 2015)


def _fact(rng: random.Random, subject: _Entity, relation: str, obj: _Entity) -> str:
  """A sentence stating one fact with its relation's cue phrase."""
  template = rng.choice(FACT_TEMPLATES[(relation, subject.kind)])
  return capitalise(template.format(s=subject.ref(), o=obj.ref()))


def _noise(rng: random.Random, subject: _Entity, obj: _Entity) -> str:
  """A sentence naming two entities with a cue phrase that is no relation of the queries."""
  template = rng.choice(NOISE_TEMPLATES[(subject.kind, obj.kind)])
  y = _year(rng)
  return capitalise(template.format(s=subject.ref(), o=obj.ref(), y=y, z=y + rng.randint(3, 30)))


def _filler(rng: random.Random, entity: _Entity, by_name: bool, long: bool = False,
            used: Optional[set] = None) -> Optional[str]:
  """A sentence about one entity that names nothing else (by name or by pronoun).

  A pronoun is used only at the start of a sentence. Templates in `used` are skipped (None
  when none is left); the chosen one is added to `used`.
  """
  templates = (LONG_FILLER_TEMPLATES if long else FILLER_TEMPLATES)[entity.kind]
  templates = [t for t in templates if not used or t not in used]
  if not templates:
    return None
  template = rng.choice(templates)
  if used is not None:
    used.add(template)
  s = entity.pronoun() if not by_name and template.startswith("{s}") else entity.ref()
  return capitalise(template.format(s=s, n=rng.randint(2, 9), y=_year(rng),
                                    w=rng.choice(_FILLER_WORDS[entity.kind])))


def _name_list(entities: Sequence[_Entity]) -> str:
  """"A, B and C"."""
  refs = [e.ref() for e in entities]
  return refs[0] if len(refs) == 1 else ", ".join(refs[:-1]) + " and " + refs[-1]


def _list_sentence(rng: random.Random, entities: Sequence[_Entity]) -> str:
  """A sentence naming several entities of one kind."""
  template = rng.choice(LIST_TEMPLATES[entities[0].kind])
  return capitalise(template.format(list=_name_list(entities), y=_year(rng)))


# ----------------------------------------------------------------------------- documents


@dataclasses.dataclass
class _Doc:
  """A support document under construction: its topic and (sentence, removable) pairs."""
  topic: Optional[_Entity]
  sentences: List[Tuple[str, bool]]


class _Docs:
  """At most MAX_SUPPORTS documents of at most MAX_SENTENCES sentences each."""

  def __init__(self):
    self.docs: List[_Doc] = []

  def room(self) -> int:
    """Free sentence slots, counting documents not yet opened."""
    used = sum(len(d.sentences) for d in self.docs)
    return MAX_SUPPORTS * MAX_SENTENCES - used

  def add(self, topic: Optional[_Entity], text: str, removable: bool = False,
          own_doc: bool = False) -> bool:
    """Adds a sentence to the topic's document, a new one, or any with room; False if full."""
    for doc in self.docs:
      if topic is not None and doc.topic is topic and not own_doc:
        if len(doc.sentences) < MAX_SENTENCES:
          doc.sentences.append((text, removable))
          return True
        break
    if len(self.docs) < MAX_SUPPORTS:
      self.docs.append(_Doc(topic, [(text, removable)]))
      return True
    open_docs = [d for d in self.docs if len(d.sentences) < MAX_SENTENCES]
    if not open_docs:
      return False
    min(open_docs, key=lambda d: len(d.sentences)).sentences.append((text, removable))
    return True

  def texts(self) -> List[str]:
    """Each document's sentences joined by spaces."""
    return [" ".join(text for text, _ in d.sentences) for d in self.docs]

  def words(self) -> int:
    """Whitespace-separated words in all documents."""
    return sum(len(text.split()) for text in self.texts())

  def trim(self, max_words: int) -> None:
    """Drops removable sentences (last first) until the documents fit `max_words`."""
    for doc in reversed(self.docs):
      for i in range(len(doc.sentences) - 1, 0, -1):
        if self.words() <= max_words:
          return
        if doc.sentences[i][1]:
          del doc.sentences[i]


# ----------------------------------------------------------------------------- mentions


def _mention_pattern(name: str) -> re.Pattern:
  """Whole-word, case-insensitive matches of a (possibly multi-word) name."""
  words = [re.escape(w) for w in name.split()]
  return re.compile(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)", re.IGNORECASE)


def count_mentions(candidate: str, supports: Sequence[str]) -> int:
  """Whole-word, case-insensitive occurrences of a candidate in the supports."""
  if not candidate.strip():
    return 0
  pattern = _mention_pattern(candidate)
  return sum(len(pattern.findall(text)) for text in supports)


def most_mentioned_candidate(item: dict) -> str:
  """The "most mentioned candidate" baseline; ties go to the earliest candidate.

  Args:
    item: A WikiHop item (`candidates` and `supports` are read).

  Returns:
    The candidate with the most whole-word, case-insensitive mentions in the supports.
  """
  best, best_count = item["candidates"][0], -1
  for candidate in item["candidates"]:
    count = count_mentions(candidate, item["supports"])
    if count > best_count:
      best, best_count = candidate, count
  return best


# ----------------------------------------------------------------------------- items


def _num_candidates(rng: random.Random, max_candidates: int) -> int:
  """2 to max_candidates, skewed small: most items 2 to 12, a tenth 13 or more."""
  if max_candidates <= 2:
    return 2
  if max_candidates > 13 and rng.random() < _LARGE_RATE:
    return rng.randint(13, max_candidates)
  return min(max_candidates, 2 + min(int(rng.expovariate(1 / 3.0)), 10))


class _ItemBuilder:
  """Builds the supports of one item around its gold fact(s), with names from `names`."""

  def __init__(self, rng: random.Random, two_hop_rate: float, max_candidates: int,
               names: lexicon.Lexicon = LEXICON):
    self.rng = rng
    self.world = _World(rng, names)
    self.docs = _Docs()
    self.two_hop = rng.random() < two_hop_rate
    queries = _TWO_HOP_QUERIES if self.two_hop else _ONE_HOP_QUERIES
    self.relation = rng.choice(sorted({relation for relation, _ in queries}))
    kind = rng.choice([k for relation, k in queries if relation == self.relation])
    self.subject = self.world.new(kind)
    self.answer = self.world.value(self.subject, self.relation)
    count = _num_candidates(rng, max_candidates)
    self.distractors = [self.world.new(self.answer.kind) for _ in range(count - 1)]
    self.stated = set()  # (id(entity), relation) already stated
    self.fillers: Dict[int, set] = {}  # id(entity) -> filler templates used

  def _filler(self, entity: _Entity, by_name: bool, long: bool = False) -> Optional[str]:
    """A filler about an entity, none repeated (None when used up; long falls back to short)."""
    used = self.fillers.setdefault(id(entity), set())
    text = _filler(self.rng, entity, by_name, long, used)
    if text is None and long:
      text = _filler(self.rng, entity, by_name, False, used)
    return text

  def _say(self, subject: _Entity, relation: str, obj: _Entity, own_doc: bool = False,
           removable: bool = False) -> None:
    """Adds a fact sentence to the subject's document (or a new one)."""
    self.stated.add((id(subject), relation))
    self.docs.add(subject, _fact(self.rng, subject, relation, obj), removable=removable,
                  own_doc=own_doc)

  # ---- pieces

  def _state(self, subject: _Entity, relation: str, two_docs: bool) -> None:
    """States subject's relation: directly, or through its bridge for a chained relation."""
    key = (relation, subject.kind)
    if key in TWO_HOP_CHAINS and (key not in FACT_TEMPLATES or self.rng.random() < 0.7):
      first, second = TWO_HOP_CHAINS[key]
      bridge = self.world.value(subject, first)
      self._say(subject, first, bridge)
      self._say(bridge, second, self.world.value(bridge, second), own_doc=two_docs)
    else:
      self._say(subject, relation, self.world.value(subject, relation))

  def _extra_facts(self, entity: _Entity, limit: int) -> None:
    """Up to `limit` other facts about a document's topic (never the query about the subject)."""
    keys = [rel for rel, kind in FACT_TEMPLATES if kind == entity.kind]
    self.rng.shuffle(keys)
    added = 0
    for relation in keys:
      if added >= limit:
        break
      if (id(entity), relation) in self.stated or entity is self.subject and (
          relation == self.relation or self.two_hop and (relation, entity.kind) in TWO_HOP_CHAINS):
        continue
      obj = self.world.value(entity, relation)
      if entity is self.subject and obj is self.answer:
        continue
      self._say(entity, relation, obj, removable=True)
      added += 1

  def _own_doc(self, entity: _Entity, sentences: int) -> None:
    """A short document about one entity that names it `sentences` times."""
    for i in range(sentences):
      text = self._filler(entity, True)
      if text is not None:
        self.docs.add(entity, text, removable=i > 0, own_doc=i == 0)

  def _confuser(self, value: _Entity) -> None:
    """Another subject of the subject's kind whose query relation has `value`."""
    other = self.world.new(self.subject.kind)
    self.world.assign(other, self.relation, value)
    self._state(other, self.relation, two_docs=self.rng.random() < 0.6)
    if self.rng.random() < 0.4:
      self._extra_facts(other, 1)

  def _mentions(self) -> Dict[str, int]:
    """Candidate -> mentions in the documents so far."""
    texts = self.docs.texts()
    return {e.candidate: count_mentions(e.candidate, texts)
            for e in [self.answer] + self.distractors}

  # ---- the item

  def _gold(self) -> None:
    """The gold fact(s), in separate documents for two-hop items, and a few other facts."""
    if self.two_hop:
      first, second = TWO_HOP_CHAINS[(self.relation, self.subject.kind)]
      bridge = self.world.value(self.subject, first)
      self._say(self.subject, first, bridge)
      self._say(bridge, second, self.answer, own_doc=True)
      if self.rng.random() < 0.5:
        self._extra_facts(bridge, 1)
    else:
      self._say(self.subject, self.relation, self.answer)
    self._extra_facts(self.subject, self.rng.choice((0, 0, 1, 1, 2)))

  def build(self, long_item: bool) -> List[str]:
    """The support texts: gold fact(s), confusers, asides, own documents, lists, padding."""
    rng, subject, answer = self.rng, self.subject, self.answer
    self._gold()
    distractors = list(self.distractors)
    popular = distractors[0] if distractors and rng.random() < _POPULAR_RATE else None
    # Other subjects with the same relation: the distractors' most direct mentions.
    values = distractors[:rng.randint(1, 3)]
    if popular is not None and rng.random() < 0.5:
      values.append(popular)
    if rng.random() < _SHARED_ANSWER_RATE:
      values.append(answer)
    rng.shuffle(values)
    for value in values:
      self._confuser(value)
    # A distractor next to the subject, with another cue phrase.
    if distractors and rng.random() < _NEAR_SUBJECT_RATE:
      self.docs.add(subject, _noise(rng, subject, popular or rng.choice(distractors)),
                    removable=True)
    if popular is not None:
      self._own_doc(popular, rng.randint(1, 3))
    if rng.random() < _ANSWER_DOC_RATE:
      self._own_doc(answer, rng.randint(1, 2))
    self._mention_the_rest(distractors)
    if long_item:
      self._pad(rng.randint(250, MAX_WORDS))
    self.docs.trim(MAX_WORDS)
    return self._finish()

  def _mention_the_rest(self, distractors: List[_Entity]) -> None:
    """Mentions distractors not yet mentioned (but for a few) in facts, asides or lists."""
    rng, counts = self.rng, self._mentions()
    rest = [d for d in distractors if not counts[d.candidate]
            and rng.random() >= _UNMENTIONED_RATE]
    if len(rest) <= 2:
      for value in rest:
        if rng.random() < 0.5 and len(self.docs.docs) < MAX_SUPPORTS - 1:
          self._confuser(value)
        else:
          topics = [d.topic for d in self.docs.docs if d.topic is not None
                    and d.topic is not self.subject
                    and (d.topic.kind, value.kind) in NOISE_TEMPLATES]
          if topics:
            topic = rng.choice(topics)
            self.docs.add(topic, _noise(rng, topic, value), removable=False)
          else:
            self.docs.add(None, _list_sentence(rng, [value]), own_doc=True)
      return
    if rng.random() < _ANSWER_IN_LIST_RATE:
      rest.insert(rng.randint(0, len(rest)), self.answer)
    size = rng.randint(6, 12)
    for start in range(0, len(rest), size):
      self.docs.add(None, _list_sentence(rng, rest[start:start + size]),
                    own_doc=start == 0 and rng.random() < 0.7)

  def _pad(self, target: int) -> None:
    """Adds facts and fillers to topic documents (a long item) until about `target` words."""
    rng, exhausted = self.rng, set()
    for _ in range(200):
      if self.docs.words() >= target:
        return
      open_docs = [d for d in self.docs.docs if d.topic is not None
                   and len(d.sentences) < MAX_SENTENCES and id(d) not in exhausted]
      if not open_docs:
        if len(self.docs.docs) >= MAX_SUPPORTS:
          return
        entity = self.world.new(rng.choice(("person", "town", "company")))
        self.docs.add(entity, self._filler(entity, True, long=True), removable=True,
                      own_doc=True)
        continue
      doc = rng.choice(open_docs)
      if rng.random() < 0.3 and doc.topic is not self.subject:
        before = self.docs.words()
        self._extra_facts(doc.topic, 1)
        if self.docs.words() > before:
          continue
      text = self._filler(doc.topic, rng.random() < 0.5, long=rng.random() < 0.7)
      if text is None:
        exhausted.add(id(doc))
      else:
        doc.sentences.append((text, True))

  def _finish(self) -> List[str]:
    """Shuffles documents (and later sentences within each) and returns their texts."""
    rng = self.rng
    for doc in self.docs.docs:
      head, tail = doc.sentences[:1], doc.sentences[1:]
      rng.shuffle(tail)
      doc.sentences = head + tail
    rng.shuffle(self.docs.docs)
    return self.docs.texts()


def _example(rng: random.Random, split: str, index: int, max_candidates: int,
             two_hop_rate: float, names: lexicon.Lexicon = LEXICON) -> dict:
  """One item in the official format (annotations in every split but train)."""
  builder = _ItemBuilder(rng, two_hop_rate, max_candidates, names)
  supports = builder.build(long_item=rng.random() < _LONG_RATE)
  candidates = [e.candidate for e in [builder.answer] + builder.distractors]
  rng.shuffle(candidates)
  item = {
      "id": f"WH_{split}_{index}",
      "query": f"{builder.relation} {builder.subject.candidate}",
      "candidates": candidates,
      "supports": supports,
      "answer": builder.answer.candidate,
  }
  _check(2 <= len(supports) <= MAX_SUPPORTS, f"{len(supports)} supports")
  _check(count_mentions(item["answer"], supports) > 0, f"answer not mentioned: {item}")
  if split != "train":
    hops = "multiple" if builder.two_hop else "single"
    item["annotations"] = [["follows", hops] for _ in range(3)]
  return item


# ----------------------------------------------------------------------------- public API


def generate_examples(num: int, seed: int = 0, split: str = "train",
                      max_candidates: int = DEFAULT_MAX_CANDIDATES,
                      two_hop_rate: float = 0.3, names: str = "seen") -> List[dict]:
  """Generates WikiHop-style items.

  Args:
    num: How many items.
    seed: The same arguments give identical items; use different seeds for train and dev
      (`seed + DEV_SEED_OFFSET`) and for the unseen splits (`seed + UNSEEN_DEV_SEED_OFFSET`,
      `seed + UNSEEN_TEST_SEED_OFFSET`).
    split: One of SPLITS ("train", "dev", "dev_unseen", "test_unseen"): the id prefix
      ("WH_dev_unseen_3"); items of every split but train also carry `annotations`.
    max_candidates: Most candidates per item (at least 2).
    two_hop_rate: Share of items whose answer needs a bridge document.
    names: "seen" (LEXICON, shared by train and dev) or "unseen" (UNSEEN_LEXICON, none of
      whose words occurs in items generated with "seen").

  Returns:
    A list of dicts with the official keys.
  """
  if split not in SPLITS:
    raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
  if names not in LEXICONS:
    raise ValueError(f"names must be one of {tuple(LEXICONS)}, got {names!r}")
  if max_candidates < 2:
    raise ValueError(f"max_candidates must be at least 2, got {max_candidates}")
  if not 0.0 <= two_hop_rate <= 1.0:
    raise ValueError(f"two_hop_rate must be in [0, 1], got {two_hop_rate}")
  rng = random.Random(seed)
  return [_example(rng, split, i, max_candidates, two_hop_rate, LEXICONS[names])
          for i in range(num)]


def _paths(directory: str, unseen: bool = False) -> Dict[str, str]:
  """Split name -> file path (train and dev, and with `unseen` the two unseen splits)."""
  paths = {"train": os.path.join(directory, TRAIN_FILENAME),
           "dev": os.path.join(directory, DEV_FILENAME)}
  if unseen:
    paths["dev_unseen"] = os.path.join(directory, DEV_UNSEEN_FILENAME)
    paths["test_unseen"] = os.path.join(directory, TEST_UNSEEN_FILENAME)
  return paths


def _info(num_train: int, num_dev: int, seed: int, max_candidates: int,
          unseen: bool = False) -> dict:
  """What the info file records about a dataset."""
  info = {"generator_version": GENERATOR_VERSION, "num_train": num_train, "num_dev": num_dev,
          "seed": seed, "dev_seed": seed + DEV_SEED_OFFSET, "max_candidates": max_candidates,
          "splits": list(_paths("", unseen))}
  if unseen:
    info.update(num_dev_unseen=num_dev, dev_unseen_seed=seed + UNSEEN_DEV_SEED_OFFSET,
                num_test_unseen=num_dev, test_unseen_seed=seed + UNSEEN_TEST_SEED_OFFSET)
  return info


def write_dataset(directory: str, num_train: int, num_dev: int, seed: int = 0,
                  max_candidates: int = DEFAULT_MAX_CANDIDATES,
                  unseen: bool = False) -> Dict[str, str]:
  """Writes train.json and dev.json (one JSON array each) and the info file, atomically.

  With `unseen`, also dev_unseen.json and test_unseen.json: `num_dev` items each about entities
  whose names never occur in train (`names="unseen"`), from generators of their own, so train
  and dev are the same with or without them. The info file (`synthetic_info.json`: generator
  version, sizes, seeds, splits) is written last, so an interrupted run leaves no info file
  that matches.

  Args:
    directory: Output folder (created if missing).
    num_train: Train items (seed `seed`).
    num_dev: Dev items (seed `seed + DEV_SEED_OFFSET`), and items of each unseen split (seeds
      `seed + UNSEEN_DEV_SEED_OFFSET` and `seed + UNSEEN_TEST_SEED_OFFSET`).
    seed: Train seed.
    max_candidates: Most candidates per item.
    unseen: Whether to write the two unseen splits too.

  Returns:
    {"train": path, "dev": path}, with `unseen` also "dev_unseen" and "test_unseen".
  """
  paths = _paths(directory, unseen)
  seeds = {"train": seed, "dev": seed + DEV_SEED_OFFSET,
           "dev_unseen": seed + UNSEEN_DEV_SEED_OFFSET,
           "test_unseen": seed + UNSEEN_TEST_SEED_OFFSET}
  for split, path in paths.items():
    num = num_train if split == "train" else num_dev
    names = "unseen" if split.endswith("_unseen") else "seen"
    writer.write_json(path, generate_examples(num, seeds[split], split, max_candidates,
                                              names=names))
  writer.write_info(os.path.join(directory, INFO_FILENAME),
                    _info(num_train, num_dev, seed, max_candidates, unseen))
  return paths


def ensure_demo_data(directory: str, num_train: int, num_dev: int,
                     seed: int = 0) -> Dict[str, str]:
  """Writes the dataset with its unseen splits unless the info file shows it was written with
  the same arguments.

  Args:
    directory: Folder of train.json, dev.json, dev_unseen.json, test_unseen.json and
      synthetic_info.json.
    num_train: Train items.
    num_dev: Items of dev and of each unseen split.
    seed: Train seed; dev uses `seed + DEV_SEED_OFFSET`, the unseen splits
      `seed + UNSEEN_DEV_SEED_OFFSET` and `seed + UNSEEN_TEST_SEED_OFFSET`.

  Returns:
    {"train": path, "dev": path, "dev_unseen": path, "test_unseen": path}.
  """
  paths = _paths(directory, unseen=True)
  expected = _info(num_train, num_dev, seed, DEFAULT_MAX_CANDIDATES, unseen=True)
  if writer.is_current(os.path.join(directory, INFO_FILENAME), expected, paths.values()):
    return paths
  return write_dataset(directory, num_train, num_dev, seed, unseen=True)
