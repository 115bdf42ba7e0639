"""Corpus files -> pretraining TFRecord shards (reader, tokenizer, example builder, writer).

`convert_corpus` is what `python -m etc_realformer.create_pretraining_data` runs;
`ensure_embedded_data` builds the project's own default data (generated corpus + shipped
vocabulary) so the main jobs need no download.

The conversion is sharded, parallel and resumable (etc_realformer.data.sharded_conversion): the
input is cut into `num_shards` parts and part k becomes `pretrain-0000k-of-000NN.tfrecord`,
converted by one of `num_workers` processes. With at least as many input files as shards (and
nothing but files), file i goes to part i % num_shards; otherwise every part reads the whole
input and keeps the documents whose running index d has d % num_shards == k (so one file, or a
source that is not a file, is cut too). Each part packs and masks its own documents, pass r of
`dupe_factor` with the seed `part_seed(seed, r, k)`, so the records depend on the input,
num_shards, seed, dupe_factor, min_sentences, vocabulary and data config, never on num_workers.

Beside every finished shard a done file (`<shard>.done.json`) keeps the fingerprint's digest and
the part's counts: documents, sentences, skips by reason with the first messages (a skip the
reader meets in every part is counted by one part only, so the sums equal one reader's counts)
and the example builder's counts. `data_config.json`, what the trainer reads, is the manifest:
written last, it merges the done files into the conversion summary and keeps the fingerprint. A
second run with the same arguments reuses everything; a run stopped part-way converts only the
shards without a matching done file; other arguments remove the stale shards first.

What changed from the single-process converter (one reader writing its examples round-robin
into the shards): with one shard the records are the same; with several, each shard holds the
examples of its own documents (rows are packed within a part, and parts other than 0 are
masked with their own seeds), so the examples differ from the round-robin ones.
"""

import collections
import dataclasses
import hashlib
import os
import shutil
import time
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence

from etc_realformer.data import corpus as corpus_lib
from etc_realformer.data import pretraining_examples as pe
from etc_realformer.data import sharded_conversion
from etc_realformer.data import synthetic_corpus
from etc_realformer.data import tfds_source
from etc_realformer.data import tfrecords
from etc_realformer.data.tokenization import SentencePieceTokenizer, Tokenizer
from etc_realformer.data.tokenization import WordPieceTokenizer

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
                   dupe_factor: int = 1, num_workers: int = 1,
                   tfds_data_dir: Optional[str] = None,
                   progress_seconds: float = sharded_conversion.PROGRESS_SECONDS) -> Dict:
  """Reads, tokenises, masks and writes shards + data_config.json; returns the summary.

  Part k of `num_shards` of the input becomes shard k (see the module docstring), converted by
  `num_workers` processes; a conversion that stopped part-way resumes, and one with the same
  arguments is reused (its summary returned).

  With `dupe_factor` n > 1 every part is read n times and each pass is masked with its own
  seed, as BERT's converter does: n times the examples from one corpus. The corpus report
  counts the first pass.

  Args:
    inputs: corpus files or glob patterns (or sources `corpus.read_corpus` reads, such as
      `tfds:` specs, given with `tfds_data_dir` when they need it).
    output_dir: where the shards, their done files and data_config.json go.
    tokenizer: the vocabulary (its file's digest is part of the fingerprint).
    data_config: shapes and masking rates.
    num_shards, num_workers: parts of the input (= shards), and processes converting them.
    seed: the masking seed; min_sentences: shorter documents are skipped (and counted).
    log: progress and the summary.
    dupe_factor: passes over each part, masked with their own seeds.
    tfds_data_dir: passed on to `corpus.read_corpus` when given.
    progress_seconds: seconds between progress lines within a shard.

  Returns:
    The summary data_config.json keeps under "conversion": "corpus" (files, documents,
    sentences, skips by reason, the first skip messages), "examples" (the builder's counts),
    "written", "num_shards", "shards" (per shard: file, written, documents, seconds) and
    "seconds" (of the call that finished the conversion).

  Raises:
    ValueError: bad settings, or nothing could be written (the message carries the skip
      reasons).
    FileNotFoundError: an input file or pattern matches nothing.
  """
  data_config.validate()
  sharded_conversion.check_counts(num_shards, num_workers)
  if isinstance(dupe_factor, bool) or not isinstance(dupe_factor, int) or dupe_factor < 1:
    raise ValueError(f"dupe_factor: must be >= 1, got {dupe_factor!r}")
  if min_sentences < 0:
    raise ValueError(f"min_sentences: must be >= 0, got {min_sentences}")
  start = time.perf_counter()
  inputs = [os.fspath(i) for i in ([inputs] if isinstance(inputs, (str, os.PathLike))
                                   else inputs)]
  work = PartExamples(inputs, tokenizer, data_config, seed, dupe_factor, min_sentences,
                      tfds_data_dir, progress_seconds)
  source = ", ".join(inputs)

  def finish(shards: List[dict], stamp: dict) -> dict:
    summary = _merge(shards)
    summary["seconds"] = round(time.perf_counter() - start, 2)
    if summary["written"] == 0:
      report = corpus_lib.CorpusReport(**_report_fields(summary["corpus"]))
      raise ValueError(f"{source}: no pretraining examples could be made.\n" + report.summary())
    _log_summary(summary, output_dir, data_config, log)
    return {"data_config": dataclasses.asdict(data_config),
            "vocab_size": int(tokenizer.vocab_size), "conversion": summary, "seed": seed,
            "dupe_factor": dupe_factor, "fingerprint": stamp}

  info, reused = sharded_conversion.convert_once(
      output_dir, SHARD_PREFIX, work.fingerprint(), work, log,
      manifest=tfrecords.DATA_CONFIG_FILE, finish=finish, describe_shard=_describe_shard,
      num_shards=num_shards, num_workers=num_workers, done_keys=("corpus", "stats"))
  if reused:
    log(f"{output_dir}: reusing {info['conversion']['written']} pretraining example(s) in "
        f"{num_shards} shard(s) (same input, vocabulary, data config, seed, dupe_factor and "
        "number of shards)")
  return info["conversion"]


def part_seed(seed: int, repeat: int, index: int):
  """The masking seed of pass `repeat` over part `index`: seed + repeat for part 0 (so one
  shard masks as the single-process converter did), [seed + repeat, index] for the others."""
  return seed + repeat if index == 0 else [seed + repeat, index]


class _PartReport(corpus_lib.CorpusReport):
  """A CorpusReport of one part: of the skips the reader meets, it counts those of its part.

  When every part reads the whole input, skip j (in reading order) belongs to part
  j % count, so each is counted once over the parts. Every kept message has a sort key (its
  skip index; with whole files per part, its file's position and its index within the part),
  so the merged parts show the first messages a single reader would.
  """

  def __init__(self, index: int, count: int, file_order: Optional[Dict[str, int]] = None):
    super().__init__()
    self.index, self.count, self.file_order = index, count, file_order
    self.seen = 0
    self.message_keys: List[List[int]] = []

  def skip(self, path: str, line: int, reason: str, detail: Optional[str] = None) -> None:
    position, self.seen = self.seen, self.seen + 1
    if position % self.count != self.index:
      return
    kept = len(self.examples)
    super().skip(path, line, reason, detail)
    if len(self.examples) > kept:
      self.message_keys.append(
          [position] if self.file_order is None
          else [self.file_order.get(os.path.abspath(path), -1), position])


class PartExamples:
  """The work of a pretraining shard (sharded_conversion.Work): the examples of one part.

  With at least as many input files as parts (and only files), part k reads the files k,
  k + count, ...; otherwise every part reads the whole input and keeps the documents whose
  running index d has d % count == k. A worker process receives it pickled: a SentencePiece
  tokenizer (TensorFlow objects) is built again there from its model file.
  """

  def __init__(self, inputs: List[str], tokenizer: Tokenizer,
               data_config: pe.PretrainingDataConfig, seed: int, dupe_factor: int,
               min_sentences: int, tfds_data_dir: Optional[str] = None,
               progress_seconds: float = sharded_conversion.PROGRESS_SECONDS):
    self.inputs, self.tokenizer, self.data_config = list(inputs), tokenizer, data_config
    self.seed, self.dupe_factor, self.min_sentences = seed, dupe_factor, min_sentences
    self.tfds_data_dir, self.progress_seconds = tfds_data_dir, progress_seconds
    self.read_options = {}
    if tfds_data_dir is not None:
      self.read_options["tfds_data_dir"] = tfds_data_dir
    sources = [i for i in self.inputs if tfds_source.is_tfds_spec(i)]
    self.files = corpus_lib.expand_paths([i for i in self.inputs
                                          if not tfds_source.is_tfds_spec(i)])
    self.sources = sources
    self.spm_model_file = getattr(tokenizer, "model_file", None)
    self.signature = tokenizer.signature

  def fingerprint(self) -> dict:
    """What the records depend on besides num_shards: the input files (sizes and times) and
    other sources, the vocabulary's content and tokenizer settings, the data config, seed,
    dupe_factor and min_sentences."""
    tokenizer = self.tokenizer
    vocab_file = getattr(tokenizer, "vocab_file", None) or self.spm_model_file
    if vocab_file:
      vocab = sharded_conversion.file_digest(vocab_file)
    else:  # a tokenizer without a file: its pieces
      pieces = "\n".join(tokenizer.id_to_token(list(range(tokenizer.vocab_size))))
      vocab = hashlib.sha256(pieces.encode("utf-8")).hexdigest()
    return dict(sharded_conversion.file_fingerprint(self.files), sources=self.sources,
                tfds_data_dir=self.tfds_data_dir, vocab_sha256=vocab,
                tokenizer=self.signature, vocab_size=int(tokenizer.vocab_size),
                data_config=dataclasses.asdict(self.data_config), seed=self.seed,
                dupe_factor=self.dupe_factor, min_sentences=self.min_sentences)

  def __getstate__(self) -> dict:
    if isinstance(self.tokenizer, SentencePieceTokenizer):
      return dict(self.__dict__, tokenizer=None)
    return dict(self.__dict__)

  def _tokenizer(self) -> Tokenizer:
    """The tokenizer given, or in a worker process the SentencePiece model loaded again."""
    if self.tokenizer is None:
      built = SentencePieceTokenizer(self.spm_model_file, split_punctuation=bool(
          self.signature.get("split_punctuation", False)))
      if built.signature != self.signature:
        raise ValueError(f"{self.spm_model_file}: a worker process builds a tokenizer with "
                         f"{built.signature}, not the conversion's {self.signature}; convert "
                         "with one worker")
      self.tokenizer = built
    return self.tokenizer

  def whole_files(self, count: int) -> bool:
    """Whether the parts are whole files (at least as many files as parts, nothing else)."""
    return count > 1 and not self.sources and len(self.files) >= count

  def documents(self, index: int, count: int, report: _PartReport,
                kept: List[int]) -> Iterator[corpus_lib.Document]:
    """The documents of part `index` of `count`; counts them (and their sentences) in
    `report` and `kept[0]`."""
    if self.whole_files(count):
      yield from corpus_lib.read_corpus(self.files[index::count], report, self.min_sentences)
      return
    documents = corpus_lib.read_corpus(self.inputs, report, self.min_sentences,
                                       **self.read_options)
    owned, sentences = 0, 0
    for position, document in enumerate(documents):
      if position % count == index:
        owned += 1
        sentences += len(document.sentences)
        kept[0] += 1
        yield document
    # The reader counted every document it read; this part keeps its own (and part 0 the files).
    report.documents, report.sentences = owned, sentences
    report.files = report.files if index == 0 else 0

  def __call__(self, index: int, count: int, log) -> sharded_conversion.ShardRun:
    tokenizer = self._tokenizer()
    stats = pe.ExampleStats()
    file_order = ({os.path.abspath(f): i for i, f in enumerate(self.files)}
                  if self.whole_files(count) else None)
    report = _PartReport(0, 1, file_order) if file_order else _PartReport(index, count)
    specials = [tokenizer.pad_id, tokenizer.unk_id, tokenizer.cls_id, tokenizer.sep_id,
                tokenizer.mask_id]
    kept = [0]

    def examples():
      for repeat in range(self.dupe_factor):
        pass_report = report if repeat == 0 else (
            _PartReport(0, 1, file_order) if file_order else _PartReport(index, count))
        documents = self.documents(index, count, pass_report, kept if repeat == 0 else [0])
        yield from pe.create_examples(
            tokenized_documents(documents, tokenizer), self.data_config, tokenizer.vocab_size,
            seed=part_seed(self.seed, repeat, index), stats=stats, mask_id=tokenizer.mask_id,
            min_random_id=max(specials) + 1)

    def counts() -> dict:
      return {"corpus": report.to_dict(), "message_keys": report.message_keys,
              "stats": stats.to_dict()}

    def progress(written: int, seconds: float) -> str:
      documents = kept[0] if file_order is None else report.documents
      return (f"{written} example(s) from {documents} document(s) "
              f"({documents / seconds:.1f} documents/s)")
    return sharded_conversion.ShardRun(examples(), counts, progress, self.progress_seconds)


def _report_fields(corpus: dict) -> dict:
  return dict(corpus, skipped=collections.Counter(corpus["skipped"]))


def _merge(shards: List[dict]) -> dict:
  """The conversion summary from the done records of its shards (in shard order)."""
  corpus = {"files": 0, "documents": 0, "sentences": 0}
  skipped, stats, messages = collections.Counter(), collections.Counter(), []
  for shard in shards:
    for key in corpus:
      corpus[key] += shard["corpus"][key]
    skipped.update(shard["corpus"]["skipped"])
    stats.update(shard["stats"])
    messages += zip(shard["message_keys"], shard["corpus"]["examples"])
  messages.sort(key=lambda keyed: keyed[0])
  corpus.update(skipped=dict(sorted(skipped.items())),
                examples=[m for _, m in messages[:corpus_lib.MAX_EXAMPLES]])
  return {"corpus": corpus, "examples": {k: stats[k] for k in pe.ExampleStats().to_dict()},
          "written": sum(s["written"] for s in shards), "num_shards": len(shards),
          "shards": [{"file": s["file"], "written": s["written"],
                      "documents": s["corpus"]["documents"], "seconds": s["seconds"]}
                     for s in shards]}


def _describe_shard(shard: dict) -> str:
  documents = shard["corpus"]["documents"]
  return (f"{shard['file']}: {shard['written']} example(s) from {documents} document(s) in "
          f"{shard['seconds']:.1f}s ({documents / max(shard['seconds'], 1e-9):.1f} documents/s)")


def _log_summary(summary: dict, output_dir: str, data_config: pe.PretrainingDataConfig,
                 log: Callable[[str], None]) -> None:
  log(corpus_lib.CorpusReport(**_report_fields(summary["corpus"])).summary())
  stats = summary["examples"]
  log(f"examples written: {summary['written']} in {summary['num_shards']} shard(s) to "
      f"{output_dir} ({stats['long_tokens']} long tokens, {stats['masked_lm']} MLM targets, "
      f"{stats['cpc_hidden']} CPC sentences, {stats['truncated_sentences']} sentences "
      f"truncated to {data_config.long_seq_len}, {stats['split_documents']} documents split "
      f"across rows) in {summary['seconds']} s")


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

