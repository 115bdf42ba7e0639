"""Streaming pretraining input: corpus files -> masked ETC examples in tf.data, no shards.

`make_streaming_dataset` gives the same batches as `tfrecords.make_dataset` over shards written
by `create_pretraining_data` (feature names, dtypes and lengths of
`pretraining_examples.feature_lengths`, the same packing, CPC and whole-word MLM rules), but
reads the corpus while training:

  files (plain text / JSON Lines, .gz)   -> documents: [sentences] tf.string    (corpus reader)
  or a tf.data.Dataset of raw texts      -> sentences by `corpus.split_sentences`
  -> word pieces, in the graph            tensorflow-text FastBertNormalizer + FastWordpieceTokenizer
  -> packed rows                          Dataset.scan: whole documents, one global token per
                                          sentence, breakpoints (`pack_rows`'s rules)
  -> masked examples                      stateless random ops seeded by (seed, worker, epoch,
                                          example index): CPC sentences and whole-word MLM
  -> batches of this worker               [global batch / num_slices, ...]

Per epoch the masks change (the epoch is part of the seed); with the same arguments the stream
is identical, so `skip_batches=s` gives exactly the batches an uninterrupted stream has from step
s on (the skipped examples are still read, tokenized and packed, which costs input time only).

Worker k of n reads the corpus files k, k + n, k + 2n, ... (`worker_files`), so every file is
read by exactly one worker; each worker batches its own examples (as the "shards" mode of
`tfrecords.make_dataset`). A `documents_dataset` is split the same way by document
(`Dataset.shard`).

Tokenization differs from `WordPieceTokenizer` only where that class sends a run of text to its
Python reference (characters the library normalizes differently, words that normalize to more
than `max_chars_per_word` bytes): the graph cannot call Python, so the library's ids are kept
there. Plain ASCII text always gets the reference's ids (docs/pretraining.md, "Streaming input").
"""

import os
from typing import Dict, List, Optional, Sequence, Union

from absl import logging
import numpy as np

import etc_realformer  # pylint: disable=unused-import  # sets TF_USE_LEGACY_KERAS first
import tensorflow as tf  # pylint: disable=g-bad-import-order
import tensorflow_text as tf_text  # pylint: disable=g-bad-import-order

from etc_realformer.autograph import without_autograph
from etc_realformer.data import corpus as corpus_lib
from etc_realformer.data import pretraining_examples as pe
from etc_realformer.data import tokenization
from etc_realformer.data import vocab

_AUTOTUNE = tf.data.AUTOTUNE


# ------------------------------------------------------------------------------------ files


def expand_inputs(inputs: Union[str, Sequence[str]]) -> List[str]:
  """Comma-separated (or listed) files and glob patterns -> the corpus files, in order.

  Raises:
    FileNotFoundError: a pattern matches nothing or a file does not exist.
    ValueError: nothing given.
  """
  if isinstance(inputs, (str, bytes, os.PathLike)):
    inputs = [os.fsdecode(inputs)]
  patterns = [p.strip() for item in inputs for p in os.fsdecode(item).split(",") if p.strip()]
  if not patterns:
    raise ValueError("streaming input: no corpus files given")
  return corpus_lib.expand_paths(patterns)


def worker_files(files: Sequence[str], num_workers: int, worker_index: int) -> List[str]:
  """The corpus files worker `worker_index` of `num_workers` reads: k, k + n, k + 2n, ..."""
  if not 0 <= worker_index < num_workers:
    raise ValueError(f"streaming input: worker index {worker_index} is not in "
                     f"[0, {num_workers})")
  if len(files) < num_workers:
    raise ValueError(f"streaming input: {len(files)} corpus file(s) for {num_workers} workers; "
                     "each worker reads its own files, so split the corpus into at least "
                     f"{num_workers} files")
  return list(files[worker_index::num_workers])


# -------------------------------------------------------------------- documents -> sentences


def _file_sentences(path):
  """Yields each document of one corpus file as an array of UTF-8 sentences (corpus reader)."""
  path = os.fsdecode(path)
  report = corpus_lib.CorpusReport()
  for document in corpus_lib.read_corpus([path], report):
    yield np.array([s.encode("utf-8") for s in document.sentences], dtype=object)
  if report.total_skipped:
    logging.warning("streaming input: %s", report.summary())


def file_documents(files: Sequence[str]) -> tf.data.Dataset:
  """The documents of `files` in order, each a [num_sentences] tf.string vector.

  Read by `corpus.read_corpus` (one sentence per line or JSON Lines split into sentences,
  cleaned, bad lines skipped and logged with file:line), in a Python generator: JSON has no
  TensorFlow parser and the reader's rules (UTF-8 checks per line, cleaning) are Python's.
  """
  files = [os.fspath(f) for f in files]
  spec = tf.TensorSpec([None], tf.string)
  return tf.data.Dataset.from_tensor_slices(files).flat_map(without_autograph(
      lambda path: tf.data.Dataset.from_generator(_file_sentences, args=(path,),
                                                  output_signature=spec)))


def _split_text(text) -> np.ndarray:
  """One raw document text (bytes) -> its cleaned, non-empty sentences (as the JSON Lines
  reader makes them)."""
  text = text.decode("utf-8", errors="replace") if isinstance(text, bytes) else str(text)
  sentences = [s for s in (corpus_lib.clean_text(s) for s in corpus_lib.split_sentences(text))
               if s]
  return np.array([s.encode("utf-8") for s in sentences], dtype=object)


def text_sentences(texts: tf.data.Dataset) -> tf.data.Dataset:
  """A dataset of scalar tf.string raw document texts -> [num_sentences] tf.string vectors.

  This is the source contract: any dataset of raw texts (e.g. a TFDS text field) plugs in here.
  Invalid UTF-8 becomes U+FFFD; documents without words come out empty and are dropped later.
  The splitter is `corpus.split_sentences` in a numpy_function: its abbreviation and quote
  rules have no TensorFlow equivalent.
  """
  spec = texts.element_spec
  if not (isinstance(spec, tf.TensorSpec) and spec.dtype == tf.string and spec.shape.rank == 0):
    raise ValueError(f"documents_dataset: elements must be scalar tf.string raw texts, "
                     f"got {spec}")

  def split(text):
    sentences = tf.numpy_function(_split_text, [text], tf.string, stateful=False)
    return tf.ensure_shape(sentences, [None])  # [num_sentences]
  return texts.map(without_autograph(split), num_parallel_calls=_AUTOTUNE, deterministic=True)


# ------------------------------------------------------------------------- tokenization


class GraphWordPiece:
  """WordPiece in the graph: tensorflow-text's normalizer and tokenizer, built the way
  `WordPieceTokenizer`'s fast path builds them (same library vocabulary and id mapping), with
  the reference's word-length limit (in bytes, equal to characters on ASCII)."""

  def __init__(self, tokenizer: tokenization.WordPieceTokenizer):
    tokens = tokenizer.vocab_pieces
    library_tokens, ids = tokenization.library_vocab(tokens)
    too_long = tokenization.too_long_for_library(tokens)
    if too_long:
      raise ValueError(f"vocab file {tokenizer.vocab_file}: token {too_long[0][:40]!r}... is "
                       "too long for tensorflow-text; streaming input cannot use this vocabulary")
    self.vocab_size = tokenizer.vocab_size
    self.mask_id = tokenizer.mask_id
    self.min_random_id = max(tokenizer.pad_id, tokenizer.unk_id, tokenizer.cls_id,
                             tokenizer.sep_id, tokenizer.mask_id) + 1
    self._reference_id = tf.constant(ids, tf.int32)   # [library vocab] -> vocab id
    # [vocab] the piece continues a word ("##..."): not a word start.
    self._continues = tf.constant(
        [t.startswith(tokenization.WORDPIECE_CONTINUATION) for t in tokens], tf.bool)
    self._normalizer = tf_text.FastBertNormalizer(
        lower_case_nfd_strip_accents=tokenizer.lower_case)
    self._wordpiece = tf_text.FastWordpieceTokenizer(
        vocab=library_tokens, suffix_indicator=tokenization.WORDPIECE_CONTINUATION,
        max_bytes_per_word=tokenizer.max_chars_per_word, token_out_type=tf.int64,
        unknown_token="[UNK]")

  def tokenize(self, sentences: tf.Tensor) -> tf.RaggedTensor:
    """[num_sentences] tf.string -> ragged [num_sentences, (pieces)] int32 vocab ids."""
    pieces = self._wordpiece.tokenize(self._normalizer.normalize(sentences))
    return pieces.with_flat_values(
        tf.gather(self._reference_id, tf.cast(pieces.flat_values, tf.int32)))

  def document(self, sentences: tf.Tensor, long_seq_len: int):
    """One document -> (tokens [T] int32, word_start [T] bool, sentence_len [S] int32).

    Sentences without pieces are dropped and longer ones cut to `long_seq_len` pieces (as
    `pretraining_examples.pack_rows` does); every sentence's first piece starts a word.
    """
    ids = self.tokenize(sentences)
    ids = tf.ragged.boolean_mask(ids, ids.row_lengths() > 0)[:, :long_seq_len]
    tokens = ids.flat_values                                        # [T]
    starts = ids.row_starts()                                       # [S]
    word_start = tf.logical_not(tf.gather(self._continues, tokens))  # [T]
    word_start = tf.tensor_scatter_nd_update(
        word_start, starts[:, None], tf.ones_like(starts, tf.bool))
    return tokens, word_start, tf.cast(ids.row_lengths(), tf.int32)


def as_word_piece(tokenizer_or_vocab) -> tokenization.WordPieceTokenizer:
  """A WordPieceTokenizer from itself or a vocab.txt path (SentencePiece is refused)."""
  if isinstance(tokenizer_or_vocab, tokenization.WordPieceTokenizer):
    return tokenizer_or_vocab
  if isinstance(tokenizer_or_vocab, (str, os.PathLike)):
    path = os.fspath(tokenizer_or_vocab)
    if path.endswith(".model"):
      raise ValueError(f"{path}: streaming input tokenizes WordPiece vocabularies only; write "
                       "shards with `python -m etc_realformer.create_pretraining_data` for a "
                       "SentencePiece model")
    return tokenization.WordPieceTokenizer(path, backend="python")
  raise ValueError(f"streaming input: expected a WordPieceTokenizer or a vocab.txt path, got "
                   f"{type(tokenizer_or_vocab).__name__}")


# ------------------------------------------------------------------------------- packing


def _pack(documents: tf.data.Dataset, config: pe.PretrainingDataConfig) -> tf.data.Dataset:
  """Tokenized documents -> packed rows, by `pretraining_examples.pack_rows`'s rules.

  Elements in: (tokens [T], word_start [T], sentence_len [S]) per document (S >= 1). Out, per
  row: dict of tokens [n], word_start [n], sentence_len [m], sentence_doc [m] (the document of
  each sentence within the row, 0, 1, ...), with n <= long_seq_len and m <= global_seq_len.

  Packing carries a partly filled row from one document to the next, a sequential state, so it
  is a `Dataset.scan` (in the graph); each document may complete zero or more rows. A final
  end marker flushes the last row.
  """
  long_len, global_len = config.long_seq_len, config.global_seq_len
  pack = bool(config.pack_documents)
  ints, bools = tf.zeros([0], tf.int32), tf.zeros([0], tf.bool)
  end = tf.data.Dataset.from_tensors((ints, bools, ints, tf.constant(True)))
  marked = documents.map(
      without_autograph(lambda t, w, s: (t, w, s, tf.constant(False)))).concatenate(end)
  vector, scalar = tf.TensorShape([None]), tf.TensorShape([])

  def step(state, document):
    buf_tok, buf_word, buf_len, buf_doc, doc_in_row = state
    tokens, word_start, sent_len, is_end = document
    num_sentences = tf.size(sent_len)
    fits = ((tf.size(buf_tok) + tf.size(tokens) <= long_len)
            & (tf.size(buf_len) + num_sentences <= global_len) & pack)
    # A document that does not fit in the room left starts a new row.
    close_first = (tf.size(buf_len) > 0) & (is_end | tf.logical_not(fits))
    doc_in_row = tf.where(close_first, 0, doc_in_row + 1)

    def cond(i, t, *unused):
      del t
      force = unused[-1]
      return (i < num_sentences) | force

    def body(i, t, b_tok, b_word, b_len, b_doc, d, e_tok, e_word, e_len, e_doc, e_rows, force):
      rest = sent_len[i:]                                             # [S - i]
      fit = tf.reduce_sum(tf.cast(tf.cumsum(rest) <= long_len - tf.size(b_tok), tf.int32))
      take = tf.where(force, 0, tf.minimum(fit, global_len - tf.size(b_len)))
      emit = take == 0   # the row is full (or must close): emit it, then continue in a new one
      n_tok = tf.where(emit, tf.size(b_tok), 0)
      n_sent = tf.where(emit, tf.size(b_len), 0)
      e_tok = tf.concat([e_tok, b_tok[:n_tok]], 0)
      e_word = tf.concat([e_word, b_word[:n_tok]], 0)
      e_len = tf.concat([e_len, b_len[:n_sent]], 0)
      e_doc = tf.concat([e_doc, b_doc[:n_sent]], 0)
      e_rows = tf.concat([e_rows, tf.fill([tf.cast(emit, tf.int32)], tf.size(b_len))], 0)
      b_tok, b_word, b_len, b_doc = b_tok[n_tok:], b_word[n_tok:], b_len[n_sent:], b_doc[n_sent:]
      d = tf.where(emit, 0, d)
      pieces = tf.reduce_sum(rest[:take])
      b_tok = tf.concat([b_tok, tokens[t:t + pieces]], 0)
      b_word = tf.concat([b_word, word_start[t:t + pieces]], 0)
      b_len = tf.concat([b_len, rest[:take]], 0)
      b_doc = tf.concat([b_doc, tf.fill([take], d)], 0)
      return (i + take, t + pieces, b_tok, b_word, b_len, b_doc, d, e_tok, e_word, e_len, e_doc,
              e_rows, tf.constant(False))

    loop_vars = (tf.constant(0), tf.constant(0), buf_tok, buf_word, buf_len, buf_doc, doc_in_row,
                 ints, bools, ints, ints, ints, close_first)
    invariants = (scalar, scalar, vector, vector, vector, vector, scalar,
                  vector, vector, vector, vector, vector, scalar)
    out = tf.while_loop(cond, body, loop_vars, shape_invariants=invariants)
    state = tuple(out[2:7])
    emitted = tuple(out[7:12])   # the completed rows, concatenated, and their sentence counts
    return state, emitted

  initial = (ints, bools, ints, ints, tf.constant(-1))
  emitted = marked.scan(initial, without_autograph(step))

  def rows(tokens, word_start, sent_len, sent_doc, row_sentences):
    lengths = tf.RaggedTensor.from_row_lengths(sent_len, row_sentences)   # [R, (m)]
    row_tokens = tf.reduce_sum(lengths, axis=1)                          # [R]
    return tf.data.Dataset.from_tensor_slices({
        "tokens": tf.RaggedTensor.from_row_lengths(tokens, row_tokens),
        "word_start": tf.RaggedTensor.from_row_lengths(word_start, row_tokens),
        "sentence_len": lengths,
        "sentence_doc": tf.RaggedTensor.from_row_lengths(sent_doc, row_sentences),
    })
  return emitted.flat_map(without_autograph(rows))


# ------------------------------------------------------------------------------- masking


def _pad(values: tf.Tensor, length: int) -> tf.Tensor:
  """[n] -> [length], zero-padded (n <= length)."""
  values = tf.pad(values, [[0, length - tf.size(values)]])
  return tf.ensure_shape(values, [length])


def _greedy_words(lengths: tf.Tensor, target: tf.Tensor) -> tf.Tensor:
  """[K] word lengths in random order -> [K] bool: `choose_mlm_words`'s greedy choice.

  Words are taken in order while they fit in the `target` pieces left; a word that would
  overshoot is passed over. Done in passes: the words that fit the room left are taken up to
  the first that overshoots, which is passed over; a word longer than the room never fits
  again. Each pass after the first takes a word, so there are at most a few.
  """
  count = tf.size(lengths)
  positions = tf.range(count)

  def cond(chosen, room, start):
    del chosen
    return (room > 0) & (start < count)

  def body(chosen, room, start):
    open_ = (positions >= start) & (lengths <= room)                  # [K]
    cumulative = tf.cumsum(tf.where(open_, lengths, 0))               # [K]
    taken = open_ & (cumulative <= room)
    over = open_ & (cumulative > room)
    first_over = tf.reduce_min(tf.where(over, positions, count))
    taken &= positions < first_over
    room -= tf.reduce_sum(tf.where(taken, lengths, 0))
    return chosen | taken, room, first_over + 1

  chosen, _, _ = tf.while_loop(cond, body, (tf.zeros([count], tf.bool), target, tf.constant(0)))
  return chosen


class _Masker:
  """A packed row + its random key -> one example's features (see `build_example`)."""

  def __init__(self, config: pe.PretrainingDataConfig, words: GraphWordPiece):
    self.config = config
    self.vocab_size = words.vocab_size
    self.mask_id = words.mask_id
    self.min_random_id = words.min_random_id
    if self.vocab_size <= self.min_random_id:
      raise ValueError(f"vocab_size: must exceed the {self.min_random_id} reserved ids, "
                       f"got {self.vocab_size}")

  def __call__(self, row: Dict[str, tf.Tensor], key: tf.Tensor) -> Dict[str, tf.Tensor]:
    config = self.config
    long_len, global_len = config.long_seq_len, config.global_seq_len
    num_cpc, cpc_len = config.max_cpc_per_seq, config.cpc_sentence_len
    cpc_key, order_key, draw_key, random_key = tf.unstack(
        tf.random.experimental.stateless_split(key, 4))
    tokens = row["tokens"]                         # [n] original pieces
    word_start = row["word_start"]                 # [n]
    sent_len = row["sentence_len"]                 # [m]
    sent_doc = row["sentence_doc"]                 # [m]
    num_tokens, num_sentences = tf.size(tokens), tf.size(sent_len)
    sent_end = tf.cumsum(sent_len)                 # [m] exclusive end of each sentence
    sent_start = sent_end - sent_len               # [m]
    sentence_of_token = tf.repeat(tf.range(num_sentences), sent_len)             # [n]
    last_of_doc = tf.concat([sent_doc[1:] != sent_doc[:-1], [True]], 0)          # [m]

    # CPC: hide round(cpc_prob * eligible) sentences of documents with >= 2 in the row.
    doc_size = tf.gather(tf.math.bincount(sent_doc), sent_doc)                   # [m]
    eligible = doc_size >= 2                                                     # [m]
    num_eligible = tf.reduce_sum(tf.cast(eligible, tf.int32))
    count = tf.cast(tf.round(config.cpc_prob * tf.cast(num_eligible, tf.float64)), tf.int32)
    count = tf.minimum(tf.maximum(count, 1), tf.minimum(num_cpc, num_eligible))
    if config.cpc_prob <= 0:
      count = tf.constant(0)
    keys = tf.where(eligible, tf.random.stateless_uniform([num_sentences], cpc_key), 2.0)
    hidden_sorted = tf.argsort(keys)[:count]
    hidden = tf.scatter_nd(hidden_sorted[:, None], tf.ones([count], tf.bool),
                           [num_sentences])                                      # [m]
    hidden_g = tf.cast(tf.where(hidden)[:, 0], tf.int32)                         # [h] ascending
    piece = tf.range(cpc_len)
    cpc_index = tf.gather(sent_start, hidden_g)[:, None] + piece                # [h, S]
    cpc_valid = piece[None, :] < tf.gather(sent_len, hidden_g)[:, None]          # [h, S]
    cpc_tokens = tf.where(cpc_valid, tf.gather(tokens, tf.minimum(cpc_index, num_tokens - 1)),
                          0)                                                     # [h, S]
    cpc_tokens = tf.pad(cpc_tokens, [[0, num_cpc - count], [0, 0]])              # [C, S]
    token_hidden = tf.gather(hidden, sentence_of_token)                          # [n]
    masked = tf.where(token_hidden, self.mask_id, tokens)                        # [n]

    # MLM: whole words outside hidden sentences, until round(p * pieces) pieces are covered.
    word_of_token = tf.cumsum(tf.cast(word_start, tf.int32)) - 1                 # [n]
    num_words = tf.reduce_sum(tf.cast(word_start, tf.int32))
    word_len = tf.math.unsorted_segment_sum(tf.ones_like(tokens), word_of_token,
                                            num_words)                           # [W]
    candidate = tf.logical_not(tf.gather(token_hidden, tf.cast(tf.where(word_start)[:, 0],
                                                               tf.int32)))       # [W]
    num_candidates = tf.reduce_sum(tf.cast(candidate, tf.int32))
    candidate_pieces = tf.reduce_sum(tf.where(candidate, word_len, 0))
    target = tf.cast(tf.round(config.masked_lm_prob * tf.cast(candidate_pieces, tf.float64)),
                     tf.int32)
    target = tf.minimum(tf.maximum(target, 1), config.max_predictions_per_seq)
    if config.masked_lm_prob <= 0:
      target = tf.constant(0)
    target = tf.where(num_candidates > 0, target, 0)
    order = tf.argsort(tf.where(candidate, tf.random.stateless_uniform([num_words], order_key),
                                2.0))[:num_candidates]                           # [K]
    chosen_in_order = _greedy_words(tf.gather(word_len, order), target)          # [K]
    chosen_word = tf.scatter_nd(order[:, None], chosen_in_order, [num_words])    # [W]
    chosen = tf.gather(chosen_word, word_of_token)                               # [n]
    draw = tf.gather(tf.random.stateless_uniform([num_words], draw_key), word_of_token)  # [n]
    random_ids = tf.random.stateless_uniform([num_tokens], random_key, self.min_random_id,
                                             self.vocab_size, dtype=tf.int32)    # [n]
    masked = tf.where(chosen & (draw < 0.8), self.mask_id,
                      tf.where(chosen & (draw >= 0.8) & (draw < 0.9), random_ids, masked))
    positions = tf.cast(tf.where(chosen)[:, 0], tf.int32)                        # [k] ascending

    ends = tf.boolean_mask(sent_end - 1, last_of_doc)                            # [docs]
    long_breakpoints = tf.scatter_nd(ends[:, None], tf.ones_like(ends), [long_len])
    global_ids = tf.where(hidden, vocab.CPC_MASK_ID, vocab.SENTENCE_ID)
    predictions = config.max_predictions_per_seq
    return {
        "token_ids": _pad(masked, long_len),
        "sentence_ids": _pad(sentence_of_token, long_len),
        "long_breakpoints": tf.ensure_shape(long_breakpoints, [long_len]),
        "global_token_ids": _pad(global_ids, global_len),
        "global_breakpoints": _pad(tf.cast(last_of_doc, tf.int32), global_len),
        "masked_lm_positions": _pad(positions, predictions),
        "masked_lm_ids": _pad(tf.gather(tokens, positions), predictions),
        "masked_lm_weights": _pad(tf.ones_like(positions, tf.float32), predictions),
        "cpc_global_positions": _pad(hidden_g, num_cpc),
        "cpc_weights": _pad(tf.ones([count], tf.float32), num_cpc),
        "cpc_sentence_token_ids": tf.ensure_shape(cpc_tokens, [num_cpc, cpc_len]),
    }


# ------------------------------------------------------------------------------ pipeline


def packed_rows(documents: tf.data.Dataset, tokenizer_or_vocab,
                data_config: pe.PretrainingDataConfig,
                num_parallel_calls: int = _AUTOTUNE) -> tf.data.Dataset:
  """[num_sentences] tf.string documents -> unmasked packed rows (see `_pack`).

  `tokenizer_or_vocab`: a GraphWordPiece, a WordPieceTokenizer or a vocab.txt path.
  """
  words = (tokenizer_or_vocab if isinstance(tokenizer_or_vocab, GraphWordPiece)
           else GraphWordPiece(as_word_piece(tokenizer_or_vocab)))
  tokenized = documents.map(
      without_autograph(lambda s: words.document(s, data_config.long_seq_len)),
      num_parallel_calls=num_parallel_calls, deterministic=True)
  tokenized = tokenized.filter(without_autograph(lambda tokens, word_start, sent_len:
                                                 tf.size(sent_len) > 0))
  return _pack(tokenized, data_config)


def _example_key(seed: int, slice_index: int, epoch: tf.Tensor, index: tf.Tensor) -> tf.Tensor:
  """The [2] stateless random key of one example: (seed, worker, epoch, index) folded in."""
  key = tf.constant([seed, slice_index], tf.int64)
  key = tf.random.experimental.stateless_fold_in(key, epoch)
  return tf.random.experimental.stateless_fold_in(key, index)


def make_streaming_dataset(inputs: Union[str, Sequence[str], None], tokenizer_or_vocab,
                           data_config: pe.PretrainingDataConfig, global_batch_size: int,
                           num_slices: int = 1, slice_index: int = 0, seed: int = 0,
                           skip_batches: int = 0, shuffle_buffer: int = 0, repeat: bool = True,
                           documents_dataset: Optional[tf.data.Dataset] = None,
                           data_service_address: Optional[str] = None,
                           data_service_job_name: str = "etc_pretraining",
                           num_parallel_calls: int = _AUTOTUNE,
                           private_threadpool_size: int = 0) -> tf.data.Dataset:
  """Pretraining batches streamed from a corpus: [global_batch_size / num_slices, ...] each.

  The same features as `tfrecords.make_dataset` (int32 / float32, `cpc_sentence_token_ids`
  [batch, max_cpc_per_seq, cpc_sentence_len]).

  Args:
    inputs: corpus files or glob patterns (comma-separated string or list); plain text or
      JSON Lines, optionally .gz (see `corpus`). None when `documents_dataset` is given.
    tokenizer_or_vocab: a `WordPieceTokenizer` or the path of its vocab.txt.
    data_config: the example shapes and masking rates.
    global_batch_size: examples per step over all workers; must divide by num_slices.
    num_slices, slice_index: how many workers read and which one this is: worker k reads the
      files k, k + n, ... (needs at least n files).
    seed: with (worker, epoch, example index) the seed of every example's CPC and MLM masks,
      and of the row shuffle.
    skip_batches: steps already trained (resume); the stream then continues exactly as an
      uninterrupted one.
    shuffle_buffer: 0 = rows in corpus order; else a seeded shuffle of the packed rows, per
      epoch (the buffer fills before the first example comes out).
    repeat: loop over the corpus forever (epoch 0, 1, ... each masked anew), else one epoch.
    documents_dataset: instead of files, a dataset of scalar tf.string raw document texts
      (split into sentences as the JSON Lines `text` field is); each worker keeps documents
      k, k + n, ... Or a callable (num_workers, worker_index) -> this worker's dataset of
      texts, for sources that split among workers themselves (`tfds_source.tfds_text_dataset`).
    data_service_address: "grpc://host:port" of a tf.data service dispatcher: the batches are
      made by its workers ("distributed_epoch": the epochs are split among them), consumers
      sharing `data_service_job_name` get disjoint batches. The order of the batches then
      depends on the workers' timing, so a resumed run does not see exactly the same stream.
    num_parallel_calls: parallelism of the tokenizing and masking maps.
    private_threadpool_size: > 0: the pipeline runs on its own pool of that many threads.

  Raises:
    ValueError: bad sizes, fewer files than workers, both or neither of inputs and
      documents_dataset, or an unusable vocabulary.
    FileNotFoundError: a corpus pattern matches nothing.
  """
  data_config.validate()
  if global_batch_size < 1 or global_batch_size % num_slices:
    raise ValueError(f"global_batch_size: {global_batch_size} does not divide into "
                     f"{num_slices} workers/replicas")
  if skip_batches < 0:
    raise ValueError(f"skip_batches: must be >= 0, got {skip_batches}")
  per_slice = global_batch_size // num_slices
  words = GraphWordPiece(as_word_piece(tokenizer_or_vocab))
  masker = _Masker(data_config, words)
  if (inputs is None) == (documents_dataset is None):
    raise ValueError("streaming input: give corpus files (inputs) or documents_dataset, "
                     "not both or neither")
  if data_service_address:
    # The service's workers split the epochs among themselves: one pipeline, no file split.
    num_slices, slice_index = 1, 0
  if documents_dataset is None:
    files = worker_files(expand_inputs(inputs), num_slices, slice_index)
    if os.path.getsize(files[0]) == 0 and all(os.path.getsize(f) == 0 for f in files):
      raise ValueError(f"streaming input: the corpus files of worker {slice_index} are empty: "
                       f"{', '.join(files)}")
    documents = lambda: file_documents(files)  # pylint: disable=unnecessary-lambda-assignment
  else:
    if callable(documents_dataset):
      texts = documents_dataset(num_slices, slice_index)   # the source's own worker split
    else:
      texts = documents_dataset
      if num_slices > 1:
        texts = texts.shard(num_slices, slice_index)
    documents = lambda: text_sentences(texts)  # pylint: disable=unnecessary-lambda-assignment

  def epoch_examples(epoch):
    rows = packed_rows(documents(), words, data_config, num_parallel_calls)
    if shuffle_buffer:
      rows = rows.shuffle(shuffle_buffer, seed=seed * 1_000_003 + slice_index * 7_919 + epoch,
                          reshuffle_each_iteration=False)
    return rows.enumerate().map(without_autograph(lambda index, row: (epoch, index, row)))

  epochs = tf.data.Dataset.counter() if repeat else tf.data.Dataset.range(1)
  examples = epochs.flat_map(without_autograph(epoch_examples))
  if skip_batches:
    examples = examples.skip(skip_batches * per_slice)   # before the (costly) masking
  examples = examples.map(
      without_autograph(lambda epoch, index, row: masker(
          row, _example_key(seed, slice_index, epoch, index))),
      num_parallel_calls=num_parallel_calls, deterministic=True)
  ds = examples.batch(per_slice, drop_remainder=True)
  options = tf.data.Options()
  options.deterministic = True
  options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
  if private_threadpool_size:
    options.threading.private_threadpool_size = private_threadpool_size
  ds = ds.with_options(options)
  if data_service_address:
    ds = ds.apply(tf.data.experimental.service.distribute(
        processing_mode="distributed_epoch", service=data_service_address,
        job_name=data_service_job_name))
  return ds.prefetch(2)


def tokenization_differences(sentences: Sequence[str], tokenizer_or_vocab,
                             batch_size: int = 512) -> List[int]:
  """Indices of the sentences whose graph word pieces differ from `WordPieceTokenizer`'s
  Python reference (the measurement behind the docs' tokenization note)."""
  tokenizer = as_word_piece(tokenizer_or_vocab)
  reference = tokenization.WordPieceTokenizer(tokenizer.vocab_file, tokenizer.lower_case,
                                              max_chars_per_word=tokenizer.max_chars_per_word,
                                              backend="python")
  words = GraphWordPiece(tokenizer)
  fn = tf.function(words.tokenize, input_signature=[tf.TensorSpec([None], tf.string)],
                   autograph=False)
  different = []
  for start in range(0, len(sentences), batch_size):
    batch = list(sentences[start:start + batch_size])
    got = fn(tf.constant([s.encode("utf-8") for s in batch])).to_list()
    expected = reference.tokenize(batch)
    different.extend(start + i for i, (g, e) in enumerate(zip(got, expected)) if g != e)
  return different
