"""Streaming pretraining input (data/streaming.py) against the offline shards' rules."""

import gzip
import json
import os

import numpy as np
import pytest
import tensorflow as tf

import pretrain_fixtures as fx
from etc_realformer.data import corpus as corpus_lib
from etc_realformer.data import pretraining_data
from etc_realformer.data import pretraining_examples as pe
from etc_realformer.data import streaming
from etc_realformer.data import synthetic_corpus
from etc_realformer.data import tfrecords
from etc_realformer.data import vocab
from etc_realformer.data.tokenization import WordPieceTokenizer
from etc_realformer.training import pretraining_run

CONFIG = pe.PretrainingDataConfig(long_seq_len=128, global_seq_len=16, max_predictions_per_seq=24,
                                  max_cpc_per_seq=3, cpc_sentence_len=12)
VOCAB = pretraining_data.EMBEDDED_VOCAB


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
  """Three text files and one gzipped JSON Lines file of the generated corpus."""
  directory = tmp_path_factory.mktemp("streaming_corpus")
  files = [synthetic_corpus.write_corpus(str(directory / f"part{i}.txt"), num_documents=10,
                                         seed=10 + i) for i in range(3)]
  files.append(synthetic_corpus.write_corpus(str(directory / "part3.jsonl.gz"), num_documents=10,
                                             seed=13, format="jsonl"))
  return files


@pytest.fixture(scope="module")
def reference():
  return WordPieceTokenizer(VOCAB, backend="python")


def offline_rows(files, tokenizer):
  """The offline converter's packed rows: lists of (document in row, words of pieces)."""
  documents = pretraining_data.tokenized_documents(corpus_lib.read_corpus(files), tokenizer)
  return list(pe.pack_rows(documents, CONFIG, pe.ExampleStats()))


def stream(files, **kwargs):
  kwargs.setdefault("repeat", False)
  return streaming.make_streaming_dataset(files, VOCAB, CONFIG, kwargs.pop("batch", 4), **kwargs)


def examples_of(dataset, limit=None):
  """Batches -> list of per-example dicts of NumPy arrays."""
  out = []
  for batch in dataset:
    batch = {k: v.numpy() for k, v in batch.items()}
    for i in range(len(batch["token_ids"])):
      out.append({k: v[i] for k, v in batch.items()})
    if limit and len(out) >= limit:
      break
  return out


def test_features_equal_the_offline_readers(corpus, tmp_path):
  shards = str(tmp_path / "shards")
  pretraining_data.convert_corpus(corpus[:1], shards, WordPieceTokenizer(VOCAB), CONFIG,
                                  log=lambda *_: None)
  offline = next(iter(tfrecords.make_dataset(tfrecords.expand_files(shards + "/*.tfrecord"),
                                             CONFIG, 4)))
  streamed = next(iter(stream(corpus[:1])))
  assert sorted(streamed) == sorted(offline) == sorted(pe.feature_lengths(CONFIG))
  for name in offline:
    assert streamed[name].dtype == offline[name].dtype, name
    assert streamed[name].shape == offline[name].shape, name


def test_packed_rows_and_tokenization_equal_the_offline_path(corpus, reference):
  rows = list(streaming.packed_rows(streaming.file_documents(corpus), VOCAB, CONFIG))
  expected = offline_rows(corpus, reference)
  assert len(rows) == len(expected) > 10
  for row, want in zip(rows, expected):
    words = [w for _, sentence in want for w in sentence]
    np.testing.assert_array_equal(row["tokens"].numpy(), [p for w in words for p in w])
    np.testing.assert_array_equal(np.flatnonzero(row["word_start"].numpy()),
                                  np.cumsum([0] + [len(w) for w in words[:-1]]))
    np.testing.assert_array_equal(row["sentence_len"].numpy(),
                                  [sum(len(w) for w in s) for _, s in want])
    np.testing.assert_array_equal(row["sentence_doc"].numpy(), [d for d, _ in want])
  # The graph tokenizer gives the reference's ids on the corpus and on plain ASCII text.
  sentences = [s for d in corpus_lib.read_corpus(corpus) for s in d.sentences]
  ascii_text = ["The QUICK brown fox, (aged 3.5) jumped over 12 lazy dogs!",
                "Unaffable, naive e-mail: x@y.org #1 100% \"quoted\" it's [ok]; a_b {c} ~d",
                "x" * 250 + " supercalifragilistic words", "tab\tseparated\tline"]
  assert streaming.tokenization_differences(sentences + ascii_text, reference) == []


def test_masking_statistics_and_layout(corpus, reference):
  """Two epochs of every row: MLM rate, whole words, 80/10/10, global tokens, breakpoints,
  CPC; unmasked pieces equal the offline ids."""
  rows = offline_rows(corpus, reference)
  examples = examples_of(stream(corpus, repeat=True, seed=5), limit=2 * len(rows))
  continues = np.array([t.startswith("##") for t in reference._tokens])  # pylint: disable=protected-access
  outcomes, masked_pieces, candidate_pieces, words_checked = [], 0, 0, 0
  for k, ex in enumerate(examples[:2 * len(rows)]):   # example k is row k % rows
    row = rows[k % len(rows)]
    layout = pe.build_example(row, CONFIG, reference.vocab_size, np.random.default_rng(0),
                              pe.ExampleStats())
    for name in ("sentence_ids", "long_breakpoints", "global_breakpoints"):
      np.testing.assert_array_equal(ex[name], layout[name], err_msg=name)
    original = np.array([p for _, s in row for w in s for p in w])
    n, m = len(original), len(row)
    # One global token per sentence, owning its pieces; breakpoints at document ends.
    assert set(ex["global_token_ids"][:m]) <= {vocab.SENTENCE_ID, vocab.CPC_MASK_ID}
    assert not ex["global_token_ids"][m:].any() and not ex["token_ids"][n:].any()
    np.testing.assert_array_equal(np.bincount(ex["sentence_ids"][:n], minlength=m),
                                  [sum(len(w) for w in s) for _, s in row])
    doc = np.array([d for d, _ in row])
    np.testing.assert_array_equal(ex["global_breakpoints"][:m], np.append(doc[1:] != doc[:-1], 1))
    # CPC: the hidden sentences, their global tokens, targets and original pieces.
    hidden = np.flatnonzero(ex["global_token_ids"][:m] == vocab.CPC_MASK_ID)
    slots = int(ex["cpc_weights"].sum())
    sizes = np.bincount(doc)[doc]
    eligible = int((sizes >= 2).sum())
    expected = min(max(int(round(CONFIG.cpc_prob * eligible)), 1), CONFIG.max_cpc_per_seq,
                   eligible)
    assert slots == len(hidden) == expected
    np.testing.assert_array_equal(ex["cpc_global_positions"][:slots], hidden)
    assert (sizes[hidden] >= 2).all()
    token_hidden = np.isin(ex["sentence_ids"][:n], hidden)
    assert (ex["token_ids"][:n][token_hidden] == vocab.MASK_ID).all()
    for slot, g in enumerate(hidden):
      pieces = original[ex["sentence_ids"][:n] == g][:CONFIG.cpc_sentence_len]
      np.testing.assert_array_equal(ex["cpc_sentence_token_ids"][slot][:len(pieces)], pieces)
      assert not ex["cpc_sentence_token_ids"][slot][len(pieces):].any()
    # MLM: targets are the original pieces, whole words, about 15% of the candidate pieces.
    count = int(ex["masked_lm_weights"].sum())
    positions = ex["masked_lm_positions"][:count]
    assert (np.diff(positions) > 0).all() and not token_hidden[positions].any()
    np.testing.assert_array_equal(ex["masked_lm_ids"][:count], original[positions])
    unmasked = np.ones(n, bool)
    unmasked[positions] = False
    unmasked &= ~token_hidden
    np.testing.assert_array_equal(ex["token_ids"][:n][unmasked], original[unmasked])
    candidates = int((~token_hidden).sum())
    assert 1 <= count <= min(int(round(CONFIG.masked_lm_prob * candidates)) or 1,
                             CONFIG.max_predictions_per_seq)
    masked_pieces += count
    candidate_pieces += candidates
    word_start = ~continues[original]
    word_start[np.cumsum([0] + [sum(len(w) for w in s) for _, s in row[:-1]])] = True
    word_of = np.cumsum(word_start) - 1
    for word in np.unique(word_of[positions]):
      members = np.flatnonzero(word_of == word)
      assert np.isin(members, positions).all(), "a masked word is masked whole"
      got = ex["token_ids"][members]
      outcomes.append("mask" if (got == vocab.MASK_ID).all() else
                      "keep" if (got == original[members]).all() else "random")
      words_checked += 1
  rate = masked_pieces / candidate_pieces
  assert 0.13 <= rate <= 0.155, rate
  shares = {kind: outcomes.count(kind) / len(outcomes) for kind in ("mask", "random", "keep")}
  assert words_checked > 400
  assert abs(shares["mask"] - 0.8) < 0.05 and abs(shares["random"] - 0.1) < 0.04 \
      and abs(shares["keep"] - 0.1) < 0.04, shares


def test_epochs_mask_anew_and_a_seed_repeats_exactly(corpus):
  files = corpus[:1]
  rows = len(list(streaming.packed_rows(streaming.file_documents(files), VOCAB, CONFIG)))
  assert rows % 4 == 0 or rows > 4
  first = examples_of(stream(files, repeat=True, seed=3, batch=2), limit=2 * rows)
  again = examples_of(stream(files, repeat=True, seed=3, batch=2), limit=2 * rows)
  other = examples_of(stream(files, repeat=True, seed=4, batch=2), limit=rows)
  for a, b in zip(first, again):
    for name in a:
      np.testing.assert_array_equal(a[name], b[name])
  epoch0, epoch1 = first[:rows], first[rows:2 * rows]
  for a, b in zip(epoch0, epoch1):   # the same rows, masked anew
    np.testing.assert_array_equal(a["sentence_ids"], b["sentence_ids"])
  assert any((a["token_ids"] != b["token_ids"]).any() for a, b in zip(epoch0, epoch1))
  assert any((a["token_ids"] != b["token_ids"]).any() for a, b in zip(epoch0, other))
  # Resume: skipping 3 steps gives the uninterrupted stream from step 3 on (across an epoch).
  resumed = examples_of(stream(files, repeat=True, seed=3, batch=2, skip_batches=3),
                        limit=2 * rows - 6)
  for a, b in zip(resumed, first[6:]):
    np.testing.assert_array_equal(a["token_ids"], b["token_ids"])
    np.testing.assert_array_equal(a["masked_lm_positions"], b["masked_lm_positions"])


def test_workers_read_disjoint_files_and_too_few_files_is_an_error(corpus, reference):
  files = corpus[:3]
  parts = [streaming.worker_files(files, 2, k) for k in range(2)]
  assert parts == [[files[0], files[2]], [files[1]]]
  for k, part in enumerate(parts):
    streamed = examples_of(stream(",".join(files), num_slices=2, slice_index=k, batch=2))
    rows = offline_rows(part, reference)   # this worker's files only
    assert len(streamed) == len(rows) // 2 * 2 > 0
    for ex, row in zip(streamed, rows):
      original = np.array([p for _, s in row for w in s for p in w])
      kept = np.ones(len(original), bool)
      kept[ex["masked_lm_positions"][:int(ex["masked_lm_weights"].sum())]] = False
      kept &= ex["token_ids"][:len(original)] != vocab.MASK_ID
      np.testing.assert_array_equal(ex["token_ids"][:len(original)][kept], original[kept])
  with pytest.raises(ValueError, match=r"1 corpus file\(s\) for 2 workers"):
    stream(files[0], num_slices=2, slice_index=1)
  with pytest.raises(FileNotFoundError, match="matches no file"):
    stream(os.path.join(os.path.dirname(files[0]), "missing*.txt"))


def test_raw_text_source_equals_the_json_lines_file(corpus):
  jsonl = corpus[3]
  with gzip.open(jsonl, "rt") as f:
    texts = [json.loads(line)["text"] for line in f]
  from_texts = examples_of(streaming.make_streaming_dataset(
      None, VOCAB, CONFIG, 4, repeat=False, documents_dataset=tf.data.Dataset.from_tensor_slices(
          texts)))
  from_file = examples_of(stream(jsonl))
  assert len(from_texts) == len(from_file) > 0
  for a, b in zip(from_texts, from_file):
    for name in a:
      np.testing.assert_array_equal(a[name], b[name])


def test_data_service_serves_the_same_examples(corpus):
  dispatcher = tf.data.experimental.service.DispatchServer()
  worker = tf.data.experimental.service.WorkerServer(  # pylint: disable=unused-variable
      tf.data.experimental.service.WorkerConfig(
          dispatcher_address=dispatcher.target.split("://")[1]))
  served = examples_of(stream(corpus[:1], data_service_address=dispatcher.target))
  local = examples_of(stream(corpus[:1]))
  key = lambda ex: ex["token_ids"].tobytes()  # pylint: disable=unnecessary-lambda-assignment
  assert sorted(map(key, served)) == sorted(map(key, local))


def test_run_pretraining_streams_from_train_corpus(corpus, tmp_path):
  run_config = fx.tiny_run_config("", num_train_steps=3, checkpoint_every=2, shuffle_buffer=8,
                                  batch_size=2)
  run_config["train"]["corpus"] = ",".join(corpus[:2])
  run_config["data"] = dict(long_seq_len=128, global_seq_len=16, max_predictions_per_seq=24,
                            max_cpc_per_seq=3, cpc_sentence_len=12)
  out = str(tmp_path / "run")
  metrics = pretraining_run.run_pretraining(run_config, out, verbose=0)
  assert metrics["final_step"] == 3 and np.isfinite(metrics["loss"])
  assert os.path.isfile(os.path.join(out, "final", "vocab.txt"))
  saved = json.load(open(os.path.join(out, "run_config.json")))
  assert saved["data"]["long_seq_len"] == 128 and saved["train"]["corpus"]
  # Resuming continues from the checkpoint at step 2, the stream skipping what was trained.
  run_config["train"]["num_train_steps"] = 4
  metrics = pretraining_run.run_pretraining(run_config, out, verbose=0)
  assert metrics["start_step"] == 3 and metrics["final_step"] == 4
