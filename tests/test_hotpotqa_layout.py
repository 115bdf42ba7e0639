"""HotpotQA's official layout: Google's converter outputs (tests/fixtures/official_features/
hotpotqa) reproduced feature by feature, its quirks, the model's side inputs against a numpy
restatement of Google's, its loss formula, training on records written by Google's pipeline,
SentencePiece ids, and the task wiring."""

import collections
import json
import os

import numpy as np
import pytest
import tensorflow as tf

import hotpot_fixtures as hf
import test_official_tokenizers as tot
from etc_realformer.data import tfrecords
from etc_realformer.data import tokenization
from etc_realformer import ops
from synthetic_data import hotpotqa as synthetic_hotpotqa
from tasks.hotpotqa import features as fl
from tasks.hotpotqa import records as hotpot_records
from tasks.hotpotqa.data import parse_training_record
from tasks.common.read_report import ReadReport, RecordProblem
from tasks.hotpotqa import decode
from tasks.hotpotqa import model as hotpot_model
from tasks.hotpotqa import text as text_lib
from tasks.hotpotqa.data import HotpotExample
from tasks.hotpotqa.features import HotpotFeatureConfig
from tasks.hotpotqa.text import TextTokenizer
from tasks.hotpotqa.task import TASK
import official_fixtures

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "official_features", "hotpotqa")
VOCAB = os.path.join(ROOT, "pretrained", "tiny_english", "vocab.txt")
TINY = dict(vocab_size=30522, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
            intermediate_size=32, local_radius=4, relative_pos_max_distance=3,
            relative_vocab_size=10, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
            use_hard_g2l_mask=True)


def _load(name):
  with open(os.path.join(FIXTURE, name), encoding="utf-8") as f:
    return json.load(f)


def _tokenizer():
  return TextTokenizer(tokenization.load_tokenizer(vocab_file=VOCAB))


def _config(**changes):
  settings = _load("settings.json")["flag_defaults_used"]
  values = dict(long_seq_len=settings["long_seq_length"],
                global_seq_len=settings["global_seq_length"])
  values.update(changes)
  return HotpotFeatureConfig(**values)


def _convert(record, long_len=4096, global_len=256, is_training=True, tokenizer=None):
  example = parse_training_record(record)
  f = fl.convert_example(example, tokenizer or _tokenizer(), long_len, global_len,
                               is_training)
  fl.pop_stats(f)
  return f


def _as_lists(value):
  return [v.item() if hasattr(v, "item") else v for v in np.ravel(np.asarray(value))]


def test_settings_are_the_converters():
  settings = _load("settings.json")
  config, ids = settings["input_config"], fl.global_ids_for("wordpiece")
  assert (config["cls_token_id"], config["question_global_token_id"],
          config["paragraph_global_token_id"], config["sentence_global_token_id"]) == (
              ids.cls, ids.question, ids.paragraph, ids.sentence)
  assert (config["global_token_type_id"], config["sentence_token_type_id"],
          config["title_token_type_id"], config["question_token_type_id"]) == (
              fl.GLOBAL_TYPE, fl.SENTENCE_TYPE, fl.TITLE_TYPE,
              fl.QUESTION_TYPE)
  assert config["answer_types_map"] == fl.ANSWER_TYPES
  with open(os.path.join(FIXTURE, "convert_sets.txt")) as f:
    sets = dict(line.strip().split("=", 1) for line in f if line.strip())
  config = _config()
  assert (int(sets["features.long_seq_len"]), int(sets["features.global_seq_len"])) == (
      config.long_seq_len, config.global_seq_len)


def test_fixture_features_equal_googles():
  records, gold = _load("input.json"), _load("features.json")
  kinds = _load("settings.json")["feature_kinds"]
  written = []
  for record in records:
    try:
      written.append(_convert(record))
    except fl.Dropped:
      pass
  assert len(written) == len(gold)
  for f, g in zip(written, gold):
    assert f["unique_ids"] == [g["_id"]]
    names = set(g) - {"_id", "_num_tf_examples"}
    assert set(f) == names
    for name in sorted(names):
      assert _as_lists(f[name]) == list(g[name]), name
      kind = tfrecords.to_tf_example({name: f[name]}).features.feature[name].WhichOneof("kind")
      assert kind == kinds[name], name
      if kind == "int64_list":
        assert np.asarray(f[name]).dtype == np.int64, name


def test_written_records_parse_back(tmp_path):
  config = _config()
  f = _convert(_load("input.json")[0])
  path = str(tmp_path / "r.tfrecord")
  with tf.io.TFRecordWriter(path) as writer:
    writer.write(tfrecords.to_tf_example(f).SerializeToString())
  dataset = tf.data.TFRecordDataset([path]).batch(1).map(TASK.parse_fn(config))
  parsed = next(iter(dataset))
  assert set(parsed) == set(fl.MODEL_INPUTS + fl.LABELS)
  for name, value in parsed.items():
    assert value.numpy()[0].tolist() == (f[name][0] if name in fl.SCALAR_LABELS
                                         else f[name].tolist()), name


# ------------------------------------------------------------------------ quirks


def test_answer_found_in_a_supporting_title_and_yes_searched_as_text():
  record = hf.raw_record(answer="Zoë", supporting_facts=[["Zoë", 0]])
  f = _convert(record)
  tokens = f["long_tokens"]
  begin, end = int(f["answer_begins"][0]), int(f["answer_ends"][0])
  assert f["long_token_type_ids"][begin] == fl.TITLE_TYPE   # the title comes first
  assert "".join(t.lstrip("#") for t in tokens[begin:end + 1]) == "zoe"
  record = hf.raw_record(answer="yes", context=[["Ann", ["Ann said yes ."]]],
                         supporting_facts=[["Ann", 0]])
  f = _convert(record)
  assert f["answer_types"][0] == 1 and f["answer_begins"][0] > 0   # found as text
  record = hf.raw_record(answer="yes", supporting_facts=[["Ann", 0]])
  f = _convert(record)
  assert (f["answer_types"][0], f["answer_begins"][0], f["answer_ends"][0]) == (1, 0, 0)


def test_yes_no_spans_are_not_checked_against_the_long_length():
  # The "yes" is found in a sentence that does not fit: its span keeps the offset where that
  # sentence would have gone and ends past the long input; Google keeps the record (the span
  # is only checked for span answers) and its one-hot loss ignores such a target.
  long_sentence = " ".join(["kind"] * 30) + " yes"
  record = hf.raw_record(answer="yes", context=[["Ann", ["Ann was born.", long_sentence]]],
                         supporting_facts=[["Ann", 1]])
  f = _convert(record, long_len=40)
  assert f["answer_types"][0] == 1 and f["answer_ends"][0] >= 40
  model = _model_for(40, 16)
  batch = {name: tf.constant(np.asarray(f[name])[None].astype(np.int32))
           for name in fl.MODEL_INPUTS + ("supporting_facts",)}
  batch.update({name: tf.constant(np.asarray(f[name]).astype(np.int32))
                for name in fl.SCALAR_LABELS})
  losses = model.compute_losses(batch, model(batch, training=False))
  assert np.isfinite(losses["loss"].numpy()) and losses["end_loss"].numpy() == 0.0


def test_training_drops_what_googles_converter_drops():
  with pytest.raises(fl.Dropped, match="answer not found"):
    _convert(hf.raw_record(answer="ann"))     # case-sensitive search
  with pytest.raises(fl.Dropped, match="no supporting fact"):
    _convert(hf.raw_record(supporting_facts=[["Nobody", 0]]))
  with pytest.raises(fl.Dropped, match="answer not found"):
    _convert(hf.raw_record(answer=""))
  # Prediction converts everything, without labels.
  f = _convert(hf.raw_record(answer="ann"), is_training=False)
  assert "answer_types" not in f and "long_tokens_to_unigrams" in f


def test_items_that_do_not_fit_are_skipped_whole_and_numbering_follows_google():
  long_sentence = " ".join(["kind"] * 30)
  record = hf.raw_record(context=[["Ann", ["Ann was born in 1921.", long_sentence, "Ann is."]]],
                         supporting_facts=[["Ann", 0]])
  f = _convert(record, long_len=40)
  # [CLS] + 5 question pieces + PARAGRAPH, title, sentence 0, sentence 2 (sentence 1 skipped)
  gtokens = f["global_tokens"]
  assert len(gtokens) == 1 + 5 + 4
  # the sentence after the skipped one takes its number (1, not 2)
  assert f["global_sentence_ids"][:10].tolist() == [-1] * 6 + [-1, -1, 0, 1]
  assert f["global_paragraph_ids"][:10].tolist() == [-1] * 6 + [0, 0, 0, 0]
  assert f["long_paragraph_ids"][6:8].tolist() == [6, 6]
  assert f["long_sentence_ids"][0] == -1 and f["long_sentence_ids"][1:6].tolist() == [1, 2, 3,
                                                                                       4, 5]
  assert f["long_tokens_to_unigrams"][:6].tolist() == [-1] * 6
  assert len(f["long_tokens"]) == int((f["long_token_ids"] != 0).sum())


def test_bad_records_name_the_field():
  with pytest.raises(RecordProblem) as e:
    parse_training_record(hf.raw_record(context=[["Ann", "not a list"]]))
  assert e.value.field == "context[0]"
  with pytest.raises(RecordProblem) as e:
    parse_training_record(hf.raw_record(supporting_facts=[["Ann", "0"]]))
  assert e.value.field == "supporting_facts[0]"


def test_training_stream_counts_drops(tmp_path):
  path = tmp_path / "train.json"
  path.write_text(json.dumps([hf.raw_record(), hf.raw_record(_id="q2", answer="ann"),
                              hf.raw_record(_id="q3", context="bad")]))
  report = ReadReport(path=str(path))
  counts = collections.Counter()
  written = list(TASK.training_features(str(path), hf.tokenizer(tmp_path), _config(), report,
                                        counts, log=lambda _: None))
  assert [f["unique_ids"] for f in written] == [["q1"]]
  assert report.records == 3 and report.examples == 1
  assert report.skipped == {"answer not found": 1, "malformed context": 1}
  assert any(m.startswith(f"{path}: _id q2: field 'answer': answer not found")
             for m in report.messages), report.messages
  assert any("(_id q3): field 'context'" in m for m in report.messages), report.messages


# ------------------------------------------------------------------------ model


def _google_side_inputs(f, radius, max_distance, cls_id=101):
  """Google's multihop side inputs (non-flat sequence, hard g2l) from its features, numpy."""
  lbp = np.asarray(f["long_paragraph_breakpoints"])                 # [L]
  gbp = np.asarray(f["global_paragraph_breakpoints"])               # [G]
  long_seg, global_seg = np.cumsum(lbp[::-1])[::-1], np.cumsum(gbp[::-1])[::-1]
  sentence, paragraph = np.asarray(f["long_sentence_ids"]), np.asarray(f["long_paragraph_ids"])
  gids = np.asarray(f["global_token_ids"])
  num_long, num_global = len(lbp), len(gbp)
  vocab = 2 * max_distance + 1

  def relative(d):
    return np.where(d > 0, np.minimum(d, max_distance),
                    np.where(d < 0, max_distance + np.minimum(-d, max_distance), 0))

  offsets = np.arange(-radius, radius + 1)
  keys = np.arange(num_long)[:, None] + offsets[None]
  key_seg = np.where((keys >= 0) & (keys < num_long),
                     long_seg[np.clip(keys, 0, num_long - 1)], -1)   # [L, 2r+1]
  l2g = (np.minimum(long_seg, 1)[:, None] == np.minimum(global_seg, 1)[None]).astype(int)
  g = np.arange(num_global)
  hard = ((g[:, None] == sentence[None]) | (g[:, None] == paragraph[None])
          | (gids == cls_id)[:, None])                                # [G, L]
  linked = ((sentence[:, None] == g[None]) | (paragraph[:, None] == g[None])).astype(int) + vocab
  g2g_rel = np.where(global_seg[:, None] == global_seg[None], relative(g[None] - g[:, None]),
                     vocab + 2)
  return {"l2l_att_mask": (key_seg == long_seg[:, None]).astype(int),
          "g2g_att_mask": (np.minimum(global_seg, 1)[:, None]
                           == np.minimum(global_seg, 1)[None]).astype(int),
          "l2g_att_mask": l2g, "g2l_att_mask": l2g.T * hard,
          "l2l_relative_att_ids": np.broadcast_to(relative(offsets)[None], key_seg.shape),
          "g2g_relative_att_ids": g2g_rel, "l2g_relative_att_ids": linked,
          "g2l_relative_att_ids": linked.T}


@pytest.mark.parametrize("long_len, global_len", [(4096, 256), (150, 40), (97, 30), (200, 25)])
def test_side_inputs_equal_googles_on_real_tokens(long_len, global_len):
  radius, max_distance = 8, 4
  for record in _load("input.json"):
    try:
      f = _convert(record, long_len, global_len)
    except fl.Dropped:
      continue
    batch = {name: tf.constant(f[name][None].astype(np.int32)) for name in fl.MODEL_INPUTS}
    derived = hotpot_model.encoder_features(batch)
    ours = ops.make_side_inputs(
        ops.example_ids_from_token_ids(derived["token_ids"]),
        ops.example_ids_from_token_ids(derived["global_token_ids"]), derived["sentence_ids"],
        radius, max_distance, use_hard_g2l_mask=True,
        long_paragraph_ids=derived["long_paragraph_ids"],
        global_paragraph_ids=derived["global_paragraph_ids"],
        ignore_hard_g2l_mask=derived["ignore_hard_g2l_mask"],
        l2g_linked_ids=derived["l2g_linked_ids"])
    google = _google_side_inputs(f, radius, max_distance)
    real = {"l": f["long_token_ids"] != 0, "g": f["global_token_ids"] != 0}
    for name, want in google.items():
      got = ours[name].numpy()[0]
      rows = real[name[0]]
      allowed = google[name[:3] + "_att_mask"] == 1 if "relative" in name else True
      wrong = (got != want) & allowed
      assert not wrong[rows].any(), (name, long_len, global_len, record["_id"])


def _batch(records, long_len=4096, global_len=256):
  fs = [_convert(r, long_len, global_len) for r in records]
  batch = {}
  for name in fl.MODEL_INPUTS + fl.LABELS:
    value = np.stack([f[name] for f in fs]).astype(np.int32)
    batch[name] = tf.constant(value[:, 0] if name in fl.SCALAR_LABELS else value)
  return batch


def _model():
  return _model_for(4096, 256)


def _model_for(long_len, global_len):
  model_config = TASK.parse_sections({"model": TINY, "features": {}, "train": {}})[0]
  model = TASK.build_model(model_config, _config(long_seq_len=long_len,
                                                 global_seq_len=global_len))
  assert isinstance(model, hotpot_model.HotpotQaModel)
  model.build()
  return model


def test_model_loss_is_googles_formula():
  model = _model()
  batch = _batch(_load("input.json")[:3])
  outputs = {k: v.numpy() for k, v in model(batch, training=False).items()}
  assert outputs["sp_logits"].shape == (3, 256) and outputs["begin_logits"].shape == (3, 4096)

  def ce(labels, logits):
    logits = logits.astype(np.float64)
    logp = logits - logits.max(-1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(-1, keepdims=True))
    return -np.mean(logp[np.arange(len(labels)), labels])
  sp, x = batch["supporting_facts"].numpy(), outputs["sp_logits"].astype(np.float64)
  sp_loss = np.mean(np.sum(np.maximum(x, 0) - x * sp + np.log1p(np.exp(-np.abs(x))), -1))
  want = (sp_loss + ce(batch["answer_types"].numpy(), outputs["answer_type_logits"])
          + ce(batch["answer_begins"].numpy(), outputs["begin_logits"])
          + ce(batch["answer_ends"].numpy(), outputs["end_logits"])) / 4
  got = model.compute_losses(batch, {k: tf.constant(v) for k, v in outputs.items()})
  np.testing.assert_allclose(got["loss"].numpy(), want, rtol=1e-5)


def test_export_inputs_are_googles_inference_features():
  config = _config()
  assert set(TASK.export_inputs(config)) == set(fl.MODEL_INPUTS)
  assert TASK.export_inputs(config)["long_token_ids"] == 4096


def test_texts_tokenized_together_give_each_unigram_its_own_pieces():
  # Google's converter tokenizes every unigram (text between " \t\r\n\u202f") on its own;
  # the converter tokenizes an example's texts joined, several examples per call. Both must
  # give every text the same pieces, unigram owners and unigram starts.
  tokenizer = _tokenizer()
  wordpiece = tokenizer.tokenizer
  rng = np.random.default_rng(3)
  alphabet = list("ab Zy.,'-\t\r\n\u202f\u00a0\u00e9\u4e2d\ud800\x00\u0301") + [
      "word", "unaffable", "[SEP]", "x" * 120]
  groups = [[], [""], ["", "a b"], [" lead", "trail ", "a\u202fb\tc"]] + [
      ["".join(rng.choice(alphabet, rng.integers(0, 25))) for _ in range(rng.integers(0, 6))]
      for _ in range(200)]
  for texts, got in zip(groups, tokenizer.tokenize_groups(groups)):
    assert [t.text for t in got] == list(texts)
    for text, tokenized in zip(texts, got):
      unigrams, starts = text_lib.unigram_starts(text)
      ids, owners, firsts = [], [], []
      for u, unigram in enumerate(unigrams):
        firsts.append(len(ids))
        pieces = wordpiece.tokenize([unigram])[0]
        ids += pieces
        owners += [u] * len(pieces)
      assert tokenized.ids == ids, text
      assert tokenized.tokens == wordpiece.id_to_token(ids)
      assert tokenized.tokens_to_unigrams == owners and tokenized.unigram_starts == starts
      assert tokenized.unigrams_to_tokens == firsts
  assert tokenizer.tokenize(groups[3]) == tokenizer.tokenize_groups(groups)[3]


# ------------------------------------------------------------------------ SentencePiece


def test_sentencepiece_ids_and_spans(tmp_path):
  tokenizer = TextTokenizer(tokenization.tokenizer_for_vocab(tot._write_model(tmp_path)))
  f = _convert(hf.raw_record(), 128, 64, tokenizer=tokenizer)
  question = tokenizer.tokenize(["Who was born first?"])[0].ids
  gids = f["global_token_ids"]
  assert gids[0] == 40 and gids[1:1 + len(question)].tolist() == [41] * len(question)
  assert gids[1 + len(question)] == 43 and gids[2 + len(question)] == 1
  assert "long_tokens_to_unigrams" not in f
  begin, end = int(f["answer_begins"][0]), int(f["answer_ends"][0])
  assert f["answer_types"][0] == 0
  assert "".join(f["long_tokens"][begin:end + 1]).replace(tokenization.SPM_WORD_START, "") == "Ann"
  assert f["long_token_type_ids"][begin] == fl.TITLE_TYPE


def test_pop_stats_counts_what_was_written():
  with pytest.raises(ValueError, match="layout"):
    HotpotFeatureConfig(layout="google")
  example = HotpotExample("q", "Who?", [("Ann", ["Ann."])], answer="Ann",
                          supporting_facts=[("Ann", 0)])
  tokenizer = _tokenizer()
  f = fl.convert_example(example, tokenizer, 16, 8, is_training=True)
  pieces = sum(len(t.ids) for t in tokenizer.tokenize(["Who?", "Ann", "Ann."]))
  assert fl.pop_stats(f) == {"long": 1 + pieces, "global": 6, "skipped": 0}


# ------------------------------------------------------------------------ options (not Google's)


def _hand_made(tmp_path, long_len, global_len, options=fl.GOOGLE, **changes):
  """Training features of hf's record (question 5 pieces; Ann: title 1, sentences 6 and 4
  pieces; Zoë: title 1, sentence 6) with the hand-made vocabulary, and the converter's counts."""
  tokenizer = TextTokenizer(hf.tokenizer(tmp_path).tokenizer)
  f = fl.convert_example(parse_training_record(hf.raw_record(**changes)),
                               tokenizer, long_len, global_len, True, options=options)
  return f, fl.pop_stats(f)


def test_question_and_title_caps(tmp_path):
  record = dict(answer="1921", context=[["Ann is kind", ["Ann was born in 1921."]]],
                supporting_facts=[["Ann is kind", 0]])
  caps = fl.ConverterOptions.of(_config(max_question_pieces=3, max_title_pieces=2))
  assert caps == fl.ConverterOptions(3, 2, False, False)
  for options, question, title in ((fl.GOOGLE, 5, 3), (caps, 3, 2)):
    f, _ = _hand_made(tmp_path, 64, 16, options, **record)
    types = f["long_token_type_ids"].tolist()
    assert (types.count(fl.QUESTION_TYPE), types.count(fl.TITLE_TYPE)) == (
        question, title)
    want = (["[CLS]", "who", "was", "born", "first", "?"][:1 + question]
            + ["ann", "is", "kind"][:title])
    assert f["long_tokens"][:1 + question + title] == want
    assert len(f["global_tokens"]) == 1 + question + 3       # PARAGRAPH, title, sentence
  # Prediction and training conversion take the caps from the feature config.
  config = _config(max_question_pieces=3, max_title_pieces=2)
  example = parse_training_record(hf.raw_record(**record))
  (f,) = hotpot_records.prediction_features([example], hf.tokenizer(tmp_path), config,
                                      log=lambda _: None)
  (g,) = hotpot_records.training_features([example], hf.tokenizer(tmp_path), config,
                                    ReadReport(path="train.json"), collections.Counter())
  for features in (f, g):
    assert features["long_token_type_ids"].tolist().count(fl.QUESTION_TYPE) == 3
    assert features["long_token_type_ids"].tolist().count(fl.TITLE_TYPE) == 2
  # Google finds the answer in the title; capped, "kind" is no longer written, so not found.
  record["answer"] = "kind"
  f, _ = _hand_made(tmp_path, 64, 16, **record)
  assert f["long_token_type_ids"][int(f["answer_begins"][0])] == fl.TITLE_TYPE
  with pytest.raises(fl.Dropped, match="answer not found"):
    _hand_made(tmp_path, 64, 16, caps, **record)


def test_keep_longest_first_is_the_package_rule():
  # question 5, Ann: title 1 + sentences 6, 4; Zoë: title 1 + sentence 6 (24 long, 13 global)
  keep = lambda long_len, global_len: fl.keep_longest_first(5, [1, 1], [[6, 4], [6]],
                                                                  long_len, global_len)
  assert keep(24, 13) == [2, 1]
  assert keep(20, 64) == keep(64, 12) == [1, 1]   # the longest (Ann) loses its last sentence
  assert keep(16, 64) == [1, 0]                   # then on a tie (7, 7) the later paragraph
  assert keep(7, 64) == [0, -1]                   # no sentence left: paragraphs from the end
  assert keep(3, 64) == [-1, -1]                  # the question alone does not fit


@pytest.mark.parametrize("long_len, global_len", [(20, 64), (64, 12)])
def test_truncate_longest_paragraphs(tmp_path, long_len, global_len):
  option = fl.ConverterOptions.of(_config(truncate_longest_paragraphs=True))
  for options, sentence_ids, supporting in (
      # Google: items in order until one does not fit: Zoë's sentence is left out.
      (fl.GOOGLE, [0, 1, -1, -1], [1, 1, 1, 0, 1, 1]),
      # The option: Ann (11 pieces) is the longest and loses its last sentence instead.
      (option, [0, -1, -1, 0], [1, 1, 1, 1, 1, 1])):
    f, stats = _hand_made(tmp_path, long_len, global_len, options)
    assert stats["skipped"] == 1
    # global: [CLS], 5 question, PARAGRAPH Ann, title, sentence(s), PARAGRAPH Zoë, title, ...
    assert f["global_sentence_ids"][8:12].tolist() == sentence_ids
    assert f["supporting_facts"][6:12].tolist() == supporting
    assert ("1930" in f["long_tokens"]) == (options != fl.GOOGLE)   # Zoë's sentence
  # The conversion takes the option from the feature config.
  (f,) = hotpot_records.prediction_features(
      [parse_training_record(hf.raw_record())], hf.tokenizer(tmp_path),
      _config(long_seq_len=long_len, global_seq_len=global_len, truncate_longest_paragraphs=True),
      log=lambda _: None)
  assert f["global_sentence_ids"][8:12].tolist() == [0, -1, -1, 0]
  # Paragraphs go whole from the end: Zoë writes no PARAGRAPH token; its sentence is counted.
  f, stats = _hand_made(tmp_path, 7, 64, option, supporting_facts=[["Ann", 0]])
  assert f["global_paragraph_ids"][6:9].tolist() == [0, 0, -1] and stats["skipped"] == 4
  # The answer is searched in written items only (Google's rule writes Ann's second sentence).
  record = dict(answer="kind", supporting_facts=[["Ann", 1]])
  f, _ = _hand_made(tmp_path, 20, 64, **record)
  assert f["long_tokens"][int(f["answer_begins"][0])] == "kind"
  with pytest.raises(fl.Dropped, match="answer not found"):
    _hand_made(tmp_path, 20, 64, option, **record)


def test_span_loss_in_sentences():
  # long: [CLS] (type 1, no paragraph), a question piece, a title piece, two sentence pieces,
  # padding. Row 0 a span answer (3, 4); row 1 "yes" at (0, 0), the [CLS].
  types = [[1, 3, 2, 1, 1, 0]] * 2
  paragraphs = [[-1, -1, 2, 2, 2, -1]] * 2
  logits = np.array([[2.0, 1.0, 0.5, 3.0, -1.0, 4.0], [1.5, 0.0, 2.0, -0.5, 1.0, 0.0]])
  begins, ends = np.array([3, 0]), np.array([4, 0])
  batch = {"long_token_type_ids": tf.constant(types), "long_paragraph_ids": tf.constant(paragraphs),
           "supporting_facts": tf.zeros([2, 4], tf.int32), "answer_types": tf.constant([0, 1]),
           "answer_begins": tf.constant(begins), "answer_ends": tf.constant(ends)}
  outputs = {"sp_logits": tf.zeros([2, 4]), "answer_type_logits": tf.zeros([2, 3]),
             "begin_logits": tf.constant(logits, tf.float32),
             "end_logits": tf.constant(logits[:, ::-1].copy(), tf.float32)}

  def ce(row, target, positions):   # -log softmax over `positions` at `target`
    x = row[positions]
    return -(row[target] - np.log(np.exp(x).sum()))
  everything, inside = list(range(6)), [2, 3, 4]
  model_config = TASK.parse_sections({"model": TINY, "features": {}, "train": {}})[0]
  google = TASK.build_model(model_config, _config())
  masked = TASK.build_model(model_config, _config(span_loss_in_sentences=True))
  assert masked.span_loss_in_sentences and not google.span_loss_in_sentences
  assert masked.get_config()["span_loss_in_sentences"] is True
  got = google.compute_losses(batch, outputs)
  np.testing.assert_allclose(got["begin_loss"].numpy(), np.mean(
      [ce(logits[0], 3, everything), ce(logits[1], 0, everything)]), rtol=1e-6)
  got = masked.compute_losses(batch, outputs)
  # row 1's target (the [CLS]) is outside the softmax: it adds 0, the batch mean still over 2
  np.testing.assert_allclose(got["begin_loss"].numpy(), ce(logits[0], 3, inside) / 2, rtol=1e-6)
  np.testing.assert_allclose(got["end_loss"].numpy(), ce(logits[0, ::-1], 4, inside) / 2,
                             rtol=1e-6)


def test_options_defaults_refusals_and_configs():
  with pytest.raises(ValueError, match="max_title_pieces: must be 0 or a positive integer"):
    HotpotFeatureConfig(max_title_pieces=-1)
  with pytest.raises(ValueError, match="layout: 'package' was removed"):
    HotpotFeatureConfig(layout="package")
  # Nothing said: Google's behaviour.
  assert fl.ConverterOptions.of(HotpotFeatureConfig()) == fl.GOOGLE
  assert HotpotFeatureConfig().layout == "official"
  options = {"max_question_pieces": 0, "max_title_pieces": 0,
             "truncate_longest_paragraphs": False, "question_piece_global_ids": False,
             "span_loss_in_sentences": False, "min_supporting_facts": 0}
  for name in ("etc_base", "etc_large"):   # every option explicitly at Google's behaviour
    features = TASK.load_run_config(os.path.join(ROOT, "configs", "hotpotqa",
                                                 f"{name}.yaml"))["features"]
    assert {key: features[key] for key in options} == options, name
    for key, value in options.items():
      assert type(features[key]) is type(value), (name, key)
    assert fl.ConverterOptions.of(HotpotFeatureConfig(**features)) == fl.GOOGLE
  # The demo turns every option on (docs/official_layouts/hotpotqa.md measures them).
  tiny = HotpotFeatureConfig(**TASK.load_run_config(
      os.path.join(ROOT, "configs", "hotpotqa", "tiny.yaml"))["features"])
  assert min(tiny.max_question_pieces, tiny.max_title_pieces, tiny.min_supporting_facts) > 0
  assert (tiny.truncate_longest_paragraphs and tiny.question_piece_global_ids
          and tiny.span_loss_in_sentences)


def test_question_piece_global_ids(tmp_path):
  config = _config(question_piece_global_ids=True)
  options = fl.ConverterOptions.of(config)
  assert options == fl.ConverterOptions(question_piece_global_ids=True)
  google, _ = _hand_made(tmp_path, 64, 32)
  own, _ = _hand_made(tmp_path, 64, 32, options)
  question = google["long_token_type_ids"] == fl.QUESTION_TYPE                    # [L]
  owners = google["long_sentence_ids"][question]            # the question pieces' global tokens
  ids = fl.global_ids_for("wordpiece")
  assert (google["global_token_ids"][owners] == ids.question).all()
  np.testing.assert_array_equal(own["global_token_ids"][owners],
                                google["long_token_ids"][question])
  others = np.ones(len(google["global_token_ids"]), bool)
  others[owners] = False
  np.testing.assert_array_equal(own["global_token_ids"][others],
                                google["global_token_ids"][others])
  for name in google:   # nothing else changes
    if name not in ("global_token_ids", "global_tokens"):   # global_tokens: their strings
      np.testing.assert_array_equal(np.asarray(own[name]), np.asarray(google[name]), name)


# ------------------------------------------------------------------------ the task


def test_finetune_export_and_predict(tmp_path):
  """convert -> train -> dev threshold -> export -> predict through the export."""
  files = synthetic_hotpotqa.ensure_demo_data(str(tmp_path / "data"), 12, 4, seed=0,
                                              preset="short")
  config = TASK.load_run_config(os.path.join(ROOT, "configs", "hotpotqa", "tiny.yaml"))
  config["model"].update(num_hidden_layers=1, hidden_size=16, intermediate_size=32)
  config["features"].update(long_seq_len=512, global_seq_len=64)
  config["train"].update(train_file=files["train"], dev_file=files["dev"], init_checkpoint="",
                         num_train_steps=2, warmup_steps=0, batch_size=4, log_every=1)
  run = str(tmp_path / "run")
  metrics = TASK.run_finetuning(config, run, verbose=0)
  skipped = sum(metrics["train_skipped"].values())       # records Google's converter drops
  assert metrics["train_written"] + skipped == 12 and metrics["train_written"]
  assert metrics["train_conversion"]["examples"] == metrics["train_written"]
  assert metrics["sp_threshold"] in decode.THRESHOLDS
  prediction = TASK.predict_file(os.path.join(run, "export"), files["dev"],
                                 str(tmp_path / "pred.json"))
  with open(files["dev"], encoding="utf-8") as f:
    ids = {r["_id"] for r in json.load(f)}
  assert set(prediction["answer"]) == set(prediction["sp"]) == ids
  with open(os.path.join(run, "export", "task_config.json"), encoding="utf-8") as f:
    assert json.load(f)["feature_config"]["layout"] == "official"

