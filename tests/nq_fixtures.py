"""Hand-made Natural Questions records for the NQ tests (original format, exact offsets)."""

import gzip
import json
import os
from typing import List, Optional, Sequence, Tuple

from etc_realformer.data import vocab as vocab_ids
from etc_realformer.data.span_tokenization import OffsetTokenizer
from etc_realformer.data.tokenization import load_tokenizer

WORDS = ("what", "is", "the", "capital", "of", "zorland", "brevik", "river", "city", "big",
         "small", "yes", "table", "row", "cafe", "north", "south", "a", "b", "c", "d", "e", "f",
         "g", "h")


def document(tokens: Sequence[str]) -> Tuple[str, List[dict]]:
  """Html (tokens joined by single spaces) and document_tokens with UTF-8 byte offsets."""
  html, out, position = "", [], 0
  for i, token in enumerate(tokens):
    if i:
      html += " "
      position += 1
    size = len(token.encode("utf-8"))
    out.append({"token": token, "start_byte": position, "end_byte": position + size,
                "html_token": token.startswith("<")})
    html += token
    position += size
  return html, out


def candidates(tokens: Sequence[str]) -> List[dict]:
  """One candidate per <P>/<Table>/<Tr>/<Ul>/<Li> element; nested ones are not top level."""
  names = ("<P>", "<Table>", "<Tr>", "<Ul>", "<Li>")
  _, toks = document(tokens)
  out, stack = [], []
  for i, token in enumerate(tokens):
    if token in names:
      stack.append((token, i, len(out)))
      out.append(None)
    elif token.startswith("</") and "<" + token[2:] in names:
      name, start, slot = stack.pop()
      out[slot] = {"start_token": start, "end_token": i + 1, "start_byte": toks[start]["start_byte"],
                   "end_byte": toks[i]["end_byte"],
                   "top_level": not any(s[0] in names for s in stack)}
  return out


def span(tokens: Sequence[str], start: int, end: int) -> dict:
  _, toks = document(tokens)
  return {"start_token": start, "end_token": end, "start_byte": toks[start]["start_byte"],
          "end_byte": toks[end - 1]["end_byte"]}


NULL = {"start_token": -1, "end_token": -1, "start_byte": -1, "end_byte": -1}


def annotation(tokens, candidate_index: int = -1, short: Sequence[Tuple[int, int]] = (),
               yes_no: str = "NONE", annotation_id: int = 1) -> dict:
  cands = candidates(tokens)
  if candidate_index < 0:
    long_answer = dict(NULL, candidate_index=-1)
  else:
    c = cands[candidate_index]
    long_answer = dict(span(tokens, c["start_token"], c["end_token"]),
                       candidate_index=candidate_index)
  return {"annotation_id": annotation_id, "long_answer": long_answer,
          "short_answers": [span(tokens, s, e) for s, e in short], "yes_no_answer": yes_no}


def record(example_id, question: str, tokens: Sequence[str],
           annotations: Optional[List[dict]] = None) -> dict:
  html, toks = document(tokens)
  return {"example_id": example_id, "question_text": question,
          "question_tokens": question.split(), "document_title": "T",
          "document_url": "https://example.org/T", "document_html": html,
          "document_tokens": toks, "long_answer_candidates": candidates(tokens),
          "annotations": annotations if annotations is not None else [annotation(tokens)]}


def write_jsonl_gz(records, path) -> str:
  os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
  with gzip.open(path, "wt", encoding="utf-8") as f:
    for r in records:
      f.write(json.dumps(r) + "\n")
  return path


def tokenizer(tmp_path) -> OffsetTokenizer:
  """A tokenizer whose vocabulary holds every word of WORDS as one piece."""
  path = os.path.join(str(tmp_path), "vocab.txt")
  with open(path, "w", encoding="utf-8") as f:
    f.write("\n".join(list(vocab_ids.RESERVED_TOKENS) + list(WORDS)) + "\n")
  return OffsetTokenizer(load_tokenizer(vocab_file=path))
