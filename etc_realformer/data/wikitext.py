"""Plain text from a MediaWiki XML dump (Wikipedia's `pages-articles` files), for pretraining.

`read_dump(path, report)` streams the `<page>` elements of a dump (`.xml` or `.xml.bz2`, read
incrementally, so memory does not grow with the file) and yields `(title, text)` for every
article: namespace 0, not a redirect, with enough prose left after `strip_markup`. Pages that
are left out are counted in `report` under a reason. `strip_markup` is a deliberately simple
cleaner: it keeps the running prose of an article and drops templates, tables, references,
files, categories and section headings; it does not expand templates, so a sentence built
from one (a date, a conversion) loses that part.

This module is pure Python and does not import TensorFlow.
"""

from __future__ import annotations

import bz2
import collections
import dataclasses
import gzip
import re
import xml.etree.ElementTree as ElementTree
from typing import Counter, Iterator, List, Tuple

REASON_NAMESPACE = "not an article (namespace other than 0)"
REASON_REDIRECT = "redirect"
REASON_SHORT = "too little prose after removing markup"

_COMMENT = re.compile(r"<!--.*?-->", re.S)
_REF = re.compile(r"<ref[^>/]*/>|<ref[^>]*>.*?</ref>", re.S | re.I)
_TAG_BLOCK = re.compile(r"<(math|gallery|timeline|syntaxhighlight|source|pre|score|code)"
                        r"[^>]*>.*?</\1>", re.S | re.I)
_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_FILE_LINK_START = re.compile(r"\[\[(?:file|image|category|media):", re.I)
_LINK = re.compile(r"\[\[([^\[\]|]*\|)?([^\[\]]*)\]\]")
_EXTERNAL = re.compile(r"\[(?:https?:|ftp:|//)[^\s\]]*\s*([^\]]*)\]")
_HEADING = re.compile(r"^=+.*?=+\s*$", re.M)
_QUOTES = re.compile(r"'{2,}")
_ENTITY = {"&amp;": "&", "&quot;": '"', "&nbsp;": " ", "&lt;": "<", "&gt;": ">",
           "&ndash;": "-", "&mdash;": "-", "&minus;": "-"}
_EMPTY_BRACKETS = re.compile(r"\(\s*[,;]?\s*\)")
_SPACES = re.compile(r"[ \t]+")


@dataclasses.dataclass
class DumpReport:
  """What `read_dump` read and why pages were left out."""
  path: str = ""
  pages: int = 0
  articles: int = 0
  words: int = 0
  skipped: Counter[str] = dataclasses.field(default_factory=collections.Counter)

  def summary(self) -> str:
    lines = [f"{self.path}: {self.pages} page(s), {self.articles} article(s) kept, "
             f"{self.words} word(s)"]
    lines += [f"  skipped {count}: {reason}" for reason, count in sorted(self.skipped.items())]
    return "\n".join(lines)


def _remove_nested(text: str, opening: str, closing: str) -> str:
  """`text` without every (possibly nested) `opening ... closing` span; unbalanced ends drop."""
  out: List[str] = []
  depth = 0
  i = 0
  while i < len(text):
    if text.startswith(opening, i):
      depth += 1
      i += len(opening)
    elif depth and text.startswith(closing, i):
      depth -= 1
      i += len(closing)
    else:
      if not depth:
        out.append(text[i])
      i += 1
  return "".join(out)


def _remove_file_links(text: str) -> str:
  """Drops `[[File:...]]`, `[[Image:...]]` and `[[Category:...]]` links with nested links."""
  while True:
    match = _FILE_LINK_START.search(text)
    if not match:
      return text
    depth, i = 0, match.start()
    while i < len(text):
      if text.startswith("[[", i):
        depth += 1
        i += 2
      elif text.startswith("]]", i):
        depth -= 1
        i += 2
        if depth == 0:
          break
      else:
        i += 1
    text = text[:match.start()] + text[i:]


def strip_markup(wikitext: str) -> str:
  """The prose paragraphs of an article's wikitext, one paragraph per line."""
  text = _COMMENT.sub("", wikitext)
  text = _REF.sub("", text)
  text = _TAG_BLOCK.sub("", text)
  text = _remove_nested(text, "{{", "}}")       # templates and infoboxes
  text = _remove_nested(text, "{|", "|}")       # tables
  text = _remove_file_links(text)
  text = _LINK.sub(lambda m: m.group(2), text)  # [[target|label]] -> label
  text = _EXTERNAL.sub(lambda m: m.group(1), text)
  text = _HEADING.sub("", text)
  text = _TAG.sub("", text)
  text = _QUOTES.sub("", text)
  for entity, value in _ENTITY.items():
    text = text.replace(entity, value)
  paragraphs = []
  for line in text.split("\n"):
    line = _SPACES.sub(" ", _EMPTY_BRACKETS.sub("", line)).strip()
    # Lists, indents, tables left over and short fragments are not running prose.
    if not line or line[0] in "*#:;|!{}[" or len(line.split()) < 6:
      continue
    paragraphs.append(line)
  return "\n".join(paragraphs)


def _open(path: str):
  if path.endswith(".bz2"):
    return bz2.open(path, "rb")
  if path.endswith(".gz"):
    return gzip.open(path, "rb")
  return open(path, "rb")


def _local(tag: str) -> str:
  return tag.rsplit("}", 1)[-1]


def read_dump(path: str, report: DumpReport, min_words: int = 50) -> Iterator[Tuple[str, str]]:
  """Yields (title, prose) for each article of the dump at `path`; counts what it leaves out."""
  report.path = path
  with _open(path) as f:
    context = ElementTree.iterparse(f, events=("end",))
    for _, element in context:
      if _local(element.tag) != "page":
        continue
      report.pages += 1
      fields = {_local(child.tag): child for child in element.iter()}
      namespace = (fields["ns"].text or "0").strip() if "ns" in fields else "0"
      raw = fields["text"].text or "" if "text" in fields else ""
      title = (fields["title"].text or "").strip() if "title" in fields else ""
      element.clear()
      if namespace != "0":
        report.skipped[REASON_NAMESPACE] += 1
        continue
      if "redirect" in fields or raw.lstrip().lower().startswith("#redirect"):
        report.skipped[REASON_REDIRECT] += 1
        continue
      prose = strip_markup(raw)
      words = len(prose.split())
      if words < min_words:
        report.skipped[REASON_SHORT] += 1
        continue
      report.articles += 1
      report.words += words
      yield title, prose
