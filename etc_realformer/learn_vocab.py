r"""Learns a BERT-style WordPiece vocabulary from a pretraining corpus.

  python -m etc_realformer.learn_vocab --input='corpus/*.txt,extra.jsonl' --output=vocab.txt \
      --vocab_size=8000

The corpus is read with `etc_realformer.data.corpus.read_corpus` (plain text with one sentence
per line, or JSON Lines with a `text` field). The vocabulary starts with the 104 reserved BERT
tokens (`[PAD]`, `[unused0..98]`, `[UNK]`, `[CLS]`, `[SEP]`, `[MASK]`); use the same
--lower_case setting for the tokenizer as for learning.
"""

import time
from typing import Iterator, List, Optional

from absl import app
from absl import flags

from etc_realformer.data import corpus
from etc_realformer.data import vocab_learner

FLAGS = flags.FLAGS
flags.DEFINE_list("input", None, "Corpus files or glob patterns, comma-separated.")
flags.DEFINE_string("output", None, "Where to write the vocab file (one token per line).")
flags.DEFINE_integer("vocab_size", 8000, "Target vocabulary size, reserved tokens included.")
flags.DEFINE_bool("lower_case", True, "Lower-case and strip accents (an uncased vocabulary).")
flags.DEFINE_integer("progress_every", 100000, "Print progress every this many sentences.")


def _sentences(documents: Iterator[corpus.Document], progress_every: int,
               counts: dict) -> Iterator[str]:
  """The sentences of `documents`, counting them and printing progress."""
  for doc in documents:
    for sentence in doc.sentences:
      counts["sentences"] += 1
      if progress_every > 0 and counts["sentences"] % progress_every == 0:
        print(f"read {counts['sentences']} sentences", flush=True)
      yield sentence


def learn_vocab(inputs: List[str], output: str, vocab_size: int = 8000,
                lower_case: bool = True, progress_every: int = 100000,
                report: Optional[corpus.CorpusReport] = None) -> List[str]:
  """Reads the corpus, learns the vocabulary and writes it to `output`.

  Args:
    inputs: Corpus files or glob patterns.
    output: Path of the vocab file to write.
    vocab_size: Target vocabulary size.
    lower_case: Learn an uncased vocabulary.
    progress_every: Print progress every this many sentences (0: never).
    report: The `CorpusReport` to fill (a fresh one if None).

  Returns:
    The vocabulary written.
  """
  if report is None:
    report = corpus.CorpusReport()
  counts = {"sentences": 0}
  start = time.time()
  documents = corpus.read_corpus(inputs, report)
  tokens = vocab_learner.learn_wordpiece_vocab(
      _sentences(documents, progress_every, counts), vocab_size=vocab_size,
      lower_case=lower_case)
  vocab_learner.write_vocab(tokens, output)
  print(report.summary())
  print(f"read {counts['sentences']} sentences; wrote {len(tokens)} tokens "
        f"(target {vocab_size}) to {output} in {time.time() - start:.1f}s", flush=True)
  if len(tokens) < 0.95 * vocab_size:
    print("note: the corpus is too small to fill the target size (a learned piece needs about "
          "10 occurrences)", flush=True)
  return tokens


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  learn_vocab(FLAGS.input, FLAGS.output, vocab_size=FLAGS.vocab_size,
              lower_case=FLAGS.lower_case, progress_every=FLAGS.progress_every)


if __name__ == "__main__":
  flags.mark_flags_as_required(["input", "output"])
  app.run(main)
