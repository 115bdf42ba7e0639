r"""Turns a Wikipedia XML dump into a pretraining corpus (one sentence per line).

  python -m etc_realformer.prepare_wikipedia \
      --input=enwiki-latest-pages-articles1.xml.bz2 --output=corpus/wiki.txt

Reads the dump as a stream (`.xml`, `.xml.bz2` or `.xml.gz`), keeps the prose of every article
(see etc_realformer.data.wikitext), splits it into sentences and writes plain text: one sentence
per line, a blank line between articles, which `learn_vocab` and `create_pretraining_data`
read. Pages left out are counted by reason; the output is written atomically.
"""

import os
import time

from absl import app
from absl import flags

from etc_realformer.data import corpus
from etc_realformer.data import wikitext
from etc_realformer.io_utils import atomic_write_text

FLAGS = flags.FLAGS
flags.DEFINE_list("input", None, "Dump files (comma-separated).")
flags.DEFINE_string("output", None, "The corpus file to write.")
flags.DEFINE_integer("min_words", 50, "Leave out articles with fewer words of prose.")
flags.DEFINE_integer("max_words", 0, "Stop after this many words (0: no limit).")


def prepare(inputs, output: str, min_words: int = 50, max_words: int = 0, log=print) -> dict:
  """Writes the corpus of `inputs` to `output`; -> counts (articles, sentences, words, skipped)."""
  start = time.time()
  documents = []
  totals = {"pages": 0, "articles": 0, "sentences": 0, "words": 0, "skipped": {}}
  for path in inputs:
    if not os.path.exists(path):
      raise FileNotFoundError(f"--input: {path} does not exist")
    report = wikitext.DumpReport()
    for _, prose in wikitext.read_dump(path, report, min_words=min_words):
      sentences = corpus.split_sentences(prose)
      documents.append("\n".join(sentences))
      totals["sentences"] += len(sentences)
      if max_words and report.words >= max_words:
        break
    log(report.summary())
    totals["pages"] += report.pages
    totals["articles"] += report.articles
    totals["words"] += report.words
    for reason, count in report.skipped.items():
      totals["skipped"][reason] = totals["skipped"].get(reason, 0) + count
  if not documents:
    raise ValueError(f"--input: no article with at least {min_words} words of prose in "
                     f"{', '.join(inputs)}")
  atomic_write_text(output, "\n\n".join(documents) + "\n")
  log(f"wrote {totals['articles']} articles, {totals['sentences']} sentences, "
      f"{totals['words']} words to {output} in {time.time() - start:.1f}s")
  return totals


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  try:
    prepare(FLAGS.input, FLAGS.output, FLAGS.min_words, FLAGS.max_words)
  except (ValueError, FileNotFoundError) as e:
    raise app.UsageError(str(e)) from None


if __name__ == "__main__":
  flags.mark_flags_as_required(["input", "output"])
  app.run(main)
