"""Synthetic OpenKP (MS MARCO OpenKeyPhrase) web pages in the official JSONL format, two presets.

Each line is one page: `url` (the key), `text` (its words, ASCII letters and digits only, joined
by single spaces), `VDOM` (a JSON string: the text elements in reading order, each with an `Id`,
its `text`, word offsets `start_idx`/`end_idx` into `text.split(" ")` (end exclusive) and the 20
visual features of `FEATURE_NAMES`, the element's ten then its parent's; the elements never
overlap and cover every word once) and `KeyPhrases` (1 to 3 phrases, each a list of lower-case
words). Pages come from seven template families (page genres, `FAMILIES`) in two presets
(`PRESETS`, knobs in `PRESET_SETTINGS`); docs/synthetic_data/openkp.md has the families, the
splits, the presets' length targets and what was measured.

The same arguments give identical records (one `random.Random` per call, no `hash()`, no set
order in the output). Pure Python: never imports TensorFlow.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import json
import random
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from synthetic_data import lexicon, writer
from synthetic_data.lexicon import MONTHS, FreshDraws, capitalise

GENERATOR_VERSION = 1
FAMILIES = ("news", "product", "recipe", "forum", "encyclopedia", "directory", "blog")
TRAIN_FAMILIES = FAMILIES[:4]
HELD_OUT_FAMILIES = FAMILIES[4:]
SPLITS = writer.SPLITS
NAMES = ("seen", "unseen")
PRESETS = ("benchmark", "short")
# "dev_unseen" -> "OpenKPBenchmarkDevUnseen.jsonl".
FILENAMES = {split: f"OpenKPBenchmark{split.title().replace('_', '')}.jsonl" for split in SPLITS}
INFO_FILENAME = "OpenKPBenchmarkInfo.json"
# Each split's seed is `seed + offset`, so the splits never share a page.
SEED_OFFSETS = {"train": 0, "dev": 1_000_003, "dev_unseen": 2_000_029,
                "dev_unseen_templates": 4_000_037, "test_unseen_templates": 5_000_011}
# The benchmark preset's page length (the short one's is in `PRESET_SETTINGS`).
MEDIAN_WORDS = 800  # the log-normal page length's median
SIGMA_WORDS = 0.59  # its sigma: p90 = 800 * exp(1.2816 * 0.59), about 1,700 words
MIN_WORDS = 250
MAX_WORDS = 4000
MAX_ELEMENTS = 512  # the most VDOM elements a page may have (the real data's limit)
_BOX_FIELDS = ("x", "width", "y", "height", "is_block", "is_inline", "has_heading", "is_leaf",
               "font_size", "is_bold")
FEATURE_NAMES = _BOX_FIELDS + tuple("parent_" + name for name in _BOX_FIELDS)

Phrase = Tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Preset:
  """What a preset sets: the drawn page length and the families of the splits."""
  median_words: int  # the log-normal page length's median
  sigma_words: float  # its sigma
  min_words: int  # the drawn length is clipped to min_words..max_words
  max_words: int
  train_families: Tuple[str, ...]  # train, dev and dev_unseen (and `generate_examples`' default)
  held_out_families: Tuple[str, ...]  # dev_unseen_templates and test_unseen_templates


PRESET_SETTINGS = {
    "benchmark": Preset(MEDIAN_WORDS, SIGMA_WORDS, MIN_WORDS, MAX_WORDS, TRAIN_FAMILIES,
                        HELD_OUT_FAMILIES),
    "short": Preset(320, 0.3, 200, 700, TRAIN_FAMILIES[:1], HELD_OUT_FAMILIES[:1]),
}


# ----------------------------------------------------------------------------- styles

# name -> (mode, smallest and largest font, has_heading, is_bold, indent in pixels).
# "text": one element; "para": plain and bold runs (one element, or inline runs in a box);
# "row": each item its own inline element, left to right.
_STYLES: Dict[str, Tuple[str, int, int, int, int, int]] = {
    "logo": ("text", 18, 26, 0, 1, 0), "menu": ("row", 12, 14, 0, 0, 0),
    "crumbs": ("row", 11, 13, 0, 0, 0), "notice": ("text", 11, 13, 0, 0, 0),
    "title": ("text", 28, 40, 1, 1, 0), "meta": ("text", 12, 13, 0, 0, 0),
    "h2": ("text", 20, 26, 1, 1, 0), "h3": ("text", 16, 19, 1, 1, 0),
    "para": ("para", 14, 16, 0, 0, 0), "item": ("para", 14, 16, 0, 0, 24),
    "label": ("text", 14, 16, 0, 1, 0), "quote": ("para", 16, 19, 0, 0, 40),
    "actions": ("row", 12, 13, 0, 0, 0), "buttons": ("row", 14, 16, 0, 1, 0),
    "tags": ("row", 12, 14, 0, 0, 0), "price": ("text", 20, 28, 0, 1, 0),
    "side_h": ("text", 15, 18, 1, 1, 420), "side": ("text", 13, 14, 0, 0, 420),
    "caption": ("text", 12, 13, 0, 0, 0), "cell": ("row", 13, 14, 0, 0, 0),
    "footer": ("row", 11, 12, 0, 0, 0),
}
# Family -> style changes: (font range, heading, bold) for the styles it draws differently.
_STYLE_CHANGES: Dict[str, Dict[str, Tuple[int, int, int, int]]] = {
    "forum": {"title": (22, 28, 1, 1), "label": (13, 14, 0, 1)},
    "encyclopedia": {"title": (28, 34, 1, 0), "h2": (20, 24, 1, 0), "h3": (16, 18, 1, 1)},
    "blog": {"title": (30, 40, 1, 0), "h2": (22, 28, 1, 0)},
    "directory": {"label": (17, 20, 1, 1)},
}
_CUE_STYLES = tuple(name for name, style in _STYLES.items() if style[3])  # has_heading


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
INGREDIENTS = (("lamb",), ("chickpeas",), ("sweet", "potato"), ("smoked", "paprika"),
               ("lentils",), ("buttermilk",), ("rhubarb",), ("walnuts",), ("pumpkin",),
               ("fresh", "ginger"), ("goat", "cheese"), ("wild", "garlic"))
TECHNIQUES = (("slow", "cooker"), ("cast", "iron", "skillet"), ("sourdough", "starter"),
              ("air", "fryer"), ("pressure", "cooker"), ("dutch", "oven"), ("stand", "mixer"))
DISH_WORDS = ("stew", "pie", "bread", "cake", "soup", "dumplings", "curry", "tart", "salad",
              "casserole")
DISHES = DISH_WORDS[:6]  # the dishes a place is known for
CATEGORIES = (("bike", "repair", "shops"), ("bakeries",), ("dentists",), ("yoga", "studios"),
              ("plumbers",), ("pet", "groomers"), ("coffee", "shops"), ("florists",),
              ("driving", "schools"), ("bookshops",), ("car", "rental"), ("hair", "salons"))
LISTING_WORDS = ("Studio", "Workshop", "Corner", "House", "Company", "Place", "Works", "Garage")
STREET_WORDS = ("Street", "Road", "Lane", "Avenue", "Square")

# ----------------------------------------------------------------------------- family text

# The sentences that mention an entity ("{x}"): each family words them its own way. "{n}" is
# a small number, "{year}" a year.
MENTIONS: Dict[str, Tuple[str, ...]] = {
    "news": (
        "{x} was at the centre of the debate again this week",
        "a spokesperson declined to comment on {x} when reached by phone",
        "according to people familiar with the matter {x} has drawn wide interest",
        "local reporters have followed {x} closely since the spring",
        "questions about {x} dominated the council meeting on Monday",
        "the latest figures put {x} in a new light",
        "supporters and critics of {x} gathered outside the town hall",
        "{x} made headlines for the second time in {n} months",
        "analysts say {x} could shape the coming season",
        "the story of {x} first broke late on Friday night",
        "in a statement released this morning officials mentioned {x} twice",
        "readers have sent dozens of letters about {x}",
        "no decision about {x} is expected before the end of the month",
        "{x} featured prominently in the evening bulletin",
        "sources close to the organisers said {x} remains a priority",
        "{x} is expected to dominate talk at the weekend markets",
        "opposition members called for an inquiry into {x}",
        "residents interviewed on Thursday were split over {x}",
        "figures obtained by this newspaper show {x} grew sharply",
        "the row over {x} shows no sign of cooling"),
    "product": (
        "shoppers who bought {x} also left detailed ratings",
        "every order of {x} ships in recyclable packaging",
        "{x} is covered by our {n} day money back guarantee",
        "compare {x} with similar items before you check out",
        "the listing for {x} was last updated this week",
        "questions about {x} are answered by our support team within hours",
        "{x} is currently one of our top sellers in this category",
        "add {x} to your wish list to track price drops",
        "stock of {x} is limited in some warehouses",
        "this page lists full technical details for {x}",
        "verified buyers rate {x} highly for value",
        "{x} qualifies for free standard delivery",
        "bundle offers that include {x} change every week",
        "check the size guide before ordering {x}",
        "our warehouse team inspects {x} before dispatch",
        "{x} arrives fully assembled and ready to use",
        "members save an extra {n} percent on {x}",
        "a replacement for {x} can be requested online",
        "the box for {x} contains everything shown in the photos",
        "{x} is eligible for our trade in programme"),
    "recipe": (
        "{x} turns an ordinary weeknight dinner into something special",
        "the trick with {x} is patience and a hot pan",
        "leftovers of {x} keep in the fridge for {n} days",
        "{x} pairs nicely with a simple green salad",
        "if you have never tried {x} start with this version",
        "my family asks for {x} at least once a week",
        "you can prepare {x} a day ahead of time",
        "readers who made {x} recommend doubling the batch",
        "{x} freezes well in airtight containers",
        "a pinch of salt really brings out {x}",
        "timing matters most when you cook with {x}",
        "do not skip the resting time if you want {x} to shine",
        "we tested {x} in our home kitchen {n} times",
        "nothing beats the smell of {x} on a cold evening",
        "kids and grown ups alike seem to love {x}",
        "I first made {x} for a potluck and everyone wanted the recipe",
        "some readers swap in {x} when they are short on time",
        "{x} is one of those things that tastes like home",
        "do not worry if {x} looks a little rustic",
        "the first bite of {x} tells you it was worth the wait"),
    "forum": (
        "has anyone here actually tried {x}",
        "I have been looking into {x} for a while now",
        "honestly {x} was not what I expected",
        "not sure why people keep recommending {x}",
        "can someone explain the fuss about {x}",
        "my brother swears by {x} but I am not convinced",
        "just my two cents but {x} is overrated",
        "edit I forgot to mention {x} in my first post",
        "same here {x} worked fine for me",
        "did you ever sort out the problem with {x}",
        "I would skip {x} unless it is on sale",
        "thanks for the tip about {x} mate",
        "bumping this thread because {x} came up again",
        "search the older threads about {x} first",
        "lol we had the exact same experience with {x}",
        "quick update on {x} for anyone following this",
        "{x} has a pretty active thread on the other forum too",
        "pretty sure the issue with {x} is a known thing",
        "I ended up going with {x} after reading this thread",
        "no idea about {x} sorry but good luck"),
    "encyclopedia": (
        "{x} is mentioned in several regional histories",
        "the earliest recorded reference to {x} dates from {year}",
        "scholars have variously described {x} over the decades",
        "{x} has been the subject of a number of studies",
        "contemporary sources refer to {x} under several names",
        "the significance of {x} remains a matter of debate",
        "{x} is listed in the national register",
        "during this period {x} underwent considerable change",
        "a detailed survey of {x} was published in {year}",
        "{x} is discussed further in the section below",
        "sources differ on the origins of {x}",
        "the term {x} is also used in a broader sense",
        "{x} was formally recognised in {year}",
        "little documentation survives concerning {x}",
        "later accounts attribute a wider influence to {x}",
        "{x} appears on several maps of the period",
        "the name {x} is first attested in a charter",
        "estimates regarding the extent of {x} vary considerably",
        "a monograph devoted to {x} appeared in {year}",
        "{x} is not to be confused with similarly named entries"),
    "directory": (
        "{x} is listed under several categories on this page",
        "opening hours for {x} may vary on public holidays",
        "users rated {x} {n} out of 5 on average",
        "claim this listing if you manage {x}",
        "{x} accepts cards and mobile payments",
        "wheelchair access is available at {x}",
        "{x} offers free parking for customers",
        "get directions to {x} from your current location",
        "{x} responded to {n} reviews in the past month",
        "booking ahead at {x} is recommended",
        "{x} has been verified by our listings team",
        "view photos uploaded by visitors of {x}",
        "report incorrect information about {x}",
        "nearby alternatives to {x} are shown below",
        "{x} appears in the saved lists of {n} visitors",
        "{x} was added to this directory in {year}",
        "special offers from {x} are shown when available",
        "the profile of {x} was updated {n} days ago",
        "send a message to {x} directly from this page",
        "{x} is marked as popular with locals"),
    "blog": (
        "I still remember the first time I came across {x}",
        "you guys asked me so many questions about {x}",
        "full disclosure this post about {x} is not sponsored",
        "long story short {x} completely won me over",
        "I promised myself I would write about {x} this year",
        "if you follow me on social media you know I love {x}",
        "here are my honest thoughts on {x}",
        "scroll down for my favourite photos of {x}",
        "my partner laughed when I said I wanted to see {x}",
        "let me know in the comments if you have tried {x}",
        "{x} has been on my bucket list for ages",
        "pinning this post about {x} helps me a lot",
        "I went back to {x} a second time last month",
        "spoiler alert {x} lived up to the hype",
        "this is my third post about {x} and probably not the last",
        "I could talk about {x} all day honestly",
        "okay so {x} deserves its own paragraph",
        "my sister is the one who got me into {x}",
        "fast forward two years and {x} is still a favourite",
        "I may or may not have cried a little at {x}"),
}

# Stock sentences of each family's voice (no entity).
VOICE: Dict[str, Tuple[str, ...]] = {
    "news": ("the investigation is ongoing", "more details are expected later today",
             "this story has been updated with new information",
             "additional reporting was contributed by our regional desk",
             "the figures could not be independently verified",
             "a full transcript will be published tomorrow",
             "police said there was no further risk to the public",
             "the meeting ran more than an hour over schedule",
             "an earlier version of this article misstated a date",
             "both sides are due to meet again next week",
             "the council has not yet published its response",
             "witnesses described a calm but crowded scene"),
    "product": ("prices include sales tax where applicable", "orders placed before noon ship "
                "the same day", "gift wrapping is available at checkout", "all items are "
                "tested before they leave our warehouse", "colours may differ slightly from "
                "the photos", "returns are free within thirty days", "please allow up to "
                "two weeks for international delivery", "the manufacturer warranty starts on "
                "the day of delivery", "sign in to see member prices", "spare parts can be "
                "ordered separately", "packaging may vary by region",
                "customer photos are shown as uploaded"),
    "recipe": ("preheat the oven before you start chopping", "I like to use a heavy pan for "
               "this", "taste and adjust the seasoning at the end", "this step can be done "
               "the night before", "a little extra butter never hurts", "let everything cool "
               "on a wire rack", "use whatever fresh herbs you have on hand", "stir gently so "
               "nothing sticks to the bottom", "the sauce thickens as it cools",
               "a squeeze of lemon at the end lifts the whole dish",
               "I usually make a double batch on Sundays",
               "the dough should feel soft but not sticky"),
    "forum": ("thanks in advance for any help", "sorry if this has been asked before",
              "I will report back once I know more", "this is my first post here so go easy",
              "any advice would be appreciated", "not an expert but here is what I found",
              "that is exactly what happened to me last year", "good luck and keep us posted",
              "marking this thread as solved", "can a moderator move this to the right section",
              "I have the same question actually", "agreed with everything above"),
    "encyclopedia": ("the population has remained broadly stable since the last census",
                     "further research is needed to confirm these figures",
                     "several names have been used for the area in the past",
                     "the dates given in older sources are approximate",
                     "this section needs additional citations for verification",
                     "the climate is classified as temperate",
                     "records from the earlier period are incomplete",
                     "the administrative boundaries were redrawn several times",
                     "a number of related works are listed below",
                     "the spelling of the name varies between sources",
                     "most of the surviving documents are held in regional archives",
                     "the following table summarises the main figures"),
    "directory": ("listings are sorted by distance and rating", "prices shown are provided "
                  "by the businesses", "hours may change without notice", "sponsored results "
                  "are marked as such", "add your business for free in a few minutes",
                  "ratings are based on verified visits", "use the filters to narrow your "
                  "search", "call ahead to confirm availability", "results are updated daily",
                  "tap a listing to see the full profile", "you can save listings to your "
                  "account", "distances are measured from the town centre"),
    "blog": ("grab a coffee because this one is a long post", "I honestly did not plan to "
             "write this today", "as always all opinions are my own", "I took way too many "
             "photos as usual", "we laughed about it for days afterwards", "okay let me back "
             "up a little", "the weather was not on our side at all", "I am already planning "
             "the next trip", "that is a story for another post", "thank you for reading "
             "this far", "my camera battery died halfway through the day",
             "life has been busy lately but here we are"),
}

# Titles and headings about an entity ("{x}"), then headings about nothing in particular.
TITLES: Dict[str, Tuple[str, ...]] = {
    "news": ("{x} Draws Record Crowds", "What We Know About {x}", "{x} Faces New Questions",
             "Council Backs Plans for {x}", "{x} Makes a Comeback", "Inside the Row Over {x}"),
    "product": ("{x}",),  # the product page writes brand, model and item (see `_product`)
    "recipe": ("Easy {x} Recipe", "How to Make {x}", "The Best {x} You Will Ever Make",
               "Homemade {x}", "{x} Step by Step", "Classic {x}"),
    "forum": ("Question About {x}", "Anyone Tried {x}", "{x} Help Needed",
              "Thoughts on {x}", "Problem With {x}", "{x} Worth It or Not"),
    "encyclopedia": ("{x}",),
    "directory": ("Best {x}", "Top Rated {x}", "{x} Near You", "Find {x}"),
    "blog": ("My Trip to {x}", "Why I Fell in Love With {x}", "Everything I Learned About {x}",
             "A Weekend With {x}", "{x} Honest Review", "Our Day at {x}"),
}
GENERIC_TITLES: Dict[str, Tuple[str, ...]] = {
    "news": ("Morning Briefing", "The Week in Review", "Local Roundup"),
    "product": ("Item Details",), "recipe": ("Sunday Dinner Idea", "What We Cooked This Week"),
    "forum": ("Need Some Advice", "Quick Question"), "encyclopedia": ("Overview",),
    "directory": ("Local Listings",), "blog": ("A Few Thoughts", "Catching Up"),
}
HEADINGS: Dict[str, Tuple[str, ...]] = {
    "news": ("Reaction to {x}", "The Background to {x}", "What Comes Next for {x}",
             "{x} in Numbers"),
    "product": ("About {x}", "{x} Features", "Why Choose {x}", "{x} Details"),
    "recipe": ("Why This {x} Works", "Tips for {x}", "Serving {x}", "Storing {x}"),
    "forum": ("Re {x}",),
    "encyclopedia": ("{x}", "History of {x}", "{x} Today", "Legacy of {x}"),
    "directory": ("{x}",),
    "blog": ("Getting to {x}", "My Favourite Part of {x}", "{x} Tips", "Would I Go Back to {x}"),
}
GENERIC_HEADINGS: Dict[str, Tuple[str, ...]] = {
    "news": ("What Happened", "Reaction", "Background", "What Comes Next", "Key Facts"),
    "product": ("Product Description", "Specifications", "Customer Reviews", "Shipping",
                "In the Box", "Warranty"),
    "recipe": ("Ingredients", "Instructions", "Recipe Notes", "Nutrition", "Equipment",
               "Make Ahead"),
    "forum": (),
    "encyclopedia": ("History", "Description", "Reception", "Later Years", "Geography",
                     "Notes"),
    "directory": ("How We Rank", "Popular Searches"),
    "blog": ("Where We Stayed", "What I Packed", "Final Thoughts", "Budget",
             "Getting Around"),
}
MENUS: Dict[str, Tuple[str, ...]] = {
    "news": ("Home", "World", "Local", "Politics", "Business", "Sport", "Culture", "Opinion",
             "Weather"),
    "product": ("Home", "Shop", "Deals", "New", "Brands", "Cart", "Account", "Help"),
    "recipe": ("Home", "Recipes", "Dinner", "Baking", "Desserts", "Videos", "Shop", "About"),
    "forum": ("Forums", "New", "Members", "Search", "Login", "Register", "Rules"),
    "encyclopedia": ("Main", "Contents", "Random", "Help", "Contribute", "Community"),
    "directory": ("Home", "Categories", "Near", "Deals", "Add", "Business", "Login"),
    "blog": ("Home", "About", "Travel", "Food", "Lifestyle", "Shop", "Contact"),
}
SITE_SUFFIXES: Dict[str, Tuple[str, ...]] = {
    "news": ("Gazette", "Herald", "Chronicle", "Times"), "product": ("Shop", "Store", "Direct"),
    "recipe": ("Kitchen", "Eats", "Table"), "forum": ("Forum", "Boards", "Community"),
    "encyclopedia": ("Wiki", "Encyclopedia"), "directory": ("Finder", "Local", "Pages"),
    "blog": ("Wanders", "Diaries", "Notes"),
}
NOTICES = ("we use cookies to improve your experience on our site",
           "by continuing to browse you agree to our use of cookies",
           "this site uses cookies accept all cookies or manage settings",
           "we and our partners store cookies and similar data on your device")
FOOTERS: Dict[str, Tuple[str, ...]] = {
    "news": ("Privacy Policy", "Terms of Use", "Cookie Settings", "Contact Us", "Advertise",
             "Careers", "Newsletters"),
    "product": ("Privacy Policy", "Terms and Conditions", "Delivery", "Returns", "Track Order",
                "Gift Cards", "Contact Us"),
    "recipe": ("Privacy Policy", "Cookie Settings", "About Us", "Contact", "Recipe Index"),
    "forum": ("Contact Us", "Terms and Rules", "Privacy Policy", "Help", "Top", "RSS"),
    "encyclopedia": ("Privacy Policy", "About", "Disclaimers", "Contact", "Mobile View"),
    "directory": ("Add Your Business", "Advertise", "Privacy", "Terms", "Help Centre"),
    "blog": ("Privacy Policy", "Disclosure", "Work With Me", "Contact", "Archives"),
}

# ----------------------------------------------------------------------------- background prose

# Topic kind -> (subjects, predicates, endings): any combination is a sentence, so a long page
# rarely repeats one. These are shared by all families (they state no entity).
FILLERS: Dict[str, Tuple[Tuple[str, ...], Tuple[str, ...], Tuple[str, ...]]] = {
    "place": (("the old harbour", "the main square", "the beach", "the local market",
               "the coastal road", "the nearest station", "the town museum", "the bakery",
               "the hill behind town", "the river path", "the ferry terminal", "the lookout",
               "the fish market", "the botanical garden", "the cathedral", "the bus depot",
               "the campsite", "the night ferry", "the tourist office", "the car park"),
              ("is busiest", "looks its best", "stays quiet", "can be crowded",
               "is easy to reach", "feels different", "is worth a detour", "opens early",
               "gets windy", "fills up fast", "closes for lunch", "is rarely empty",
               "smells of salt", "charges a small fee", "is best avoided", "feels remote",
               "was recently restored", "draws photographers"),
              ("in the early morning", "during the summer months", "after heavy rain",
               "on market days", "when the ferries run", "late in the season",
               "on weekday afternoons", "around the holidays", "once the cruise ships leave",
               "at sunset", "in autumn", "before the tour buses arrive", "on public holidays",
               "even in winter", "by mid morning", "when school is out", "after dark",
               "during the regatta")),
    "person": (("the early period", "the first studio", "the family home", "the debut",
                "the second book", "the long tour", "the critical reception", "the old notebook",
                "the move abroad", "a chance meeting", "the first commission", "an old teacher",
                "the apprenticeship", "a difficult winter", "the last letter",
                "the lecture series", "a brief marriage", "the war", "the last interview",
                "a rival workshop"),
               ("shaped much of what followed", "was harder than it looked",
                "brought unexpected attention", "left a lasting mark", "changed the plan",
                "opened new doors", "came at a difficult time", "set the tone",
                "is still talked about", "tested everyone involved", "went almost unnoticed",
                "caused a minor scandal", "proved decisive", "ended in disappointment",
                "inspired a younger generation", "was quietly forgotten",
                "paid off eventually", "divided opinion"),
               ("in the years that followed", "according to close friends",
                "by most accounts", "for better or worse", "long before the big break",
                "as letters from the time show", "in more ways than one",
                "even decades later", "at least at first", "within a few seasons",
                "despite the poor reviews", "in hindsight", "to the surprise of many",
                "as one biographer notes", "during a short stay abroad",
                "before the family moved", "after years of silence", "in the capital")),
    "event": (("the opening night", "the main stage", "the food court", "the ticket office",
               "the volunteer team", "the late show", "the family area", "the shuttle service",
               "the closing parade", "the dance workshop", "the firework display", "the craft tent",
               "the second stage", "the lineup", "the sound crew", "the camping field",
               "the press tent", "the youth choir", "the security staff",
               "the wristband queue"),
              ("drew long queues", "ran smoothly", "was packed", "started late",
               "sold out quickly", "got great reviews", "needed more space",
               "stayed open longer", "was a highlight", "moved indoors", "felt rushed",
               "surprised everyone", "ran out of water", "was cancelled briefly",
               "kept the crowd dancing", "was hard to find", "impressed the critics",
               "raised money for charity"),
              ("on the first evening", "despite the rain", "by early afternoon",
               "for the third year running", "after a short delay", "well past midnight",
               "on the final day", "as in previous years", "on Saturday night",
               "according to the organisers", "before the headline act", "in the heat",
               "during the interval", "with little warning", "as the sun went down",
               "near the east gate", "thanks to the volunteers", "under the big tent")),
    "product": (("the battery", "the handle", "the charging cable", "the carry case",
                 "the power button", "the display", "the warranty card", "the base",
                 "the motor", "the lid", "the strap", "the hinge", "the filter",
                 "the remote", "the manual", "the cooling vent", "the power cord",
                 "the stand", "the plug", "the indicator light"),
                ("feels sturdy", "works as described", "heats up a little", "is easy to clean",
                 "takes some getting used to", "could be better", "is well made",
                 "is lighter than expected", "lasts a long time", "is surprisingly quiet",
                 "rattles slightly", "snaps into place", "looks a bit cheap",
                 "wore out quickly", "needs replacing", "fits most outlets",
                 "survived a fall", "is clearly labelled"),
                ("after a few weeks of use", "out of the box", "for the price",
                 "compared with older models", "in daily use", "under heavy load",
                 "in cold weather", "on the highest setting", "after the first charge",
                 "when travelling", "on a rough surface", "with the latest update",
                 "if you are careful", "after a year", "in a small flat", "at full speed",
                 "on the second try", "during long sessions")),
    "dish": (("the onion", "the sauce", "the dough", "the oven", "the spice mix", "the stock",
              "the crust", "the filling", "the batter", "the glaze", "the garnish",
              "the marinade", "the butter", "the pan", "the rice", "the syrup", "the broth",
              "the topping", "the pastry", "the dressing"),
             ("should turn golden", "needs a few more minutes", "thickens nicely",
              "can be made ahead", "smells amazing", "should not be rushed",
              "goes a long way", "benefits from a rest", "can burn quickly",
              "tastes even better", "should bubble gently", "sets firm", "soaks up the juices",
              "cracks a little", "keeps its shape", "looks glossy", "browns unevenly",
              "needs a good stir"),
             ("over medium heat", "the next day", "if you keep an eye on it",
              "with a splash of water", "straight from the fridge", "at room temperature",
              "after an hour or so", "in a covered dish", "on a low simmer",
              "in a hot oven", "once it cools", "with a wooden spoon", "overnight",
              "in small batches", "before serving", "with the lid off", "on the top shelf",
              "at high altitude")),
    "business": (("the staff", "the price list", "the waiting time", "the opening time",
                  "the parking situation", "the service", "the location", "the online booking",
                  "the booking system", "the front desk", "the waiting room", "the owner",
                  "the loyalty card", "the phone line", "the shop window", "the entrance",
                  "the delivery option", "the refund policy", "the weekend team",
                  "the consultation"),
                 ("is friendly", "seems fair", "can be slow", "varies a lot", "is convenient",
                  "stands out", "has improved", "is hard to beat", "gets mixed comments",
                  "is clearly explained", "feels welcoming", "was recently renovated",
                  "is easy to miss", "takes cash only", "is rarely busy", "needs an update",
                  "earns high marks", "works well"),
                 ("on weekends", "in most cases", "for first visits", "during busy periods",
                  "compared with nearby options", "according to regulars",
                  "at peak times", "throughout the year", "for families", "on weekday mornings",
                  "since the new owners took over", "for larger orders", "in the off season",
                  "by local standards", "for students", "around lunchtime", "near closing time",
                  "after the refit")),
}


# ----------------------------------------------------------------------------- names

# Words the page builders and casts write outside the pools above.
_LAYOUT_WORDS = ("academy advertisement arts associated beginners black blue buy calories colour "
                 "cooking copyright cups discussion eggs flour foundation g general grams grey "
                 "helpful hi hiking ideas internet joined jump kg messages milk model oil olive "
                 "pepper photo pin posts print prize protein quote read references reply "
                 "retrieved reviewed share stars subscribe sugar summary tablespoons tags "
                 "teaspoons topics towns trail viewed w website weight white")
_TEXTS = (MONTHS, PRODUCT_ADJECTIVES, PRODUCT_NOUNS, PRODUCT_FEATURES, STORE_WORDS, LANDMARKS,
          REGION_WORDS, DISHES, OCCUPATIONS, WORK_ADJECTIVES, WORK_NOUNS, GROUP_WORDS,
          EVENT_WORDS, VENUE_WORDS, TICKETS, INGREDIENTS, TECHNIQUES, DISH_WORDS, CATEGORIES,
          LISTING_WORDS, STREET_WORDS, MENTIONS, VOICE, TITLES, GENERIC_TITLES, HEADINGS,
          GENERIC_HEADINGS, MENUS, SITE_SUFFIXES, NOTICES, FOOTERS, FILLERS, _LAYOUT_WORDS)


def english_words() -> List[str]:
  """Every English word the pages write, lower-case and sorted (no lexicon word is one, or an
  unseen split would show a seen name)."""
  return sorted({word.lower() for text in lexicon.strings(_TEXTS) for word in text.split()
                 if not word.startswith("{")})


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
                                reserved=english_words())
# The same pools with none of LEXICON's words: the names of the splits about unseen entities.
# Built from its own seed after LEXICON, so LEXICON (and the seen pages) stay as they were.
_UNSEEN_LEXICON_SEED = 8803
UNSEEN_LEXICON = lexicon.build_unseen_lexicon(LEXICON, _UNSEEN_LEXICON_SEED, _SOUNDS, _POOLS,
                                              max_length=9, reserved=english_words())
# `generate_examples(names=...)` -> the lexicon its entities are named from.
LEXICONS: Dict[str, lexicon.Lexicon] = {"seen": LEXICON, "unseen": UNSEEN_LEXICON}

# ----------------------------------------------------------------------------- sentences

_SMALL_WORDS = ("a", "an", "and", "at", "for", "in", "is", "it", "of", "on", "the", "to",
                "with")


@dataclasses.dataclass
class _Sentence:
  """Words of one sentence; `entity` (an index) is mentioned at `mention` (a word slice)."""
  words: List[str]
  entity: Optional[int] = None
  mention: Tuple[int, int] = (0, 0)
  bold: bool = False


def _lower(phrase: Sequence[str]) -> Phrase:
  """The phrase's words in lower case."""
  return tuple(w.lower() for w in phrase)


def _contains(outer: Sequence[str], inner: Sequence[str]) -> bool:
  """Whether `inner` occurs in `outer` as consecutive words (case-insensitive)."""
  outer, inner = _lower(outer), _lower(inner)
  n = len(inner)
  return any(outer[i:i + n] == inner for i in range(len(outer) - n + 1))


def _title_case(words: Sequence[str]) -> List[str]:
  """Capitalises each word's first letter except small words after the first."""
  return [w if i and w.lower() in _SMALL_WORDS else capitalise(w) for i, w in enumerate(words)]


def _fill(rng: random.Random, template: str,
          x: Sequence[str] = ()) -> Tuple[List[str], Tuple[int, int]]:
  """The template's words and the word slice where `x` went."""
  words: List[str] = []
  span = (0, 0)
  for token in template.split():
    if token == "{x}":
      span = (len(words), len(words) + len(x))
      words.extend(x)
    elif token == "{n}":
      words.append(str(rng.randint(2, 12)))
    elif token == "{year}":
      words.append(str(rng.randint(2012, 2024)))
    else:
      words.append(token)
  return words, span


def _sentence(rng: random.Random, template: str, entity: Optional[int] = None,
              phrase: Phrase = ()) -> _Sentence:
  """A sentence with its first letter capitalised."""
  words, span = _fill(rng, template, phrase)
  words[0] = capitalise(words[0])
  return _Sentence(words, entity, span)


# ----------------------------------------------------------------------------- entities


@dataclasses.dataclass
class _Cast:
  """A page's entities: the topic first, then the others; `candidates` may become keys."""
  kind: str  # FILLERS key
  entities: List[Phrase]
  candidates: List[int]


def _add(entities: List[Phrase], phrase: Phrase) -> int:
  """Appends a phrase unless it repeats, contains or is contained in one; its index or -1."""
  if any(_contains(phrase, p) or _contains(p, phrase) for p in entities):
    return -1
  entities.append(phrase)
  return len(entities) - 1


def _cast_of(entities: List[Phrase], kind: str, candidates: Sequence[int]) -> _Cast:
  """A cast from its entities; candidates that `_add` dropped (-1) are left out."""
  return _Cast(kind, entities, [i for i in candidates if i > 0])


def _person_cast(rng: random.Random, names: FreshDraws) -> _Cast:
  """A person, their work, group, award, home town, occupation; colleagues as distractors."""
  e: List[Phrase] = [(names.name("first"), names.name("last"))]
  work = _add(e, (rng.choice(WORK_ADJECTIVES), rng.choice(WORK_NOUNS)))
  group = _add(e, (names.name("word"), rng.choice(GROUP_WORDS)))
  award = _add(e, (names.name("word"), "Prize"))
  town = _add(e, (names.name("town"),))
  job = _add(e, (rng.choice(OCCUPATIONS),))
  for _ in range(2):
    _add(e, (names.name("first"), names.name("last")))
  _add(e, (names.name("word"), "Prize"))  # another prize: shares a word with the award
  _add(e, (names.name("town"), "Academy", "of", "Fine", "Arts"))
  return _cast_of(e, "person", (work, group, award, town, job))


def _event_cast(rng: random.Random, names: FreshDraws) -> _Cast:
  """An event, its venue, organiser, headliner; other towns' events with the same words."""
  words = rng.choice(EVENT_WORDS)
  e: List[Phrase] = [(names.name("town"),) + words]
  venue = _add(e, (names.name("word"), rng.choice(VENUE_WORDS)))
  organiser = _add(e, (names.name("word"), "Arts", "Foundation"))
  headliner = _add(e, (names.name("first"), names.name("last")))
  _add(e, (names.name("brand"),))
  _add(e, rng.choice(TICKETS))
  for _ in range(2):
    _add(e, (names.name("town"),) + words)  # rival events share the event words
  _add(e, (names.name("word"), "Night", "Market"))
  return _cast_of(e, "event", (venue, organiser, headliner))


def _place_cast(rng: random.Random, names: FreshDraws) -> _Cast:
  """A town, its landmark, region, dish, river, trail; neighbouring towns as distractors."""
  e: List[Phrase] = [(names.name("town"),)]
  landmark = _add(e, (names.name("word"), rng.choice(LANDMARKS)))
  region = _add(e, (names.name("word"), rng.choice(REGION_WORDS)))
  dish = _add(e, (names.name("food"), rng.choice(DISHES)))
  river = _add(e, (names.name("word"), "River"))
  trail = _add(e, (names.name("word"), "Coastal", "Hiking", "Trail"))
  for _ in range(2):
    _add(e, (names.name("town"),))
  _add(e, (names.name("word"), rng.choice(LANDMARKS)))
  return _cast_of(e, "place", (landmark, region, dish, river, trail))


def _product_cast(rng: random.Random, names: FreshDraws) -> _Cast:
  """A product model, its item type, brand and feature; rival models of the same item."""
  item = (rng.choice(PRODUCT_ADJECTIVES), rng.choice(PRODUCT_NOUNS))
  number = str(rng.choice((2, 3, 5, 7, 9, 12, 300, 500, 700)))
  e: List[Phrase] = [(names.name("model"), number)]
  kind = _add(e, item)
  brand = _add(e, (names.name("brand"),))
  feature = _add(e, rng.choice(PRODUCT_FEATURES))
  for _ in range(2):  # rivals: same number or same noun, so they share words with keys
    _add(e, (names.name("model"), rng.choice((number, str(rng.randint(2, 900))))))
  _add(e, (rng.choice(PRODUCT_ADJECTIVES), item[1]))
  _add(e, (names.name("brand"),))
  _add(e, (names.name("word"), rng.choice(STORE_WORDS)))
  return _cast_of(e, "product", (kind, brand, feature))


def _dish_cast(rng: random.Random, names: FreshDraws) -> _Cast:
  """A dish, its main ingredient and tool; other dishes of the same kind as distractors."""
  word = rng.choice(DISH_WORDS)
  e: List[Phrase] = [(names.name("food"), word)]
  ingredient = _add(e, rng.choice(INGREDIENTS))
  technique = _add(e, rng.choice(TECHNIQUES))
  for _ in range(2):
    _add(e, (names.name("food"), word))  # same dish word
  _add(e, (names.name("first"), names.name("last")))
  _add(e, (names.name("brand"),))
  _add(e, rng.choice(INGREDIENTS))
  return _cast_of(e, "dish", (ingredient, technique))


def _business_cast(rng: random.Random, names: FreshDraws) -> _Cast:
  """A town and a business category; the listed businesses and nearby towns as distractors."""
  e: List[Phrase] = [(names.name("town"),)]
  category = _add(e, rng.choice(CATEGORIES))
  for _ in range(rng.randint(6, 10)):
    _add(e, (names.name("word"), rng.choice(LISTING_WORDS)))
  _add(e, (names.name("town"),))
  return _cast_of(e, "business", (category,))


_CASTS: Dict[str, Callable[[random.Random, FreshDraws], _Cast]] = {
    "person": _person_cast, "event": _event_cast, "place": _place_cast,
    "product": _product_cast, "dish": _dish_cast, "business": _business_cast}
# Family -> the topic kinds its pages are about.
FAMILY_KINDS: Dict[str, Tuple[str, ...]] = {
    "news": ("person", "event", "place"), "product": ("product",), "recipe": ("dish",),
    "forum": ("product", "place", "dish"), "encyclopedia": ("person", "place", "event"),
    "directory": ("business",), "blog": ("place", "dish", "event", "product")}

# ----------------------------------------------------------------------------- page plan


@dataclasses.dataclass
class _Block:
  """One block of the page in reading order: a style and its runs (words, bold)."""
  style: str
  runs: List[Tuple[List[str], bool]]
  slot: float = 0.0  # > 0: a prose paragraph to fill, with this weight
  lead: bool = False  # the slot starts with a mention of the topic
  sentences: List[_Sentence] = dataclasses.field(default_factory=list)


class _Page:
  """A page being planned: its family, cast, key phrases and blocks."""

  def __init__(self, rng: random.Random, family: str, names: FreshDraws, total: int):
    self.rng, self.family, self.names, self.total = rng, family, names, total
    self.cast = _CASTS[rng.choice(FAMILY_KINDS[family])](rng, names)
    self.entities = self.cast.entities
    self.keys = self._choose_keys()
    self.victim: Optional[int] = None
    if rng.random() < 0.08:  # one key phrase gets no visual cue on this page
      self.victim = rng.choice([k for k in self.keys if k != 0] or self.keys)
    self.site = [names.name("site"), rng.choice(SITE_SUFFIXES[family])]
    self.blocks: List[_Block] = []
    self.used_mentions: List[str] = []
    self.used_fillers: Set[str] = set()  # membership only, never iterated
    self.capital_headings = rng.random() < 0.15
    self.capital_bold = rng.random() < 0.2

  def _choose_keys(self) -> List[int]:
    """1 to 3 key phrases (mean about 1.8): the topic, then some of its candidates.

    The topic is always one: a page whose title names an entity that is not a key phrase
    would contradict what a reader picks.
    """
    count = self.rng.choices((1, 2, 3), weights=(4, 5, 3))[0]
    if self.cast.kind == "business":  # a listing page is about a category in a town
      count = max(2, count)
    keys = [0]
    pool = list(self.cast.candidates)
    while len(keys) < count and pool:
      keys.append(pool.pop(self.rng.randrange(len(pool))))
    return keys

  def others(self) -> List[int]:
    """The entities that are not key phrases."""
    return [i for i in range(len(self.entities)) if i not in self.keys]

  def cue_ok(self, index: Optional[int]) -> bool:
    """Whether entity `index` may be shown in a heading or bold span (not the victim)."""
    return index is not None and index != self.victim

  def name(self, index: int) -> List[str]:
    """The entity's words as written."""
    return list(self.entities[index])

  # Blocks ---------------------------------------------------------------------------------

  def text(self, style: str, words: Sequence[str]) -> None:
    self.blocks.append(_Block(style, [(list(words), False)]))

  def row(self, style: str, items: Sequence[Sequence[str]]) -> None:
    self.blocks.append(_Block(style, [(list(w), False) for w in items if w]))

  def slot(self, weight: float = 1.0, lead: bool = False, style: str = "para") -> None:
    self.blocks.append(_Block(style, [], slot=weight, lead=lead))

  def titled(self, templates: Sequence[str], x: Sequence[str] = ()) -> List[str]:
    """One of the templates, filled with `x`, in title case."""
    words, _ = _fill(self.rng, self.rng.choice(templates), tuple(x))
    return _title_case(words)

  def heading(self, style: str, subject: Optional[int], generic: Sequence[str] = (),
              templates: Optional[Sequence[str]] = None) -> None:
    """A heading about entity `subject` (from `templates`, default the family's HEADINGS),
    else a generic one (skipped if there is none)."""
    if self.cue_ok(subject):
      self.text(style, self.titled(templates or HEADINGS[self.family], self.entities[subject]))
    elif generic:
      self.text(style, self.titled(generic))

  def title(self) -> None:
    """The page title: about the topic unless the topic is the victim."""
    self.heading("title", 0, GENERIC_TITLES[self.family], TITLES[self.family])

  def nav(self) -> None:
    """Site name, then the menu."""
    self.text("logo", self.site)
    menu = list(MENUS[self.family])
    menu = menu[:1] + self.rng.sample(menu[1:], self.rng.randint(3, len(menu) - 1))
    if self.rng.random() < 0.25:
      menu = [w.upper() for w in menu]
    self.row("menu", [[w] for w in menu])

  def notice(self, chance: float) -> None:
    """Maybe a cookie notice with its buttons."""
    if self.rng.random() < chance:
      self.text("notice", capitalise(self.rng.choice(NOTICES)).split())
      self.row("buttons", [["Accept"], ["Manage", "Settings"]][:self.rng.randint(1, 2)])

  def byline(self) -> List[str]:
    return ["By", self.names.name("first"), self.names.name("last"),
            self.rng.choice(MONTHS), str(self.rng.randint(1, 28)),
            str(self.rng.randint(2012, 2024))]

  def footer(self) -> None:
    links = self.rng.sample(FOOTERS[self.family], self.rng.randint(3, len(FOOTERS[self.family])))
    self.row("footer", [["Copyright", str(self.rng.randint(2015, 2024))] + self.site]
             + [link.split() for link in links])

  def sections(self, body: int, per_section: int, heading_style: str = "h2",
               key_rate: float = 0.4, other_rate: float = 0.3) -> None:
    """Sections of 1 to 4 slots under headings about keys, other entities or nothing."""
    count = max(1, round(body / per_section))
    headed: List[int] = []
    for _ in range(count):
      r = self.rng.random()
      keys = [k for k in self.keys if k not in headed and self.cue_ok(k)]
      others = [i for i in self.others() if i not in headed]
      subject = None
      if r < key_rate and keys:
        subject = self.rng.choice(keys)
      elif r < key_rate + other_rate and others:
        subject = self.rng.choice(others)
      if subject is not None:
        headed.append(subject)
      self.heading(heading_style, subject, GENERIC_HEADINGS[self.family])
      for _ in range(self.rng.randint(1, 4)):
        self.slot(self.rng.uniform(0.6, 1.4))

  def comments(self, style: str, shown: Tuple[int, int], weight: float) -> None:
    """A heading with a comment count drawn from `shown`, then 1 to 4 comments (name, text of
    this weight, reply button)."""
    self.text(style, [str(self.rng.randint(*shown)), "Comments"])
    for _ in range(self.rng.randint(1, 4)):
      self.text("label", [self.names.name("first")])
      self.slot(weight)
      self.row("actions", [["Reply"]])

  def related(self, heading: str, templates: Sequence[str], count: int) -> None:
    """Related links about other entities and about the keys' English words."""
    self.text("h3", heading.split())
    others = self.others()
    self.rng.shuffle(others)
    for index in others[:count]:
      self.text("item", self.titled(templates, self.entities[index]))
    for k in self.keys:  # shares words with a key phrase, but names another page
      common = [w for w in self.entities[k] if not w[:1].isupper() and len(w) > 3]
      if common and self.rng.random() < 0.5:
        self.text("item", _title_case(["More"] + common + ["Ideas", "for",
                                                           str(self.rng.randint(2018, 2024))]))


# ----------------------------------------------------------------------------- families


def _news(p: _Page, body: int) -> None:
  """Breadcrumb, headline, byline, lede naming the topic, sections, quote, tags, most read."""
  p.notice(0.5)
  p.row("crumbs", [["Home"], [p.rng.choice(("Local", "Culture", "Business", "Sport"))]])
  p.title()
  p.text("meta", p.byline())
  p.row("actions", [["Share"], ["Comments"], ["Save"]])
  p.slot(1.0, lead=True)
  p.slot(1.0)
  p.text("caption", ["Photo", "by", p.names.name("first"), p.names.name("last")])
  if p.rng.random() < 0.6:
    p.text("notice", ["Advertisement"])
  p.sections(body - 120, 240, key_rate=0.3, other_rate=0.3)
  p.slot(0.6, style="quote")
  tags = [p.name(i) for i in p.keys if p.cue_ok(i)] + [p.name(i) for i in p.others()[:3]]
  p.rng.shuffle(tags)
  p.row("tags", [["Topics"]] + tags)
  p.row("actions", [["Share"], ["Comments"], ["Save"]])
  p.related("Most Read", ("{x} Latest", "Why {x} Matters Now", "Opinion on {x}"),
            p.rng.randint(2, 4))


def _product(p: _Page, body: int) -> None:
  """Product title (brand, model, item), price, buttons, bullets, description, specs, reviews."""
  item, brand, feature = (p.cast.candidates + [None] * 3)[:3]
  p.row("crumbs", [["Home"], ["Shop"]] + ([p.name(item)[-1:]] if item else []))
  title = [w for i in (brand, 0, item) if p.cue_ok(i) for w in p.name(i)]
  if p.cue_ok(feature) and p.rng.random() < 0.5:
    title += ["with"] + p.name(feature)
  p.text("title", _title_case(title or ["Item", "Details"]))
  p.text("meta", [str(p.rng.randint(12, 480)), "ratings", str(p.rng.randint(3, 49)),
                  "answered", "questions"])
  p.text("price", [str(p.rng.randint(19, 499)), str(p.rng.randint(10, 99))])
  p.row("buttons", [["Add", "to", "Cart"], ["Buy", "Now"], ["Add", "to", "Wish", "List"]])
  p.text("h3", ["About", "this", "item"])
  for _ in range(p.rng.randint(3, 5)):
    p.slot(0.35, style="item")
  p.heading("h2", None, ("Product Description",))
  p.slot(1.0, lead=True)
  p.sections(body - 300, 260, key_rate=0.3, other_rate=0.3)
  p.text("h2", ["Specifications"])
  specs = (("Weight", f"{p.rng.randint(1, 9)} kg"), ("Colour", p.rng.choice(("Black", "White",
           "Grey", "Blue"))), ("Warranty", f"{p.rng.randint(1, 5)} years"),
           ("Model", " ".join(p.name(0))), ("Power", f"{p.rng.randint(5, 90)} W"))
  for label, value in specs[:p.rng.randint(3, 5)]:
    p.row("cell", [[label], value.split()])
  p.text("h2", ["Customer", "Reviews"])
  for _ in range(max(2, min(8, body // 220))):
    p.text("label", [str(p.rng.randint(1, 5)), "out", "of", "5", "stars"])
    p.text("meta", ["Reviewed", "by", p.names.name("first"), "on", p.rng.choice(MONTHS),
                    str(p.rng.randint(2015, 2024))])
    p.slot(0.7)
    p.row("actions", [["Helpful"], ["Report"]])
  p.related("Customers Also Viewed", ("{x}", "{x} Bundle", "{x} Spare Parts"),
            p.rng.randint(3, 5))


def _recipe(p: _Page, body: int) -> None:
  """Title, jump buttons, long intro story, ingredients, numbered steps, notes, comments."""
  p.notice(0.4)
  p.title()
  p.text("meta", p.byline() + [str(p.rng.randint(4, 400)), "comments"])
  p.row("buttons", [["Jump", "to", "Recipe"], ["Print", "Recipe"], ["Pin"]])
  p.slot(1.0)
  p.slot(1.0, lead=p.rng.random() < 0.5)
  p.sections(body * 0.55, 220, key_rate=0.35, other_rate=0.25)
  p.text("h2", ["Ingredients"])
  for _ in range(p.rng.randint(5, 11)):
    amount = [str(p.rng.randint(1, 4)), p.rng.choice(("cups", "tablespoons", "teaspoons",
                                                     "grams", "pinch"))]
    stuff = list(p.rng.choice(INGREDIENTS)) if p.rng.random() < 0.6 else [
        p.rng.choice(("flour", "butter", "onion", "garlic", "salt", "pepper", "stock", "milk",
                      "eggs", "sugar", "olive", "oil"))]
    p.text("item", amount + stuff)
  p.text("h2", ["Instructions"])
  for step in range(1, p.rng.randint(4, 8)):
    p.text("label", ["Step", str(step)])
    p.slot(0.45, style="item")
  p.text("h3", ["Nutrition"])
  p.row("cell", [["Calories"], [str(p.rng.randint(180, 900))], ["Protein"],
                 [str(p.rng.randint(3, 40)), "g"]])
  p.comments("h2", (3, 90), 0.4)
  p.related("More Recipes", ("{x}", "Easy {x}", "{x} for Beginners"), p.rng.randint(2, 4))


def _forum(p: _Page, body: int) -> None:
  """Breadcrumb, thread title, posts (user, stats, text, actions), similar threads."""
  p.row("crumbs", [["Forums"], [p.rng.choice(("General", "Help", "Reviews", "Travel",
                                              "Cooking"))], ["Discussion"]])
  p.title()
  p.text("meta", ["Thread", "starter", p.names.name("first"), "Start", "date",
                  p.rng.choice(MONTHS), str(p.rng.randint(1, 28))])
  posts = max(3, min(24, round(body / p.rng.randint(70, 110))))
  users = [p.names.name("first") for _ in range(p.rng.randint(2, 6))]
  for index in range(posts):
    p.text("label", [p.rng.choice(users)])
    p.text("meta", ["Joined", p.rng.choice(MONTHS), str(p.rng.randint(2008, 2023)),
                    "Messages", str(p.rng.randint(1, 9000))])
    if index and p.rng.random() < 0.25:
      p.text("meta", [p.rng.choice(users), "said"])
      p.slot(0.3, style="quote")
    p.slot(1.0, lead=index == 0)
    p.row("actions", [["Reply"], ["Quote"], ["Like"], ["Report"]][:p.rng.randint(2, 4)])
  p.text("side_h", ["Similar", "Threads"])
  for index in p.others()[:p.rng.randint(2, 4)]:
    p.text("side", p.titled(TITLES["forum"], p.entities[index]))


def _encyclopedia(p: _Page, body: int) -> None:
  """Title, tagline, infobox, lead with a bold first mention, contents, sections, see also."""
  p.title()
  p.text("meta", ["From"] + p.site + ["the", "free", "encyclopedia"])
  p.text("h3", _title_case(p.name(0)) if p.cue_ok(0) else ["Summary"])
  for index in ([0] + p.cast.candidates)[:p.rng.randint(3, 5)]:
    label = "Name" if index == 0 else p.rng.choice(("Known for", "Related", "Location",
                                                    "Region", "Part of", "Associated"))
    p.row("cell", [label.split(), p.name(index)])
  p.slot(1.2, lead=True)
  p.slot(1.0)
  p.text("h3", ["Contents"])
  heads = p.rng.sample(GENERIC_HEADINGS["encyclopedia"], 4)
  p.row("cell", [[str(i + 1)] + h.split() for i, h in enumerate(heads)])
  p.sections(body - 200, 230, key_rate=0.35, other_rate=0.35)
  p.text("h2", ["See", "also"])
  for index in p.others()[:p.rng.randint(2, 4)]:
    p.text("item", p.name(index))
  p.text("h2", ["References"])
  for _ in range(p.rng.randint(3, 8)):
    p.text("item", [p.names.name("last"), p.names.name("first"), str(p.rng.randint(1950, 2023)),
                    "Retrieved", p.rng.choice(MONTHS), str(p.rng.randint(2015, 2024))])
  p.row("tags", [["Categories"]] + [p.name(i) for i in p.keys if i != p.victim][:2]
        + [[p.rng.choice(("History", "Culture", "Geography", "People"))]])


def _directory(p: _Page, body: int) -> None:
  """Search box, title (category in town), filters, one block per listing, nearby towns."""
  p.notice(0.4)
  town, category = p.name(0), p.name(p.cast.candidates[0])
  p.row("cell", [["Search"], category, ["Near"], town])
  if p.cue_ok(0) and p.cue_ok(p.cast.candidates[0]):
    p.text("title", p.titled(TITLES["directory"], category + ["in"] + town))
  elif p.cue_ok(0):
    p.text("title", ["Local", "Businesses", "in"] + town)
  else:
    p.title()
  p.text("meta", [str(p.rng.randint(12, 300)), "results", "Sorted", "by", "rating"])
  p.row("buttons", [["Open", "Now"], ["Top", "Rated"], ["Price"], ["Distance"]])
  p.slot(0.8, lead=True)
  listings = range(2, len(p.entities) - 1)  # between category and nearby town
  per = max(1, round((body - 150) / 110 / max(1, len(listings))))
  for index in listings:
    p.text("label", p.name(index))
    p.text("meta", [str(p.rng.randint(1, 200)), p.names.name("word"),
                    p.rng.choice(STREET_WORDS)] + town)
    p.text("meta", [f"{p.rng.randint(3, 5)}", "stars", str(p.rng.randint(2, 400)), "reviews"])
    for _ in range(per):
      p.slot(0.8)
    p.row("buttons", [["Call"], ["Website"], ["Directions"]])
  p.heading("h2", None, GENERIC_HEADINGS["directory"])
  p.slot(0.8)
  p.text("side_h", ["Nearby", "Towns"])
  p.text("side", p.name(len(p.entities) - 1))


def _blog(p: _Page, body: int) -> None:
  """Title (large, not bold), date and comments, personal story, captions, tags, comments."""
  p.title()
  p.text("meta", ["Posted", "on", p.rng.choice(MONTHS), str(p.rng.randint(1, 28)), "by",
                  p.names.name("first"), str(p.rng.randint(0, 90)), "Comments"])
  p.slot(1.0)
  p.slot(1.0, lead=p.rng.random() < 0.6)
  p.sections(body - 150, 200, heading_style=p.rng.choice(("h2", "h3")), key_rate=0.35,
             other_rate=0.3)
  p.text("caption", ["Photo", str(p.rng.randint(1, 30))])
  tags = [p.name(i) for i in p.keys if p.cue_ok(i)] + [p.name(i) for i in p.others()[:2]]
  p.row("tags", [["Tags"]] + tags)
  p.text("h3", ["About", "Me"])
  p.text("side", ["Hi", "I", "am", p.names.name("first"), "and", "this", "is", "my", "little",
                  "corner", "of", "the", "internet"])
  p.comments("h3", (2, 40), 0.35)
  p.text("side_h", ["Popular", "Posts"])
  for index in p.others()[:p.rng.randint(2, 3)]:
    p.text("side", p.titled(TITLES["blog"], p.entities[index]))
  p.row("buttons", [["Subscribe"]])


# Family -> its page between the navigation and the footer (`_plan` adds those to every page).
_BUILDERS: Dict[str, Callable[[_Page, int], None]] = {
    "news": _news, "product": _product, "recipe": _recipe, "forum": _forum,
    "encyclopedia": _encyclopedia, "directory": _directory, "blog": _blog}
# Family -> chance that a mention of a key phrase / another entity is bold.
_BOLD_RATES = {"news": (0.15, 0.08), "product": (0.3, 0.15), "recipe": (0.3, 0.15),
               "forum": (0.08, 0.05), "encyclopedia": (0.1, 0.1), "directory": (0.2, 0.2),
               "blog": (0.25, 0.12)}

# ----------------------------------------------------------------------------- body text


def _mention(p: _Page, index: int) -> _Sentence:
  """A mention sentence of entity `index`, in the family's wording; avoids repeats."""
  pool = [t for t in MENTIONS[p.family] if t not in p.used_mentions]
  if not pool:  # all used: start over, but never with the template just used
    pool = [t for t in MENTIONS[p.family] if t != p.used_mentions[-1]]
    p.used_mentions.clear()
  template = p.rng.choice(pool)
  p.used_mentions.append(template)
  return _sentence(p.rng, template, index, p.entities[index])


def _filler(p: _Page) -> _Sentence:
  """A background sentence: the family's voice now and then, else the topic kind's prose."""
  voice = [t for t in VOICE[p.family] if t not in p.used_fillers]
  if voice and p.rng.random() < 0.12:
    template = p.rng.choice(voice)
  else:
    subjects, predicates, endings = FILLERS[p.cast.kind]
    for _ in range(8):
      template = " ".join((p.rng.choice(subjects), p.rng.choice(predicates),
                           p.rng.choice(endings)))
      if template not in p.used_fillers:
        break
  p.used_fillers.add(template)
  return _sentence(p.rng, template)


def _mention_counts(p: _Page) -> List[int]:
  """Body mentions per entity: keys recur more than the others, more on long pages."""
  scale = p.total / 800
  counts = []
  for i in range(len(p.entities)):
    if i == 0:  # the topic, always a key phrase (`_Page._choose_keys`)
      counts.append(3 + round(p.rng.uniform(2.5, 6) * scale))
    elif i in p.keys:
      counts.append(2 + round(p.rng.uniform(1.5, 4) * scale))
    else:
      counts.append(round(p.rng.choice((0, 1, 1, 2, 3, 4)) * p.rng.uniform(0.5, 1.5)
                          * max(1.0, scale)))
  return counts


def _words(block: _Block) -> int:
  return sum(len(w) for w, _ in block.runs) + sum(len(s.words) for s in block.sentences)


def _fill_slots(p: _Page) -> None:
  """Puts mention sentences into the slots, then background prose up to the page length."""
  slots = [b for b in p.blocks if b.slot > 0]
  fixed = sum(_words(b) for b in p.blocks if b.slot == 0)
  body = max(8 * len(slots), p.total - fixed)
  weights = [b.slot for b in slots]
  targets = [max(8, round(body * w / sum(weights))) for w in weights]
  mentions = [i for i, c in enumerate(_mention_counts(p)) for _ in range(c)]
  p.rng.shuffle(mentions)
  for block in [b for b in slots if b.lead]:
    block.sentences.append(_mention(p, 0))
    if 0 in mentions:
      mentions.remove(0)
  for index in mentions:
    block = p.rng.choices(slots, weights=targets)[0]
    block.sentences.append(_mention(p, index))
  for block, target in zip(slots, targets):
    size = _words(block)
    while size < target - 4:
      sentence = _filler(p)
      block.sentences.append(sentence)
      size += len(sentence.words)
    first = block.sentences[:1] if block.lead else []
    rest = block.sentences[len(first):]
    p.rng.shuffle(rest)
    block.sentences = first + rest


def _bold_and_cues(p: _Page) -> None:
  """Bold spans on some mentions; each key phrase but the victim gets a cue somewhere."""
  key_rate, other_rate = _BOLD_RATES[p.family]
  mentions = [s for b in p.blocks for s in b.sentences if s.entity is not None]
  for sentence in mentions:
    if p.cue_ok(sentence.entity):
      sentence.bold = p.rng.random() < (key_rate if sentence.entity in p.keys else other_rate)
  if p.family == "encyclopedia":  # the reference style: the topic's first mention is bold
    lead = next((s for b in p.blocks if b.lead for s in b.sentences[:1]), None)
    if lead is not None and p.cue_ok(0):
      lead.bold = True
  cue_words = [[w.lower() for w in b.runs[0][0]] for b in p.blocks
               if b.style in _CUE_STYLES or (_STYLES[b.style][4] and b.slot == 0)]
  for k in [k for k in p.keys if p.cue_ok(k)]:
    own = [s for s in mentions if s.entity == k]
    if not any(_contains(words, p.entities[k]) for words in cue_words) and not any(
        s.bold for s in own):
      p.rng.choice(own).bold = True


def _plan(rng: random.Random, family: str, names_from: lexicon.Lexicon,
          knobs: Preset) -> _Page:
  """Draws one page of the family: length (the preset's), cast, key phrases, blocks, text."""
  drawn = rng.lognormvariate(math.log(knobs.median_words), knobs.sigma_words)
  total = int(min(knobs.max_words, max(knobs.min_words, drawn)))
  p = _Page(rng, family, FreshDraws(rng, names_from), total)
  p.nav()
  _BUILDERS[family](p, max(80, total - 150))
  p.footer()
  _fill_slots(p)
  _bold_and_cues(p)
  return p


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
    self.elements: List[Tuple[int, int, int, _Box, _Box]] = []  # (id, start, end, box, parent)
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
    self.elements.append((self.node_id(), start, len(self.words), box, parent))

  def run(self, words: Sequence[str], font: float, **flags: int) -> _Box:
    """A block of text in the content column at the cursor; moves the cursor below it."""
    chars = len(" ".join(words))
    per_line = max(1, int(self.width / (font * 0.52)))
    lines = math.ceil(chars / per_line)
    width = self.width if lines > 1 else chars * font * 0.52 + 8
    box = _Box(self.left, width, self.y, lines * font * 1.45, font=font, **flags)
    self.y += box.height
    return box


def _segments(paragraph: List[_Sentence], capital_bold: bool) -> List[Tuple[List[str], bool]]:
  """The paragraph's words as alternating plain and bold runs (bold ones upper-case if
  `capital_bold`)."""
  runs: List[Tuple[List[str], bool]] = []

  def push(words: List[str], bold: bool) -> None:
    """Appends a run, merging consecutive plain runs."""
    if not words:
      return
    if runs and not bold and not runs[-1][1]:
      runs[-1][0].extend(words)
    else:
      runs.append((list(words), bold))

  for sentence in paragraph:
    words = sentence.words
    start, end = sentence.mention if sentence.bold else (len(words), len(words))
    span = words[start:end]
    push(words[:start], False)
    push([w.upper() for w in span] if capital_bold else span, True)  # empty unless bold
    push(words[end:], False)
  return runs


def _render_paragraph(page: _Layout, runs: List[Tuple[List[str], bool]], parent: _Box,
                      font: float) -> None:
  """A paragraph box of inline plain and bold runs (`_render` writes one run as one element)."""
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


def _style(p: _Page, name: str, fonts: Dict[str, int]) -> Tuple[str, int, int, int, int]:
  """(mode, font, heading, bold, indent) of a style on this page (fonts drawn once a page)."""
  mode, low, high, heading, bold, indent = _STYLES[name]
  low, high, heading, bold = _STYLE_CHANGES.get(p.family, {}).get(name, (low, high, heading, bold))
  if name not in fonts:
    fonts[name] = p.rng.randint(low, high)
  return mode, fonts[name], heading, bold, indent


def _row(page: _Layout, items: Sequence[Sequence[str]], font: int, bold: int,
         parent: _Box) -> None:
  """Inline elements left to right, wrapping at the column's right edge."""
  x, right = float(page.left), page.left + page.width
  for words in items:
    width = len(" ".join(words)) * font * 0.55 + 16
    if x + width > right and x > page.left:
      x, page.y = float(page.left), page.y + font * 1.8
    page.add(list(words), _Box(x, width, page.y, font * 1.5, block=0, inline=1,
                                    font=font, bold=bold), parent)
    x += width + 14
  page.y += font * 1.8


def _render(rng: random.Random, p: _Page) -> _Layout:
  """Lays the blocks out top to bottom, each in a container of its own."""
  page = _Layout(rng)
  page.y = float(rng.randint(8, 16))
  fonts: Dict[str, int] = {}
  left, width = page.left, page.width
  for block in p.blocks:
    runs = block.runs if block.slot == 0 else _segments(block.sentences, p.capital_bold)
    if not runs:
      continue
    mode, font, heading, bold, indent = _style(p, block.style, fonts)
    if heading and p.capital_headings and block.style != "title":
      runs = [([w.upper() for w in words], b) for words, b in runs]
    page.left = left + min(indent, width - 260)
    page.width = width - min(indent, width - 260)
    page.y += rng.randint(4, 12) + (14 if heading else 0)
    page.node_id()  # the container takes an id
    parent = _Box(page.left, page.width, page.y - 4, font * 3, leaf=0, font=font)
    if mode == "row":
      _row(page, [w for w, _ in runs], font, bold, parent)
    elif mode == "text" or len(runs) == 1:  # a plain paragraph is one element too
      words = [w for run, _ in runs for w in run]
      page.add(words, page.run(words, font, heading=heading, bold=bold), parent)
    else:
      _render_paragraph(page, runs, parent, font)
  page.left, page.width = left, width
  return page


# ----------------------------------------------------------------------------- records


def _url(p: _Page, split: str, seed: int, index: int) -> str:
  """A fresh url: the site's domain, a slug of the title and a digest of (split, seed, index)."""
  digest = hashlib.sha1(f"benchmark-openkp:{split}:{seed}:{index}".encode("utf-8")).hexdigest()
  domain = "".join(p.site).lower()
  title = next((b.runs[0][0] for b in p.blocks if b.style == "title"), ["page"])
  slug = "-".join(w.lower() for w in title[:6])
  tld = (".com", ".net", ".org")[int(digest[-1], 16) % 3]
  return f"http://www.{domain}{tld}/{slug}-{digest[:10]}"


def _record(rng: random.Random, family: str, names_from: lexicon.Lexicon, split: str,
            seed: int, index: int, knobs: Preset) -> dict:
  """One page in the official format."""
  p = _plan(rng, family, names_from, knobs)
  layout = _render(rng, p)
  words = layout.words
  writer.check(all(w and w.isalnum() and w.isascii() for w in words), "bad word")
  writer.check(len(layout.elements) <= MAX_ELEMENTS, f"{len(layout.elements)} elements")
  vdom = [{"Id": node_id, "text": " ".join(words[start:end]),
           "feature": box.features() + parent.features(), "start_idx": start, "end_idx": end}
          for node_id, start, end, box, parent in layout.elements]
  phrases = [list(_lower(p.entities[k])) for k in p.keys]
  lowered = [w.lower() for w in words]
  for phrase in phrases:
    writer.check(_contains(lowered, phrase), f"{phrase} not on the page")
  return {"url": _url(p, split, seed, index), "text": " ".join(words),
          "VDOM": json.dumps(vdom), "KeyPhrases": phrases}


def generate_examples(num: int, seed: int = 0, split: str = "train", names: str = "seen",
                      families: Optional[Sequence[str]] = None,
                      preset: str = "benchmark") -> List[dict]:
  """Generates OpenKP pages.

  Args:
    num: How many records (lines), at least 0.
    seed: The same arguments give identical records.
    split: One of `SPLITS`; it only enters the urls (so splits never share a url).
    names: "seen" names entities from `LEXICON`, "unseen" from `UNSEEN_LEXICON` (none of whose
      words occurs with "seen").
    families: The template families to draw pages from (each page picks one at random); None:
      the preset's train families (`TRAIN_FAMILIES` for "benchmark").
    preset: One of `PRESETS`: the page length distribution (and the default families).

  Returns:
    Dicts with the official keys `url`, `text`, `VDOM` (a JSON string) and `KeyPhrases`.

  Raises:
    ValueError: On a negative `num` or an unknown split, names, family or preset.
  """
  knobs = writer.preset_settings(PRESET_SETTINGS, preset)
  families = writer.check_generator_arguments(
      num, split, SPLITS, names, NAMES, knobs.train_families if families is None else families,
      FAMILIES)
  rng = random.Random(seed)
  lex = LEXICONS[names]
  return [_record(rng, rng.choice(families), lex, split, seed, index, knobs)
          for index in range(num)]


# `split_plan(num_train, num_dev, seed, preset, train_families)` and
# `ensure_demo_data(directory, num_train, num_dev, seed, train_families, preset)`: the five
# splits and the folder that holds them (`writer.DemoData`).
_DEMO_DATA = writer.DemoData("openkp", GENERATOR_VERSION, generate_examples, writer.write_jsonl,
                             PRESET_SETTINGS, SEED_OFFSETS, FILENAMES, INFO_FILENAME)
split_plan, ensure_demo_data = _DEMO_DATA.split_plan, _DEMO_DATA.ensure


def length_statistics(records: Sequence[dict]) -> dict:
  """Words per page (the whitespace tokens of `text`, all the model reads) and task counts."""
  lengths = [len(p) for r in records for p in r["KeyPhrases"]]
  words = [len(r["text"].split()) for r in records]
  return {"items": len(records), **writer.spread("words", words),
          **writer.spread("keyphrases", [len(r["KeyPhrases"]) for r in records]),
          **writer.spread("keyphrase_words", lengths),
          "keyphrases_of_1_to_3_words": sum(n <= 3 for n in lengths) / len(lengths),
          **writer.spread("elements", [len(json.loads(r["VDOM"])) for r in records])}


def family_templates(family: str) -> Tuple[str, ...]:
  """The family's own sentence templates (mentions and voice), for the disjointness checks."""
  if family not in FAMILIES:
    raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
  return MENTIONS[family] + VOICE[family]
