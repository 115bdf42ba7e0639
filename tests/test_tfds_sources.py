"""TFDS sources: pretraining text (etc_realformer.data.tfds_source, corpus.read_corpus) and
Natural Questions from TFDS (tasks.nq.tfds_records). Offline: every dataset read here is a tiny
one prepared in a temporary directory by a builder defined in this file (not registered with
TFDS); "wikipedia" and "natural_questions" use the names, configs, versions and features of
the installed TFDS builders, so `tfds.builder` loads them through the real builder code.
(`tfds.testing.mock_data` fakes records but leaves every builder unprepared and without splits,
so it only checks the known text fields against the real catalog's features.)"""

import collections
import gzip
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_datasets as tfds

from etc_realformer.data import corpus
from etc_realformer.data import tfds_source
from synthetic_data import nq as synthetic_nq
from tasks.nq import data as nq_data
from tasks.nq import tfds_records

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WIKI = "tfds:wikipedia/20230601.en"
WIKI_TEXTS = [f"Article {i} starts here. It has a second sentence about item {i}."
              for i in range(9)] + ["", "   \n  ", "Only one sentence in article eleven."]


def _prepare(builder_cls, data_dir, config):
  builder = builder_cls(data_dir=data_dir, config=config)
  builder.download_and_prepare(
      download_config=tfds.download.DownloadConfig(try_download_gcs=False))


@pytest.fixture(scope="module")
def text_data_dir(tmp_path_factory):
  """A prepared "wikipedia/20230601.en" (train: WIKI_TEXTS) and "etc_test_texts/plain"."""
  tfds.disable_progress_bar()
  data_dir = str(tmp_path_factory.mktemp("tfds_text"))
  version = tfds.builder_cls("wikipedia").VERSION
  with tfds.core.registered.skip_registration():

    class Wikipedia(tfds.core.GeneratorBasedBuilder):  # the real one's name and features
      VERSION = version
      BUILDER_CONFIGS = [tfds.core.BuilderConfig(name="20230601.en")]

      def _info(self):
        return tfds.core.DatasetInfo(builder=self, features=tfds.features.FeaturesDict(
            {"title": tfds.features.Text(), "text": tfds.features.Text()}))

      def _split_generators(self, dl_manager):
        del dl_manager
        return {"train": self._generate_examples()}

      def _generate_examples(self):
        for i, text in enumerate(WIKI_TEXTS):
          yield i, {"title": f"Title {i}", "text": text}

    class EtcTestTexts(tfds.core.GeneratorBasedBuilder):  # a dataset with no known text field
      VERSION = tfds.core.Version("1.0.0")
      BUILDER_CONFIGS = [tfds.core.BuilderConfig(name="plain")]

      def _info(self):
        return tfds.core.DatasetInfo(builder=self, features=tfds.features.FeaturesDict({
            "body": tfds.features.Text(), "meta": {"note": tfds.features.Text()},
            "number": np.int64}))

      def _split_generators(self, dl_manager):
        del dl_manager
        return {"train": self._generate_examples()}

      def _generate_examples(self):
        for i in range(4):
          yield i, {"body": f"Body {i}.", "meta": {"note": f"Note {i}."}, "number": i}

  _prepare(Wikipedia, data_dir, "20230601.en")
  _prepare(EtcTestTexts, data_dir, "plain")
  return data_dir


def _texts(dataset):
  return [t.decode("utf-8") for t in tfds.as_numpy(dataset)]


def test_parse_tfds_spec():
  assert tfds_source.parse_tfds_spec("tfds:wikipedia/20230601.en") == (
      "wikipedia", "20230601.en", "train")
  assert tfds_source.parse_tfds_spec("tfds:c4/en:validation") == ("c4", "en", "validation")
  assert tfds_source.parse_tfds_spec("tfds:c4/en:train[10:20%]") == ("c4", "en", "train[10:20%]")
  assert tfds_source.parse_tfds_spec("tfds:imdb_reviews") == ("imdb_reviews", None, "train")
  for bad in ("wikipedia/20230601.en", "tfds:", "tfds:/en", "tfds:Wiki/en", "tfds:c4/",
              "tfds:c4/en:", "tfds:c4/en/3.0.1", "tfds:c4/en:3.0.1", "tfds:c4/en:tr$in"):
    with pytest.raises(ValueError, match="tfds:<name>/<config>"):
      tfds_source.parse_tfds_spec(bad)


def test_text_dataset_yields_the_raw_texts(text_data_dir):
  dataset = tfds_source.tfds_text_dataset(WIKI, text_data_dir)
  assert dataset.element_spec == tf.TensorSpec([], tf.string)
  texts = _texts(dataset)
  assert sorted(texts) == sorted(WIKI_TEXTS)  # the text alone (no title), empty ones included
  assert texts == _texts(tfds_source.tfds_text_dataset(WIKI, text_data_dir))  # stored order


def test_workers_read_disjoint_parts_whose_union_is_the_split(text_data_dir):
  whole = _texts(tfds_source.tfds_text_dataset(WIKI, text_data_dir))
  for workers in (2, 3, 5):
    parts = [_texts(tfds_source.tfds_text_dataset(WIKI, text_data_dir, workers, k))
             for k in range(workers)]
    assert sum(parts, []) == whole, workers  # contiguous, in order, nothing twice or missing
    assert max(map(len, parts)) - min(map(len, parts)) <= 1
  sliced = _texts(tfds_source.tfds_text_dataset(WIKI + ":train[3:]", text_data_dir))
  assert sliced == whole[3:]
  parts = [_texts(tfds_source.tfds_text_dataset(WIKI + ":train[3:]", text_data_dir, 2, k))
           for k in range(2)]
  assert parts[0] + parts[1] == whole[3:] and len(parts[0]) == 4
  many = [_texts(tfds_source.tfds_text_dataset(WIKI + ":train[:2]", text_data_dir, 3, k))
          for k in range(3)]
  assert many == [[], whole[:1], whole[1:2]]  # a worker with no records reads nothing
  with pytest.raises(ValueError, match="worker_index 2"):
    tfds_source.tfds_text_dataset(WIKI, text_data_dir, 2, 2)
  with pytest.raises(ValueError, match="split 'test'.*prepared splits are \\['train'\\]"):
    tfds_source.tfds_text_dataset(WIKI + ":test", text_data_dir)


def test_text_field_of_other_datasets(text_data_dir):
  spec = "tfds:etc_test_texts/plain"
  with pytest.raises(ValueError, match=r"pass text_field.*\['body', 'meta/note'\]"):
    tfds_source.tfds_text_dataset(spec, text_data_dir)
  with pytest.raises(ValueError, match=r"'number' is not a scalar string feature"):
    tfds_source.tfds_text_dataset(spec, text_data_dir, text_field="number")
  assert sorted(_texts(tfds_source.tfds_text_dataset(spec, text_data_dir, text_field="body"))) \
      == [f"Body {i}." for i in range(4)]
  assert sorted(_texts(tfds_source.tfds_text_dataset(spec, text_data_dir,
                                                     text_field="meta/note"))) \
      == [f"Note {i}." for i in range(4)]


def test_documents_split_sentences_and_count_skipped_records(text_data_dir):
  whole = _texts(tfds_source.tfds_text_dataset(WIKI, text_data_dir))
  report = corpus.CorpusReport()
  docs = list(corpus.tfds_documents(WIKI, text_data_dir, report, min_sentences=2))
  assert len(docs) == 9 and report.documents == 9 and report.sentences == 18 and report.files == 1
  for doc in docs:
    index = int(doc.doc_id.rsplit(":", 1)[1])
    assert doc.doc_id == f"tfds:wikipedia/20230601.en:train:{index}"
    assert doc.sentences == corpus.split_sentences(whole[index]) and len(doc.sentences) == 2
  assert report.skipped == {corpus.REASON_EMPTY: 2, corpus.REASON_TOO_FEW: 1}
  empty = sorted(i for i, t in enumerate(whole) if not t.strip())
  one = whole.index(WIKI_TEXTS[-1])
  assert sorted(report.examples) == sorted(
      [f"tfds:wikipedia/20230601.en:train:{i}: empty document ('text' has no words)"
       for i in empty]
      + [f"tfds:wikipedia/20230601.en:train:{one}: too few sentences (1 < 2)"])
  # Two workers: the same documents between them, each with its record number in the split.
  reports = [corpus.CorpusReport(), corpus.CorpusReport()]
  halves = [list(corpus.tfds_documents(WIKI, text_data_dir, reports[k], 2, 2, k))
            for k in range(2)]
  assert [d.doc_id for d in halves[0] + halves[1]] == [d.doc_id for d in docs]
  assert reports[0].skipped + reports[1].skipped == report.skipped


def test_read_corpus_mixes_files_and_tfds_specs(text_data_dir, tmp_path):
  path = tmp_path / "corpus.txt"
  path.write_text("First file sentence.\nSecond one.\n\nAnother document.\n", encoding="utf-8")
  report = corpus.CorpusReport()
  docs = list(corpus.read_corpus([str(path), WIKI + ":train[:4]"], report,
                                 tfds_data_dir=text_data_dir))
  whole = _texts(tfds_source.tfds_text_dataset(WIKI, text_data_dir))
  expected_tfds = [i for i in range(4) if whole[i].strip()]
  assert [d.doc_id for d in docs] == ["corpus.txt:1", "corpus.txt:4"] + [
      f"tfds:wikipedia/20230601.en:train:{i}" for i in expected_tfds]
  assert report.files == 2 and report.documents == len(docs)
  assert report.sentences == sum(len(d.sentences) for d in docs)
  assert report.skipped[corpus.REASON_EMPTY] == 4 - len(expected_tfds)
  with pytest.raises(ValueError, match="tfds:<name>/<config>"):
    corpus.read_corpus(["tfds:c4/"], report)  # checked when called, not when iterated


def test_unprepared_data_dir_gives_a_clear_error(tmp_path):
  empty = str(tmp_path / "no_data_here")
  with pytest.raises(tfds_source.TfdsNotPreparedError) as info:
    tfds_source.tfds_text_dataset(WIKI, empty)
  message = str(info.value)
  assert "not prepared" in message and empty in message and "tfds build wikipedia" in message
  assert not os.path.exists(os.path.join(empty, "downloads"))  # nothing was downloaded
  with pytest.raises(tfds_source.TfdsNotPreparedError, match="no TFDS dataset 'no_such_corpus'"):
    corpus.tfds_documents("tfds:no_such_corpus/en", empty, corpus.CorpusReport())
  with pytest.raises(FileNotFoundError, match="not prepared"):  # through read_corpus too
    corpus.read_corpus([WIKI], tfds_data_dir=empty)


# ----------------------------------------------------------------------------- Natural Questions


def _nq_records():
  """Synthetic NQ records of all four question kinds: train-like (1 annotation) and dev-like."""
  return (synthetic_nq.generate_examples(6, seed=11, preset="short")
          + synthetic_nq.generate_examples(6, seed=12, split="dev", preset="short"))


def _as_tfds_numpy(record):
  """An official NQ record in the layout `tfds.as_numpy` gives for natural_questions/default:
  bytes strings, numpy arrays for sequences, a list of lists for the ragged short answers."""
  html = record["document_html"].encode("utf-8")
  annotations = record["annotations"]
  shorts = [a["short_answers"] for a in annotations]
  return {
      "id": str(record["example_id"]).encode(),
      "document": {
          "title": record["document_title"].encode(), "url": record["document_url"].encode(),
          "html": html,
          "tokens": {"token": np.array([t["token"].encode() for t in record["document_tokens"]],
                                       dtype=object),
                     "is_html": np.array([t["html_token"] for t in record["document_tokens"]])}},
      "question": {"text": record["question_text"].encode(),
                   "tokens": np.array([t.encode() for t in record["question_tokens"]],
                                      dtype=object)},
      "annotations": {
          "id": np.array([str(a["annotation_id"]).encode() for a in annotations], dtype=object),
          "long_answer": {k: np.array([a["long_answer"][k] for a in annotations], np.int64)
                          for k in ("start_token", "end_token", "start_byte", "end_byte")},
          "short_answers": dict(
              {k: [[s[k] for s in row] for row in shorts]
               for k in ("start_token", "end_token", "start_byte", "end_byte")},
              text=[[html[s["start_byte"]:s["end_byte"]] for s in row] for row in shorts]),
          "yes_no_answer": np.array([{"NONE": -1, "NO": 0, "YES": 1}[a["yes_no_answer"]]
                                     for a in annotations], np.int64)},
  }


def test_nq_record_round_trip_from_the_tfds_layout():
  records = _nq_records()
  kinds = collections.Counter()
  for record in records:
    notes = collections.Counter()
    rebuilt = tfds_records.tfds_example_to_nq_record(_as_tfds_numpy(record), notes)
    assert rebuilt["long_answer_candidates"] == record["long_answer_candidates"]
    assert rebuilt["annotations"] == record["annotations"]
    assert rebuilt["document_tokens"] == record["document_tokens"]
    assert rebuilt == record  # every field of the official record
    assert not notes  # nothing approximated: the synthetic html holds every token in order
    a = record["annotations"][0]
    kinds[("yes_no" if a["yes_no_answer"] != "NONE" else "short" if a["short_answers"]
           else "long" if a["long_answer"]["candidate_index"] >= 0 else "null")] += 1
    assert any(not c["top_level"] for c in record["long_answer_candidates"])
  assert set(kinds) == {"yes_no", "short", "long", "null"}


def test_nq_candidate_rule_and_byte_alignment_on_real_style_html():
  html = ('<html><body><h1>A &amp; B</h1>\n<dl><dt>Term</dt><dd>Def</dd></dl>'
          '<ol class="x"><li>One<ul><li>Two</li></ul></li></ol><p id=p1>Caf\u00e9 "q"</p>'
          '<table><tr><td>x</td></tr></table><span>skip me</span><p>end</body></html>')
  tokens = ["<H1>", "A", "&", "B", "</H1>", "<Dl>", "<Dt>", "Term", "</Dt>", "<Dd>", "Def",
            "</Dd>", "</Dl>", "<Ol>", "<Li>", "One", "<Ul>", "<Li>", "Two", "</Li>", "</Ul>",
            "</Li>", "</Ol>", "<P>", "Caf\u00e9", '"', "q", '"', "</P>", "<Table>", "<Tr>",
            "<Td>", "x", "</Td>", "</Tr>", "</Table>", "<P>", "end", "Missing"]
  is_html = [t.startswith("<") for t in tokens]
  notes = collections.Counter()
  cands = tfds_records.candidates_from_tokens(tokens, is_html, notes)
  assert [(c["start_token"], c["end_token"], c["top_level"]) for c in cands] == [
      (5, 13, True), (6, 9, False), (9, 12, False), (13, 23, True), (14, 22, False),
      (16, 21, False), (17, 20, False), (23, 29, True), (29, 36, True), (30, 35, False)]
  assert notes == {tfds_records.NOTE_UNCLOSED: 1}  # the last <P> is never closed
  data = html.encode("utf-8")
  starts, ends = tfds_records.align_tokens(data, tokens, is_html, notes=notes)
  spans = [data[s:e].decode("utf-8") for s, e in zip(starts, ends)]
  assert spans[:5] == ["<h1>", "A", "&amp;", "B", "</h1>"]
  assert spans[13] == '<ol class="x">' and spans[23] == "<p id=p1>"
  assert spans[24:28] == ["Caf\u00e9", '"', "q", '"'] and spans[37] == "end"
  assert starts[38] == ends[38] == ends[37]  # absent from the html: an empty, noted range
  assert notes[tfds_records.NOTE_APPROXIMATED] == 1
  assert ends[24] - starts[24] == 5  # bytes, not characters


def test_nq_long_answer_must_be_a_rebuilt_candidate():
  record = _nq_records()[0]
  example = _as_tfds_numpy(record)
  tokens = record["document_tokens"]
  text = next(i for i, t in enumerate(tokens) if not t["html_token"])
  long_answer = example["annotations"]["long_answer"]
  long_answer["start_token"][0], long_answer["end_token"][0] = text, text + 1
  long_answer["start_byte"][0], long_answer["end_byte"][0] = (
      tokens[text]["start_byte"], tokens[text]["end_byte"])
  for key in ("start_token", "end_token", "start_byte", "end_byte", "text"):
    example["annotations"]["short_answers"][key] = [[]]
  example["annotations"]["yes_no_answer"][0] = -1
  with pytest.raises(tfds_records.TfdsRecordError) as info:
    tfds_records.tfds_example_to_nq_record(example)
  assert info.value.reason == "long answer is not a rebuilt candidate"
  assert info.value.field == "annotations[0]/long_answer"


@pytest.fixture(scope="module")
def nq_data_dir(tmp_path_factory):
  """A prepared natural_questions/default (validation: `_nq_records()`), its examples made by
  the installed TFDS builder's own parser of official JSON lines."""
  tfds.disable_progress_bar()
  data_dir = str(tmp_path_factory.mktemp("tfds_nq"))
  real = tfds.builder_cls("natural_questions")
  config = next(c for c in real.BUILDER_CONFIGS if c.name == "default")
  with tfds.core.registered.skip_registration():

    class NaturalQuestions(tfds.core.GeneratorBasedBuilder):
      VERSION = real.VERSION
      BUILDER_CONFIGS = [tfds.core.BuilderConfig(name="default")]

      def _info(self):
        return tfds.core.DatasetInfo(builder=self, features=config.features)

      def _split_generators(self, dl_manager):
        del dl_manager
        return {"validation": self._generate_examples()}

      def _generate_examples(self):
        for record in _nq_records():
          yield real._parse_example_default(json.dumps(record))  # pylint: disable=protected-access

  _prepare(NaturalQuestions, data_dir, "default")
  return data_dir


def test_nq_command_writes_a_file_the_nq_reader_accepts(nq_data_dir, tmp_path):
  output = str(tmp_path / "nq-dev.jsonl.gz")
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=REPO)
  result = subprocess.run(
      [sys.executable, "-m", "tasks.nq.tfds_records", "--tfds=natural_questions",
       f"--tfds_data_dir={nq_data_dir}", "--split=validation", f"--output={output}",
       "--progress_every=3"],
      cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  assert "tfds:natural_questions/default:validation: 3 records read, 3 written" in result.stdout
  assert "12 records read, 12 written" in result.stdout and "0 skipped" in result.stdout
  examples, report = nq_data.read_examples(output, with_labels=True)
  assert report.examples == 12 and not report.skipped and not report.repaired
  originals = {r["example_id"]: r for r in _nq_records()}
  with gzip.open(output, "rt", encoding="utf-8") as f:
    written = [json.loads(line) for line in f]
  assert sorted(r["example_id"] for r in written) == sorted(originals)
  for record in written:
    assert record == originals[record["example_id"]]
  assert {e.example_id for e in examples} == set(originals)


def _stream_examples(dataset):
  return [{k: v[i] for k, v in batch.items()} for batch in tfds.as_numpy(dataset)
          for i in range(len(batch["token_ids"]))]


def test_streaming_pretraining_reads_each_workers_part_of_a_tfds_split(text_data_dir):
  from etc_realformer.data import pretraining_data  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import pretraining_examples as pe  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import streaming  # pylint: disable=g-import-not-at-top
  config = pe.PretrainingDataConfig(long_seq_len=32, global_seq_len=8, max_predictions_per_seq=6,
                                    max_cpc_per_seq=2, cpc_sentence_len=8)
  source = lambda n, k: tfds_source.tfds_text_dataset(WIKI, text_data_dir, n, k)  # pylint: disable=unnecessary-lambda-assignment
  for worker in range(2):
    streamed = _stream_examples(streaming.make_streaming_dataset(
        None, pretraining_data.EMBEDDED_VOCAB, config, 2, num_slices=2, slice_index=worker,
        repeat=False, documents_dataset=source))
    # The same rows as streaming this worker's texts given in memory: the TFDS part is the
    # worker's share (no second split by the pipeline), read in stored order. (The masks differ:
    # the worker index is part of their seed.)
    texts = _texts(tfds_source.tfds_text_dataset(WIKI, text_data_dir, 2, worker))
    in_memory = _stream_examples(streaming.make_streaming_dataset(
        None, pretraining_data.EMBEDDED_VOCAB, config, 1, repeat=False,
        documents_dataset=tf.data.Dataset.from_tensor_slices(texts)))
    assert 0 < len(streamed) == len(in_memory)  # a global batch of 2: one example per worker
    mask_id = 103  # [MASK] in the embedded vocabulary's BERT layout
    for a, b in zip(streamed, in_memory):
      for name in ("sentence_ids", "long_breakpoints", "global_breakpoints"):
        np.testing.assert_array_equal(a[name], b[name])
      kept = (a["token_ids"] != mask_id) & (b["token_ids"] != mask_id)
      for example in (a, b):
        kept[example["masked_lm_positions"][example["masked_lm_weights"] > 0]] = False
      assert kept.sum() > 10
      np.testing.assert_array_equal(a["token_ids"][kept], b["token_ids"][kept])


def test_pretraining_run_names_an_unprepared_tfds_corpus(tmp_path):
  from etc_realformer.training import pretraining_run  # pylint: disable=g-import-not-at-top
  run_config = {"model": {"vocab_size": 2048, "hidden_size": 16, "num_hidden_layers": 1,
                          "num_attention_heads": 2, "intermediate_size": 32},
                "train": {"corpus": WIKI, "tfds_data_dir": str(tmp_path / "empty"),
                          "num_train_steps": 2, "warmup_steps": 0},
                "data": {"long_seq_len": 32, "global_seq_len": 8}}
  with pytest.raises(FileNotFoundError, match="empty"):
    pretraining_run.run_pretraining(run_config, str(tmp_path / "out"), verbose=0)


def test_known_text_fields_are_string_features_of_the_real_catalog_builders():
  # tfds.testing.mock_data builds the installed builders from their code (no data, no network)
  # and fakes their records: the known text fields must be scalar string features there.
  with tfds.testing.mock_data(num_examples=3, policy=tfds.testing.MockPolicy.USE_CODE):
    for name, config in (("wikipedia", "20230601.en"), ("c4", "en")):
      builder = tfds.builder(name, config=config)
      strings = tfds_source._string_features(builder.info.features)  # pylint: disable=protected-access
      assert tfds_source.KNOWN_TEXT_FIELDS[name] in strings, (name, strings)
      texts = [ex[tfds_source.KNOWN_TEXT_FIELDS[name]] for ex in tfds.as_numpy(
          builder.as_dataset(split="train"))]
      assert len(texts) == 3 and all(isinstance(t, bytes) for t in texts)
