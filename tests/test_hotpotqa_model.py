"""HotpotQA model: paragraph order cannot matter, losses by hand, serialisation and export."""

import numpy as np
import pytest
import tensorflow as tf

import hotpot_fixtures as hf
from helpers import check_layer_basics, rel_err, saved_model_round_trip
from tasks.hotpotqa import features as fl
from tasks.hotpotqa import inference
from tasks.hotpotqa.model import HotpotQaModel
from tasks.hotpotqa.task import TASK

CONFIG = fl.HotpotFeatureConfig(long_seq_len=32, global_seq_len=16, max_question_pieces=8)
ENCODER = dict(vocab_size=200, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
               intermediate_size=32, local_radius=3, relative_pos_max_distance=2,
               relative_vocab_size=8, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
               use_hard_g2l_mask=True, residual_attention="sum")


def _batch(features):
  return {k: tf.constant(np.stack([f[k] for f in features]).astype(np.int32))
          for k in features[0]}


@pytest.mark.parametrize("implementation", ["blocked", "dense"])
def test_paragraph_order_does_not_change_the_outputs(tmp_path, implementation):
  tok = hf.tokenizer(tmp_path)
  ex = hf.example()
  swapped = hf.example(context=list(reversed(ex.context)))
  (f1, l1), (f2, l2) = [fl.convert_example(e, tok, CONFIG, with_labels=True) for e in (ex, swapped)]
  model = HotpotQaModel(ENCODER, implementation=implementation)
  o1, o2 = [model(_batch([f])) for f in (f1, f2)]
  np.testing.assert_allclose(o1["answer_type_logits"], o2["answer_type_logits"], atol=1e-5)
  # The same sentence (title, index) gets the same supporting-fact logit ...
  sp1 = {s[1:]: float(o1["sp_logits"][0, g]) for s, g in zip(l1.sentences, l1.sentence_global)}
  sp2 = {s[1:]: float(o2["sp_logits"][0, g]) for s, g in zip(l2.sentences, l2.sentence_global)}
  assert sp1.keys() == sp2.keys()
  for key, value in sp1.items():
    assert value == pytest.approx(sp2[key], abs=1e-5)
  # ... and the same piece the same span logits.
  def by_piece(layout, out):
    table = {}
    for i, s in enumerate(layout.long_sentence.tolist()):
      if s >= 0:
        table[(layout.sentences[s][1:], int(layout.long_start[i]), i - list(
            layout.long_sentence).index(s))] = float(out["begin_logits"][0, i])
    return table
  b1, b2 = by_piece(l1, o1), by_piece(l2, o2)
  assert b1.keys() == b2.keys()
  assert max(abs(b1[k] - b2[k]) for k in b1) < 1e-5
  # Sanity: the rows really differ (the paragraphs moved).
  assert not np.array_equal(f1["token_ids"], f2["token_ids"])


def test_losses_match_a_numpy_computation(tmp_path):
  tok = hf.tokenizer(tmp_path)
  f_span, _ = fl.convert_example(hf.example(), tok, CONFIG, with_labels=True)
  f_yes, _ = fl.convert_example(hf.example(answer="yes"), tok, CONFIG, with_labels=True)
  batch = _batch([f_span, f_yes])
  model = HotpotQaModel(ENCODER)
  out = {k: v.numpy() for k, v in model(batch).items()}
  values = {k: float(v) for k, v in model.compute_losses(batch, out).items()}

  def log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))
  types = np.array([0, 1])
  type_loss = -np.mean(log_softmax(out["answer_type_logits"])[[0, 1], types])
  sp_terms = []
  for b in range(2):
    mask = batch["sp_mask"].numpy()[b] > 0
    z, y = out["sp_logits"][b][mask], batch["sp_labels"].numpy()[b][mask]
    sp_terms.append(np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))))
  span_mask = batch["span_mask"].numpy()[0] > 0
  begin = log_softmax(np.where(span_mask, out["begin_logits"][0], -1e4))
  end = log_softmax(np.where(span_mask, out["end_logits"][0], -1e4))
  span_loss = -(begin[6] + end[6]) / 2          # only the span example counts
  assert values["answer_type_loss"] == pytest.approx(type_loss, rel=1e-5)
  assert values["sp_loss"] == pytest.approx(np.mean(sp_terms), rel=1e-5)
  assert values["span_loss"] == pytest.approx(span_loss, rel=1e-5)
  assert values["loss"] == pytest.approx((type_loss + np.mean(sp_terms) + span_loss) / 3,
                                         rel=1e-5)


def test_model_basics(tmp_path):
  tok = hf.tokenizer(tmp_path)
  feats = [fl.convert_example(e, tok, CONFIG, with_labels=True)[0]
           for e in (hf.example(), hf.example(answer="yes"))]
  check_layer_basics(lambda: HotpotQaModel(ENCODER, name="hotpotqa"),
                     lambda m, x, training: m(x, training=training), lambda: _batch(feats),
                     half_dtype=tf.float32)  # the heads' logits are cast to float32


def test_config_and_saved_model_round_trip(tmp_path):
  tok = hf.tokenizer(tmp_path)
  f, _ = fl.convert_example(hf.example(), tok, CONFIG, with_labels=False)
  model = HotpotQaModel(ENCODER, name="hotpotqa")
  batch = _batch([f])
  clone = HotpotQaModel.from_config(model.get_config())
  assert clone.get_config() == model.get_config()
  expected, got = saved_model_round_trip(model, batch, lambda m, x: m(x)["sp_logits"])
  assert rel_err(got, expected) < 1e-6


def test_export_serves_the_same_outputs(tmp_path):
  tok = hf.tokenizer(tmp_path)
  f, _ = fl.convert_example(hf.example(), tok, CONFIG, with_labels=False)
  model = HotpotQaModel(ENCODER, name="hotpotqa")
  batch = {k: v.numpy() for k, v in _batch([f]).items()}
  expected = model(batch)
  export = TASK.export_model(model, CONFIG, str(tmp_path / "vocab.txt"),
                             str(tmp_path / "export"), {"sp_threshold": 0.3})
  predictor = inference.Predictor.from_export(export)
  assert predictor.threshold == 0.3 and predictor.feature_config == CONFIG
  got = predictor.run_batch(batch)
  for name in inference.OUTPUT_NAMES:
    assert rel_err(got[name], expected[name]) < 1e-6
  # Predictions for the example through the export equal those of the in-memory model.
  in_memory = inference.Predictor.from_model(model, CONFIG, tok, {"sp_threshold": 0.3})
  assert predictor.predict([hf.example()]) == in_memory.predict([hf.example()])
