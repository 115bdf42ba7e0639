"""Shared HotpotQA test data: a hand-made vocabulary and example."""

import os

from etc_realformer.data import vocab
from etc_realformer.data.span_tokenization import OffsetTokenizer
from etc_realformer.data.tokenization import load_tokenizer
from tasks.hotpotqa.data import HotpotExample

WORDS = ["who", "was", "born", "first", "?", "ann", "in", "1921", ".", "is", "kind", "zoe",
         "1930", ",", "'", "s", "cafe", "(", ")", "paris", "yes", "no", "did"]


def tokenizer(tmp_path) -> OffsetTokenizer:
  path = os.path.join(str(tmp_path), "vocab.txt")
  with open(path, "w", encoding="utf-8") as f:
    f.write("\n".join(list(vocab.RESERVED_TOKENS) + WORDS) + "\n")
  return OffsetTokenizer(load_tokenizer(vocab_file=path))


def piece_id(word: str) -> int:
  return len(vocab.RESERVED_TOKENS) + WORDS.index(word)


def example(**changes) -> HotpotExample:
  values = dict(
      qas_id="q1", question="Who was born first?",
      context=[("Ann", ["Ann was born in 1921.", " Ann is kind."]),
               ("Zoë", ["Zoë was born in 1930."])],
      answer="Ann", supporting_facts=[("Ann", 0), ("Zoë", 0)], type="comparison")
  values.update(changes)
  return HotpotExample(**values)


def raw_record(**changes) -> dict:
  record = {"_id": "q1", "question": "Who was born first?", "answer": "Ann",
            "supporting_facts": [["Ann", 0], ["Zoë", 0]],
            "context": [["Ann", ["Ann was born in 1921.", " Ann is kind."]],
                        ["Zoë", ["Zoë was born in 1930."]]],
            "type": "comparison", "level": "easy"}
  record.update(changes)
  return record
