"""WikiHop model: the loss by hand, both heads (add_final_layer), serialisation, and the export
serving what the in-memory model computes."""

import numpy as np
import pytest
import tensorflow as tf

import wikihop_fixtures as wf
from etc_realformer.data import tfrecords
from helpers import check_layer_basics, rel_err, saved_model_round_trip
from tasks.wikihop import features as F
from tasks.wikihop import inference
from tasks.wikihop import records
from tasks.wikihop.model import WikiHopModel
from tasks.wikihop.task import TASK

ENCODER = dict(vocab_size=200, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
               intermediate_size=32, local_radius=3, relative_pos_max_distance=2,
               relative_vocab_size=8, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
               use_hard_g2l_mask=True, residual_attention="sum")
CONFIG = F.WikiHopFeatureConfig(long_seq_len=40, global_seq_len=16, add_final_layer=False)


def _batch(tmp_path, answers=("freedonia", "york")):
  convert = records.converter(wf.tokenizer(tmp_path), CONFIG)
  feats = [convert(F.from_item(wf.raw_item(answer=a), True), True) for a in answers]
  return tfrecords.stack_features([{k: f[k] for k in F.MODEL_FEATURES + ("label_id",)}
                                   for f in feats], list(F.MODEL_FEATURES) + ["label_id"])


@pytest.mark.parametrize("add_final_layer", [False, True])
def test_loss_is_cross_entropy_over_candidates_only(tmp_path, add_final_layer):
  batch = _batch(tmp_path)
  model = WikiHopModel(ENCODER, add_final_layer=add_final_layer)
  logits = model(batch)["candidate_logits"].numpy()          # [2, G]
  assert (logits[:, 3:] == -10000.0).all() and (logits[:, :3] > -100).all()
  values = model.compute_losses(batch, {"candidate_logits": tf.constant(logits)})
  shifted = logits[:, :3] - logits[:, :3].max(-1, keepdims=True)
  log_p = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
  assert float(values["loss"]) == pytest.approx(-(log_p[0, 0] + log_p[1, 2]) / 2, rel=1e-5)
  expected_acc = np.mean([logits[0, :3].argmax() == 0, logits[1, :3].argmax() == 2])
  assert float(values["accuracy"]) == pytest.approx(expected_acc, abs=1e-5)
  head = [w.name for w in model.weights if "encoder" not in w.name]
  assert any("final_layer_inner" in name for name in head) == add_final_layer, head
  assert sum("output/kernel" in name for name in head) == 1 + add_final_layer, head


def test_without_the_final_layer_the_logits_are_one_dense_layer(tmp_path):
  batch = _batch(tmp_path)
  model = WikiHopModel(ENCODER, add_final_layer=False)
  logits = model(batch)["candidate_logits"].numpy()                          # [2, G]
  global_x = model.encoder(model.encoder_inputs(batch))["global_output"].numpy()  # [2, G, H]
  kernel, bias = (w.numpy() for w in model.output_layer.weights)
  np.testing.assert_allclose(logits[:, :3], (global_x @ kernel + bias)[:, :3, 0], rtol=1e-5,
                             atol=1e-6)


def test_model_basics(tmp_path):
  batch = _batch(tmp_path)            # 3 candidates of 16 global tokens in each row
  candidates = tf.equal(batch["global_token_type_ids"], F.CANDIDATE_GLOBAL_TYPE_ID)

  def call(model, x, training):
    # Zeros instead of -10000 outside the candidates: these would set rel_err's scale (and the
    # test loss), hiding the differences in the candidate logits.
    logits = model(x, training=training)["candidate_logits"]
    return {"candidate_logits": tf.where(candidates, logits, 0.0)}

  # Only global_output is read: the last layer's long-side attention cannot be trained.
  last = f"wikihop/encoder/layer_{ENCODER['num_hidden_layers'] - 1}"
  unused = [f"{last}/{name}:0" for name in (
      "attention/long_out_kernel", "attention/long_out_bias", "attention/long_rel_emb",
      "attention/long_rel_bias", "long_attention_norm/gamma", "long_attention_norm/beta")]
  check_layer_basics(lambda: WikiHopModel(ENCODER, add_final_layer=False, name="wikihop"),
                     call, lambda: batch,
                     half_dtype=tf.float32,  # the logits are cast to float32
                     no_gradient=unused)


def test_config_saved_model_and_export(tmp_path):
  batch = _batch(tmp_path)
  model = TASK.build_model(ENCODER, CONFIG)
  assert model.get_config()["add_final_layer"] is False
  assert WikiHopModel.from_config(model.get_config()).get_config() == model.get_config()
  expected, got = saved_model_round_trip(model, batch, lambda m, x: m(x)["candidate_logits"])
  assert rel_err(got, expected) < 1e-6
  export = TASK.export_model(model, CONFIG, str(tmp_path / "vocab.txt"),
                             str(tmp_path / "export"))
  predictor = inference.Predictor.from_export(export)
  assert predictor.feature_config == CONFIG
  inputs = {k: batch[k] for k in F.MODEL_FEATURES}
  assert rel_err(predictor.run_batch(inputs)["candidate_logits"],
                 model(inputs)["candidate_logits"]) < 1e-6
  examples = [wf.example(example_id=f"x{i}") for i in range(3)] + [
      wf.example(example_id="empty", candidates=[])]
  in_memory = inference.Predictor.from_model(model, CONFIG, wf.tokenizer(tmp_path))
  best = ["freedonia", "new york", "york"][int(np.argmax(expected[0, :3]))]
  assert predictor.predict(examples, batch_size=2) == in_memory.predict(examples) == {
      "x0": best, "x1": best, "x2": best, "empty": ""}
  with pytest.raises(FileNotFoundError, match="not a WikiHop export"):
    inference.Predictor.from_export(str(tmp_path))
