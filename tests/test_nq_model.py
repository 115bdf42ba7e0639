"""NQ model: losses by hand, serialisation, and the export serving the in-memory model."""

import numpy as np
import pytest
import tensorflow as tf

import nq_fixtures as nf
from helpers import check_layer_basics, rel_err, saved_model_round_trip
from tasks.nq import data
from tasks.nq import decode
from tasks.nq import features as fl
from tasks.nq import inference
from tasks.nq.model import NqModel
from tasks.nq.task import TASK
from test_nq_features import CONFIG, TOKENS

ENCODER = dict(vocab_size=200, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
               intermediate_size=32, local_radius=3, relative_pos_max_distance=2,
               relative_vocab_size=8, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
               use_hard_g2l_mask=True, residual_attention="sum")


def _batch(features):
  return {k: tf.constant(np.stack([f[k] for f in features]).astype(np.int32))
          for k in features[0]}


def windows(tmp_path, annotations, with_labels=True, example_id=7):
  example = data.parse_record(nf.record(example_id, "what is a", TOKENS, annotations),
                              with_labels, [])
  features, layout = fl.convert_example(example, nf.tokenizer(tmp_path), CONFIG, with_labels)
  return example, features, layout


def log_softmax(x):
  x = x - x.max(-1, keepdims=True)
  return x - np.log(np.exp(x).sum(-1, keepdims=True))


def test_losses_match_a_numpy_computation(tmp_path):
  _, features, _ = windows(tmp_path, [nf.annotation(TOKENS, 2, [(8, 9)])])
  _, long_only, _ = windows(tmp_path, [nf.annotation(TOKENS, 0)])
  # Windows: short (window 1 of the first), null (window 0 of the first), long (window 0).
  batch = _batch([features[1], features[0], long_only[0]])
  assert batch["answer_type"].numpy().tolist() == [fl.SHORT, fl.NULL, fl.LONG]
  model = NqModel(ENCODER)
  out = {k: v.numpy() for k, v in model(batch).items()}
  values = {k: float(v) for k, v in model.compute_losses(batch, out).items()}
  b = {k: v.numpy() for k, v in batch.items()}
  type_loss = -np.mean(log_softmax(out["answer_type_logits"])[[0, 1, 2], b["answer_type"]])

  def span(name, mask, rows):
    terms = []
    for r in rows:
      start = log_softmax(np.where(b[mask][r] > 0, out[f"{name}_start_logits"][r], -1e4))
      end = log_softmax(np.where(b[mask][r] > 0, out[f"{name}_end_logits"][r], -1e4))
      terms.append(-(start[b[f"{name}_start"][r]] + end[b[f"{name}_end"][r]]) / 2)
    return np.mean(terms)
  long_loss = span("long", "doc_mask", [0, 2])      # the null window does not count
  short_loss = span("short", "short_mask", [0])
  assert values["answer_type_loss"] == pytest.approx(type_loss, rel=1e-5)
  assert values["long_loss"] == pytest.approx(long_loss, rel=1e-5)
  assert values["short_loss"] == pytest.approx(short_loss, rel=1e-5)
  assert values["loss"] == pytest.approx((type_loss + long_loss + short_loss) / 3, rel=1e-5)


def test_model_basics(tmp_path):
  _, features, _ = windows(tmp_path, [nf.annotation(TOKENS, 2, [(8, 9)])])
  check_layer_basics(lambda: NqModel(ENCODER, name="nq"),
                     lambda m, x, training: m(x, training=training),
                     lambda: _batch(features[:2]),
                     half_dtype=tf.float32)  # the heads' logits are cast to float32


def test_config_and_saved_model_round_trip(tmp_path):
  _, features, _ = windows(tmp_path, [], with_labels=False)
  model = NqModel(ENCODER, name="nq")
  clone = NqModel.from_config(model.get_config())
  assert clone.get_config() == model.get_config()
  expected, got = saved_model_round_trip(model, _batch(features[:2]),
                                         lambda m, x: m(x)["long_start_logits"])
  assert rel_err(got, expected) < 1e-6


def test_export_serves_the_same_outputs_and_predictions(tmp_path):
  example, features, _ = windows(tmp_path, [], with_labels=False)
  model = NqModel(ENCODER, name="nq")
  batch = {k: v.numpy() for k, v in _batch(features).items()}
  expected = model(batch)
  export = TASK.export_model(model, CONFIG, str(tmp_path / "vocab.txt"),
                             str(tmp_path / "export"))
  predictor = inference.Predictor.from_export(export)
  assert predictor.feature_config == CONFIG
  got = predictor.run_batch(batch)
  for name in decode.OUTPUT_NAMES:
    assert rel_err(got[name], expected[name]) < 1e-6
  other = data.parse_record(nf.record(8, "what is b", TOKENS, []), False, [])
  in_memory = inference.Predictor.from_model(model, CONFIG, nf.tokenizer(tmp_path))
  # Batches of 3 windows mix the two examples' windows; the entries must not.
  from_export = predictor.predict([example, other], batch_size=3)
  from_model = in_memory.predict([example, other], batch_size=8)
  for a, b in zip(from_export["predictions"], from_model["predictions"]):
    for key in ("long_answer_score", "short_answers_score"):
      assert a.pop(key) == pytest.approx(b.pop(key), abs=1e-5)
    assert a == b
  assert [e["example_id"] for e in from_export["predictions"]] == [7, 8]
  with pytest.raises(FileNotFoundError, match="not an NQ export"):
    inference.Predictor.from_export(str(tmp_path))
