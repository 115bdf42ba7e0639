"""A deterministic, English-like synthetic corpus: the embedded default pretraining data.

Every document has one main topic (animals, weather, cooking, ...) whose nouns, verbs,
adjectives and places fill most of its content slots (about one slot in ten draws from a second
topic), a named main character who recurs across its sentences, and a friend. Sentences come
from a few dozen templates with subject-verb agreement ("the dog chases ...", "the dogs chase
...", "does anna ...?") and a/an agreement, so a small masked language model quickly learns the
function words and the topic co-occurrences, and a sentence-level contrastive objective can tell
a document's own sentences from other documents'.

The text is lower case, one space between tokens, and the final `.` / `?` is a separate token.
The same seed always gives byte-identical output (everything is drawn from one
`random.Random(seed)` over fixed-order lists).

This module is pure Python and does not import TensorFlow.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import random
from typing import Dict, List, Sequence, Tuple

from etc_realformer.io_utils import atomic_write_bytes

DEFAULT_NUM_DOCUMENTS = 400
DEFAULT_CORPUS_FILENAME = "embedded_corpus.txt"
MIN_SENTENCES_PER_DOCUMENT = 6
MAX_SENTENCES_PER_DOCUMENT = 20
MIN_WORDS_PER_SENTENCE = 6     # tokens, the final punctuation included
MAX_WORDS_PER_SENTENCE = 20
FORMATS = ("text", "jsonl")

# Per topic: nouns (irregular plurals as "singular|plural"), verbs (base form), adjectives and
# places. Words may be shared by topics.
_TOPICS: Dict[str, Dict[str, str]] = {
    "animals": dict(
        nouns="dog cat horse cow sheep|sheep goat rabbit fox wolf|wolves bear bird "
              "mouse|mice lion tiger deer|deer duck owl frog squirrel puppy",
        verbs="chase feed watch follow hunt catch find hide scare protect lick groom",
        adjs="furry wild hungry tame sleepy fierce playful shy brave spotted striped clever",
        places="farm forest barn meadow zoo den"),
    "weather": dict(
        nouns="cloud storm raindrop snowflake wind breeze rainbow puddle umbrella forecast "
              "season hailstone sunbeam tornado|tornadoes hurricane gust thunderstorm "
              "icicle snowman|snowmen fog|fog",
        verbs="cover soak chill warm darken brighten flood freeze melt predict measure shake",
        adjs="cloudy rainy windy stormy sunny foggy chilly humid freezing mild gray icy",
        places="valley hill coast mountain city plain"),
    "cooking": dict(
        nouns="chef soup bread pan pot knife|knives oven spoon onion tomato|tomatoes "
              "potato|potatoes carrot sauce recipe salad cake pie noodle pepper egg",
        verbs="cook bake stir chop slice boil fry taste mix roast serve peel",
        adjs="delicious spicy sweet salty fresh crispy tender sour creamy golden juicy bitter",
        places="kitchen restaurant bakery market cafe diner"),
    "sports": dict(
        nouns="ball player team coach goal match referee racket bat net medal trophy|trophies "
              "runner score glove helmet whistle league fan jersey",
        verbs="kick throw catch pass block win lose train defend tackle cheer shoot",
        adjs="fast strong tired quick skilled athletic proud young eager nimble tough rival",
        places="stadium field court gym track arena"),
    "music": dict(
        nouns="song guitar piano drum violin singer band melody rhythm note concert choir "
              "album trumpet flute chord lyric ballad orchestra microphone",
        verbs="play sing hum compose tune record practice perform strum rehearse enjoy hear",
        adjs="melodic soft loud catchy slow gentle lively beautiful classical acoustic famous "
             "joyful",
        places="studio hall theater club church festival"),
    "travel": dict(
        nouns="train plane ticket suitcase passport map hotel tourist guide journey road "
              "bridge castle bus taxi camera postcard souvenir traveler backpack",
        verbs="visit explore book pack board reach cross photograph plan leave ride drive",
        adjs="foreign distant ancient crowded scenic famous long expensive cheap exotic busy "
             "historic",
        places="airport station harbor village museum border"),
    "science": dict(
        nouns="scientist experiment atom molecule cell telescope microscope planet star theory "
              "sample crystal magnet battery formula particle gene fossil equation comet",
        verbs="study observe test analyze discover heat cool weigh examine model calculate "
              "prove",
        adjs="tiny complex chemical magnetic precise curious electric invisible rare heavy "
             "accurate scientific",
        places="laboratory university observatory institute library desert"),
    "garden": dict(
        nouns="flower rose tree seed root leaf|leaves bush weed tulip vine hedge fence shovel "
              "hose gardener pumpkin berry sunflower bee worm",
        verbs="plant water grow prune dig trim pick harvest rake sow spray gather",
        adjs="green blooming tall thorny leafy ripe colorful fragrant wilted fertile muddy lush",
        places="garden greenhouse orchard yard park field"),
    "computers": dict(
        nouns="computer keyboard screen program server file network laptop robot database "
              "password printer bug cable chip website algorithm router mouse|mice app",
        verbs="install update debug compile download delete restart type scan save connect "
              "encrypt",
        adjs="digital slow fast secure broken wireless powerful modern portable virtual faulty "
             "remote",
        places="office datacenter basement library startup warehouse"),
    "health": dict(
        nouns="doctor nurse patient medicine pill fever injury bandage vitamin muscle heart "
              "bone vaccine symptom therapy cough headache wound thermometer ambulance",
        verbs="heal treat examine cure prescribe diagnose exercise stretch monitor inject "
              "relieve prevent",
        adjs="healthy sick painful weak strong swollen careful calm tired feverish sore "
             "nervous",
        places="hospital clinic pharmacy ward gym spa"),
    "ocean": dict(
        nouns="wave ship sailor whale shark dolphin boat anchor shell fisherman|fishermen reef "
              "crab island lighthouse sail tide seagull octopus|octopuses net coral",
        verbs="sail swim dive float sink steer row spot drift splash rescue navigate",
        adjs="salty deep blue calm rough sandy stormy vast shiny tropical wet slippery",
        places="beach bay harbor shore cove lagoon"),
    "school": dict(
        nouns="teacher student book pencil desk lesson homework|homework exam notebook chalk "
              "board ruler backpack grade question answer essay eraser principal map",
        verbs="read write learn teach study answer ask solve draw memorize explain review",
        adjs="smart bored quiet difficult easy strict helpful new long tidy messy polite",
        places="classroom library school cafeteria playground hallway"),
}
TOPICS: Tuple[str, ...] = tuple(_TOPICS)

NAMES = ("anna", "ben", "clara", "david", "emma", "felix", "grace", "henry", "iris", "jack",
         "kate", "leo", "maria", "nina", "oscar", "paul", "rosa", "sam", "tara", "victor",
         "wendy", "yusuf", "zoe", "omar", "lucy", "marco", "hana", "ivan", "julia", "noah")
TIMES = ("today", "every morning", "at night", "in the evening", "on sunday", "after lunch",
         "in the spring", "in the winter", "every day", "before dawn")
NUMBERS = ("two", "three", "four", "five", "six", "seven", "ten", "many", "several", "some",
           "a few")
ADVERBS = ("often", "always", "never", "sometimes", "rarely", "usually")
CONNECTIVES = ("because", "although", "while")
FEELINGS = ("happy", "sad", "surprised", "excited", "worried", "proud")


def _plural(noun: str) -> str:
  """Regular English plural."""
  if noun.endswith(("s", "x", "z", "ch", "sh")):
    return noun + "es"
  if noun.endswith("y") and noun[-2:-1] not in "aeiou":
    return noun[:-1] + "ies"
  return noun + "s"


def _third_person(verb: str) -> str:
  """Third person singular present ("catch" -> "catches", "study" -> "studies")."""
  if verb.endswith(("s", "x", "z", "ch", "sh", "o")):
    return verb + "es"
  if verb.endswith("y") and verb[-2:-1] not in "aeiou":
    return verb[:-1] + "ies"
  return verb + "s"


class _Lexicon:
  """The word lists of one topic, with noun plurals and verb forms resolved."""

  def __init__(self, spec: Dict[str, str]):
    self.nouns: List[Tuple[str, str]] = []
    for entry in spec["nouns"].split():
      singular, _, plural = entry.partition("|")
      self.nouns.append((singular, plural or _plural(singular)))
    self.verbs: List[Tuple[str, str]] = [(v, _third_person(v)) for v in spec["verbs"].split()]
    self.adjs: List[str] = spec["adjs"].split()
    self.places: List[str] = spec["places"].split()


_LEXICONS: Dict[str, _Lexicon] = {topic: _Lexicon(spec) for topic, spec in _TOPICS.items()}


class _DocumentWriter:
  """Draws the sentences of one document: its topics, character and friend are fixed."""

  def __init__(self, rng: random.Random):
    self.rng = rng
    self.main = _LEXICONS[rng.choice(TOPICS)]
    self.other = _LEXICONS[rng.choice(TOPICS)]
    self.name, self.friend = rng.sample(NAMES, 2)
    # The character's own thing, a noun of the main topic that recurs through the document.
    self.pet = rng.choice(self.main.nouns)[0]

  def _lex(self) -> _Lexicon:
    return self.other if self.rng.random() < 0.1 else self.main

  def noun(self, plural: bool = False) -> str:
    singular, plural_form = self.rng.choice(self._lex().nouns)
    return plural_form if plural else singular

  def verb(self, third_person: bool) -> str:
    base, third = self.rng.choice(self._lex().verbs)
    return third if third_person else base

  def adj(self) -> str:
    return self.rng.choice(self._lex().adjs)

  def place(self) -> str:
    return self.rng.choice(self._lex().places)

  def subject(self) -> Tuple[str, bool]:
    """A subject phrase and whether it is singular."""
    r = self.rng.random()
    if r < 0.35:
      return self.name, True
    if r < 0.45:
      return f"{self.name} and {self.friend}", False
    if r < 0.55:
      return f"the {self.pet} of {self.name}", True
    if r < 0.75:
      return f"the {self.adj()} {self.noun()}", True
    if r < 0.9:
      return f"the {self.noun(plural=True)}", False
    return f"{self.rng.choice(NUMBERS)} {self.adj()} {self.noun(plural=True)}", False

  def sentence(self) -> str:
    """One sentence from a random template."""
    rng = self.rng
    subj, singular = self.subject()
    verb = self.verb(singular)
    do = "does" if singular else "do"
    be = "is" if singular else "are"
    n = rng.randrange(16)
    if n == 0:
      s = f"{subj} {verb} the {self.noun()} near the {self.place()} ."
    elif n == 1:
      s = f"{subj} {verb} the {self.adj()} {self.noun()} {rng.choice(TIMES)} ."
    elif n == 2:
      s = (f"{subj} {rng.choice(ADVERBS)} {verb} {rng.choice(NUMBERS)} "
           f"{self.noun(plural=True)} in the {self.place()} .")
    elif n == 3:
      s = f"in the {self.place()} , {subj} {verb} the {self.noun()} ."
    elif n == 4:
      s = (f"{subj} {do} not {self.verb(False)} the {self.noun()} "
           f"{rng.choice(CONNECTIVES)} it is {self.adj()} .")
    elif n == 5:
      s = (f"{subj} will {self.verb(False)} the {self.adj()} {self.noun(plural=True)} "
           f"{rng.choice(TIMES)} .")
    elif n == 6:
      s = (f"the {self.noun()} is very {self.adj()} and the {self.noun(plural=True)} are "
           f"{self.adj()} .")
    elif n == 7:
      s = f"{self.name} says that the {self.noun()} {self.verb(True)} the {self.noun()} ."
    elif n == 8:
      s = (f"when the {self.noun(plural=True)} {self.verb(False)} , {subj} {verb} the "
           f"{self.noun()} .")
    elif n == 9:
      s = f"{subj} can {self.verb(False)} a {self.adj()} {self.noun()} with the {self.noun()} ."
    elif n == 10:
      s = f"why {do} {subj} {self.verb(False)} the {self.noun()} at the {self.place()} ?"
    elif n == 11:
      s = f"{subj} {verb} the {self.noun()} and then {self.verb(singular)} the {self.noun()} ."
    elif n == 12:
      s = (f"there are {rng.choice(NUMBERS)} {self.adj()} {self.noun(plural=True)} in the "
           f"{self.place()} .")
    elif n == 13:
      s = f"{self.name} likes the {self.adj()} {self.noun()} more than the {self.noun()} ."
    elif n == 14:
      s = (f"{subj} {be} {rng.choice(FEELINGS)} because the {self.pet} {self.verb(True)} "
           f"the {self.adj()} {self.noun()} .")
    else:
      s = f"everyone knows that {subj} {verb} the {self.noun()} {rng.choice(TIMES)} ."
    return _fix_articles(s)

  def document(self) -> List[str]:
    """The sentences of one document: an introduction, then template sentences."""
    count = self.rng.randint(MIN_SENTENCES_PER_DOCUMENT, MAX_SENTENCES_PER_DOCUMENT)
    sentences = [_fix_articles(
        f"this is a story about {self.name} and the {self.adj()} {self.pet} .")]
    while len(sentences) < count:
      s = self.sentence()
      if MIN_WORDS_PER_SENTENCE <= len(s.split()) <= MAX_WORDS_PER_SENTENCE:
        sentences.append(s)
    return sentences


def _fix_articles(sentence: str) -> str:
  """"a" -> "an" before a vowel."""
  tokens = sentence.split()
  for i in range(len(tokens) - 1):
    if tokens[i] == "a" and tokens[i + 1][0] in "aeiou":
      tokens[i] = "an"
  return " ".join(tokens)


def generate_documents(num_documents: int = DEFAULT_NUM_DOCUMENTS,
                       seed: int = 0) -> List[List[str]]:
  """Generates the synthetic corpus.

  Args:
    num_documents: how many documents.
    seed: the random seed; the same seed gives the same documents.

  Returns:
    `num_documents` documents, each a list of 6-20 sentences of 6-20 space-separated tokens.

  Raises:
    ValueError: num_documents is negative.
  """
  if num_documents < 0:
    raise ValueError(f"num_documents must be >= 0, got {num_documents}")
  rng = random.Random(seed)
  return [_DocumentWriter(rng).document() for _ in range(num_documents)]


def corpus_text(documents: Sequence[Sequence[str]],
                format: str = "text") -> str:  # pylint: disable=redefined-builtin
  """Serialises documents in a `read_corpus` format.

  Args:
    documents: lists of sentences (no line breaks inside a sentence).
    format: "text" (one sentence per line, a blank line between documents) or "jsonl" (one
      {"id", "text"} object per line, the sentences of "text" separated by newlines).

  Returns:
    The file contents.

  Raises:
    ValueError: unknown format.
  """
  if format == "text":
    return "\n\n".join("\n".join(doc) for doc in documents) + ("\n" if documents else "")
  if format == "jsonl":
    return "".join(json.dumps({"id": f"doc{i:05d}", "text": "\n".join(doc)}) + "\n"
                   for i, doc in enumerate(documents))
  raise ValueError(f"format must be one of {FORMATS}, got {format!r}")


def write_corpus(path: str, num_documents: int = DEFAULT_NUM_DOCUMENTS, seed: int = 0,
                 format: str = "text") -> str:  # pylint: disable=redefined-builtin
  """Writes the synthetic corpus to `path` (gzip-compressed, reproducibly, if it ends in .gz).

  Args:
    path: the output file; missing parent directories are created.
    num_documents: how many documents.
    seed: the random seed.
    format: "text" or "jsonl" (see `corpus_text`).

  Returns:
    `path`.

  Raises:
    ValueError: unknown format or negative num_documents.
  """
  if format not in FORMATS:
    raise ValueError(f"format must be one of {FORMATS}, got {format!r}")
  data = corpus_text(generate_documents(num_documents, seed), format).encode("utf-8")
  if os.fspath(path).endswith(".gz"):
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as f:
      f.write(data)
    data = buffer.getvalue()
  # A reader never sees a half-written corpus.
  return atomic_write_bytes(path, data)


def ensure_default_corpus(directory: str) -> str:
  """Writes the default corpus as `embedded_corpus.txt` in `directory` unless it exists.

  Args:
    directory: where the corpus lives (created if missing).

  Returns:
    The corpus file's path.
  """
  path = os.path.join(directory, DEFAULT_CORPUS_FILENAME)
  if not os.path.isfile(path):
    write_corpus(path, DEFAULT_NUM_DOCUMENTS, seed=0, format="text")
  return path
