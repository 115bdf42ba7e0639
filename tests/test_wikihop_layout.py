"""WikiHop's layout (Google's features): the converter writes what Google's data_utils.py writes for the
fixture items (tests/fixtures/official_features/wikihop), every feature and every value; its
quirks on hand-made items; the model reading Google's features and
training on records laid out as Google's pipeline writes them."""

import collections
import json
import os

import numpy as np
import pytest
import tensorflow as tf

import wikihop_fixtures as wf
from etc_realformer.config import EtcConfig
from etc_realformer.data import tfrecords
from etc_realformer.data.span_tokenization import OffsetTokenizer
from etc_realformer.data.tokenization import load_tokenizer
from tasks.common.read_report import ReadReport, RecordProblem
from tasks.wikihop import data, model as model_lib, records
from tasks.wikihop import features as F
from tasks.wikihop.features import WikiHopFeatureConfig
from tasks.wikihop.task import TASK
import official_fixtures

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "official_features", "wikihop")
VOCAB = os.path.join(ROOT, "pretrained", "tiny_english", "vocab.txt")


def _load(name):
  with open(os.path.join(FIXTURE, name), encoding="utf-8") as f:
    return json.load(f)


def _config(**overrides):
  sets = official_fixtures.convert_sets("wikihop")
  flags = _load("settings.json")["flag_values"]
  sets.update(max_num_sentences=flags["max_num_sentences"])
  sets.update(overrides)
  return WikiHopFeatureConfig(**sets)


def _tokenizer():
  return OffsetTokenizer(load_tokenizer(vocab_file=VOCAB))


def _fixture_examples():
  """The fixture's first N items, read with the task's reader, in file order."""
  settings = _load("settings.json")
  examples, _ = data.read_examples(os.path.join(FIXTURE, "input.json"), with_labels=True)
  return examples[:settings["n"]]


def _as_lists(features):
  """Feature dict -> {name: list} as features.json stores them (floats via float32)."""
  out = {}
  for name, value in features.items():
    if isinstance(value, np.ndarray):
      out[name] = ([float(np.float32(v)) for v in value] if value.dtype.kind == "f"
                   else [int(v) for v in value])
    else:
      out[name] = list(value)
  return out


def test_settings_are_the_ones_converted_with():
  settings, config = _load("settings.json"), _config()
  assert settings["flag_values"]["tokenizer_type"] == "BERT"
  assert settings["flag_values"]["do_lower_case"] is True
  assert not settings["flag_values"]["shuffle_docs_within_example"]
  assert (config.long_seq_len, config.global_seq_len, config.max_num_sentences) == (
      settings["flag_values"]["long_seq_len"], settings["flag_values"]["global_seq_len"],
      settings["flag_values"]["max_num_sentences"])
  assert list(F.FEATURE_NAMES) == sorted(F.FEATURE_NAMES, key=lambda n: (
      settings["feature_order_in_code"].index(n)))


def test_fixture_features_equal_googles():
  expected = _load("features.json")
  examples = _fixture_examples()
  assert [e.example_id for e in examples] == [e["id"] for e in expected]
  kinds = _load("settings.json")["feature_kinds"]
  counts = collections.Counter()
  got = list(records.training_features(examples, _tokenizer(), _config(), counts))
  assert len(got) == len(expected) and counts["examples"] == len(expected)
  compared = 0
  for features, want in zip(got, expected):
    want = {k: v for k, v in want.items() if k not in ("id", "_num_tf_examples")}
    assert set(features) == set(want) == set(kinds), want.get("example_id")
    for name, value in _as_lists(features).items():
      assert value == want[name], (want["example_id"], name)
      compared += 1
      kind = kinds[name]
      if kind == "int64_list":
        assert features[name].dtype == np.int64, name
      elif kind == "float_list":
        assert features[name].dtype == np.float32, name
      else:
        assert all(isinstance(v, str) for v in features[name]), name
  assert compared == 15 * len(expected)


def test_fixture_tf_examples_have_googles_kinds():
  kinds = _load("settings.json")["feature_kinds"]
  features = next(records.training_features(_fixture_examples()[:1], _tokenizer(),
                                                       _config(), collections.Counter()))
  example = tfrecords.to_tf_example(features)
  for name, kind in kinds.items():
    assert example.features.feature[name].WhichOneof("kind") == kind, name


# ------------------------------------------------------------------- quirks on hand-made items


def _convert(item, tmp_path, with_labels=True, **config):
  config = dict(dict(long_seq_len=64, global_seq_len=32, max_num_sentences=200), **config)
  convert = records.converter(wf.tokenizer(tmp_path), WikiHopFeatureConfig(**config))
  return convert(F.from_item(item, with_labels), with_labels)


def test_hand_made_item_layout(tmp_path):
  f = _convert(wf.raw_item(), tmp_path)
  p = wf.piece_id
  # candidates freedonia | new york | york, query "country mara veldt", then two documents.
  doc1 = ["mara", "veldt", "lives", "in", "new", "york", ".", "she", "visited", "york", "."]
  doc2 = ["freedonia", "is", "far", "."]
  long_words = ["freedonia", "new", "york", "york", "country", "mara", "veldt"] + doc1 + doc2
  n = len(long_words)
  assert list(f["long_token_ids"][:n]) == [p(w) for w in long_words]
  assert not f["long_token_ids"][n:].any()
  assert list(f["long_token_type_ids"][:n]) == [4] * 4 + [3] * 3 + [1] * 15
  # global: 3 candidates (0-2), 3 query pieces (3-5), doc1: paragraph 6, sentences 7, 8;
  # doc2: paragraph 9, sentence 10.
  assert list(f["global_token_ids"][:12]) == [4, 4, 4, 3, 3, 3, 5, 1, 1, 5, 1, 0]
  assert list(f["global_token_type_ids"][:11]) == [6, 6, 6, 5, 5, 5, 7, 0, 0, 7, 0]
  assert list(f["global_paragraph_breakpoints"][:11]) == [1, 1, 1, 0, 0, 1, 0, 0, 1, 0, 1]
  assert list(f["long_sentence_ids"][:n + 1]) == ([0, 1, 1, 2, 3, 4, 5] + [7] * 7 + [8] * 4 +
                                                  [10] * 4 + [-1])
  assert list(f["long_paragraph_ids"][:n + 1]) == [-1] * 7 + [6] * 11 + [9] * 4 + [-1]
  breaks = [i for i, b in enumerate(f["long_paragraph_breakpoints"]) if b]
  assert breaks == [0, 2, 3, 6, 17, 21]
  # "new york" (1) is linked on its pieces; "york" (2) overwrites the "york" of "new york"
  # (later candidates win) and links the lone "york"; "freedonia" (0) in document 2.
  linked = list(f["l2g_linked_ids"][:n])
  assert linked == [0, 1, 1, 2, -1, -1, -1, -1, -1, -1, -1, 1, 2, -1, -1, -1, 2, -1,
                    0, -1, -1, -1]
  assert f["label_id"].tolist() == [0.0] and f["ground_truth_answer"] == ["freedonia"]
  assert f["candidates"] == ["freedonia", "new york", "york"]
  assert f["query"] == ["country mara veldt"] and f["example_id"] == ["WH_dev_0"]


def test_query_kept_as_written_and_candidates_stripped_lowered_with_duplicates(tmp_path):
  item = wf.raw_item(query="Country Mara_Veldt", candidates=[" Freedonia ", "york", "YORK"],
                     answer="FREEDONIA")
  f = _convert(item, tmp_path)
  assert f["query"] == ["Country Mara_Veldt"]
  assert f["candidates"] == ["freedonia", "york", "york"]
  assert list(f["global_token_ids"][:3]) == [4, 4, 4]
  assert f["label_id"].tolist() == [0.0] and f["ground_truth_answer"] == ["freedonia"]


def test_answer_is_lowered_not_stripped(tmp_path):
  with pytest.raises(RecordProblem) as raised:
    F.from_item(wf.raw_item(answer=" freedonia"), with_labels=True)
  assert "does not strip" in raised.value.detail
  path = str(tmp_path / "train.json")
  with open(path, "w") as f:
    json.dump([wf.raw_item(id="a", answer=" freedonia"), wf.raw_item(id="b")], f)
  report = ReadReport(path=path)
  kept = list(data.iter_training_examples(path, report))
  assert [e.example_id for e in kept] == ["b"]
  assert report.skipped["answer not a candidate (official layout)"] == 1
  assert "train.json: item 0 (id a): field 'answer'" in report.messages[0]
  # Without labels the item is converted (no label features).
  f = _convert(wf.raw_item(answer=" freedonia"), tmp_path, with_labels=False)
  assert "label_id" not in f and "ground_truth_answer" not in f


def test_mentions_need_the_substring_and_match_pieces(tmp_path):
  # Every run of york's pieces in a sentence containing "york" is linked (the sentence pieces:
  # new york . | she visited york .).
  item = wf.raw_item(candidates=["freedonia", "york"], supports=["New York. She visited York."])
  f = _convert(item, tmp_path)
  sentence = f["long_token_type_ids"] == 1
  assert list(f["l2g_linked_ids"][sentence]) == [-1, 1, -1, -1, -1, 1, -1]
  # A candidate whose pieces occur but whose text does not is not linked: "new york" in
  # "New  York" (two spaces) has the same pieces but is no substring.
  item = wf.raw_item(candidates=["freedonia", "new york"], supports=["New  York is far."])
  f = _convert(item, tmp_path)
  sentence = f["long_token_type_ids"] == 1
  assert list(f["l2g_linked_ids"][sentence]) == [-1] * 5


def test_truncation_drops_from_the_document_with_most_sentences():
  # documents with 3, 1, 3 sentences of 2 pieces; 5 sentences allowed: ties go to the entry
  # pushed earliest: doc 0 loses one (3->2), then doc 2 (3->2).
  assert F.truncate_documents([[2, 2, 2], [2], [2, 2, 2]], 5, 100) == [2, 1, 2]
  # token limit only: 9 pieces allowed of 16: doc 0 (3 sentences) drops its 5-piece sentence;
  # then docs 0 and 2 have 2 each, and doc 2 was pushed back earlier than doc 0: it drops one.
  assert F.truncate_documents([[2, 2, 5], [3], [2, 2]], 100, 9) == [2, 1, 1]
  # a document can lose every sentence
  assert F.truncate_documents([[4], [1, 1, 1, 1]], 2, 100) == [1, 1]
  assert F.truncate_documents([[1], []], 0, 100) == [0, 0]


def test_truncated_document_keeps_its_paragraph_token(tmp_path):
  item = wf.raw_item(supports=["Mara Veldt lives in New York. She visited York.",
                               "Freedonia is far."])
  f = _convert(item, tmp_path, max_num_sentences=1)
  # doc1 (2 sentences) loses one, then (1, 1) -> the first pushed back... doc 1 loses its only.
  ids = list(f["global_token_ids"][:10])
  assert ids[:9] == [4, 4, 4, 3, 3, 3, 5, 1, 5] and ids[9] == 0
  assert list(f["global_paragraph_breakpoints"][6:9]) == [0, 1, 1]


def test_items_google_fails_on_raise_clear_errors(tmp_path):
  with pytest.raises(F.DoesNotFit, match="long_seq_len"):
    _convert(wf.raw_item(), tmp_path, long_seq_len=4)
  with pytest.raises(F.DoesNotFit, match="global_seq_len 8"):
    _convert(wf.raw_item(), tmp_path, global_seq_len=8)
  with pytest.raises(ValueError, match=r"candidates\[1\]"):
    _convert(wf.raw_item(candidates=["freedonia", "  "]), tmp_path)


# ------------------------------------------------------------------------------ the model


def _tiny_etc(**overrides):
  values = dict(vocab_size=2048, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                num_attention_heads=2, local_radius=4, relative_pos_max_distance=2,
                relative_vocab_size=8, hidden_dropout_prob=0.0,
                attention_probs_dropout_prob=0.0, use_hard_g2l_mask=True)
  values.update(overrides)
  return EtcConfig(**values)


def test_side_inputs_follow_googles_rules(tmp_path):
  f = _convert(wf.raw_item(), tmp_path)
  batch = {name: tf.constant(f[name][None]) for name in F.MODEL_FEATURES}
  side = {k: v.numpy()[0] for k, v in model_lib.side_inputs(batch, 2, 2, True, False).items()}
  n, g = 22, 11   # real long and global tokens
  g2l = side["g2l_att_mask"]
  # candidates and query tokens see every real long token
  assert g2l[:6, :n].all() and not g2l[:, n:].any()
  # paragraph 6 sees its document's pieces (7..17) only; sentence 7 its own pieces
  assert list(np.nonzero(g2l[6])[0]) == list(range(7, 18))
  assert list(np.nonzero(g2l[7])[0]) == list(range(7, 14))
  # l2l: candidate 1 ("new york", long 1-2) sees only itself, within radius 2
  assert list(side["l2l_att_mask"][1]) == [0, 0, 1, 1, 0]
  # g2g: real tokens see all real ones; unordered id across segments (2k+3 = 7)
  assert side["g2g_att_mask"][:g, :g].all() and not side["g2g_att_mask"][0, g:].any()
  assert side["g2g_relative_att_ids"][0, 1] == 7 and side["g2g_relative_att_ids"][3, 4] == 1
  assert side["g2g_relative_att_ids"][6, 8] == 2     # same document: distance 2
  # own (2k+2 = 6): sentence, paragraph or link; other 5
  rel = side["g2l_relative_att_ids"]
  assert rel[6, 10] == 6 and rel[7, 10] == 6 and rel[8, 10] == 5
  assert rel[2, 12] == 6 and rel[2, 11] == 5         # "york" linked at long 12, not 11
  # padding attends to itself only
  assert list(side["l2l_att_mask"][40]) == [0, 0, 1, 0, 0]
  assert side["g2g_att_mask"][20].tolist() == [int(i == 20) for i in range(32)]


def test_model_reads_googles_features_and_masks_non_candidates(tmp_path):
  f = _convert(wf.raw_item(), tmp_path)
  model = model_lib.WikiHopModel(_tiny_etc(), name="wikihop")
  model.build()
  batch = {name: tf.constant(np.stack([f[name]] * 2)) for name in F.MODEL_FEATURES}
  logits = model(batch)["candidate_logits"].numpy()
  assert logits.shape == (2, 32)
  assert (logits[:, 3:] == -10000.0).all() and (logits[:, :3] > -100).all()
  batch["label_id"] = tf.constant([0.0, 1.0])
  batch["is_real_example"] = tf.constant([1, 0])
  losses = model.compute_losses(batch, model(batch))
  want = -tf.nn.log_softmax(logits[0])[0].numpy()
  np.testing.assert_allclose(losses["loss"].numpy(), want / (1 + 1e-5), rtol=1e-5)


def test_reads_records_written_by_googles_pipeline(tmp_path):
  # Training from them: tests/test_official_records_training.py.
  path = str(tmp_path / "google.tfrecord")
  official_fixtures.write_google_records("wikihop", path)
  dataset = tfrecords.make_dataset([path], None, 2, parse_fn=TASK.parse_fn(_config()),
                                   repeat=True)
  batch = next(iter(dataset))
  assert batch["long_token_ids"].shape == (2, 4096) and batch["label_id"].dtype == tf.float32
  assert batch["label_id"].numpy().tolist() == [1.0, 1.0]


def test_items_that_do_not_fit_are_skipped_and_counted(tmp_path):
  path = str(tmp_path / "train.json")
  long_query = "country " + " ".join(["mara veldt"] * 30)
  with open(path, "w") as f:
    json.dump([wf.raw_item(id="a", query=long_query), wf.raw_item(id="b")], f)
  config = WikiHopFeatureConfig(long_seq_len=64, global_seq_len=32)
  report, counts = ReadReport(path=path), collections.Counter()
  got = list(TASK.training_features(path, wf.tokenizer(tmp_path), config, report, counts,
                                    print))
  assert [f["example_id"] for f in got] == [["b"]] and report.examples == 1
  assert report.skipped[records.SKIP_REASON] == 1
  assert "id a" in report.messages[0] and "long_seq_len 64" in report.messages[0]


def test_sentencepiece_vocabulary_keeps_the_global_ids_and_cased_pieces(tmp_path):
  """ETC-large's SentencePiece model: Google's WikiHop converter keeps the global ids 1/3/4/5
  and tokenizes the text as it is; a lower-cased candidate then matches only lower-case
  mentions (the pieces of "Zo" and "zo" differ)."""
  import test_official_tokenizers as tot  # pylint: disable=import-outside-toplevel
  model_file = tot._write_model(tmp_path)  # pylint: disable=protected-access
  tok = OffsetTokenizer(load_tokenizer(spm_model_file=model_file))
  item = wf.raw_item(query="born Ann", candidates=["Zo caf", "ann"], answer="zo caf",
                     supports=["Ann was born in Zo caf. The end.", "zo caf was born."])
  config = WikiHopFeatureConfig(long_seq_len=64, global_seq_len=16)
  f = records.converter(tok, config)(F.from_item(item, True), True)
  pieces = tok.tokenizer.tokenize(["zo caf", "ann", "born Ann", "Ann was born in Zo caf.",
                                   "The end.", "zo caf was born."])
  flat = [p for ids in pieces for p in ids]
  assert list(f["long_token_ids"][:len(flat)]) == flat and not f["long_token_ids"][len(flat):].any()
  assert list(f["global_token_ids"][:10]) == [4, 4, 3, 3, 5, 1, 1, 5, 1, 0][:10]
  links = f["l2g_linked_ids"][f["long_token_type_ids"] == 1]
  n1 = len(pieces[3]) + len(pieces[4])
  assert (links[:n1] == -1).all()                       # "Zo caf" / "Ann": other pieces
  assert list(links[n1:n1 + len(pieces[0])]) == [0] * len(pieces[0])   # "zo caf" in doc 2


def test_predictor_converts_and_decodes_googles_way(tmp_path):
  from tasks.wikihop import inference  # pylint: disable=import-outside-toplevel
  config = WikiHopFeatureConfig(long_seq_len=64, global_seq_len=32)
  assert set(TASK.export_inputs(config)) == set(F.MODEL_FEATURES)
  assert TASK.export_inputs(config)["global_token_ids"] == 32
  model = TASK.build_model(_tiny_etc(), config)
  model.build()
  path = str(tmp_path / "dev.json")
  with open(path, "w") as f:
    json.dump([wf.raw_item(id="a"), wf.raw_item(id="b", candidates=[]),
               wf.raw_item(id="c", query="country " + " ".join(["mara"] * 80))], f)
  examples, _ = data.read_examples(path, with_labels=False)
  predictor = inference.Predictor.from_model(model, config, wf.tokenizer(tmp_path))
  assert predictor.input_features == F.MODEL_FEATURES
  logged = []
  prediction = predictor.predict(examples, batch_size=2, log=logged.append)
  assert list(prediction) == ["a", "b", "c"]
  assert prediction["a"] in ("freedonia", "new york", "york")
  assert prediction["b"] == prediction["c"] == ""
  assert any("do not fit" in line and "id c" in line for line in logged)


def test_truncation_that_cannot_end_is_an_error():
  with pytest.raises(F.DoesNotFit, match="3 pieces too many"):
    F.truncate_documents([[2], [1]], 100, -3)
