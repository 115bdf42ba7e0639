"""OpenKP model: word pooling and n-gram cells by hand, the loss, visual features, export."""

import numpy as np
import pytest
import tensorflow as tf

import openkp_fixtures as of
from etc_realformer.data import tfrecords
from helpers import check_layer_basics, rel_err, saved_model_round_trip
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
CONFIG = F.OpenKpFeatureConfig(long_seq_len=20, global_seq_len=6)


def _pages(tmp_path):
  pages, _ = read_pages(of.write_lines(tmp_path, [
      of.raw_page(url="a"), of.raw_page(url="b", KeyPhrases=[["best"], ["buy", "a"]])]), True)
  return pages


def _batch(tmp_path):
  tok = of.tokenizer(tmp_path)
  feats = [F.convert_page(p, tok, CONFIG, True)[0] for p in _pages(tmp_path)]
  return tfrecords.stack_features(feats, list(feats[0]))


def test_cells_and_loss_by_hand(tmp_path):
  batch = _batch(tmp_path)
  model = OpenKpModel(ENCODER)
  logits = model(batch)["ngram_logits"].numpy()                     # [2, 5, 20]
  assert logits.shape == (2, 5, 20)
  # 15 words: an n-gram may start at 0..15-n.
  for n in range(1, 6):
    assert (logits[:, n - 1, :16 - n] > -100).all() and (logits[:, n - 1, 16 - n:] == -1e4).all()
  values = model.compute_losses(batch, {"ngram_logits": tf.constant(logits)})
  flat = logits.reshape(2, -1).astype(np.float64)
  log_p = flat - flat.max(-1, keepdims=True)
  log_p -= np.log(np.exp(log_p).sum(-1, keepdims=True))
  # page a: "solar kettle" (n=2, start 2) and "camping" (n=1, start 9);
  # page b: "best" (n=1, start 5) and "buy a" (n=2, start 11).
  expected = (-(log_p[0, 20 + 2] + log_p[0, 9]) / 2 - (log_p[1, 5] + log_p[1, 20 + 11]) / 2) / 2
  assert float(values["loss"]) == pytest.approx(expected, rel=2e-4)   # oneDNN log-softmax


def test_words_are_sums_of_their_pieces_and_visual_features_matter(tmp_path):
  batch = _batch(tmp_path)
  model = OpenKpModel(ENCODER)
  base = model(batch)["ngram_logits"].numpy()
  # Word 7 ("Kettles") has two pieces; its one-gram score must come from their sum: recompute
  # the 1-gram head on hand-pooled encoder outputs.
  inputs = {k: batch[k] for k in ("token_ids", "global_token_ids", "sentence_ids")}
  extra = model.visual_projection(batch["global_visual_features"])
  long_extra = tf.gather(extra, batch["sentence_ids"], batch_dims=1)
  long_x = model.encoder(inputs, long_extra_embeddings=long_extra,
                         global_extra_embeddings=extra)["long_output"].numpy()
  words = np.zeros((2, 20, 16), np.float32)
  for b in range(2):
    for i, w in enumerate(batch["word_ids"][b]):
      if w >= 0:
        words[b, w] += long_x[b, i]
  one_gram = model.scorers[0](model.convolutions[0](words))[..., 0].numpy()
  np.testing.assert_allclose(base[:, 0, :15], one_gram[:, :15], rtol=1e-4, atol=1e-5)
  changed = dict(batch, global_visual_features=batch["global_visual_features"] * 0)
  assert np.abs(model(changed)["ngram_logits"].numpy() - base)[:, :, :10].max() > 1e-4


def test_model_basics(tmp_path):
  batch = _batch(tmp_path)            # 15 words of 20 slots in each row

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
  inputs = {k: batch[k] for k in records.INPUT_FEATURES}
  assert rel_err(predictor.run_batch(inputs)["ngram_logits"], expected) < 1e-6
  pages = _pages(tmp_path)
  pages[1].words = []          # a page without text: an empty line, still present
  in_memory = inference.Predictor.from_model(model, CONFIG, of.tokenizer(tmp_path))
  lines = predictor.predict(pages, batch_size=1)
  assert lines == in_memory.predict(pages)
  assert [line["url"] for line in lines] == ["a", "b"] and lines[1]["KeyPhrases"] == []
  assert len(lines[0]["KeyPhrases"]) == 5
  assert all(isinstance(p, list) and p for p in lines[0]["KeyPhrases"])
