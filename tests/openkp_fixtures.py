"""Shared OpenKP test data: a hand-made vocabulary and page."""

import json
import os

from etc_realformer.data import vocab
from etc_realformer.data.span_tokenization import OffsetTokenizer
from etc_realformer.data.tokenization import load_tokenizer

WORDS = ["home", "about", "solar", "kettle", "the", "best", "for", "camping", "buy", "a", "##s",
         "now"]
TEXT = "Home About Solar Kettle the best Solar Kettles for camping Buy a Solar Kettle now"
#       0    1     2     3      4   5    6     7       8   9       10  11 12    13     14


def tokenizer(tmp_path) -> OffsetTokenizer:
  path = os.path.join(str(tmp_path), "vocab.txt")
  with open(path, "w", encoding="utf-8") as f:
    f.write("\n".join(list(vocab.RESERVED_TOKENS) + WORDS) + "\n")
  return OffsetTokenizer(load_tokenizer(vocab_file=path))


def piece_id(piece: str) -> int:
  return len(vocab.RESERVED_TOKENS) + WORDS.index(piece)


def visual(x=0.0, heading=0, bold=0, font=14.0):
  own = [x, 100.0, 10.0, 20.0, 1, 0, heading, 1, font, bold]
  return own + [0.0, 800.0, 0.0, 600.0, 1, 0, 0, 0, 14.0, 0]


def element(i, start, end, **kw):
  words = TEXT.split(" ")[start:end]
  return {"Id": i, "text": " ".join(words), "feature": visual(**kw), "start_idx": start,
          "end_idx": end}


def raw_page(**changes) -> dict:
  vdom = [element(0, 0, 2), element(1, 2, 4, heading=1, bold=1, font=32.0),
          element(2, 4, 11), element(3, 11, 15, x=-5.0)]
  page = {"url": "http://example.com/kettle", "text": TEXT, "VDOM": json.dumps(vdom),
          "KeyPhrases": [["solar", "kettle"], ["camping"]]}
  page.update(changes)
  return page


def write_lines(tmp_path, records, name="pages.jsonl") -> str:
  path = os.path.join(str(tmp_path), name)
  with open(path, "w", encoding="utf-8") as f:
    for record in records:
      f.write((record if isinstance(record, str) else json.dumps(record)) + "\n")
  return path
