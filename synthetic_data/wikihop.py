"""Synthetic WikiHop (QAngaroo v1.1) data in the official JSON format: one generator, two presets.

One JSON array per file of {id, query ("<relation> <subject>", lower case), candidates
(distinct lower-case names of the answer's kind, shuffled), supports, answer}, plus
`annotations` in every split but train. Each item is a small invented world whose links are set
once, so stated facts never disagree; the query is answered by one sentence or through a bridge
entity in another document (`TWO_HOP_RATE`), and the other candidates appear in confuser and
near-miss sentences, so counting mentions is a weak baseline. Template families (`FAMILIES`)
phrase facts, structure documents and write distractors their own way; the
`*_unseen_templates` splits use only `HELD_OUT_FAMILIES` and every unseen split names things
from `UNSEEN_LEXICON`. Presets: `PRESETS`, knobs in `Preset`. docs/synthetic_data/wikihop.md
has the families, the length targets and what was measured.

The same arguments give identical records (one `random.Random(seed + offset)` per split, no
`hash()`, fixed-order lists), in any process. Pure Python: never loads TensorFlow.
"""

from __future__ import annotations

import dataclasses
import math
import random
import re
from typing import Dict, List, Optional, Sequence, Tuple

from synthetic_data import lexicon, writer
from synthetic_data.lexicon import MONTHS, capitalise

GENERATOR_VERSION = 1
PRESETS = ("benchmark", "short")
FAMILIES = ("lead", "infobox", "narrative", "stub", "chronicle")
TRAIN_FAMILIES = FAMILIES[:3]  # the benchmark preset's (`Preset` has each preset's)
HELD_OUT_FAMILIES = FAMILIES[3:]
SPLITS = writer.SPLITS
DEV_SEED_OFFSET = 1_000_003
SEED_OFFSETS = {"train": 0, "dev": DEV_SEED_OFFSET, "dev_unseen": 2_000_003,
                "dev_unseen_templates": 4_000_037, "test_unseen_templates": 5_000_011}
FILENAMES = {split: f"benchmark_{split}.json" for split in SPLITS}
INFO_FILENAME = "benchmark_info.json"
TWO_HOP_RATE = 0.35
MAX_CANDIDATES = 60
MIN_SUPPORTS, MAX_SUPPORTS = 3, 40

# ----------------------------------------------------------------------------- relations

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
# The facts a sentence can state, (relation, subject kind): the queries of single-hop items.
C = ("country_of_citizenship", "person")
B = ("place_of_birth", "person")
E = ("employer", "person")
A = (_ADMIN, "town")
CT = ("country", "town")
CR = ("country", "region")
H = ("headquarters_location", "company")
W = ("located_next_to_body_of_water", "town")
F = ("founded_by", "company")
FACT_KEYS = (C, B, E, A, CT, CR, H, W, F)
# The relations of the queries (those of the two-hop chains are among them).
RELATIONS = tuple(dict.fromkeys(relation for relation, _ in FACT_KEYS))

# ----------------------------------------------------------------------------- fact templates
# {s} the subject's name, {o} the object's name, {t} the document's topic named in its header
# (infobox fields), {P}/{pos} the subject's pronoun/possessive, {y} a year, {date} a date.

FACT_TEMPLATES: Dict[str, Dict[Tuple[str, str], Tuple[str, ...]]] = {
    "lead": {
        C: ("{s} holds citizenship of {o}.", "{s} is a citizen of {o}."),
        B: ("{s} was born in {o}.", "{s} was born in the town of {o}."),
        E: ("{s} works for {o}.", "{s} was employed by {o}."),
        A: ("{s} lies in the region of {o}.", "{s} belongs to the {o} region."),
        CT: ("{s} is a town in {o}.", "{s} is a market town in {o}."),
        CR: ("{s} is a region of {o}.", "{s} is a province of {o}."),
        H: ("{s} has its headquarters in {o}.", "{s} is based in {o}."),
        W: ("{s} lies on {o}.", "{s} was built beside {o}."),
        F: ("{s} was founded by {o}.", "{s} was created by {o}."),
    },
    "infobox": {
        C: ("{t}Citizenship: {o}.", "{t}Nationality: {o}."),
        B: ("{t}Place of birth: {o}.", "{t}Birthplace: {o}."),
        E: ("{t}Employer: {o}.", "{t}Works at: {o}."),
        A: ("{t}Administrative region: {o}.", "{t}Region: {o}."),
        CT: ("{t}Country: {o}.",),
        CR: ("{t}Country: {o}.", "{t}Sovereign state: {o}."),
        H: ("{t}Headquarters: {o}.", "{t}Head office: {o}."),
        W: ("{t}Body of water: {o}.", "{t}On the shore of: {o}."),
        F: ("{t}Founder: {o}.", "{t}Founded by: {o}."),
    },
    "narrative": {
        C: ("{s} lived abroad for many years. {P} nevertheless remained a national of {o}.",
            "{o} counts {s} among its nationals."),
        B: ("{o} is the birthplace of {s}.", "{s} is a native of the town of {o}."),
        E: ("{s} earned {pos} living at {o}.",
            "{s} joined the staff of {o} and stayed there for the rest of {pos} career."),
        A: ("{s} is administered as part of {o}.",
            "{s} falls under the authority of the regional council of {o}."),
        CT: ("{s} is one of the towns of {o}.", "{s} counts as a municipality of {o}."),
        CR: ("{s} forms part of the territory of {o}.",
             "{o} administers {s} as one of its provinces."),
        H: ("{s} is run from offices in {o}.", "{o} is home to the main offices of {s}."),
        W: ("{s} stands on the banks of {o}.",
            "{s} is a quiet place. {P} grew up along {o}."),
        F: ("{s} was started by {o}.", "{o} set up {s} with borrowed money."),
    },
    "stub": {
        C: ("{s} became a naturalised subject of {o}.", "{s} owes allegiance to {o}."),
        B: ("{s} first drew breath in {o}.", "The birth of {s} took place in {o}."),
        E: ("{s} is on the payroll of {o}.", "{s} draws a salary from {o}."),
        A: ("{s} is a community within {o}.", "{s} comes under the {o} district council."),
        CT: ("{s} is a settlement in the state of {o}.", "{s} is a township in the nation of {o}."),
        CR: ("{s} is a county-level division of {o}.",
             "{s} is one of the states that make up {o}."),
        H: ("{s} is managed from {o}.", "{s} has its seat in {o}."),
        W: ("{s} overlooks {o}.", "{s} is a port on {o}."),
        F: ("{s} is the creation of {o}.", "{s} began as a venture of {o}."),
    },
    "chronicle": {
        C: ("From {y} onwards {s} carried the passport of {o}.",
            "Since {y}, {s} has been registered on the civil rolls of {o}."),
        B: ("{s} entered the world on {date} in {o}.",
            "{s} was delivered into the world on {date} at {o}."),
        E: ("In {y} {s} signed a contract with {o}, and {p} still serves the firm.",
            "From {y}, {s} has been on the staff of {o}."),
        A: ("Since the reform of {y}, {s} has been governed as a district of {o}.",
            "By a decree of {y}, {s} was placed under the rule of {o}."),
        CT: ("Since {y}, {s} has been a borough of {o}.",
             "In {y} {s} was incorporated as a borough of {o}."),
        CR: ("In {y}, {s} was annexed by {o}, which still rules it.",
             "Since {y}, {s} has been a federal state of {o}."),
        H: ("In {y}, {s} relocated its main seat to {o}, where it remains.",
            "Since {y} the management of {s} has sat in {o}."),
        W: ("Since its charter of {y}, {s} has fronted {o}.",
            "In {y} {s} was laid out at the water's edge of {o}."),
        F: ("In {y}, {o} launched {s}.", "{s} was brought into being in {y} by {o}."),
    },
}

# Distractors that share the question's relation words: (relation, subject kind) -> sentences
# naming the subject ({s}) and an entity of the answer's kind ({o}) that state no fact.
NEAR_MISS_TEMPLATES: Dict[str, Dict[Tuple[str, str], Tuple[str, ...]]] = {
    "lead": {
        C: ("{s} once studied the citizenship rules of {o}.",),
        B: ("{s}'s mother was born in {o}.",),
        E: ("{s} turned down a job offer from {o}.",),
        A: ("{s} trades mostly with the region of {o}.",),
        CT: ("{s} is twinned with a town in {o}.",),
        CR: ("{s} has long competed with {o} for tourists.",),
        H: ("{s} opened a sales office in {o} in {y}.",),
        W: ("Anglers from {s} often travel to {o}.",),
        F: ("{o} bought a large share of {s} in {y}.",),
        (_ADMIN, "company"): ("{s} pays local taxes to the region of {o} for a depot.",),
        ("country", "company"): ("{s} does much of its business in {o}.",),
    },
    "infobox": {
        C: ("{t}Visa issued by: {o}.",),
        B: ("{t}Birthplace of spouse: {o}.",),
        E: ("{t}Rejected offer from: {o}.",),
        A: ("{t}Neighbouring region: {o}.",),
        CT: ("{t}Trading partner: {o}.",),
        CR: ("{t}Neighbouring country: {o}.",),
        H: ("{t}Branch office: {o}.",),
        W: ("{t}Fishing rights on: {o}.",),
        F: ("{t}Chairman: {o}.",),
        (_ADMIN, "company"): ("{t}Sales region: {o}.",),
        ("country", "company"): ("{t}Largest customer country: {o}.",),
    },
    "narrative": {
        C: ("{s} spent a long winter in {o} but never settled there.",),
        B: ("The father of {s} came from {o}, a place {s} rarely visited.",),
        E: ("{s} once applied for a post at {o} and was turned away.",),
        A: ("Many families of {s} moved to {o} after the war.",),
        CT: ("The railway from {s} runs on towards {o}.",),
        CR: ("Farmers of {s} sell much of their grain to {o}.",),
        H: ("A warehouse of {s} stood for a time in {o}.",),
        W: ("The people of {s} go on day trips to {o}.",),
        F: ("For a few years {o} sat on the board of {s}.",),
        (_ADMIN, "company"): ("Lorries of {s} cross {o} every day.",),
        ("country", "company"): ("Much of the profit of {s} comes from sales in {o}.",),
    },
    "stub": {
        C: ("{s} was refused a residence permit by {o}.",),
        B: ("{s} has an elder sister who first drew breath in {o}.",),
        E: ("{s} was once a customer of {o}.",),
        A: ("{s} sends pupils to schools in {o}.",),
        CT: ("{s} imports coal from {o}.",),
        CR: ("{s} signed a water treaty with {o}.",),
        H: ("{s} keeps a small depot in {o}.",),
        W: ("Boats built in {s} are sold on {o}.",),
        F: ("{o} wrote a critical history of {s}.",),
        (_ADMIN, "company"): ("{s} advertises on radio in {o}.",),
        ("country", "company"): ("{s} sells spare parts in {o}.",),
    },
    "chronicle": {
        C: ("In {y} {s} was denied entry to {o}.",),
        B: ("In {y} the only child of {s} was delivered in {o}.",),
        E: ("In {y} {s} briefly advised {o} on a single project.",),
        A: ("In {y} a flood forced many people of {s} to flee to {o}.",),
        CT: ("In {y} a trade fair of {s} was held in {o}.",),
        CR: ("In {y} {s} lent a large sum of money to {o}.",),
        H: ("In {y} {s} rented a storeroom in {o}.",),
        W: ("In {y} rowers from {s} won a race on {o}.",),
        F: ("In {y} {o} tried and failed to buy {s}.",),
        (_ADMIN, "company"): ("In {y} {s} sponsored a cycling race through {o}.",),
        ("country", "company"): ("In {y} {s} won a large order from {o}.",),
    },
}

# Sentences naming a document's topic ({s}) and another entity ({o}) with cue phrases of no
# relation of the queries: the plain distractors of each family, by (topic class, object kind);
# "agent" topics are people and companies, "place" topics towns, regions and countries, and
# rivers and lakes have a few sentences for any object (none that puts the water next to it).
NOISE_TEMPLATES: Dict[str, Dict[Tuple[str, str], Tuple[str, ...]]] = {
    "lead": {
        ("agent", "person"): ("{s} is often mentioned together with {o}.",
                              "{s} once hired {o} as an adviser."),
        ("agent", "town"): ("{s} spent a summer in {o} in {y}.",
                            "{s} gave a public talk in {o} in {y}."),
        ("agent", "region"): ("{s} toured {o} in {y}.", "{s} has many admirers in {o}."),
        ("agent", "country"): ("{s} received an award from {o} in {y}.",
                               "{s} is well known in {o}."),
        ("agent", "company"): ("{s} buys paper and ink from {o}.",
                               "{s} has a supply deal with {o}."),
        ("agent", "water"): ("{s} organised a boat race on {o} in {y}.",
                             "{s} paid for a study of fish in {o}."),
        ("place", "person"): ("A statue of {o} stands in {s}.",
                              "{o} gave a famous speech in {s} in {y}."),
        ("place", "town"): ("{s} has a bus link to {o}.", "Visitors to {s} often continue to {o}."),
        ("place", "region"): ("{s} shares a football league with {o}.",
                              "A long hiking trail leads from {s} to {o}."),
        ("place", "country"): ("{s} received a trade delegation from {o} in {y}.",
                               "{s} is popular with tourists from {o}."),
        ("place", "company"): ("{o} runs a small shop in {s}.",
                               "{o} sponsors the sports club of {s}."),
        ("place", "water"): ("Postcards of {o} are sold everywhere in {s}.",
                             "A canal project would have joined {s} to {o}."),
        ("water", "any"): ("An old song about {s} also mentions {o}.",
                             "A painting of {s} was bought by a collector from {o}."),
    },
    "infobox": {
        ("agent", "person"): ("{t}Associated people: {o}.", "{s} exchanged letters with {o}."),
        ("agent", "town"): ("{t}Residence: {o}.", "{s} kept a holiday flat in {o}."),
        ("agent", "region"): ("{t}Area of activity: {o}.", "{s} often worked in {o}."),
        ("agent", "country"): ("{t}Honours from: {o}.",
                               "{s} was received by the president of {o}."),
        ("agent", "company"): ("{t}Main supplier: {o}.", "{s} sponsors an exhibition by {o}."),
        ("agent", "water"): ("{t}Favourite water: {o}.", "{s} printed a map of {o} in {y}."),
        ("place", "person"): ("{t}Notable visitor: {o}.", "{o} opened the new library of {s}."),
        ("place", "town"): ("{t}Partner town: {o}.", "{s} sends a choir to {o} every spring."),
        ("place", "region"): ("{t}Adjacent area: {o}.", "{s} runs a joint museum with {o}."),
        ("place", "country"): ("{t}Export market: {o}.", "{s} was visited by a minister from {o}."),
        ("place", "company"): ("{t}Main sponsor: {o}.", "{o} built a warehouse in {s}."),
        ("place", "water"): ("{t}Nearby water: {o}.", "{s} printed a map of {o} in {y}."),
        ("water", "any"): ("{t}Mentioned with: {o}.",
                             "A guidebook describes {s} together with {o}."),
    },
    "narrative": {
        ("agent", "person"): ("Years later {s} met {o} at a wedding.",
                              "{s} and {o} argued about music for a whole evening."),
        ("agent", "town"): ("One winter {s} stayed in {o} with old friends.",
                            "A journey to {o} left a deep mark on {s}."),
        ("agent", "region"): ("{s} spent long holidays walking in {o}.",
                              "For years, stories from {o} fascinated {s}."),
        ("agent", "country"): ("A traveller from {o} wrote a warm account of {s}.",
                               "Newspapers in {o} reported on {s} in {y}."),
        ("agent", "company"): ("For a while {s} bought all its tools from {o}.",
                               "An advertisement for {o} once made {s} laugh."),
        ("agent", "water"): ("{s} loved to row on {o} in the early morning.",
                             "A trip down {o} changed the plans of {s}."),
        ("place", "person"): ("Old people in {s} still remember a visit by {o}.",
                              "{o} painted the market square of {s}."),
        ("place", "town"): ("One summer {s} hosted a fair where traders from {o} sold cloth.",
                            "A storm once cut the road between {s} and {o}."),
        ("place", "region"): ("Pilgrims on their way to {o} often stop near {s}.",
                              "Herders drive their sheep from {s} into {o} each spring."),
        ("place", "country"): ("A traveller from {o} wrote a warm account of {s}.",
                               "Newspapers in {o} reported on {s} in {y}."),
        ("place", "company"): ("Trucks of {o} can often be seen around {s}.",
                               "An advertisement for {o} once caused a stir in {s}."),
        ("place", "water"): ("Old songs of {s} tell of floods on {o}.",
                             "Paintings of {o} are a favourite theme around {s}."),
        ("water", "any"): ("Fishermen on {s} like to tell stories about {o}.",
                             "A long poem about {s} ends with a nod to {o}."),
    },
    "stub": {
        ("agent", "person"): ("{s} was praised by {o}.", "{s} is the subject of a poem by {o}."),
        ("agent", "town"): ("{s} has a studio in {o}.", "{s} exhibits regularly in {o}."),
        ("agent", "region"): ("{s} is popular in {o}.", "{s} has a fan club in {o}."),
        ("agent", "country"): ("{s} imports wine from {o}.",
                               "{s} appears in a travel guide of {o}."),
        ("agent", "company"): ("{s} rents machines from {o}.", "{s} has shares in {o}."),
        ("agent", "water"): ("{s} owns a boat on {o}.", "{s} holds a photo contest about {o}."),
        ("place", "person"): ("{s} has a street named after {o}.",
                              "{s} is praised in a song by {o}."),
        ("place", "town"): ("{s} is on a cycle route to {o}.", "{s} shares a hospital with {o}."),
        ("place", "region"): ("{s} has a ferry service to {o}.", "{s} hosts a festival with {o}."),
        ("place", "country"): ("{s} imports wine from {o}.",
                               "{s} appears in a travel guide of {o}."),
        ("place", "company"): ("{s} buys buses from {o}.", "{s} hosts a shop of {o}."),
        ("place", "water"): ("{s} has a view of {o} on clear days.",
                             "{s} holds a photo contest about {o}."),
        ("water", "any"): ("{s} is named in a song about {o}.",
                             "{s} is shown on a stamp issued for {o}."),
    },
    "chronicle": {
        ("agent", "person"): ("In {y} {s} shared a stage with {o}.",
                              "In {y} {s} received a letter from {o}."),
        ("agent", "town"): ("In {y} {s} opened a small exhibition in {o}.",
                            "In {y} {s} was honoured by the mayor of {o}."),
        ("agent", "region"): ("In {y} {s} made a long tour of {o}.",
                              "In {y} {s} gave money to schools in {o}."),
        ("agent", "country"): ("In {y} envoys from {o} met {s}.",
                               "In {y} {s} received a medal from {o}."),
        ("agent", "company"): ("In {y} {s} ordered machines from {o}.",
                               "In {y} {s} was audited by {o}."),
        ("agent", "water"): ("In {y} a survey of {o} was paid for by {s}.",
                             "In {y} a regatta on {o} was sponsored by {s}."),
        ("place", "person"): ("In {y} {o} planted an oak in {s}.", "In {y} {o} spoke in {s}."),
        ("place", "town"): ("In {y} a new road joined {s} to {o}.",
                            "In {y} {s} sent relief to {o}."),
        ("place", "region"): ("In {y} {s} and {o} held joint games.",
                              "In {y} {s} signed a pact with {o}."),
        ("place", "country"): ("In {y} envoys from {o} toured {s}.",
                               "In {y} {s} hosted students from {o}."),
        ("place", "company"): ("In {y} {o} opened a branch in {s}.",
                               "In {y} {o} paved the square of {s}."),
        ("place", "water"): ("In {y} a survey of {o} was paid for by {s}.",
                             "In {y} a regatta on {o} was held for {s}."),
        ("water", "any"): ("In {y} a report on {s} also dealt with {o}.",
                             "In {y} an exhibition about {s} toured {o}."),
    },
}

# Sentences listing several entities of one kind ({list}).
LIST_TEMPLATES: Dict[str, Tuple[str, ...]] = {
    "lead": ("Other places and people mentioned in the same survey include {list}.",
             "The same article also lists {list}."),
    "infobox": ("See also: {list}.", "Related entries: {list}."),
    "narrative": ("Over the years the story touched many others, among them {list}.",
                  "Travellers of the time spoke of {list} in one breath."),
    "stub": ("Compare {list}.", "Similar entries cover {list}."),
    "chronicle": ("In {y} a joint report named {list}.", "The records of {y} mention {list}."),
}

# Infobox fields that name no other entity, per kind ({n}, {y}, {w} as in the fillers).
INFOBOX_FIELDS = {
    "person": ("Occupation: {w}.", "Years active: {y} to {y2}.", "Known for: {thing}.",
               "Height: 1.{n}5 m.", "Hobbies: {hobby}."),
    "town": ("Elevation: {n}{n}0 m.", "Area: {n}{n} square kilometres.",
             "Postal code: {n}{n}{n}{n}.", "Dialling code: 0{n}{n}{n}."),
    "region": ("Number of towns: {n}{n}.", "Highest point: {n},{n}00 m.", "Time zone: UTC+{n}.",
               "Main crops: {product}."),
    "country": ("Calling code: +{n}{n}.", "Time zone: UTC+{n}.", "Driving side: right.",
                "Internet domain: two letters."),
    "company": ("Established: {y}.", "Products: {w}s.", "Revenue: {n}{n} million.",
                "Legal form: limited company."),
    "water": ("Wildlife: {animal}.", "Basin size: {n},{n}00 square kilometres.",
              "Average flow: {n}{n}0 cubic metres per second."),
}

# ----------------------------------------------------------------------------- background prose
# Sentences about one entity that name nothing else and state no fact of any family. {S} is the
# topic's name or pronoun at the start of a sentence, {s} its name elsewhere, {pos} its
# possessive; the other slots are numbers, years and words of the lists below.

FILLER_TEMPLATES: Dict[str, Tuple[str, ...]] = {
    "person": (
        "{S} trained as a {w} before turning to {thing}.",
        "{S} wrote {n} books, most of them about {thing}.",
        "{S} retired in {y} and spent {pos} last years in a small house with a garden.",
        "{S} won a national prize for {thing} in {y}.",
        "{S} spoke {n} languages and translated several old plays.",
        "As a young {w}, {s} worked long hours for very little money.",
        "{S} was known among friends for a dry sense of humour and a love of long walks.",
        "In {y}, {s} gave a series of public lectures that drew large crowds.",
        "Critics have praised {pos} early work on {thing} as careful and original.",
        "{S} kept detailed diaries, which were printed many years after {pos} death.",
        "During the war years {s} stopped working and helped to run a soup kitchen.",
        "{S} married in {y} and had {n} children.",
        "Later in life {s} took up {hobby} and became quite good at it.",
        "{S} often said that {pos} interest in {thing} began with a book from a market stall.",
        "A short film about {pos} life was made in {y}.",
        "{S} served for {n} years on the committee of a local {w}s' society.",
        "Students remember {s} as a patient and demanding teacher.",
        "In {y}, {s} suffered a long illness but recovered and went back to work.",
        "{S} travelled widely and collected old coins, prints and letters.",
        "Several of {pos} letters survive in a public archive.",
        "{S} was a keen supporter of {hobby} clubs for young people.",
        "{S} rarely gave interviews and disliked being photographed.",
        "The best-known work of {s} is a long study of {thing}.",
        "For a time {s} ran a small shop that sold books and old maps.",
    ),
    "town": (
        "{S} was first recorded in {y}.",
        "{S} had about {n},{n}00 inhabitants at the last count.",
        "{S} is known for its {sight} and its weekly market.",
        "The old centre of {s} has narrow streets and many timber houses.",
        "{S} grew quickly after the railway arrived in {y}.",
        "A large fire destroyed much of {s} in {y}, and the centre was rebuilt in stone.",
        "Every summer {s} holds a music festival that fills the small hotels.",
        "The main church of {s} has a tall tower and a painted ceiling.",
        "Local people in {s} still make {craft} by hand.",
        "{S} has a primary school, a library and a small hospital.",
        "The economy of {s} depends on {trade} and a few small workshops.",
        "Many of the younger people of {s} leave to study elsewhere.",
        "{S} is surrounded by fields, orchards and low hills.",
        "The town hall of {s} dates from {y}.",
        "A local museum in {s} shows old tools, costumes and photographs.",
        "Winters in {s} are cold and summers are short but warm.",
        "The football club of {s} plays in a small stadium near the station.",
        "In {y}, a new bridge gave {s} a better road to the outside world.",
        "{S} has a long tradition of {craft} and {trade}.",
        "The population of {s} fell by a third during the {n}0s.",
        "A walking path circles the old walls of {s}.",
        "Tourists come to {s} mainly for its {sight}.",
    ),
    "region": (
        "{S} covers about {n},{n}00 square kilometres.",
        "About {n}{n}0,000 people live in {s}.",
        "{S} is known for its {product} and its {sight}s.",
        "The landscape of {s} is mostly hills, forests and small lakes.",
        "Farming has long been the main source of income in {s}.",
        "The council of {s} meets {n} times a year.",
        "Tourism in {s} has grown steadily since new roads were opened in {y}.",
        "{S} has a mild climate and long, dry summers.",
        "Several old castles can be visited in {s}.",
        "{S} is divided into {n}{n} districts.",
        "The dialect spoken in {s} differs from the standard language in many words.",
        "The largest employer in {s} is the public health service.",
        "Much of {s} was covered by forest until the {n}th century.",
        "A regional newspaper has been printed in {s} since {y}.",
        "{S} has its own flag, which shows a {w} on a green field.",
        "Winter sports are popular in the higher parts of {s}.",
        "The road network of {s} was rebuilt after heavy floods in {y}.",
        "Many people in {s} work in {trade}.",
    ),
    "country": (
        "{S} became independent in {y}.",
        "{S} has about {n}.{n} million inhabitants.",
        "The flag of {s} shows a {w} on a plain field.",
        "{S} is governed by an elected parliament of {n}{n}0 members.",
        "The currency of {s} has been replaced {n} times since {y}.",
        "Most of the people of {s} live in the lowlands.",
        "{S} exports mainly {product} and machinery.",
        "The national holiday of {s} is celebrated in {m}.",
        "{S} has a long coastline with many small islands.",
        "Education in {s} is free up to the age of eighteen.",
        "The highest mountain of {s} rises to about {n},{n}00 metres.",
        "{S} has {n} official languages.",
        "A new constitution was adopted in {s} in {y}.",
        "The economy of {s} grew fast during the {n}0s.",
        "{S} is known abroad for its {product} and its folk music.",
        "The capital of {s} has a large old fortress on a hill.",
        "Football is the most popular sport in {s}.",
        "Large parts of {s} are covered by forest.",
    ),
    "company": (
        "{S} employs about {n},{n}00 people.",
        "The best-known product of {s} is a {w}.",
        "{S} began as a small family workshop that made {w}s.",
        "{S} grew into one of the larger firms of its kind within a few decades.",
        "During hard years after {y}, {s} survived by making spare parts for farmers.",
        "{S} was listed on the stock exchange in {y}.",
        "{S} sells its goods in more than {n}{n} markets.",
        "A new factory of {s} opened in {y} and doubled its output.",
        "{S} is known for its careful work and long guarantees.",
        "In {y}, {s} launched a cheaper {w} that sold very well.",
        "The logo of {s} shows a stylised {w}.",
        "{S} has a museum that tells its history through old machines and posters.",
        "{S} spends a large share of its income on research.",
        "Workers at {s} went on strike for better pay in {y}.",
        "{S} almost went bankrupt in the {n}0s.",
        "Today {s} makes {w}s, {w2}s and spare parts.",
        "{S} has won several design prizes.",
        "The {y} annual report of {s} showed a record profit.",
    ),
    "water": (
        "{S} is about {n}{n}0 kilometres long.",
        "{S} is home to many {animal}.",
        "{S} freezes in most winters.",
        "In dry summers the level of {s} drops sharply.",
        "{S} is popular with anglers, swimmers and canoeists.",
        "The water of {s} is clear and cold.",
        "Old mills once stood along {s}.",
        "{S} floods in spring after the snow melts.",
        "The name {s} is thought to come from an old word for water.",
        "Birdwatchers come to {s} to see {animal} in autumn.",
        "A nature reserve protects part of {s}.",
        "Steamboats carried passengers on {s} until {y}.",
        "The depth of {s} reaches about {n}{n} metres in places.",
        "{S} was badly polluted in the {n}0s but has since recovered.",
        "Paddle tours on {s} run from {m} to September.",
        "{S} appears in many local legends.",
    ),
}
# Sentences that name no entity at all (list documents and a little variety elsewhere).
GENERIC_FILLER = (
    "The figures come from a survey carried out in {y}.",
    "Much of this information was collected by local historians.",
    "Some of the older records were lost in a fire in {y}.",
    "The area has changed a great deal over the last hundred years.",
    "Roads, schools and a small hospital were built in the {n}0s.",
    "Many visitors arrive in the summer months.",
    "Prices for land rose sharply after {y}.",
    "A number of old photographs from this period survive.",
    "Local newspapers covered these events in great detail.",
    "The weather in {m} is usually mild.",
    "Several smaller projects were never finished.",
    "The exact dates are disputed by historians.",
)
_WORDS = {
    "w": {"person": ("painter", "poet", "chemist", "composer", "surgeon", "cartographer",
                     "tailor", "teacher", "lawyer", "engineer", "architect", "journalist"),
          "region": ("red lion", "golden wheel", "white tower", "blue fish"),
          "country": ("white star", "red lion", "green oak", "golden sun", "blue wave"),
          "company": ("lamp", "loom", "kettle", "radio", "bicycle", "stove", "camera", "clock"),
          "water": ("trout", "pike", "eels", "perch")},
    "thing": ("folk songs", "old churches", "river birds", "mountain plants", "glass making",
              "early printing", "sea charts", "clock making", "weaving", "bee keeping"),
    "hobby": ("chess", "rowing", "gardening", "sailing", "cycling", "painting"),
    "sight": ("clock tower", "stone bridge", "old mill", "rose garden", "castle ruin",
              "harbour"),
    "craft": ("lace", "pottery", "baskets", "wooden toys", "glassware", "leather goods"),
    "trade": ("farming", "fishing", "forestry", "tourism", "wine making", "light industry"),
    "product": ("cheese", "timber", "apples", "wool", "marble", "wine", "grain"),
    "animal": ("herons", "otters", "swans", "ducks", "cranes", "geese"),
}
_DATE_STYLES = ("{d} {m} {y}", "{m} {d}, {y}", "the {d}{suffix} of {m} {y}")

# ----------------------------------------------------------------------------- generation knobs

# Log-normal median and sigma of words per document, per family (times the preset's scale).
_DOC_WORDS = {"lead": (82.0, 0.55), "infobox": (80.0, 0.55), "narrative": (88.0, 0.55),
              "stub": (80.0, 0.6), "chronicle": (82.0, 0.55)}
# Most entities of a kind in one item (the lexicon pools are finite) and most candidates of a
# kind (leaving room for the confusers' bridges and background documents).
_KIND_LIMIT = {"person": 300, "town": 120, "region": 52, "country": 62, "water": 52,
               "company": 62}
_CANDIDATE_CAP = {"person": 60, "town": 60, "region": 36, "country": 45, "water": 36,
                  "company": 45}
_ANSWER_DOC_RATE = 0.65  # items where the answer has a document of its own
_SHARED_ANSWER_RATE = 0.2  # items where a confuser shares the answer
_NEAR_MISS_RATE = 0.75  # items with a near-miss sentence about the subject
_UNMENTIONED_RATE = 0.03  # distractors left out of the supports
_PRONOUN_RATE = 0.45  # filler sentences that refer to the topic by pronoun
_REUSE_RATE = 0.25  # links to an entity already in the world rather than a new one


@dataclasses.dataclass(frozen=True)
class Preset:
  """The knobs a preset sets. Everything else (world, templates, the order of the random draws)
  is shared: a preset changes sizes and families, not the code that writes an item."""
  train_families: Tuple[str, ...]  # train, dev, dev_unseen; `families` when not given
  held_out_families: Tuple[str, ...]  # dev_unseen_templates, test_unseen_templates
  num_supports: Tuple[float, float]  # log-normal median and sigma of the documents drawn
  max_supports: int  # most documents drawn (the facts' documents may add a few)
  doc_words_scale: float  # times the family's median words per document
  doc_words_range: Tuple[int, int]  # words per document drawn, clipped
  num_candidates: Tuple[float, float]  # log-normal median and sigma
  max_candidates: int
  max_confusers: int  # most other subjects whose query value is a distractor
  answer_repeats: Tuple[int, ...]  # extra asides naming the answer: one of these, drawn


PRESET_SETTINGS = {
    "benchmark": Preset(TRAIN_FAMILIES, HELD_OUT_FAMILIES, num_supports=(10.0, 0.72),
                        max_supports=MAX_SUPPORTS, doc_words_scale=1.0, doc_words_range=(25, 480),
                        num_candidates=(14.0, 0.75), max_candidates=MAX_CANDIDATES,
                        max_confusers=4, answer_repeats=(0, 1, 1, 2, 3)),
    # About the former short demo generator's items: a fact or two per document, background
    # prose only where a document has nothing else.
    "short": Preset(FAMILIES[:1], FAMILIES[3:4], num_supports=(3.0, 0.3), max_supports=3,
                    doc_words_scale=0.05, doc_words_range=(3, 20), num_candidates=(4.0, 0.7),
                    max_candidates=16, max_confusers=1, answer_repeats=(0, 0, 0, 1, 1)),
}


# ----------------------------------------------------------------------------- names

KINDS = ("person", "town", "region", "country", "company", "water")
COMPANY_SUFFIXES = ("Works", "Mills", "Foundry", "Press", "Motors", "Textiles", "Shipping")
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
_SLOT = re.compile(r"\{[A-Za-z0-9_]+\}")


def _template_words() -> set:
  """Every lower-case word of the templates and word lists (no name may be one of them)."""
  texts = lexicon.strings((FACT_TEMPLATES, NEAR_MISS_TEMPLATES, NOISE_TEMPLATES, LIST_TEMPLATES,
                           FILLER_TEMPLATES, INFOBOX_FIELDS, GENERIC_FILLER, _WORDS, MONTHS,
                           COMPANY_SUFFIXES, ("the", "river", "lake")))
  return {w for text in texts for w in re.findall(r"[a-z]+", _SLOT.sub(" ", text).lower())}


# The names: fixed pools (their own seed, the same for every data seed, so a small WordPiece
# vocabulary covers train and dev alike); no word is in two pools or in a template.
_RESERVED = _template_words()
LEXICON = lexicon.build_lexicon(_LEXICON_SEED, _SOUNDS, _POOLS, max_length=_MAX_WORD_LENGTH,
                                reserved=_RESERVED)
# The names of the unseen splits: the same kinds of words, none of them a word of LEXICON.
UNSEEN_LEXICON = lexicon.build_unseen_lexicon(LEXICON, _UNSEEN_LEXICON_SEED, _SOUNDS, _POOLS,
                                              max_length=_MAX_WORD_LENGTH, reserved=_RESERVED)
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


class _World:
  """The entities of one item: unique names, links set once, so the facts never disagree."""

  def __init__(self, rng: random.Random, names: lexicon.Lexicon):
    self.rng = rng
    self.lexicon = names
    self.entities: Dict[str, List[_Entity]] = {kind: [] for kind in KINDS}
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
      words = (set() if kind == "person" else
               {w for w in name.split() if w not in ("Lake", "River", *COMPANY_SUFFIXES)})
      if name not in self.names and not words & self.words:
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
      writer.check(first not in entity.links, f"{entity.name} already has {first}")
      bridge = self.new(_object_kind(first, entity.kind))
      self.assign(bridge, second, target)
      entity.links[first] = bridge
    else:
      writer.check(relation not in entity.links, f"{entity.name} already has {relation}")
      entity.links[relation] = target


def _object_kind(relation: str, kind: str) -> str:
  """The kind of a relation's object for a subject kind."""
  key = (relation, kind)
  if key in BASE_RELATIONS:
    return BASE_RELATIONS[key]
  first, second = TWO_HOP_CHAINS[key]
  return _object_kind(second, _object_kind(first, kind))


# ----------------------------------------------------------------------------- mentions


def count_mentions(candidate: str, supports: Sequence[str]) -> int:
  """Whole-word, case-insensitive occurrences of a (possibly multi-word) candidate."""
  if not candidate.strip():
    return 0
  words = [re.escape(w) for w in candidate.split()]
  pattern = re.compile(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)", re.IGNORECASE)
  return sum(len(pattern.findall(text)) for text in supports)


def most_mentioned_candidate(item: dict) -> str:
  """The "most mentioned candidate" baseline: the candidate with the most whole-word,
  case-insensitive mentions in the item's supports; ties go to the earliest candidate."""
  return max(item["candidates"], key=lambda c: count_mentions(c, item["supports"]))


def _lognormal(rng: random.Random, median: float, sigma: float, low: int, high: int) -> int:
  """A log-normal integer around `median`, clipped to [low, high]."""
  return max(low, min(high, int(round(median * math.exp(rng.gauss(0.0, sigma))))))


# ----------------------------------------------------------------------------- rendering


def _pronouns(entity: _Entity) -> Tuple[str, str]:
  """(Subject pronoun, possessive) for an entity."""
  if entity.kind == "person":
    return ("She", "her") if entity.female else ("He", "his")
  return "It", "its"


def _date(rng: random.Random, year: int) -> str:
  """A date in one of several written styles."""
  day = rng.randint(1, 28)
  suffix = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd"}.get(day, "th")
  return rng.choice(_DATE_STYLES).format(d=day, m=rng.choice(MONTHS), y=year, suffix=suffix)


def _render(rng: random.Random, template: str, subject: Optional[_Entity] = None,
            obj: Optional[_Entity] = None, pronoun: bool = False,
            extra: Optional[dict] = None) -> str:
  """Fills a template's slots; `pronoun` makes {S} the subject's pronoun."""
  year = rng.randint(1850, 2015)
  kind = subject.kind if subject is not None else "town"
  words = _WORDS["w"].get(kind, _WORDS["w"]["company"])
  values = {"y": year, "y2": year + rng.randint(3, 40), "n": rng.randint(2, 9),
            "m": rng.choice(MONTHS), "w": rng.choice(words), "w2": rng.choice(words),
            "t": "", "date": _date(rng, year)}
  for key, choices in _WORDS.items():
    if key != "w" and "{" + key + "}" in template:
      values[key] = rng.choice(choices)
  if subject is not None:
    p, pos = _pronouns(subject)
    values.update(s=subject.ref(), P=p, p=p.lower(), pos=pos,
                  S=p if pronoun else capitalise(subject.ref()))
  if obj is not None:
    values["o"] = obj.ref()
  if extra:
    values.update(extra)
  return capitalise(template.format(**values))


def _name_list(entities: Sequence[_Entity]) -> str:
  """"A, B and C"."""
  refs = [e.ref() for e in entities]
  return refs[0] if len(refs) == 1 else ", ".join(refs[:-1]) + " and " + refs[-1]


# ----------------------------------------------------------------------------- documents


@dataclasses.dataclass(eq=False)
class _Doc:
  """A support document under construction: its topic and its sentences by role."""
  topic: Optional[_Entity]
  facts: List[str] = dataclasses.field(default_factory=list)
  fields: List[str] = dataclasses.field(default_factory=list)  # infobox lines and distractors
  asides: List[str] = dataclasses.field(default_factory=list)  # distractors in prose
  target: int = 80


class _ItemBuilder:
  """Builds the supports of one item in one family, sized by a preset's knobs."""

  def __init__(self, rng: random.Random, family: str, names: str, preset: Preset):
    self.rng = rng
    self.family = family
    self.preset = preset
    self.world = _World(rng, LEXICONS[names])
    self.two_hop = rng.random() < TWO_HOP_RATE
    queries = tuple(TWO_HOP_CHAINS) if self.two_hop else FACT_KEYS
    self.relation = rng.choice(sorted({relation for relation, _ in queries}))
    kind = rng.choice([k for relation, k in queries if relation == self.relation])
    self.subject = self.world.new(kind)
    self.answer = self.world.value(self.subject, self.relation)
    kind = self.answer.kind
    count = _lognormal(rng, *preset.num_candidates, 2,
                       min(preset.max_candidates, _CANDIDATE_CAP[kind]))
    self.distractors = [self.world.new(kind) for _ in range(count - 1)]
    self.docs: List[_Doc] = []
    self.by_topic: Dict[int, _Doc] = {}
    self.stated = set()  # (id(entity), relation)

  # ---- documents and sentences

  def _doc(self, topic: Optional[_Entity]) -> _Doc:
    """The topic's document (created on first use; None: a new document without topic)."""
    if topic is not None and id(topic) in self.by_topic:
      return self.by_topic[id(topic)]
    doc = _Doc(topic)
    self.docs.append(doc)
    if topic is not None:
      self.by_topic[id(topic)] = doc
    return doc

  def _say(self, subject: _Entity, relation: str, obj: _Entity) -> None:
    """States a fact in the subject's document, in the family's phrasing."""
    self.stated.add((id(subject), relation))
    template = self.rng.choice(FACT_TEMPLATES[self.family][(relation, subject.kind)])
    self._doc(subject).facts.append(_render(self.rng, template, subject, obj))

  def _aside(self, topic: _Entity, obj: _Entity, templates: Sequence[str]) -> None:
    """A distractor sentence naming `obj` in the topic's document ("{t}" ones: infobox
    fields)."""
    template = self.rng.choice(templates)
    doc = self._doc(topic)
    text = _render(self.rng, template, topic, obj)
    (doc.fields if template.startswith("{t}") else doc.asides).append(text)

  def _noise(self, topic: _Entity, obj: _Entity) -> None:
    """A plain distractor sentence naming `obj` in the topic's document."""
    key = (("water", "any") if topic.kind == "water" else
           ("agent" if topic.kind in ("person", "company") else "place", obj.kind))
    self._aside(topic, obj, NOISE_TEMPLATES[self.family][key])

  def _list(self, entities: Sequence[_Entity], doc: Optional[_Doc] = None) -> None:
    """A list sentence naming several entities (in `doc` or a new document)."""
    text = _render(self.rng, self.rng.choice(LIST_TEMPLATES[self.family]),
                   extra={"list": _name_list(entities)})
    (doc or self._doc(None)).asides.append(text)

  # ---- facts

  def _state(self, subject: _Entity, relation: str) -> None:
    """States subject's relation: directly, or through its bridge for a chained relation."""
    key = (relation, subject.kind)
    if key in TWO_HOP_CHAINS and (key not in FACT_KEYS or self.rng.random() < 0.7):
      first, second = TWO_HOP_CHAINS[key]
      bridge = self.world.value(subject, first)
      self._say(subject, first, bridge)
      self._state(bridge, second)
    else:
      self._say(subject, relation, self.world.value(subject, relation))

  def _extra_facts(self, entity: _Entity, limit: int) -> None:
    """Up to `limit` other facts about an entity (never the query about the subject)."""
    keys = [rel for rel, kind in FACT_KEYS if kind == entity.kind]
    self.rng.shuffle(keys)
    added = 0
    for relation in keys:
      if added >= limit:
        break
      if (id(entity), relation) in self.stated or (entity is self.subject and (
          relation == self.relation or (relation, entity.kind) in TWO_HOP_CHAINS)):
        continue
      if relation not in entity.links and not self._room(_object_kind(relation, entity.kind)):
        continue
      obj = self.world.value(entity, relation)
      if entity is self.subject and obj is self.answer:
        continue
      self._say(entity, relation, obj)
      added += 1

  def _room(self, kind: str) -> bool:
    """Whether the world may hold another entity of a kind."""
    return len(self.world.entities[kind]) < _KIND_LIMIT[kind]

  def _confuser(self, value: _Entity) -> None:
    """Another subject of the subject's kind whose query relation has `value`."""
    other = self.world.new(self.subject.kind)
    self.world.assign(other, self.relation, value)
    self._state(other, self.relation)
    if self.rng.random() < 0.5:
      self._extra_facts(other, 1)

  # ---- the item

  def build(self) -> List[str]:
    """The support texts."""
    # Every item has two candidates or more, so `distractors` is never empty.
    rng, subject, answer, distractors = self.rng, self.subject, self.answer, self.distractors
    # The gold fact(s): for two-hop items the bridge's fact sits in the bridge's document.
    if self.two_hop:
      first, second = TWO_HOP_CHAINS[(self.relation, subject.kind)]
      bridge = self.world.value(subject, first)
      self._say(subject, first, bridge)
      self._say(bridge, second, answer)
      if rng.random() < 0.5:
        self._extra_facts(bridge, 1)
    else:
      self._say(subject, self.relation, answer)
    self._extra_facts(subject, rng.choice((0, 1, 1, 2)))
    # A distractor next to the subject with the question's relation words.
    if rng.random() < _NEAR_MISS_RATE:
      key = (self.relation, subject.kind)
      self._aside(subject, rng.choice(distractors[:3]), NEAR_MISS_TEMPLATES[self.family][key])
    # Confusers: other subjects whose value of the query relation is a distractor.
    values = distractors[:rng.randint(1, min(self.preset.max_confusers, len(distractors)))]
    if rng.random() < _SHARED_ANSWER_RATE:
      values.append(answer)
    rng.shuffle(values)
    for value in values:
      if self._room(subject.kind):
        self._confuser(value)
    # Popular distractors and (sometimes) the answer get documents of their own.
    popular = distractors[:rng.randint(0, min(2, len(distractors)))]
    for entity in popular + ([answer] if rng.random() < _ANSWER_DOC_RATE else []):
      self._doc(entity)
      if rng.random() < 0.5:
        self._extra_facts(entity, 1)
    self._plan_documents()
    self._mention_candidates(popular)
    return self._finish()

  def _plan_documents(self) -> None:
    """Adds background documents up to the drawn number of supports."""
    rng = self.rng
    wanted = _lognormal(rng, *self.preset.num_supports, MIN_SUPPORTS, self.preset.max_supports)
    pool = [d for d in self.distractors if id(d) not in self.by_topic]
    rng.shuffle(pool)
    for _ in range(200):
      if len(self.docs) >= wanted:
        break
      if pool and rng.random() < 0.5:
        entity = pool.pop()
      else:
        kinds = [k for k in ("person", "town", "company", "region", "water", "country")
                 if self._room(k)]
        entity = self.world.new(rng.choice(kinds))
      self._doc(entity)
      if rng.random() < 0.6:
        self._extra_facts(entity, rng.randint(1, 2))

  def _mention_candidates(self, popular: List[_Entity]) -> None:
    """Mentions distractors (and the answer) across documents, several times for some."""
    rng, distractors = self.rng, self.distractors
    texts = [s for d in self.docs for s in d.facts + d.fields + d.asides]
    topics = [d for d in self.docs if d.topic is not None]
    rest = [d for d in distractors if not count_mentions(d.candidate, texts)
            and rng.random() >= _UNMENTIONED_RATE]
    # Some candidates are mentioned again in other documents (so counting is a weak cue).
    again = [d for d in distractors if rng.random() < 0.35] + popular
    again += [self.answer] * rng.choice(self.preset.answer_repeats)
    rng.shuffle(rest)
    in_list = rest[:len(rest) // 3] if len(rest) > 4 else []
    noted = set()  # (id(document), id(entity)): one distractor sentence per pair
    for entity in rest[len(in_list):] + again:
      hosts = [d for d in topics if d.topic is not entity and d.topic is not self.subject
               and (id(d), id(entity)) not in noted]
      if not hosts:
        in_list.append(entity)
        continue
      # Of a few random documents the one with the fewest distractors, so they spread out.
      host = min(rng.sample(hosts, min(3, len(hosts))), key=lambda d: len(d.asides + d.fields))
      noted.add((id(host), id(entity)))
      self._noise(host.topic, entity)
    while in_list:
      size = rng.randint(3, 10)
      chunk, in_list = in_list[:size], in_list[size:]
      if rng.random() < 0.4:
        chunk.insert(rng.randint(0, len(chunk)), self.answer)
      host = rng.choice(self.docs) if rng.random() < 0.6 else None
      self._list(chunk, host)

  # ---- documents as text

  def _fillers(self, doc: _Doc, start_words: int) -> List[str]:
    """Background sentences about the topic until about `doc.target` words, none repeated."""
    rng, topic = self.rng, doc.topic
    templates = list(FILLER_TEMPLATES[topic.kind] if topic is not None else GENERIC_FILLER)
    rng.shuffle(templates)
    generic = list(GENERIC_FILLER) if topic is not None else []
    rng.shuffle(generic)
    out, words = [], start_words
    while words < doc.target and (templates or generic):
      if not out and not start_words:
        # The first sentence names its topic (a pronoun or possessive needs it before).
        named = [t for t in templates if t.startswith("{S}")] or templates
        template = named[-1]
        templates.remove(template)
      elif templates and (rng.random() < 0.9 or not generic):
        template = templates.pop()
      else:
        template = generic.pop()
      pronoun = bool(out or start_words) and rng.random() < _PRONOUN_RATE
      text = _render(rng, template, topic, pronoun=pronoun)
      out.append(text)
      words += len(text.split())
    return out

  def _layout(self, doc: _Doc) -> str:
    """The document's text in the family's structure."""
    rng, topic = self.rng, doc.topic
    facts, asides = list(doc.facts), list(doc.asides)
    rng.shuffle(facts)
    rng.shuffle(asides)
    fixed = sum(len(s.split()) for s in facts + doc.fields + asides)
    # A document without topic has no facts: prose and distractors, laid out as a lead.
    family = self.family if topic is not None else "lead"
    if family == "infobox":
      # The header and the fields (the facts among them) open the document like a lead's facts.
      fields = facts + doc.fields + [_render(rng, template, topic) for template in
                                     rng.sample(INFOBOX_FIELDS[topic.kind], rng.randint(1, 3))]
      rng.shuffle(fields)
      facts = [capitalise(topic.ref()) + "."] + fields
      fixed += 1
    prose = self._fillers(doc, fixed)
    if family in ("lead", "infobox"):
      # Facts open the article (the topic's lead), distractors anywhere after.
      return " ".join(facts + _interleave(rng, prose, asides, 0, len(prose)))
    if family == "narrative":
      # A few background sentences first, facts buried in the middle.
      body = _interleave(rng, prose, facts, min(2, len(prose)), max(2, len(prose) - 1))
      return " ".join(_interleave(rng, body, asides, 1, len(body)))
    if family == "stub":
      return " ".join(_interleave(rng, prose, asides, 1, len(prose)) + facts)
    # chronicle: background first, facts and distractors after the first third.
    return " ".join(_interleave(rng, prose, facts + asides, max(1, len(prose) // 3), len(prose)))

  def _finish(self) -> List[str]:
    """Draws document lengths, lays out every document and shuffles the documents."""
    rng = self.rng
    median, sigma = _DOC_WORDS[self.family]
    median *= self.preset.doc_words_scale
    for doc in self.docs:
      doc.target = _lognormal(rng, median, sigma, *self.preset.doc_words_range)
    rng.shuffle(self.docs)
    return [self._layout(doc) for doc in self.docs]


def _interleave(rng: random.Random, base_list: List[str], extra: List[str], low: int,
                high: int) -> List[str]:
  """`base_list` with `extra` inserted at random positions between `low` and `high`."""
  out = list(base_list)
  for text in extra:
    hi = max(low, min(high, len(out)))
    out.insert(rng.randint(min(low, len(out)), hi), text)
    high += 1
  return out


def _example(rng: random.Random, split: str, index: int, family: str, names: str,
             preset: Preset) -> dict:
  """One item in the official format (annotations in every split but train)."""
  builder = _ItemBuilder(rng, family, names, preset)
  supports = builder.build()
  candidates = [e.candidate for e in [builder.answer] + builder.distractors]
  rng.shuffle(candidates)
  item = {
      "id": f"WH_{split}_{index}",
      "query": f"{builder.relation} {builder.subject.candidate}",
      "candidates": candidates,
      "supports": supports,
      "answer": builder.answer.candidate,
  }
  writer.check(len(supports) >= MIN_SUPPORTS, f"{len(supports)} supports")
  writer.check(count_mentions(item["answer"], supports) > 0, f"answer not mentioned: {item['id']}")
  if split != "train":
    hops = "multiple" if builder.two_hop else "single"
    item["annotations"] = [["follows", hops] for _ in range(3)]
  return item


# ----------------------------------------------------------------------------- public API


def generate_examples(num: int, seed: int = 0, split: str = "train", names: str = "seen",
                      families: Optional[Sequence[str]] = None,
                      preset: str = "benchmark") -> List[dict]:
  """Generates WikiHop items.

  Args:
    num: How many items (>= 0).
    seed: The same arguments give identical items.
    split: One of SPLITS: the id prefix ("WH_dev_unseen_templates_3"); items of every split
      but train also carry `annotations`.
    names: "seen" (LEXICON) or "unseen" (UNSEEN_LEXICON).
    families: The template families to draw from (each item uses one, drawn at random); None:
      the preset's train families.
    preset: One of PRESETS: "benchmark" (the real data's lengths) or "short".

  Returns:
    A list of dicts with the official keys.
  """
  knobs = writer.preset_settings(PRESET_SETTINGS, preset)
  families = writer.check_generator_arguments(
      num, split, SPLITS, names, tuple(LEXICONS),
      knobs.train_families if families is None else families, FAMILIES, distinct=True)
  rng = random.Random(seed)
  return [_example(rng, split, i, rng.choice(families), names, knobs) for i in range(num)]


# `split_plan(num_train, num_dev, seed, preset, train_families)` and
# `ensure_demo_data(directory, num_train, num_dev, seed, train_families, preset)`: the five
# splits and the folder that holds them (`writer.DemoData`).
_DEMO_DATA = writer.DemoData("wikihop", GENERATOR_VERSION, generate_examples, writer.write_json,
                             PRESET_SETTINGS, SEED_OFFSETS, FILENAMES, INFO_FILENAME)
split_plan, ensure_demo_data = _DEMO_DATA.split_plan, _DEMO_DATA.ensure


def item_words(item: dict) -> int:
  """Whitespace words of all text a model reads: query, candidates and supports."""
  texts = [item["query"].replace("_", " ")] + item["candidates"] + item["supports"]
  return sum(len(text.split()) for text in texts)


def length_statistics(records: Sequence[dict]) -> dict:
  """Words per item (mean, median, p90, max) and supports / candidates / words per support."""
  return {"items": len(records), **writer.spread("words", [item_words(i) for i in records]),
          **writer.spread("supports", [len(i["supports"]) for i in records]),
          **writer.spread("candidates", [len(i["candidates"]) for i in records]),
          **writer.spread("words_per_support",
                          [len(doc.split()) for i in records for doc in i["supports"]])}
