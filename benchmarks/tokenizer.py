"""WordPiece tokenization speed: the Python reference against the tensorflow-text fast path.

Both are `etc_realformer.data.tokenization.WordPieceTokenizer`: backend="python" (the pure-Python
reference, what every run used before the fast path) and backend="tensorflow_text" (the library
on every run of text it provably tokenizes alike, the reference on the rest; backend="auto", the
default, is the same after its first 100,000 characters). Both run in this one process, one
after the other, on the same texts, and their outputs are compared in full.

Inputs: benchmark-style synthetic NQ pages (`synthetic_data.nq`'s benchmark preset, about 3,000
words each) and WikiHop documents (`synthetic_data.wikihop`), English with some accented
names, dashes and middle dots. Vocabulary: pretrained/tiny_english/vocab.txt (1,931 pieces) unless
--vocab names another. Workloads:
  sentences   `tokenize` on the documents cut into sentences, --batch sentences per call
  documents   `OffsetTokenizer.tokenize_many` on whole documents, --docs_per_call per call
              (ids with the character span of every piece's word)
  nq_words    `OffsetTokenizer.tokenize_many` on each NQ page's text tokens, one word per text,
              one call per page (what the NQ converter does)
Every pass starts from new tokenizers (empty caches), goes through all the workload's texts
once and drops each call's output; the figure is characters per second of wall time, median of
--repeats passes (the two backends alternate). A last pass of each keeps the outputs and compares
them. Set-up is timed apart: the routing table of all code points and the checks of the
library (once per process), then about 0.1 s per tokenizer and the tracing of its TensorFlow
functions. The machine may be shared with other jobs: the load average is recorded.

  python benchmarks/tokenizer.py                    # ~2 min on 2 cores
  python benchmarks/tokenizer.py --nq_pages 20 --wikihop_items 10 --repeats 1   # a quick look
Prints a table and writes JSON (default benchmarks/results/tokenizer.json).
"""

import argparse
import os
import platform
import re
import statistics
import sys
import time

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, _ROOT)

WORKLOADS = ("sentences", "documents", "nq_words")
BACKENDS = ("python", "tensorflow_text")


def _inputs(args):
  """{workload: list of calls, each a list of texts}."""
  from synthetic_data import nq, wikihop  # pylint: disable=g-import-not-at-top
  records = nq.generate_examples(args.nq_pages, seed=args.seed)
  pages = [nq.text_of(r) for r in records]
  items = wikihop.generate_examples(args.wikihop_items, seed=args.seed)
  documents = pages + [text for item in items for text in item["supports"]]
  sentences = [s for doc in documents for s in re.split(r"(?<=[.!?])\s+", doc) if s]
  page_words = [[t["token"] for t in r["document_tokens"] if not t["html_token"]]
                for r in records]
  return {
      "sentences": [sentences[i:i + args.batch] for i in range(0, len(sentences), args.batch)],
      "documents": [documents[i:i + args.docs_per_call]
                    for i in range(0, len(documents), args.docs_per_call)],
      "nq_words": page_words,
  }


def _tokenizer(vocab_file, backend):
  """A new tokenizer, warmed up: its TensorFlow functions (ASCII and not) are traced."""
  from etc_realformer.data import tokenization  # pylint: disable=g-import-not-at-top
  tokenizer = tokenization.WordPieceTokenizer(vocab_file, backend=backend)
  for kind in ("tokenize", "tokenize_with_word_spans"):
    getattr(tokenizer, kind)(["warm up " * 10, "warm up, Zo\u00eb " * 10])
  return tokenizer


def _run(workload, calls, tokenizer, keep=False):
  """One pass: (seconds, the outputs as comparable tuples if `keep`, else None).

  Timed passes drop every call's output, as a converter does once it has made its features
  (keeping them all would time the garbage collector walking them).
  """
  from etc_realformer.data.span_tokenization import OffsetTokenizer  # pylint: disable=g-import-not-at-top
  call = tokenizer.tokenize if workload == "sentences" else OffsetTokenizer(tokenizer).tokenize_many
  out = []
  start = time.perf_counter()
  for texts in calls:
    result = call(texts)
    if keep:
      out.append(result if workload == "sentences" else
                 [(p.ids, p.starts, p.ends) for p in result])
  seconds = time.perf_counter() - start
  return seconds, (out if keep else None)


def main():
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--vocab", default=os.path.join(_ROOT, "pretrained", "tiny_english",
                                                      "vocab.txt"))
  parser.add_argument("--nq_pages", type=int, default=100)
  parser.add_argument("--wikihop_items", type=int, default=40)
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--batch", type=int, default=256, help="sentences per tokenize call")
  parser.add_argument("--docs_per_call", type=int, default=16)
  parser.add_argument("--repeats", type=int, default=3)
  parser.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "results",
                                                       "tokenizer.json"))
  args = parser.parse_args()
  for name in ("nq_pages", "wikihop_items", "batch", "docs_per_call", "repeats"):
    if getattr(args, name) < 1:
      parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
  if not os.path.isfile(args.vocab):
    parser.error(f"--vocab: no such file: {args.vocab}")

  inputs = _inputs(args)
  start = time.perf_counter()
  _tokenizer(args.vocab, "tensorflow_text")
  first_setup = time.perf_counter() - start
  start = time.perf_counter()
  _tokenizer(args.vocab, "tensorflow_text")
  next_setup = time.perf_counter() - start

  rows = []
  for workload in WORKLOADS:
    calls = inputs[workload]
    chars = sum(len(t) for texts in calls for t in texts)
    row = {"workload": workload, "calls": len(calls),
           "texts": sum(len(texts) for texts in calls), "characters": chars}
    times = {backend: [] for backend in BACKENDS}
    for _ in range(args.repeats):
      for backend in BACKENDS:   # alternating, so that a change of the machine's load hits both
        times[backend].append(_run(workload, calls, _tokenizer(args.vocab, backend))[0])
    for backend in BACKENDS:
      row[backend] = {"seconds": times[backend],
                      "chars_per_second": chars / statistics.median(times[backend])}
    outputs = {backend: _run(workload, calls, _tokenizer(args.vocab, backend), keep=True)[1]
               for backend in BACKENDS}
    row["identical"] = outputs["python"] == outputs["tensorflow_text"]
    del outputs
    row["speedup"] = (row["tensorflow_text"]["chars_per_second"]
                      / row["python"]["chars_per_second"])
    rows.append(row)
    print(f"{workload}: done", flush=True)

  print()
  print(f"{'workload':<10} {'texts':>8} {'chars':>10} {'python chars/s':>15} "
        f"{'fast chars/s':>13} {'speed-up':>8}  identical")
  for row in rows:
    print(f"{row['workload']:<10} {row['texts']:>8} {row['characters']:>10} "
          f"{row['python']['chars_per_second']:>15,.0f} "
          f"{row['tensorflow_text']['chars_per_second']:>13,.0f} {row['speedup']:>7.1f}x  "
          f"{row['identical']}")
  print(f"set-up of the fast path: {first_setup:.2f} s for the first tokenizer of the process, "
        f"{next_setup:.2f} s for the next")

  import tensorflow_text  # pylint: disable=g-import-not-at-top
  result = {"benchmark": "tokenizer", "vocab": os.path.relpath(os.path.abspath(args.vocab), _ROOT),
            "nq_pages": args.nq_pages, "wikihop_items": args.wikihop_items, "seed": args.seed,
            "batch": args.batch, "docs_per_call": args.docs_per_call, "repeats": args.repeats,
            "tensorflow_text": tensorflow_text.__version__,
            "setup_seconds": {"first": first_setup, "next": next_setup},
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                        "load_average": os.getloadavg()},
            "rows": rows}
  from etc_realformer.io_utils import atomic_write_json  # pylint: disable=g-import-not-at-top
  atomic_write_json(args.output, result, sort_keys=False)
  print(f"\nwrote {args.output}")
  if not all(row["identical"] for row in rows):
    sys.exit("the fast path's output differs from the reference's")


if __name__ == "__main__":
  main()
