"""OpenKP model on Google's features: the visual features reach the output, layer basics,
serialisation, export serving the in-memory model. (Its pieces and loss by hand, and training
on Google-written records: test_openkp_layout.py.)"""

import collections

import numpy as np
import tensorflow as tf

import openkp_fixtures as of
from etc_realformer.data import tfrecords
from helpers import check_layer_basics, rel_err, saved_model_round_trip
from tasks.common.read_report import ReadReport
from tasks.openkp import features as F
from tasks.openkp import inference
from tasks.openkp import records
from tasks.openkp.data import read_pages
from tasks.openkp.model import OpenKpModel
from tasks.openkp.task import TASK

ENCODER = dict(vocab_size=200, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
               intermediate_size=32, local_radius=3, relative_pos_max_distance=2,
               relative_vocab_size=8, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
               residual_attention="sum")
CONFIG = F.OpenKpFeatureConfig(long_seq_len=24, global_seq_len=8)


def _pages(tmp_path):
  pages, _ = read_pages(of.write_lines(tmp_path, [
      of.raw_page(url="a"), of.raw_page(url="b", KeyPhrases=[["best"], ["solar", "kettle"]])]),
      True)
  return pages


def _batch(tmp_path):
  path = str(tmp_path / "pages.jsonl")
  feats = list(records.training_features(_pages(tmp_path), of.tokenizer(tmp_path), CONFIG,
                                         ReadReport(path=path), collections.Counter()))
  assert len(feats) == 2
  names = list(F.MODEL_FEATURES + F.LABEL_FEATURES)
  return {name: tf.constant(value)
          for name, value in tfrecords.stack_features(feats, names).items()}


def test_visual_features_reach_the_output(tmp_path):
  batch = _batch(tmp_path)
  model = OpenKpModel(ENCODER)
  base = model(batch)["ngram_logits"].numpy()                       # [2, 5, 24]
  for name, value in (("global_x_coords", 1000.0), ("global_font_ids", 20),
                      ("global_bold_indicator", 1)):
    changed = dict(batch, **{name: tf.fill(tf.shape(batch[name]), value)})
    assert np.abs(model(changed)["ngram_logits"].numpy() - base)[:, 0, :5].max() > 1e-5, name


def test_model_basics(tmp_path):
  batch = _batch(tmp_path)

  def call(model, x, training):
    # Zeros instead of -10000 where an n-gram would pass the last word: these would set
    # rel_err's scale (and the test loss), hiding the differences in the scored cells.
    logits = model(x, training=training)["ngram_logits"]
    return {"ngram_logits": tf.where(logits == -1e4, 0.0, logits)}

  # Only long_output is read: the last layer's global-side attention cannot be trained.
  last = f"openkp/encoder/layer_{ENCODER['num_hidden_layers'] - 1}"
  unused = [f"{last}/{name}:0" for name in (
      "attention/global_out_kernel", "attention/global_out_bias", "attention/global_rel_emb",
      "attention/global_rel_bias", "global_attention_norm/gamma", "global_attention_norm/beta")]
  # max_phrase_words not the default: from_config must keep it.
  check_layer_basics(lambda: OpenKpModel(ENCODER, max_phrase_words=3, name="openkp"), call,
                     lambda: batch, half_dtype=tf.float32,  # the logits are cast to float32
                     no_gradient=unused)


def test_config_saved_model_and_export(tmp_path):
  batch = _batch(tmp_path)
  model = OpenKpModel(ENCODER, max_phrase_words=5, name="openkp")
  clone = OpenKpModel.from_config(model.get_config())
  assert clone.get_config() == model.get_config()
  expected, got = saved_model_round_trip(model, batch, lambda m, x: m(x)["ngram_logits"])
  assert rel_err(got, expected) < 1e-6
  export = TASK.export_model(model, CONFIG, str(tmp_path / "vocab.txt"),
                             str(tmp_path / "export"))
  predictor = inference.Predictor.from_export(export)
  assert predictor.feature_config == CONFIG
  inputs = {k: batch[k] for k in F.MODEL_FEATURES}
  assert rel_err(predictor.run_batch(inputs)["ngram_logits"], expected) < 1e-6
  pages = _pages(tmp_path)
  in_memory = inference.Predictor.from_model(model, CONFIG, of.tokenizer(tmp_path))
  lines = predictor.predict(pages, batch_size=1)
  assert lines == in_memory.predict(pages)
  assert [line["url"] for line in lines] == ["a", "b"]
  assert all(len(line["KeyPhrases"]) == 5 for line in lines)
  assert all(isinstance(p, list) and len(p) == 1 for p in lines[0]["KeyPhrases"])
