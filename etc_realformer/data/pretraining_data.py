"""Corpus files -> pretraining TFRecord shards (reader, tokenizer, example builder, writer).

`convert_corpus` is what `python -m etc_realformer.create_pretraining_data` runs;
`ensure_embedded_data` builds the project's own default data (generated corpus + shipped
vocabulary) so the main jobs need no download.
"""

import os
import shutil
import time
from typing import Callable, Dict, Iterable, Iterator, List, Sequence

from etc_realformer.data import corpus as corpus_lib
from etc_realformer.data import pretraining_examples as pe
from etc_realformer.data import synthetic_corpus
from etc_realformer.data import tfrecords
from etc_realformer.data.tokenization import Tokenizer, WordPieceTokenizer

EMBEDDED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "embedded")
EMBEDDED_VOCAB = os.path.join(EMBEDDED_DIR, "vocab.txt")
SHARD_PREFIX = "pretrain"


VOCAB_NAMES = ("vocab.txt", "vocab.model")


def copy_vocab(vocab_file: str, directory: str) -> str:
  """Copies the vocabulary next to the shards as vocab.txt (WordPiece) or vocab.model."""
  name = VOCAB_NAMES[1] if vocab_file.endswith(".model") else VOCAB_NAMES[0]
  target = os.path.join(directory, name)
  os.makedirs(directory, exist_ok=True)
  if os.path.abspath(vocab_file) != os.path.abspath(target):
    shutil.copyfile(vocab_file, target + ".tmp")
    os.replace(target + ".tmp", target)
  return target


def find_vocab(directory: str):
  """The vocab.txt / vocab.model in `directory`, or None."""
  for name in VOCAB_NAMES:
    if os.path.isfile(os.path.join(directory, name)):
      return os.path.join(directory, name)
  return None


def tokenized_documents(documents: Iterable[corpus_lib.Document], tokenizer: Tokenizer,
                        docs_per_batch: int = 64) -> Iterator[List[List[List[int]]]]:
  """Documents -> per document, per sentence, per word: word-piece ids (batched tokenising)."""
  batch: List[corpus_lib.Document] = []

  def flush():
    flat = [s for d in batch for s in d.sentences]
    words = tokenizer.tokenize_words(flat) if flat else []
    at = 0
    for d in batch:
      yield words[at:at + len(d.sentences)]
      at += len(d.sentences)

  for document in documents:
    batch.append(document)
    if len(batch) >= docs_per_batch:
      yield from flush()
      batch = []
  if batch:
    yield from flush()


def convert_corpus(inputs: Sequence[str], output_dir: str, tokenizer: Tokenizer,
                   data_config: pe.PretrainingDataConfig, num_shards: int = 1, seed: int = 0,
                   min_sentences: int = 1, log: Callable[[str], None] = print,
                   progress_every: int = 1000, dupe_factor: int = 1) -> Dict:
  """Reads, tokenises, masks and writes shards + data_config.json; returns the report.

  With `dupe_factor` n > 1 the corpus is read n times and each pass is masked with its own
  seed (seed, seed + 1, ...), as BERT's converter does: n times the examples from one corpus.
  The corpus report counts the first pass.

  Raises ValueError when nothing could be written (the message carries the skip reasons).
  """
  data_config.validate()
  if num_shards < 1:
    raise ValueError(f"num_shards: must be >= 1, got {num_shards}")
  if dupe_factor < 1:
    raise ValueError(f"dupe_factor: must be >= 1, got {dupe_factor}")
  report = corpus_lib.CorpusReport()
  stats = pe.ExampleStats()
  start = time.perf_counter()
  specials = [tokenizer.pad_id, tokenizer.unk_id, tokenizer.cls_id, tokenizer.sep_id,
              tokenizer.mask_id]

  def all_passes():
    for repeat in range(dupe_factor):
      documents = corpus_lib.read_corpus(
          inputs, report if repeat == 0 else corpus_lib.CorpusReport(),
          min_sentences=min_sentences)
      yield from pe.create_examples(tokenized_documents(documents, tokenizer), data_config,
                                    tokenizer.vocab_size, seed=seed + repeat, stats=stats,
                                    mask_id=tokenizer.mask_id, min_random_id=max(specials) + 1)

  examples = all_passes()
  os.makedirs(output_dir, exist_ok=True)
  written = tfrecords.write_shards(examples, os.path.join(output_dir, SHARD_PREFIX), num_shards,
                                   progress_every=progress_every, log=log)
  summary = {"corpus": report.to_dict(), "examples": stats.to_dict(), "written": written,
             "seconds": round(time.perf_counter() - start, 2)}
  if written == 0:
    raise ValueError(f"{', '.join(inputs)}: no pretraining examples could be made.\n"
                     + report.summary())
  tfrecords.write_data_config(output_dir, data_config, tokenizer.vocab_size,
                              extra={"conversion": summary, "seed": seed,
                                     "dupe_factor": dupe_factor})
  log(report.summary())
  log(f"examples written: {written} in {num_shards} shard(s) to {output_dir} "
      f"({stats.long_tokens} long tokens, {stats.masked_lm} MLM targets, "
      f"{stats.cpc_hidden} CPC sentences, {stats.truncated_sentences} sentences truncated to "
      f"{data_config.long_seq_len}, {stats.split_documents} documents split across rows) "
      f"in {summary['seconds']} s")
  return summary


def ensure_embedded_data(directory: str, data_config: pe.PretrainingDataConfig,
                         num_documents: int = synthetic_corpus.DEFAULT_NUM_DOCUMENTS,
                         seed: int = 0, log: Callable[[str], None] = print) -> str:
  """Generates the embedded corpus and converts it with the shipped vocab, once per config.

  Returns the data directory (reused when its data_config.json matches `data_config`).
  """
  data_dir = os.path.join(directory, "embedded_pretraining_data")
  try:
    existing, _ = tfrecords.read_data_config(data_dir)
    if existing == data_config:
      return data_dir
  except (FileNotFoundError, ValueError):
    pass
  corpus_dir = os.path.join(directory, "embedded_corpus")
  path = os.path.join(corpus_dir, synthetic_corpus.DEFAULT_CORPUS_FILENAME)
  if not os.path.exists(path):
    synthetic_corpus.write_corpus(path, num_documents=num_documents, seed=seed)
  log(f"embedded corpus: {path}")
  convert_corpus([path], data_dir, WordPieceTokenizer(EMBEDDED_VOCAB), data_config, seed=seed,
                 log=log)
  return data_dir

