"""Sharded, parallel, resumable pretraining data (etc_realformer.data.pretraining_data).

Part k of num_shards parts of the corpus becomes shard k: the command line with two worker
processes writes the records one process writes; a conversion stopped part-way (a failing worker,
or a shard and its done file deleted) converts only the missing shards and ends with the records
of an uninterrupted run; the same arguments rewrite nothing; another seed or number of shards
removes the stale shards; the parts (whole files, or every document index d with
d % num_shards == k) hold every document once and the merged skip counts and messages are one
reader's.

What changed from the single-process converter (one reader writing round-robin): with one
shard the records are the same (checked below against the example builder run directly); with
several, each shard packs and masks its own documents (parts other than 0 with their own seeds),
so the examples differ from the round-robin ones.
"""

import json
import os
import subprocess
import sys

import pytest
import tensorflow as tf

from etc_realformer.data import corpus as corpus_lib
from etc_realformer.data import pretraining_data
from etc_realformer.data import pretraining_examples as pe
from etc_realformer.data import sharded_conversion
from etc_realformer.data import synthetic_corpus
from etc_realformer.data import tfrecords
from etc_realformer.data.tokenization import WordPieceTokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = pe.PretrainingDataConfig(long_seq_len=128, global_seq_len=16,
                                  max_predictions_per_seq=20, max_cpc_per_seq=2,
                                  cpc_sentence_len=16)
FLAGS = ["--long_seq_len=128", "--global_seq_len=16", "--max_predictions_per_seq=20",
         "--max_cpc_per_seq=2", "--cpc_sentence_len=16"]


def quiet(_):
  pass


@pytest.fixture(scope="module")
def tokenizer():
  return WordPieceTokenizer(pretraining_data.EMBEDDED_VOCAB)


def corpus(directory, num_documents=30, files=1, seed=3, fmt="text"):
  """`files` generated corpus files of `num_documents` documents in all."""
  documents = synthetic_corpus.generate_documents(num_documents, seed)
  per_file = -(-num_documents // files)
  paths = []
  os.makedirs(directory, exist_ok=True)
  for i in range(files):
    path = os.path.join(directory, f"part{i}.{'jsonl' if fmt == 'jsonl' else 'txt'}")
    text = synthetic_corpus.corpus_text(documents[i * per_file:(i + 1) * per_file], fmt)
    with open(path, "w", encoding="utf-8") as f:
      f.write(text)
    paths.append(path)
  return paths


def convert(inputs, directory, tokenizer, num_shards, log=quiet, **kwargs):
  return pretraining_data.convert_corpus(inputs, str(directory), tokenizer, CONFIG,
                                         num_shards=num_shards, log=log, **kwargs)


def canonical(serialized):
  """A record's features in name order (a record's bytes may order them differently)."""
  feature = tf.train.Example.FromString(serialized).features.feature
  return tuple((name, tuple(feature[name].int64_list.value or feature[name].float_list.value))
               for name in sorted(feature))


def shard_records(directory):
  """{shard file: its records, canonical} of a conversion."""
  return {os.path.basename(path): [canonical(r.numpy()) for r in tfrecords.record_dataset([path])]
          for path in tfrecords.expand_files(os.path.join(str(directory), "*.tfrecord"))}


def mtimes(directory):
  return {name: os.stat(os.path.join(str(directory), name)).st_mtime_ns
          for name in os.listdir(str(directory))}


def records(directory):
  """The records of a conversion's shards (canonical), in shard order."""
  files = tfrecords.expand_files(os.path.join(str(directory), "*.tfrecord"))
  return [canonical(r.numpy()) for r in tfrecords.record_dataset(files)]


def test_two_worker_processes_write_the_records_of_one(tmp_path, tokenizer):
  """The command line with --num_workers=2 (spawned processes) against one process."""
  inputs = corpus(str(tmp_path / "corpus"), num_documents=40)
  one = convert(inputs, tmp_path / "one", tokenizer, 3, seed=4, dupe_factor=2)
  result = subprocess.run(
      [sys.executable, "-m", "etc_realformer.create_pretraining_data", f"--input={inputs[0]}",
       f"--output_dir={tmp_path / 'two'}", "--num_shards=3", "--num_workers=2", "--seed=4",
       "--dupe_factor=2", *FLAGS],
      cwd=ROOT, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"), capture_output=True,
      text=True, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  assert "3 of 3 shard(s) done" in result.stdout + result.stderr
  assert shard_records(tmp_path / "two") == shard_records(tmp_path / "one")
  assert len(shard_records(tmp_path / "one")) == 3
  with open(tmp_path / "two" / tfrecords.DATA_CONFIG_FILE) as f:
    two = json.load(f)["conversion"]
  for key in ("corpus", "examples", "written"):
    assert two[key] == one[key], key
  assert one["corpus"]["documents"] == 40 and one["examples"]["documents"] == 80
  assert os.path.exists(tmp_path / "two" / "vocab.txt")


def test_one_shard_writes_the_records_of_the_single_process_converter(tmp_path, tokenizer):
  """One reader, passes masked with seed, seed + 1 (what the converter did before parts)."""
  inputs = corpus(str(tmp_path / "corpus"), num_documents=20)
  convert(inputs, tmp_path / "out", tokenizer, 1, seed=7, dupe_factor=2)
  specials = [tokenizer.pad_id, tokenizer.unk_id, tokenizer.cls_id, tokenizer.sep_id,
              tokenizer.mask_id]
  expected = []
  for repeat in range(2):
    documents = pretraining_data.tokenized_documents(corpus_lib.read_corpus(inputs), tokenizer)
    examples = pe.create_examples(documents, CONFIG, tokenizer.vocab_size, seed=7 + repeat,
                                  mask_id=tokenizer.mask_id, min_random_id=max(specials) + 1)
    expected += [canonical(tfrecords.to_tf_example(e).SerializeToString()) for e in examples]
  assert records(tmp_path / "out") == expected


def fail_in_part(monkeypatch, index, after):
  """Part `index` raises after `after` examples (a worker that dies part-way)."""
  original = pretraining_data.PartExamples.__call__

  def crashing(records):
    for count, record in enumerate(records):
      if count == after:
        raise RuntimeError("worker killed")
      yield record

  def call(self, part, count, log):
    run = original(self, part, count, log)
    if part == index:
      run.records = crashing(run.records)
    return run
  monkeypatch.setattr(pretraining_data.PartExamples, "__call__", call)


def test_a_stopped_conversion_resumes_with_the_missing_shards_only(tmp_path, tokenizer,
                                                                  monkeypatch):
  inputs = corpus(str(tmp_path / "corpus"), num_documents=30)
  convert(inputs, tmp_path / "whole", tokenizer, 3)
  out = tmp_path / "out"
  with monkeypatch.context() as patch:
    fail_in_part(patch, 1, after=2)
    with pytest.raises(RuntimeError, match="worker killed"):
      convert(inputs, out, tokenizer, 3)
  assert sorted(os.listdir(out)) == ["pretrain-00000-of-00003.tfrecord",
                                     "pretrain-00000-of-00003.tfrecord.done.json"]
  before, messages = mtimes(out), []
  convert(inputs, out, tokenizer, 3, log=messages.append)
  assert "1 of 3 shard(s) already converted; converting the other 2" in messages[0]
  after = mtimes(out)
  assert {k: after[k] for k in before} == before   # shard 0 and its done file untouched
  assert shard_records(out) == shard_records(tmp_path / "whole")
  # A shard and its done file deleted: only that shard is written again.
  os.remove(out / "pretrain-00001-of-00003.tfrecord")
  os.remove(out / "pretrain-00001-of-00003.tfrecord.done.json")
  before, messages = mtimes(out), []
  summary = convert(inputs, out, tokenizer, 3, log=messages.append)
  after = mtimes(out)
  assert "2 of 3 shard(s) already converted; converting the other 1" in messages[0]
  changed = sorted(name for name in after if after[name] != before.get(name))
  assert changed == ["data_config.json", "pretrain-00001-of-00003.tfrecord",
                     "pretrain-00001-of-00003.tfrecord.done.json"]
  assert shard_records(out) == shard_records(tmp_path / "whole")
  assert summary["corpus"]["documents"] == 30 and summary["written"] == len(records(out))
  assert not [name for name in os.listdir(out) if name.endswith(".tmp")]


def test_the_same_arguments_rewrite_nothing_and_others_remove_stale_shards(tmp_path, tokenizer):
  inputs = corpus(str(tmp_path / "corpus"), num_documents=24)
  out = tmp_path / "out"
  messages = []
  first = convert(inputs, out, tokenizer, 3, seed=1, log=messages.append, progress_seconds=0)
  assert "pretrain-00001-of-00003.tfrecord: 1 example(s) from " in "\n".join(messages)
  assert any(m.startswith("pretrain-00002-of-00003.tfrecord: ") and
             "; 3 of 3 shard(s) done after " in m for m in messages), messages
  before, messages = mtimes(out), []
  assert convert(inputs, out, tokenizer, 3, seed=1, log=messages.append) == first
  assert mtimes(out) == before
  assert messages == [f"{out}: reusing {first['written']} pretraining example(s) in 3 "
                      "shard(s) (same input, vocabulary, data config, seed, dupe_factor and "
                      "number of shards)"]
  old = shard_records(out)
  # Another seed: every shard is stale (same names, other records).
  convert(inputs, out, tokenizer, 3, seed=2)
  assert set(shard_records(out)) == set(old) and all(
      shard_records(out)[name] != old[name] for name in old)
  digests = set()
  for k in range(3):
    with open(out / f"pretrain-0000{k}-of-00003.tfrecord.done.json") as f:
      digests.add(json.load(f)["digest"])
  with open(out / tfrecords.DATA_CONFIG_FILE) as f:
    manifest = json.load(f)
  assert digests == {sharded_conversion.digest(manifest["fingerprint"])}
  assert manifest["fingerprint"]["seed"] == manifest["seed"] == 2
  # Another number of shards: the 3-shard files go.
  convert(inputs, out, tokenizer, 2, seed=2)
  assert sorted(os.listdir(out)) == [
      "data_config.json", "pretrain-00000-of-00002.tfrecord",
      "pretrain-00000-of-00002.tfrecord.done.json", "pretrain-00001-of-00002.tfrecord",
      "pretrain-00001-of-00002.tfrecord.done.json"]
  # A touched input is another input.
  os.utime(inputs[0], ns=(1, 1))
  messages = []
  convert(inputs, out, tokenizer, 2, seed=2, log=messages.append)
  assert not any("reusing" in m for m in messages)


def bad_corpus(directory, files=1):
  """JSON Lines files of generated documents with bad lines spread through them."""
  documents = synthetic_corpus.generate_documents(24, seed=5)
  bad = [b"{not json", json.dumps({"title": "no text"}).encode(), json.dumps({"text": ""}).encode(),
         b"[1, 2]", b"\xff\xfe not utf-8", json.dumps({"text": 7}).encode()]
  lines = []
  for i, document in enumerate(documents):
    lines.append(json.dumps({"id": f"d{i}", "text": "\n".join(document)}).encode())
    if i % 3 == 1:
      lines.append(bad[(i // 3) % len(bad)])
  os.makedirs(directory, exist_ok=True)
  per_file = -(-len(lines) // files)
  paths = []
  for i in range(files):
    path = os.path.join(directory, f"bad{i}.jsonl")
    with open(path, "wb") as f:
      f.write(b"\n".join(lines[i * per_file:(i + 1) * per_file]) + b"\n")
    paths.append(path)
  return paths


@pytest.mark.parametrize("files,num_shards", [(1, 3), (4, 2)])
def test_merged_skip_counts_and_messages_are_those_of_one_reader(tmp_path, tokenizer, files,
                                                                num_shards):
  """Every part reads the one file (each skip counted by one part), or whole files per part."""
  inputs = bad_corpus(str(tmp_path / "corpus"), files)
  one = convert(inputs, tmp_path / "one", tokenizer, 1)
  many = convert(inputs, tmp_path / "many", tokenizer, num_shards)
  assert many["corpus"] == one["corpus"]
  assert one["corpus"]["skipped"] == {"invalid json": 2, "invalid utf-8": 1,
                                      "missing or non-string 'text' field": 4,
                                      "empty document": 1}
  assert one["corpus"]["documents"] == 24 and one["corpus"]["files"] == files
  assert len(one["corpus"]["examples"]) == 8 and "bad0.jsonl:3: invalid json" in (
      one["corpus"]["examples"][0])
  per_shard = []
  for k in range(num_shards):
    with open(tmp_path / "many" / f"pretrain-0000{k}-of-0000{num_shards}.tfrecord.done.json") as f:
      per_shard.append(sum(json.load(f)["corpus"]["skipped"].values()))
  assert sum(per_shard) == 8 and all(per_shard)   # spread over the parts, each counted once


def part_document_ids(inputs, tokenizer, num_shards):
  work = pretraining_data.PartExamples(inputs, tokenizer, CONFIG, 0, 1, 1)
  parts = []
  for k in range(num_shards):
    report = pretraining_data._PartReport(k, num_shards)  # pylint: disable=protected-access
    parts.append([d.doc_id for d in work.documents(k, num_shards, report, [0])])
  return work, parts


@pytest.mark.parametrize("files,num_shards,whole_files", [(5, 3, True), (2, 3, False),
                                                          (1, 4, False)])
def test_the_parts_hold_every_document_once(tmp_path, tokenizer, files, num_shards,
                                            whole_files):
  inputs = corpus(str(tmp_path / "corpus"), num_documents=25, files=files)
  work, parts = part_document_ids(inputs, tokenizer, num_shards)
  assert work.whole_files(num_shards) == whole_files
  every = [d.doc_id for d in corpus_lib.read_corpus(inputs)]
  assert len(every) == 25 and sorted(sum(parts, [])) == sorted(every)
  assert all(parts)
  if whole_files:   # file i -> part i % num_shards
    assert {doc.split(":")[0] for doc in parts[1]} == {"part1.txt", "part4.txt"}
  else:             # document d -> part d % num_shards
    assert parts[1] == every[1::num_shards]
  summary = convert(inputs, tmp_path / "out", tokenizer, num_shards)
  assert summary["corpus"]["documents"] == 25 and summary["corpus"]["files"] == files
  assert [s["documents"] for s in summary["shards"]] == [len(p) for p in parts]


def test_a_source_that_is_not_a_file_is_cut_by_document_index(tmp_path, tokenizer,
                                                              monkeypatch):
  """A `tfds:` input reaches the corpus reader with tfds_data_dir; parts keep d % n == k."""
  calls = []
  documents = synthetic_corpus.generate_documents(10, seed=2)

  def read_corpus(paths, report=None, min_sentences=1, tfds_data_dir=None):
    calls.append((list(paths), tfds_data_dir))
    report.skip("tfds:fake", 1, "invalid json", "a bad record")

    def generate():
      for i, sentences in enumerate(documents):
        report.documents += 1
        report.sentences += len(sentences)
        yield corpus_lib.Document(f"fake:{i}", list(sentences))
    return generate()
  monkeypatch.setattr(corpus_lib, "read_corpus", read_corpus)
  summary = convert(["tfds:fake/1.0.0"], tmp_path / "out", tokenizer, 3,
                    tfds_data_dir=str(tmp_path / "tfds"))
  assert calls == [(["tfds:fake/1.0.0"], str(tmp_path / "tfds"))] * 3
  assert [s["documents"] for s in summary["shards"]] == [4, 3, 3]
  assert summary["corpus"]["documents"] == 10
  assert summary["corpus"]["skipped"] == {"invalid json": 1}
  with open(tmp_path / "out" / tfrecords.DATA_CONFIG_FILE) as f:
    stamp = json.load(f)["fingerprint"]
  assert stamp["sources"] == ["tfds:fake/1.0.0"] and stamp["input"] == []


def test_bad_settings_are_errors_naming_them(tmp_path, tokenizer):
  inputs = corpus(str(tmp_path / "corpus"), num_documents=3)
  for kwargs, name in (({"num_workers": 0}, "num_workers"), ({"num_shards": 0}, "num_shards"),
                       ({"dupe_factor": 0}, "dupe_factor")):
    with pytest.raises(ValueError, match=name):
      convert(inputs, tmp_path / "out", tokenizer, kwargs.pop("num_shards", 1), **kwargs)
