"""OpenKP's one layout: Google's features for the fixture pages, the converter's rules on
hand-made pages, the model reading Google's features (also from Google-named TFRecords), and
the task hooks."""

import collections
import json
import os

import numpy as np
import pytest
import tensorflow as tf

import openkp_fixtures as of
from etc_realformer.data import tfrecords
from etc_realformer.data import tokenization
from tasks.common.read_report import ReadReport
from tasks.openkp import features as F
from tasks.openkp.data import read_pages
from tasks.openkp.inference import Predictor
from tasks.openkp.model import OpenKpModel, example_breakpoints, scale_dense
from tasks.openkp.task import TASK
import official_fixtures

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "official_features", "openkp")
VOCAB = os.path.join(ROOT, "pretrained", "tiny_english", "vocab.txt")
ENCODER = dict(vocab_size=2000, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
               intermediate_size=32, local_radius=3, relative_pos_max_distance=2,
               relative_vocab_size=8, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


def _read_json(name):
  with open(os.path.join(FIXTURE, name), encoding="utf-8") as f:
    return json.load(f)


def _fixture_lines():
  """The input lines as Beam's ReadFromText gives them (split on newlines, no final empty)."""
  with open(os.path.join(FIXTURE, "input.jsonl"), encoding="utf-8", newline="") as f:
    text = f.read()
  lines = text.replace("\r\n", "\n").split("\n")
  return lines[:-1] if lines and lines[-1] == "" else lines


def _settings():
  flags = _read_json("settings.json")["featurization_config"]
  return F.OfficialSettings(flags["long_max_length"], flags["global_max_length"],
                                   flags["url_max_code_points"], flags["kp_max_length"])


def _words():
  return F.WordTokenizer(tokenization.WordPieceTokenizer(VOCAB, lower_case=True))


# ------------------------------------------------------------------ the fixture, feature by feature


def test_fixture_features_equal_googles():
  expected, settings = _read_json("features.json"), _read_json("settings.json")
  kinds = settings["feature_kinds"]
  assert settings["featurization_config"]["fixed_block_len"] is None   # VDOM mode
  assert F.FONT_ID_VOCAB_SIZE == settings["font_id_vocab_size"]
  lines, words, config = _fixture_lines(), _words(), _settings()
  assert len(expected) == settings["n"]
  equal = 0
  for entry in expected:
    assert entry["num_tf_examples"] == 1
    page, got = F.convert_record(json.loads(lines[entry["line_index"]]), words, config)
    want = entry["features"]
    assert page.url == entry["url"]
    assert list(got) == list(want) == list(kinds)                     # names, in Google's order
    assert set(got) == set(F.FEATURE_AXES)
    for name, values in want.items():
      value = got[name]
      if kinds[name] == "float_list":
        assert value.dtype == np.float32, name
        # float32 values widened to double in the JSON: exact at float32
        assert value.astype(np.float64).tolist() == values, (entry["url"], name)
      else:
        assert value.dtype == np.int64, name
        assert value.tolist() == values, (entry["url"], name)
      assert len(value) == config.lengths()[name], name
      equal += 1
    assert F.url_from_code_points(got["url_code_points"]) == entry["url"]
  assert equal == len(expected) * len(kinds) == 5 * 29


def test_fixture_text_examples_tile_the_vdom_words():
  """Decoding maps word indices to text.split(' '): on the fixture pages those are the VDOM
  elements' words, as Google's text_examples file holds them."""
  expected, lines = _read_json("features.json"), _fixture_lines()
  words, config = _words(), _settings()
  for entry in expected:
    record = json.loads(lines[entry["line_index"]])
    page, got = F.convert_record(record, words, config)
    text_example = entry["text_example"][0]
    assert text_example["text"] == page.text
    vdom_words = [w for e in page.elements for w in e.text.split(" ")]
    assert vdom_words == page.text.split(" ")
    keys = sorted({" ".join(p).lower() for p in page.key_phrases})
    assert [k[0] for k in text_example["KeyPhrases"]] == keys
    for start, length in zip(got["label_start_idx"], got["label_phrase_len"]):
      if start >= 0:
        assert " ".join(vdom_words[start:start + length]).lower() in keys


# ------------------------------------------------------------------ the converter's rules


def _page(**changes):
  return of.raw_page(**changes)


def _convert(record, words=None, with_labels=True, **settings):
  settings = F.OfficialSettings(**{"long_max_length": 32, "global_max_length": 8,
                                          "url_max_code_points": 40, **settings})
  return F.convert_record(record, words or _words(), settings, with_labels)[1]


def test_hand_made_page(tmp_path):
  tok = of.tokenizer(tmp_path)
  f = _convert(_page(), F.WordTokenizer(tok))
  # Words: Home About | Solar Kettle | the best Solar Kettles for camping Buy | a Solar Kettle now
  # "a" is [UNK]-free: every word has a piece; Kettles = kettle ##s.
  assert f["long_input_mask"].sum() == 16 and f["long_word_input_mask"].sum() == 15
  assert f["long_word_idx"][:16].tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 7, 8, 9, 10, 11, 12, 13, 14]
  assert f["long_vdom_idx"][:16].tolist() == [0, 0, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3]
  assert f["long_token_ids"][7:9].tolist() == [of.piece_id("kettle"), of.piece_id("##s")]
  # Sorted phrases " camping ", " solar kettle ", each at its first occurrence inside one element.
  assert f["label_start_idx"].tolist() == [2, 9, -1]
  assert f["label_phrase_len"].tolist() == [2, 1, -1]
  assert f["global_input_mask"].tolist() == [1, 1, 1, 1, 0, 0, 0, 0]
  assert f["global_token_ids"].tolist() == [1] * 8                  # padding too
  assert f["global_heading_indicator"][:4].tolist() == [0, 1, 0, 0]
  assert f["global_font_ids"][:5].tolist() == [7, 19, 7, 7, 0]     # 14 -> 7, 32 -> 19
  assert f["global_x_coords"][:5].tolist() == [0.0, 0.0, 0.0, -5.0, 0.0]
  assert f["global_parent_widths"][:4].tolist() == [800.0] * 4
  assert len(f["url_code_points"]) == 40 and f["url_code_points"][-1] == -1


def test_first_occurrences_stay_inside_elements(tmp_path):
  f = _convert(_page(), F.WordTokenizer(of.tokenizer(tmp_path)))
  first = f["long_word_first_occurrence"].reshape(5, 32)            # [kp_max_length, L]
  # 1-grams: "solar" (word 2) again at 6 and 12, "kettle" (3) again at 13.
  assert first[0, :15].tolist() == [0, 1, 2, 3, 4, 5, 2, 7, 8, 9, 10, 11, 2, 3, 14]
  # 2-grams: "solar kettle" at 2 and 12; a 2-gram past its element keeps its own position.
  assert first[1, :15].tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 2, 13, 14]
  assert first[0, 15:].tolist() == list(range(15, 32))             # padding: own positions


def test_round_half_even_font_and_buckets():
  assert [F.font_id(s) for s in (-3, 0, 1, 8, 9, 24, 25, 29, 30, 49, 50, 300)] == [
      0, 0, 1, 1, 2, 17, 18, 18, 19, 22, 23, 23]
  vdom = json.loads(_page()["VDOM"])
  vdom[0]["feature"][8] = 12.5                    # round(12.5) = 12 -> id 5; 13.5 -> 14 -> id 7
  vdom[1]["feature"][8] = 13.5
  f = _convert(_page(VDOM=json.dumps(vdom)))
  assert f["global_font_ids"][:2].tolist() == [5, 7]


@pytest.mark.parametrize("change, field", [
    (lambda v: v[0]["feature"].__setitem__(0, 158), "VDOM[0].feature[0:10] (x_coord)"),
    (lambda v: v[2]["feature"].__setitem__(4, 0.5), "VDOM[2].feature[0:10] (is_block)"),
    (lambda v: v[3]["feature"].pop(), "VDOM[3].feature[10:20]"),
    (lambda v: v[1].__setitem__("Id", "7"), "VDOM[1].Id"),
    (lambda v: v[1].pop("start_idx"), "VDOM[1].start_idx"),
])
def test_what_google_rejects_in_the_vdom(change, field):
  vdom = json.loads(_page()["VDOM"])
  change(vdom)
  with pytest.raises(F.OfficialConversionError) as e:
    _convert(_page(VDOM=json.dumps(vdom)), global_max_length=1)   # also past the truncation
  assert e.value.field == field and field in str(e.value)


def test_labels_google_rejects_and_prediction_conversion(tmp_path):
  words = F.WordTokenizer(of.tokenizer(tmp_path))

  def convert(record, **kw):
    return _convert(record, words, **kw)

  with pytest.raises(F.OfficialConversionError, match="none of \\[.kettle the.\\] occurs"):
    convert(_page(KeyPhrases=[["kettle", "the"]]))               # crosses two elements
  with pytest.raises(F.OfficialConversionError, match="the list is empty"):
    convert(_page(KeyPhrases=[]))
  with pytest.raises(F.OfficialConversionError, match="4 key phrases found"):
    convert(_page(KeyPhrases=[["home"], ["about"], ["camping"], ["now"]]))
  f = convert(_page(KeyPhrases=[["kettle", "the"]]), with_labels=False)
  assert f["label_start_idx"].tolist() == [-1, -1, -1]
  assert f["label_phrase_len"].tolist() == [-1, -1, -1]
  f = convert(_page(KeyPhrases=[["SOLAR KETTLE"], ["x"], ["NOW"]]))  # one string per phrase
  assert f["label_start_idx"].tolist() == [2, 14, -1]


def test_truncation_drops_whole_elements(tmp_path):
  words = F.WordTokenizer(of.tokenizer(tmp_path))
  f = _convert(_page(), words, global_max_length=3)
  assert f["global_input_mask"].sum() == 3 and f["long_word_input_mask"].sum() == 11
  f = _convert(_page(), words, long_max_length=15)                # 16 pieces: the last element goes
  assert f["long_input_mask"].sum() == 12 and f["global_input_mask"].sum() == 3
  with pytest.raises(F.OfficialConversionError, match="url_max_code_points"):
    _convert(_page(), words, url_max_code_points=10)


def test_sentencepiece_pieces_per_word(tmp_path):
  import test_official_tokenizers as tt   # its tiny ETC-like SentencePiece model
  tok = tokenization.tokenizer_for_vocab(tt._write_model(tmp_path))
  record = {"url": "u", "text": "The end, 5,00 a", "VDOM": json.dumps([
      {"Id": 0, "text": "The end,", "feature": of.visual(), "start_idx": 0, "end_idx": 2},
      {"Id": 1, "text": "5,00 a", "feature": of.visual(), "start_idx": 2, "end_idx": 4}])}
  f = _convert(record, F.WordTokenizer(tok))
  per_word = [tok.tokenize([w])[0] for w in ("The", "end,", "5,00", "a")]
  assert f["long_token_ids"][:f["long_input_mask"].sum()].tolist() == sum(per_word, [])
  assert f["long_word_idx"][:f["long_input_mask"].sum()].tolist() == sum(
      ([i] * len(p) for i, p in enumerate(per_word)), [])
  assert f["global_token_ids"].tolist() == [1] * 8                  # 1 with SentencePiece too


# ------------------------------------------------------------------ the model


def _google_records(tmp_path):
  path = str(tmp_path / "google.tfrecord")
  official_fixtures.write_google_records("openkp", path)
  return path


def test_model_reads_records_written_with_googles_names(tmp_path):
  # Training from them: tests/test_official_records_training.py.
  config = F.OpenKpFeatureConfig(long_seq_len=4096, global_seq_len=512)
  dataset = tfrecords.make_dataset([_google_records(tmp_path)], None, 2,
                                   parse_fn=TASK.parse_fn(config))
  batch = next(iter(dataset))
  assert batch["global_x_coords"].shape == (2, 512) and batch["global_x_coords"].dtype == tf.float32
  assert batch["long_token_ids"].shape == (2, 4096)
  model = TASK.build_model(dict(ENCODER), config)
  assert isinstance(model, OpenKpModel)
  logits = model(batch)["ngram_logits"].numpy()                     # [2, 5, 4096]
  words = batch["long_word_input_mask"].numpy().sum(-1)
  for row, n_words in enumerate(words):
    for n in range(1, 6):
      assert (logits[row, n - 1, n_words - n + 1:] == -10000.0).all()
      assert (logits[row, n - 1, :n_words - n + 1] > -1000.0).all()


def test_model_pieces_by_hand():
  assert example_breakpoints(tf.constant([[1, 1, 0], [1, 1, 1], [0, 0, 0]])).numpy().tolist() == [
      [0, 1, 0], [0, 0, 1], [0, 0, 0]]
  assert scale_dense(tf.constant([-100.0, -50.0, 725.0, 1500.0, 9999.0]), -50.0,
                     1500.0).numpy().tolist() == [-1.0, -1.0, 0.0, 1.0, 1.0]
  model = OpenKpModel(dict(ENCODER), additive_smoothing_mass=1e-4)
  labels = model.ngram_labels({"label_start_idx": tf.constant([[1, 3, -1]]),
                               "label_phrase_len": tf.constant([[2, 7, -1]])}, 5, 4).numpy()
  # Only (n=2, start 1) is a cell: a 7-word phrase and the -1 slot add nothing.
  mass = 1e-4 / 20
  expected = np.full([20], mass)
  expected[1 * 4 + 1] += 1.0 / (1.0 + 1e-6)
  np.testing.assert_allclose(labels[0], expected / expected.sum(), rtol=1e-5)


# ------------------------------------------------------------------ the task's hooks


def test_task_hooks_read_googles_features(tmp_path):
  config = F.OpenKpFeatureConfig(long_seq_len=32, global_seq_len=8)
  lengths = TASK.feature_lengths(config)
  assert set(lengths) == set(F.MODEL_INT_FEATURES + F.LABEL_FEATURES)
  inputs = TASK.export_inputs(config)
  assert set(inputs) == set(F.MODEL_FEATURES)
  assert inputs["global_widths"].shape.as_list() == [None, 8]
  with pytest.raises(ValueError, match="max_key_phrases"):
    F.OpenKpFeatureConfig(max_key_phrases=5)
  with pytest.raises(ValueError, match="layout"):
    F.OpenKpFeatureConfig(layout="google")
  with pytest.raises(ValueError, match="'package' was removed"):
    F.OpenKpFeatureConfig(layout="package")


def test_training_features_skip_what_google_rejects(tmp_path):
  config = F.OpenKpFeatureConfig(long_seq_len=32, global_seq_len=8)
  path = of.write_lines(tmp_path, [_page(url="a"), _page(url="b", KeyPhrases=[["nothing"]]),
                                   _page(url="c")])
  report = ReadReport(path=path)
  pages = list(TASK.training_examples(path, report))
  counts = collections.Counter()
  feats = list(TASK.labelled_features(pages, of.tokenizer(tmp_path), config, report, counts,
                                      print))
  assert len(feats) == 2 and report.examples == 2
  assert "no key phrase in the input" in report.summary() and "url b" in report.summary()
  assert counts["phrases labelled"] == 4
  assert list(feats[0]) == list(F.FEATURE_AXES)


def test_predictor_runs_googles_decoding(tmp_path):
  config = F.OpenKpFeatureConfig(long_seq_len=32, global_seq_len=8)
  tok = of.tokenizer(tmp_path)
  pages, _ = read_pages(of.write_lines(tmp_path, [
      _page(url="a"), _page(url="b", KeyPhrases=[["nothing"]]),
      _page(url="c", VDOM=json.dumps([{"Id": 1}]))]), with_labels=False)
  seen = []

  def run_batch(batch):
    assert set(batch) == set(F.MODEL_FEATURES)
    seen.append(batch["long_token_ids"].shape)
    logits = np.full([len(batch["long_token_ids"]), 5, 32], -10000.0, np.float32)
    logits[:, 1, 12] = 5.0            # "solar kettle" (words 12, 13)
    logits[:, 0, 5] = 4.0             # "best"
    logits[:, 1, 2] = 3.0             # "solar kettle" again: a duplicate
    return {"ngram_logits": logits}

  predictor = Predictor(run_batch, config, tok)
  lines = predictor.predict(pages, batch_size=4, log=lambda _: None)
  assert [line["url"] for line in lines] == ["a", "b", "c"]
  # Then the -10000 cells in flat order: 1-grams "home", "about", "solar".
  assert lines[0]["KeyPhrases"] == [["solar kettle"], ["best"], ["home"], ["about"], ["solar"]]
  assert lines[1] == lines[0] | {"url": "b"}                       # labels not needed to predict
  assert lines[2] == {"url": "c", "KeyPhrases": []}                # Google rejects its VDOM
  assert seen == [(2, 32)]
