"""Shared WikiHop test data: a hand-made vocabulary, item and example."""

import json
import os

from etc_realformer.data import vocab
from etc_realformer.data.span_tokenization import OffsetTokenizer
from etc_realformer.data.tokenization import load_tokenizer
from tasks.wikihop.data import WikiHopExample

WORDS = ["country", "mara", "veldt", "freedonia", "new", "york", "lives", "in", ".", "she",
         "visited", "is", "far", "of", "citizenship"]


def tokenizer(tmp_path) -> OffsetTokenizer:
  path = os.path.join(str(tmp_path), "vocab.txt")
  with open(path, "w", encoding="utf-8") as f:
    f.write("\n".join(list(vocab.RESERVED_TOKENS) + WORDS) + "\n")
  return OffsetTokenizer(load_tokenizer(vocab_file=path))


def piece_id(word: str) -> int:
  return len(vocab.RESERVED_TOKENS) + WORDS.index(word)


def raw_item(**changes) -> dict:
  item = {"id": "WH_dev_0", "query": "country mara veldt",
          "candidates": ["freedonia", "new york", "york"],
          "supports": ["Mara Veldt lives in New York. She visited York.", "Freedonia is far."],
          "answer": "freedonia", "annotations": []}
  item.update(changes)
  return item


def example(**changes) -> WikiHopExample:
  values = dict(example_id="WH_dev_0", query="country mara veldt",
                candidates=["freedonia", "new york", "york"],
                supports=["Mara Veldt lives in New York. She visited York.", "Freedonia is far."],
                answer="freedonia")
  values.update(changes)
  item = {"id": values["example_id"], "query": values["query"],
          "candidates": list(values["candidates"]), "supports": list(values["supports"])}
  if values.get("answer") is not None:
    item["answer"] = values["answer"]
  return WikiHopExample(**values, item=item)


def write_items(tmp_path, items, name="items.json") -> str:
  path = os.path.join(str(tmp_path), name)
  with open(path, "w", encoding="utf-8") as f:
    json.dump(items, f)
  return path
