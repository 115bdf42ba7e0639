"""A Hugging Face `tokenizer.json` of a BERT WordPiece model, read as a vocabulary.

Hugging Face model folders often carry `tokenizer.json` and no `vocab.txt`. For a BERT it holds
the WordPiece model this package's tokenizers already implement:

  model           {"type": "WordPiece", "vocab": {piece: id}, "unk_token": "[UNK]",
                   "continuing_subword_prefix": "##", "max_input_chars_per_word": 100}
  normalizer      {"type": "BertNormalizer", "lowercase": true, "strip_accents": null, ...}
  pre_tokenizer   {"type": "BertPreTokenizer"}

`read_wordpiece` returns the pieces in id order (what vocab.txt would hold, line = id) after
checking that the file describes the tokenizer this package computes: BERT's normalizer with
lower-casing (strip_accents null or true: BERT strips accents when it lower-cases) and BERT's
pre-tokenizer, "##" continuations, 100 characters per word. Anything else is a ValueError naming
the file and the field. The file is JSON with a documented layout, so the standard library reads
it; the `tokenizers` library would add a compiled dependency to read one mapping.
"""

import json
import os
from typing import Any, Dict, List

TOKENIZER_JSON = "tokenizer.json"


def is_tokenizer_json(path: str) -> bool:
  """True when `path` is a JSON file whose name says it is a Hugging Face tokenizer."""
  return os.path.basename(path) == TOKENIZER_JSON or path.endswith(".tokenizer.json")


def _load(path: str) -> Dict[str, Any]:
  try:
    with open(path, encoding="utf-8") as f:
      value = json.load(f)
  except FileNotFoundError:
    raise FileNotFoundError(f"vocab file not found: {path}") from None
  except (json.JSONDecodeError, UnicodeDecodeError) as e:
    raise ValueError(f"{path}: not a JSON tokenizer file ({e})") from None
  if not isinstance(value, dict):
    raise ValueError(f"{path}: expected a JSON object (a Hugging Face tokenizer.json)")
  return value


def _expect(path: str, field: str, value: Any, allowed, meaning: str) -> None:
  if value not in allowed:
    raise ValueError(f"{path}: {field} is {value!r}; this package's WordPiece tokenizer needs "
                     f"{meaning}")


def read_wordpiece(path: str) -> List[str]:
  """The pieces of the BERT WordPiece tokenizer in `path`, in id order.

  Raises:
    FileNotFoundError: no file at `path`.
    ValueError: not a tokenizer.json, not a WordPiece model, ids that are not 0..V-1, or a
      normalizer / pre-tokenizer other than BERT's lower-casing ones (naming the field).
  """
  tokenizer = _load(path)
  model = tokenizer.get("model")
  if not isinstance(model, dict):
    raise ValueError(f"{path}: no 'model' object (not a Hugging Face tokenizer.json)")
  _expect(path, "model.type", model.get("type"), ("WordPiece",), "a WordPiece model (BERT's)")
  _expect(path, "model.continuing_subword_prefix", model.get("continuing_subword_prefix", "##"),
          ("##",), "'##'")
  _expect(path, "model.max_input_chars_per_word", model.get("max_input_chars_per_word", 100),
          (100,), "100 (BERT's)")
  normalizer = tokenizer.get("normalizer") or {}
  _expect(path, "normalizer.type", normalizer.get("type"), ("BertNormalizer",),
          "BERT's normalizer")
  _expect(path, "normalizer.lowercase", normalizer.get("lowercase"), (True,),
          "a lower-cased (uncased) vocabulary")
  _expect(path, "normalizer.strip_accents", normalizer.get("strip_accents"), (None, True),
          "accents stripped with lower-casing (null or true)")
  pre = tokenizer.get("pre_tokenizer") or {}
  _expect(path, "pre_tokenizer.type", pre.get("type"), ("BertPreTokenizer",),
          "BERT's pre-tokenizer")
  vocab = model.get("vocab")
  if not isinstance(vocab, dict) or not vocab:
    raise ValueError(f"{path}: model.vocab is not a non-empty mapping of pieces to ids")
  pieces = [None] * len(vocab)
  for piece, index in vocab.items():
    if not isinstance(index, int) or not 0 <= index < len(vocab) or pieces[index] is not None:
      raise ValueError(f"{path}: model.vocab gives {piece!r} the id {index!r}; ids must be "
                       f"0..{len(vocab) - 1}, each once")
    pieces[index] = piece
  unk = model.get("unk_token", "[UNK]")
  if unk not in vocab:
    raise ValueError(f"{path}: model.unk_token {unk!r} is not in model.vocab")
  return pieces
