"""EtcModel and TransformerBlock: serialisation, SavedModel, XLA, mixed precision, features."""

import os

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from etc_realformer import EtcConfig, EtcModel
from etc_realformer.layers import TransformerBlock
from helpers import check_layer_basics, random_side_inputs, rel_err, saved_model_round_trip

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tiny(**changes):
  values = dict(vocab_size=60, hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
                intermediate_size=32, local_radius=3, relative_pos_max_distance=2,
                relative_vocab_size=8, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                initializer_range=0.2)
  values.update(changes)
  return EtcConfig(**values)


def features(seed=0, batch=2, long_len=19, global_len=4, breakpoints=True):
  rng = np.random.default_rng(seed)
  f = {"token_ids": rng.integers(1, 60, (batch, long_len)).astype(np.int32),
       "global_token_ids": rng.integers(1, 60, (batch, global_len)).astype(np.int32),
       "segment_ids": rng.integers(0, 3, (batch, long_len)).astype(np.int32),
       "sentence_ids": np.sort(rng.integers(0, global_len, (batch, long_len)), 1).astype(np.int32)}
  if breakpoints:
    f["long_breakpoints"] = np.zeros((batch, long_len), np.int32)
    f["long_breakpoints"][:, long_len - 3] = 1  # 2 padding tokens at the end
    f["global_breakpoints"] = np.zeros((batch, global_len), np.int32)
    f["global_breakpoints"][:, -1] = 1
  return f


def model_call(model, f, training=False):
  out = model(f, training=training)
  return [out["long_output"], out["global_output"]]


def test_config_files_load():
  for name in ("tiny", "base", "large"):
    config = EtcConfig.from_file(os.path.join(ROOT, "configs", "models", f"{name}.yaml"))
    assert config.residual_attention == "sum"


@pytest.mark.parametrize("changes", [
    {},
    {"use_pre_activation_order": True, "residual_attention": "mean"},
    {"num_persistent_memory": 2, "use_feed_forward": False, "share_qkv_projections": False,
     "share_kv_projections": True},
    {"embedding_size": 8, "max_absolute_position_embeddings": 32, "relative_vocab_size": None,
     "share_feed_forward_params": False, "share_att_output_projection": True},
])
def test_model_basics(changes):
  config = tiny(**changes)
  check_layer_basics(lambda: EtcModel(config), lambda m, f, t: model_call(m, f, t),
                     lambda: features(1))


def test_block_basics():
  rng = np.random.default_rng(0)
  side = random_side_inputs(rng, 2, 11, 3, 2, 2)

  def make_inputs():
    return (tf.constant(rng.normal(size=(2, 11, 16)), tf.float32),
            tf.constant(rng.normal(size=(2, 3, 16)), tf.float32))

  def call(block, x, training):
    out = block(x[0], x[1], side, training=training)
    return [out["long_output"], out["global_output"], out["long_scores"], out["global_scores"]]

  check_layer_basics(lambda: TransformerBlock(16, 2, 2, 32, relative_vocab_size=8,
                                              hidden_dropout_prob=0.1, initializer_range=0.2),
                     call, make_inputs)


# Each implementation once, the blocked one with the options that add graph (12 s a case; the
# default blocked model also goes through a SavedModel in every task's model tests).
@pytest.mark.parametrize("implementation, changes", [
    ("blocked", {"use_pre_activation_order": True, "num_persistent_memory": 2}),
    ("dense", {}),
])
def test_saved_model_gives_identical_outputs(implementation, changes):
  model = EtcModel(tiny(**changes), implementation=implementation)
  f = features(2)
  expected, got = saved_model_round_trip(model, f, model_call)
  for a, b in zip(expected, got):
    # The loaded graph may order float sums differently from eager execution (ulp-level).
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_blocked_and_dense_models_agree():
  f = features(3)
  blocked = EtcModel(tiny())
  dense = EtcModel(tiny(), implementation="dense")
  blocked(f)
  dense(f)
  dense.set_weights(blocked.get_weights())
  for a, b in zip(model_call(blocked, f), model_call(dense, f)):
    # Padding tokens attend only to themselves in both layouts, so every row agrees.
    assert rel_err(a, b) <= 1e-5


def test_given_side_inputs_equal_derived_ones():
  f = features(4)
  model = EtcModel(tiny(use_hard_g2l_mask=True))
  derived = model_call(model, f)
  side = model.side_inputs({k: tf.constant(v) for k, v in f.items()})
  explicit = dict(f, **{k: v.numpy() for k, v in side.items()})
  for name in ("long_breakpoints", "global_breakpoints", "sentence_ids"):
    explicit.pop(name)
  for a, b in zip(derived, model_call(model, explicit)):
    np.testing.assert_array_equal(a, b)


def test_l2g_links_change_only_the_linked_long_tokens_relative_ids():
  f = features(6)
  model = EtcModel(tiny(use_hard_g2l_mask=True))
  plain = model_call(model, f)
  linked = dict(f, l2g_linked_ids=np.full((2, 19), -1, np.int32))
  for a, b in zip(plain, model_call(model, linked)):
    np.testing.assert_array_equal(a, b)   # no link: identical outputs
  linked["l2g_linked_ids"][0, 5] = 3
  side = model.side_inputs({k: tf.constant(v) for k, v in linked.items()})
  own = 2 * 2 + 2
  assert side["l2g_relative_att_ids"][0, 5, 3] == own
  long_out, _ = model_call(model, linked)
  changed = np.abs(long_out.numpy() - plain[0].numpy()).max(-1) > 1e-6   # [B, L]
  assert changed[0, 5] and not changed[1].any()


def test_extra_embeddings_are_added_before_the_embedding_norm():
  f = features(7)
  model = EtcModel(tiny(num_hidden_layers=1))
  plain = model_call(model, f)
  zeros = [np.zeros((2, 19, 16), np.float32), np.zeros((2, 4, 16), np.float32)]
  out = model(f, long_extra_embeddings=zeros[0], global_extra_embeddings=zeros[1])
  for a, b in zip(plain, (out["long_output"], out["global_output"])):
    np.testing.assert_allclose(a, b, atol=1e-6)
  long_x, global_x = model.embeddings(
      f["token_ids"], f["segment_ids"], f["global_token_ids"], np.zeros((2, 4), np.int32),
      long_extra=np.ones((2, 19, 16), np.float32))
  table = model.embeddings.token_table.numpy()
  raw = table[f["token_ids"]] + model.embeddings.segment_table.numpy()[f["segment_ids"]] + 1.0
  norm = model.embeddings.norms["long"]
  mean, var = raw.mean(-1, keepdims=True), raw.var(-1, keepdims=True)
  expected = (raw - mean) / np.sqrt(var + 1e-12) * norm.gamma.numpy() + norm.beta.numpy()
  np.testing.assert_allclose(long_x, expected, atol=1e-4)
  with pytest.raises(ValueError, match="long_extra_embeddings must have shape"):
    model(f, long_extra_embeddings=np.zeros((2, 19, 5), np.float32))


def test_jit_compile_matches_eager():
  model = EtcModel(tiny())
  f = features(5)
  eager = model_call(model, f)
  compiled = tf.function(lambda x: model_call(model, x), jit_compile=True)(f)
  for a, b in zip(eager, compiled):
    assert rel_err(b, a) <= 1e-5


def test_mixed_float16_under_jit():
  tf_keras.mixed_precision.set_global_policy("mixed_float16")
  try:
    model = EtcModel(tiny())
    out = tf.function(lambda x: model(x), jit_compile=True)(features(6))
    assert out["long_output"].dtype == tf.float16
    assert np.isfinite(out["long_output"].numpy()).all()
  finally:
    tf_keras.mixed_precision.set_global_policy("float32")


def _grads(model, f):
  with tf.GradientTape() as tape:
    out = model(f, training=True)
    loss = tf.reduce_sum(out["long_output"] ** 2) + tf.reduce_sum(out["global_output"] ** 3)
  return [tf.convert_to_tensor(g) for g in tape.gradient(loss, model.trainable_variables)]


@pytest.mark.parametrize("period,memory", [(1, 0), (2, 0), (2, 2)])
def test_gradient_checkpointing_gives_the_same_gradients(period, memory):
  # The carried residual streams cross the checkpointed segments in parts (three with memory).
  f = features(7)
  plain = EtcModel(tiny(num_persistent_memory=memory))
  checkpointed = EtcModel(tiny(grad_checkpointing_period=period, num_persistent_memory=memory))
  plain(f)
  checkpointed(f)
  checkpointed.set_weights(plain.get_weights())
  grads_plain, grads_ckpt = _grads(plain, f), _grads(checkpointed, f)
  largest = max(float(np.abs(g).max()) for g in grads_plain)
  for a, b in zip(grads_ckpt, grads_plain):
    assert float(np.abs(a - b).max()) <= 1e-5 * max(float(np.abs(b).max()), 1e-2 * largest)


def test_no_feed_forward_variables_without_feed_forward():
  model = EtcModel(tiny(use_feed_forward=False, num_persistent_memory=3))
  model(features(8))
  names = [v.name for v in model.weights]
  assert not any("feed_forward" in n for n in names)
  assert sum("mem_k" in n for n in names) == 3  # one memory per layer
  with_ff = EtcModel(tiny())
  with_ff(features(8))
  assert any("feed_forward" in v.name for v in with_ff.weights)


def test_attention_scores_for_analysis():
  config = tiny(num_persistent_memory=1)
  model = EtcModel(config)
  out = model(features(9), return_attention_scores=True)
  assert len(out["attention"]) == config.num_hidden_layers
  layer = out["attention"][0]
  b = config.local_radius + 1
  assert layer["long_probs"].shape == (2, 2, 5, b, 3 * b + 4 + 1)  # [B, h, nb, b, 3b+G+M]
  assert layer["global_probs"].shape == (2, 2, 4, 4 + 19 + 1)  # [B, h, G, G+L+M]
  np.testing.assert_allclose(tf.reduce_sum(layer["long_probs"], -1), 1.0, rtol=1e-5)
  np.testing.assert_allclose(tf.reduce_sum(layer["global_probs"], -1), 1.0, rtol=1e-5)


# ----------------------------------------------------------------------- bad features
@pytest.mark.parametrize("mutate,message", [
    (lambda f: f.pop("token_ids"), "'token_ids' is missing"),
    (lambda f: f.update(token_ids=f["token_ids"][0]), "'token_ids' must have rank 2"),
    (lambda f: f.update(segment_ids=f["segment_ids"][:1]), "'segment_ids' has batch size 1"),
    (lambda f: f.update(sentence_ids=f["sentence_ids"][:, :5]), "'sentence_ids' has shape"),
    (lambda f: f.update(token_ids=f["token_ids"] + 100), "'token_ids' has value .*vocab_size"),
    (lambda f: f.update(global_segment_ids=np.full((2, 4), 16, np.int32)),
     "'global_segment_ids' has value 16"),
    (lambda f: f.update(sentence_ids=f["sentence_ids"] + 4), "'sentence_ids' has value"),
    (lambda f: f.update(token_ids=f["token_ids"].astype(np.float32)), "'token_ids' must hold int"),
    (lambda f: f.update(l2l_att_mask=np.ones((2, 19, 7), np.int32)), "given only in part"),
    (lambda f: f.update(l2g_linked_ids=np.full((2, 19), 4, np.int32)),
     "'l2g_linked_ids' has value 4 outside \\[-1, 4\\)"),
])
def test_bad_features_name_the_feature(mutate, message):
  model = EtcModel(tiny())
  f = features(10)
  mutate(f)
  with pytest.raises(ValueError, match=message):
    model(f)


def test_bad_relative_ids_in_graph_mode_name_the_feature():
  model = EtcModel(tiny())
  f = features(11)
  side = {k: v.numpy() for k, v in model.side_inputs(
      {k: tf.constant(v) for k, v in f.items()}).items()}
  side["g2l_relative_att_ids"][0, 0, 0] = 99
  f.update(side)
  with pytest.raises(ValueError, match="'g2l_relative_att_ids' has value 99"):
    model(f)
  with pytest.raises(tf.errors.InvalidArgumentError, match="g2l_relative_att_ids"):
    tf.function(lambda x: model(x))(f)
