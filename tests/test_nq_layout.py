"""NQ's one layout, Google's: the converter writes what Google's preproc_nq_lib writes for the
fixture records (tests/fixtures/official_features/nq), every feature and every value; the
windows over long pages; the model reading Google's features, and training on records laid out
as Google's pipeline writes them."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

import nq_fixtures as nf
from etc_realformer.data import tfrecords
from etc_realformer.data.span_tokenization import OffsetTokenizer
from etc_realformer.data.tokenization import load_tokenizer
from tasks.common.read_report import ReadReport
from tasks.nq import data
from tasks.nq import features as official
from tasks.nq.task import TASK
import official_fixtures

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "official_features", "nq")


def _settings():
  with open(os.path.join(FIXTURE, "settings.json")) as f:
    return json.load(f)


def _config(**overrides):
  sets = official_fixtures.convert_sets("nq")
  flags = _settings()["flag_defaults_used"]
  sets.update(max_question_pieces=flags["question_len"])
  sets.update(overrides)
  return official.NqFeatureConfig(**sets)


def _tokenizer():
  return OffsetTokenizer(load_tokenizer(vocab_file=os.path.join(FIXTURE, "vocab.txt")))


def _converted(is_train=True):
  examples, report = data.read_examples(os.path.join(FIXTURE, "input.jsonl.gz"), with_labels=True)
  assert report.examples == _settings()["num_examples"], report.summary()
  tokenizer, config = _tokenizer(), _config()
  ids = official.official_ids(tokenizer.tokenizer)
  return [(e.example_id, w, f) for e in examples
          for w, f in official.windows(official.document(e, tokenizer, ids), config, ids,
                                       is_train)]


def test_special_ids_are_googles():
  settings = _settings()["special_ids"]
  ids = official.official_ids(_tokenizer().tokenizer)
  assert not ids.html_fallback
  assert (ids.html_open, ids.html_close, ids.pad, ids.cls, ids.sep) == (
      settings["sos_id (html open tag, [unused102])"],
      settings["eos_id (html close tag, [unused103])"],
      settings["pad_id"], settings["cls_id"], settings["sep_id"])
  assert official.GLOBAL_QUESTION_ID == settings["global_question_id"]
  assert official.GLOBAL_SENTENCE_ID == settings["global_sentence_id"]


def test_fixture_features_equal_googles():
  with open(os.path.join(FIXTURE, "features.json")) as f:
    expected = json.load(f)
  kinds = _settings()["feature_kinds"]
  got = _converted()
  assert [(e["example_id"], e["window"]) for e in expected] == [(i, w) for i, w, _ in got]
  for entry, (_, _, features) in zip(expected, got):
    want = {k: v for k, v in entry.items() if k not in ("example_id", "window")}
    assert set(features) == set(want) == set(kinds) == set(official.FEATURE_NAMES)
    for name, values in want.items():
      assert kinds[name] == "int64_list"
      assert features[name].dtype == np.int64, name
      assert features[name].tolist() == values, (entry["example_id"], name)


def test_feature_lengths_parse_the_written_records(tmp_path):
  config = _config()
  path = str(tmp_path / "nq.tfrecord")
  with tf.io.TFRecordWriter(path) as writer:
    for _, _, features in _converted():
      writer.write(tfrecords.to_tf_example(features).SerializeToString())
  parse = TASK.parse_fn(config)
  batch = parse(tf.constant(list(tf.data.TFRecordDataset(path).as_numpy_iterator())))
  assert set(batch) == set(official.feature_lengths(config))
  assert batch["token_ids"].shape == (3, 4096) and batch["global_token_ids"].shape == (3, 230)
  assert batch["answer_type"].numpy().tolist() == [4, 1, 0]


# ----------------------------------------------------------------- windows over a long page

def _long_example():
  words = [nf.WORDS[i % len(nf.WORDS)] for i in range(60)]
  tokens = ["<P>"] + words[:30] + ["</P>", "<P>"] + words[30:] + ["</P>"]
  answer = nf.annotation(tokens, candidate_index=1, short=[(40, 42)])
  record = nf.record(7, "what is the capital", tokens, [answer])
  return data.parse_record(record, with_labels=True, repairs=[])


def test_windows_stride_over_the_page_and_labels_follow_the_answer():
  tokenizer = OffsetTokenizer(load_tokenizer(vocab_file=os.path.join(FIXTURE, "vocab.txt")))
  config = _config(long_seq_len=40, global_seq_len=16, doc_stride=12, max_question_pieces=8)
  example = _long_example()
  ids = official.official_ids(tokenizer.tokenizer)
  doc = official.document(example, tokenizer, ids)
  out = dict(official.windows(doc, config, ids, is_train=False))
  q = len(doc.question_ids)
  doc_len = 40 - q - 3
  starts = list(official.window_starts(len(doc.token_ids), doc_len, 12))
  assert len(out) == len(starts) >= 3 and starts[:2] == [0, 12]
  for w, start in enumerate(starts):
    f = out[w]
    pieces = doc.token_ids[start:start + doc_len]
    assert f["token_ids"][q + 2:q + 2 + len(pieces)].tolist() == pieces.tolist()
    inside = (doc.token_pos[start:start + doc_len] == 40).any()
    if inside:
      assert f["answer_type"][0] == official.SHORT
      assert f["token_pos"][f["sa_start"][0]] == 40 and f["token_pos"][f["sa_end"][0]] == 41
      assert f["sentence_ids"][f["sa_start"][0]] == f["la_global"][0] or f["la_start"][0] == 0
    elif not (doc.token_pos[start:start + doc_len] == 41).any():
      assert f["answer_type"][0] == official.NULL and f["sa_start"][0] == f["sa_end"][0] == 0
  # Every document piece is in some window.
  covered = set()
  for start in starts:
    covered.update(range(start, min(start + doc_len, len(doc.token_ids))))
  assert covered == set(range(len(doc.token_ids)))


def test_training_drops_answerless_windows_at_the_keep_rate():
  tokenizer = _tokenizer()
  example = _long_example()
  ids = official.official_ids(tokenizer.tokenizer)
  doc = official.document(example, tokenizer, ids)
  small = dict(long_seq_len=40, global_seq_len=16, doc_stride=12, max_question_pieces=8)
  every = list(official.windows(doc, _config(**small), ids, is_train=True))
  none = list(official.windows(doc, _config(null_window_keep_rate=0.0, **small), ids,
                               is_train=True))
  assert len(none) < len(every)
  assert all(official.is_answer_window(f) for _, f in none)


def test_vocabulary_without_html_pieces_falls_back():
  tokenizer = OffsetTokenizer(load_tokenizer(vocab_file=os.path.join(
      os.path.dirname(__file__), "..", "pretrained", "tiny_english", "vocab.txt")))
  ids = official.official_ids(tokenizer.tokenizer)
  assert ids.html_fallback
  assert (ids.html_open, ids.html_close) == (official.html_marker_id("<Other>"),
                                             official.html_marker_id("</Other>"))


def test_string_example_ids_are_refused():
  example = _long_example()
  example.example_id = "abc"
  tokenizer = _tokenizer()
  with pytest.raises(ValueError, match="example_id"):
    official.document(example, tokenizer, official.official_ids(tokenizer.tokenizer), "f: line 1")


# ----------------------------------------------------------------- the model on Google's records

TINY = dict(vocab_size=1940, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
            intermediate_size=32, local_radius=4, relative_pos_max_distance=3,
            relative_vocab_size=10, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
            use_hard_g2l_mask=True)


def _google_records(path):
  """Writes features.json as Google's pipeline writes it; -> its entries."""
  official_fixtures.write_google_records("nq", path)
  with open(os.path.join(FIXTURE, "features.json")) as f:
    return json.load(f)


def test_model_loss_is_googles_formula():
  from tasks.nq.model import NqModel, SPANS
  config = _config()
  model = TASK.build_model(TASK.parse_sections({"model": TINY, "features": {}, "train": {}})[0],
                           config)
  assert isinstance(model, NqModel)
  features = {name: tf.constant(np.stack([f[name] for _, _, f in _converted()]).astype(np.int32))
              for name in official.feature_lengths(config)}
  for name in official.LABEL_FEATURES:
    features[name] = features[name][:, 0]
  outputs = model(features, training=False)
  assert outputs["long_start_logits"].shape == (3, 4096)
  assert outputs["answer_type_logits"].shape == (3, 5)

  def ce(labels, logits):
    logits = np.asarray(logits, np.float64)
    logp = logits - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1,
                                                                             keepdims=True)) \
        - logits.max(-1, keepdims=True)
    return -np.mean(logp[np.arange(len(labels)), np.asarray(labels)])
  want = (sum(ce(features[label].numpy(), outputs[name].numpy()) for label, name in SPANS)
          + ce(features["answer_type"].numpy(), outputs["answer_type_logits"].numpy())) / 5
  got = model.compute_losses(features, outputs)["loss"].numpy()
  np.testing.assert_allclose(got, want, rtol=1e-5)


def test_sentencepiece_uses_googles_albert_pieces(tmp_path):
  """With an ETC-large-like SentencePiece model: html <unused_35>/<unused_36>, [CLS]
  <unused_63>, [SEP] <unused_2>, padding <pad> (preproc_nq_lib.py, tokenizer_type ALBERT)."""
  from etc_realformer.data import tokenization
  import test_official_tokenizers as tt
  tokenizer = OffsetTokenizer(tokenization.tokenizer_for_vocab(tt._write_model(tmp_path)))
  ids = official.official_ids(tokenizer.tokenizer)
  assert (ids.html_open, ids.html_close, ids.pad, ids.cls, ids.sep) == (
      tt.pid("<unused_35>"), tt.pid("<unused_36>"), tt.pid("<pad>"), tt.pid("<unused_63>"),
      tt.pid("<unused_2>"))
  assert not ids.html_fallback
  tokens = ["<P>", "Ann", "was", "born", "</P>"]
  example = data.parse_record(nf.record(5, "Ann was", tokens), with_labels=False, repairs=[])
  config = _config(long_seq_len=32, global_seq_len=16, doc_stride=8, max_question_pieces=8)
  (f,) = official.convert_example(example, tokenizer, config, is_train=False)
  q = len(tokenizer.tokenize("Ann was").ids)
  assert f["token_ids"][0] == ids.cls and f["token_ids"][q + 1] == ids.sep
  assert f["token_ids"][q + 2] == ids.html_open
  assert f["global_token_ids"][:q + 2].tolist() == [ids.cls] + [35] * (q + 1)


def test_task_converts_training_windows():
  import collections
  config = _config(long_seq_len=40, global_seq_len=16, doc_stride=12, max_question_pieces=8)
  counts = collections.Counter()
  got = list(TASK.labelled_features([_long_example()], _tokenizer(), config, ReadReport(), counts,
                                    lambda message: None))
  assert counts["examples"] == 1 and counts["windows"] == len(got) >= 3
  assert counts["answer windows"] + counts["null windows kept"] == len(got)
  assert all(set(f) == set(official.FEATURE_NAMES) for f in got)
  assert set(TASK.export_inputs(config)) == set(official.MODEL_FEATURES)


def test_finetunes_from_train_records_written_by_googles_pipeline(tmp_path):
  records = str(tmp_path / "nq-train.tfrecords-00000-of-00001")
  _google_records(records)
  run_config = {
      "model": TINY,
      "features": {"long_seq_len": 4096, "global_seq_len": 230,
                   "doc_stride": 2048, "max_question_pieces": 32},
      "train": {"train_records": records, "vocab_file": os.path.join(FIXTURE, "vocab.txt"),
                "init_checkpoint": "", "batch_size": 2, "num_train_steps": 2, "warmup_steps": 0,
                "learning_rate": 1e-3, "checkpoint_every": 2, "log_every": 1},
  }
  out = str(tmp_path / "run")
  metrics = TASK.run_finetuning(run_config, out, verbose=0)
  assert metrics["train_examples"] == 3
  assert os.path.exists(os.path.join(out, "export", "saved_model", "saved_model.pb"))
  with open(os.path.join(out, "export", "task_config.json")) as f:
    assert json.load(f)["feature_config"]["layout"] == "official"
  # The export predicts the fixture records through Google's decoding and the scorer reads it.
  prediction = TASK.predict_file(os.path.join(out, "export"),
                                 os.path.join(FIXTURE, "input.jsonl.gz"),
                                 str(tmp_path / "predictions.json"), batch_size=2)
  entries = prediction["predictions"]
  assert [e["example_id"] for e in entries] == [e["example_id"] for e in _google_records(
      str(tmp_path / "again.tfrecord"))]
  assert all(e["long_answer"]["start_byte"] == -1 for e in entries)
  scores = TASK.evaluate(os.path.join(FIXTURE, "input.jsonl.gz"), prediction)
  assert 0.0 <= scores["long-best-threshold-f1"] <= 1.0


def test_html_tag_markers_option_names_each_tag():
  tokenizer = _tokenizer()
  words = list(nf.WORDS)
  tokens = (["<P>"] + words[:4] + ["</P>", "<Table>", "<Tr>", "<Td>"] + words[4:6]
            + ["</Td>", "</Tr>", "</Table>"])
  example = data.parse_record(nf.record(8, "what", tokens), with_labels=True, repairs=[])
  ids = official.official_ids(tokenizer.tokenizer)
  google = official.document(example, tokenizer, ids)
  tagged = official.document(example, tokenizer, ids, html_tag_markers=True)
  html = np.asarray(example.is_html)[google.token_pos]                          # [P]
  assert html.any() and (~html).any()
  # Text pieces, owners and positions do not change; only the html pieces' ids.
  assert tagged.token_ids[~html].tolist() == google.token_ids[~html].tolist()
  assert tagged.token_pos.tolist() == google.token_pos.tolist()
  assert set(google.token_ids[html].tolist()) <= {ids.html_open, ids.html_close}
  assert tagged.token_ids[html].tolist() == [
      official.html_marker_id(example.tokens[p]) for p in google.token_pos[html]]
  assert len(set(tagged.token_ids[html].tolist())) > 2


def test_the_package_layout_is_refused_and_the_etc_configs_keep_googles_behaviour():
  with pytest.raises(ValueError, match="'package' was removed.*delete the key"):
    official.NqFeatureConfig(layout="package")
  with pytest.raises(ValueError, match="null_window_keep_rate: must be in"):
    official.NqFeatureConfig(null_window_keep_rate=1.5)
  with pytest.raises(ValueError, match="unanswerable_keep_rate: must be at most 1"):
    official.NqFeatureConfig(unanswerable_keep_rate=2.0)
  options = ("html_tag_markers", "snap_long_answers_to_candidates")
  root = os.path.join(os.path.dirname(__file__), "..", "configs", "nq")
  for name in ("etc_base", "etc_large"):   # every option explicitly at Google's behaviour
    features = TASK.load_run_config(os.path.join(root, f"{name}.yaml"))["features"]
    assert {option: features[option] for option in options} == dict.fromkeys(options, False)
  tiny = official.NqFeatureConfig(**TASK.load_run_config(os.path.join(root, "tiny.yaml"))[
      "features"])
  assert tiny.html_tag_markers and tiny.snap_long_answers_to_candidates
