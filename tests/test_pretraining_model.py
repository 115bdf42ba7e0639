"""EtcPretrainingModel: InfoNCE over in-batch negatives, tied MLM output, exact batch slicing."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

import helpers
from etc_realformer import EtcConfig
from etc_realformer.data import pretraining_examples as pe
from etc_realformer.layers import CpcHead, MlmHead
from etc_realformer.models import EtcPretrainingModel

CONFIG = EtcConfig(vocab_size=300, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                   intermediate_size=32, local_radius=3, relative_pos_max_distance=2,
                   relative_vocab_size=8, hidden_dropout_prob=0.0,
                   attention_probs_dropout_prob=0.0)
DATA = pe.PretrainingDataConfig(long_seq_len=48, global_seq_len=8, max_predictions_per_seq=8,
                                max_cpc_per_seq=2, cpc_sentence_len=8)


def _batch(batch_size=4, seed=0):
  rng = np.random.default_rng(seed)
  docs = []
  for _ in range(batch_size * 3):
    docs.append([[list(rng.integers(110, 300, size=rng.integers(1, 3)))
                  for _ in range(rng.integers(2, 5))] for _ in range(rng.integers(2, 5))])
  examples = list(pe.create_examples(docs, DATA, CONFIG.vocab_size, seed=seed))[:batch_size]
  assert len(examples) == batch_size
  out = {k: np.stack([e[k] for e in examples]) for k in examples[0]}
  out["cpc_sentence_token_ids"] = out["cpc_sentence_token_ids"].reshape(batch_size, 2, 8)
  return {k: tf.constant(v, tf.float32 if k in pe.FLOAT_FEATURES else tf.int32)
          for k, v in out.items()}


def _model(**kwargs):
  model = EtcPretrainingModel(CONFIG, **kwargs)
  model.build()
  return model


def _log_softmax(x):
  x = x - x.max(-1, keepdims=True)
  return x - np.log(np.exp(x).sum(-1, keepdims=True))


@pytest.mark.parametrize("group", [0, 2])
def test_cpc_is_infonce_over_in_batch_negatives(group):
  batch = _batch()
  assert float(tf.reduce_sum(batch["cpc_weights"])) >= 4  # enough positives to be meaningful
  model = _model(cpc_group_size=group)
  out = model(batch, training=False)
  logits = out["cpc_logits"].numpy()
  assert logits.shape == (4, 2, 8)                     # [B, C, B*C]: every hidden sentence
  w = batch["cpc_weights"].numpy()                     # [B, C]
  allowed = np.broadcast_to(w.reshape(1, 1, 8) > 0, logits.shape).copy()
  if group:
    for b in range(4):
      for n in range(8):
        allowed[b, :, n] &= (b // group) == (n // (2 * group))
  masked = np.where(allowed, logits, -1e9)
  targets = np.arange(8).reshape(4, 2)
  ce = -np.take_along_axis(_log_softmax(masked), targets[..., None], -1)[..., 0]
  per_example = (ce * w).sum(1) / np.maximum(w.sum(1), 1)
  values = model.compute_losses(batch, out)
  np.testing.assert_allclose(values["cpc_loss"], per_example.mean(), rtol=1e-5)
  # With groups the candidates differ, so the loss does too.
  if group:
    ungrouped = _model(cpc_group_size=0)
    ungrouped.set_weights(model.get_weights())
    other = ungrouped.compute_losses(batch, ungrouped(batch, training=False))
    assert abs(float(other["cpc_loss"]) - float(values["cpc_loss"])) > 1e-4


def test_the_positive_is_the_sentence_encoded_alone():
  batch = _batch()
  model = _model()
  out = model(batch, training=False)
  # Recompute one positive key by hand: encode the hidden sentence by itself.
  sentence = batch["cpc_sentence_token_ids"][0, :1]                           # [1, S]
  alone = model.encoder({"token_ids": sentence,
                         "global_token_ids": tf.constant([[1]], tf.int32),
                         "sentence_ids": tf.zeros_like(sentence)})
  real = tf.cast(sentence != 0, tf.float32)[..., None]
  key = tf.reduce_sum(alone["long_output"] * real, 1) / tf.reduce_sum(real, 1)
  context = model.encoder({k: batch[k] for k in ("token_ids", "global_token_ids", "sentence_ids",
                                                 "long_breakpoints", "global_breakpoints")})
  query = tf.gather(context["global_output"], batch["cpc_global_positions"],
                    batch_dims=1)[:1, :1]                                     # [1, 1, H]
  expected = model.cpc_head(query, key)[0, 0, 0]
  np.testing.assert_allclose(out["cpc_logits"][0, 0, 0], expected, rtol=1e-5)


def test_mlm_output_is_tied_to_the_token_table():
  batch = _batch()
  model = _model()
  tables = [v for v in model.trainable_variables if v.shape == (CONFIG.vocab_size, 16)]
  assert len(tables) == 1                              # no separate output matrix
  unused = np.setdiff1d(np.arange(CONFIG.vocab_size),
                        np.concatenate([batch["token_ids"].numpy().ravel(),
                                        batch["cpc_sentence_token_ids"].numpy().ravel(),
                                        batch["global_token_ids"].numpy().ravel()]))
  with tf.GradientTape() as tape:
    loss = model.compute_losses(batch, model(batch, training=True))["mlm_loss"]
  grad = tf.convert_to_tensor(tape.gradient(loss, tables[0])).numpy()
  # Rows that never appear as inputs still get a gradient: through the tied output layer.
  assert np.abs(grad[unused]).max() > 1e-6


def test_global_batch_loss_and_gradients_are_the_mean_of_its_slices():
  batch = _batch()
  model = _model(cpc_group_size=2)
  halves = [{k: v[i * 2:(i + 1) * 2] for k, v in batch.items()} for i in (0, 1)]

  def loss_and_grads(b, m):
    with tf.GradientTape() as tape:
      values = m.compute_losses(b, m(b, training=True))
    grads = tape.gradient(values["loss"], m.trainable_variables)
    return float(values["loss"]), [tf.convert_to_tensor(g).numpy() for g in grads]

  full_loss, full_grads = loss_and_grads(batch, model)
  worker = _model(cpc_group_size=0)   # what one of two workers computes on its slice
  worker.set_weights(model.get_weights())
  parts = [loss_and_grads(h, worker) for h in halves]
  np.testing.assert_allclose(full_loss, (parts[0][0] + parts[1][0]) / 2, rtol=1e-6)
  for g, a, b in zip(full_grads, parts[0][1], parts[1][1]):
    np.testing.assert_allclose(g, (a + b) / 2, rtol=1e-4, atol=1e-7)


def test_loss_is_the_weighted_sum():
  batch = _batch()
  model = _model(mlm_loss_weight=0.7, cpc_loss_weight=0.3)
  v = model.compute_losses(batch, model(batch, training=False))
  np.testing.assert_allclose(v["loss"], 0.7 * v["mlm_loss"] + 0.3 * v["cpc_loss"], rtol=1e-6)
  assert 0.0 <= float(v["mlm_accuracy"]) <= 1.0 and 0.0 <= float(v["cpc_accuracy"]) <= 1.0


def test_pretraining_model_config_and_saved_model_round_trip(tmp_path):
  batch = _batch()
  model = _model(cpc_group_size=2)
  clone = EtcPretrainingModel.from_config(model.get_config())
  clone.build()
  clone.set_weights(model.get_weights())
  assert clone.get_config() == model.get_config()
  a = model(batch)["mlm_logits"]
  np.testing.assert_allclose(a, clone(batch)["mlm_logits"], rtol=1e-6, atol=1e-6)
  expected, got = helpers.saved_model_round_trip(model, batch, lambda m, x: m(x)["cpc_logits"])
  np.testing.assert_allclose(expected, got, rtol=1e-5, atol=1e-6)


def test_heads_basics(tmp_path):
  table = tf.random.normal([50, 8])
  helpers.check_layer_basics(lambda: MlmHead(12, 8, 50, name="mlm"),
                             lambda layer, x, training: layer(x, table),
                             lambda: tf.random.normal([2, 3, 12]))
  helpers.check_layer_basics(lambda: CpcHead(12, name="cpc"),
                             lambda layer, x, training: layer(x[0], x[1]),
                             lambda: (tf.random.normal([2, 3, 12]), tf.random.normal([6, 12])))


def test_training_steps_lower_the_loss():
  batch = _batch()
  model = _model()
  model.compile(optimizer=tf_keras.optimizers.Adam(3e-3))
  ds = tf.data.Dataset.from_tensors(batch).repeat(30)
  first = model.evaluate(tf.data.Dataset.from_tensors(batch), verbose=0, return_dict=True)
  model.fit(ds, verbose=0)
  last = model.evaluate(tf.data.Dataset.from_tensors(batch), verbose=0, return_dict=True)
  assert last["mlm_loss"] < first["mlm_loss"] - 1.0
  assert last["cpc_loss"] < first["cpc_loss"]
