"""HotpotQA model: Keras basics, serialisation, SavedModel and the export (the loss against
Google's formula and the side inputs against Google's are in test_hotpotqa_layout.py)."""

import numpy as np
import tensorflow as tf

import hotpot_fixtures as hf
from helpers import check_layer_basics, rel_err, saved_model_round_trip
from tasks.hotpotqa import decode
from tasks.hotpotqa import features as fl
from tasks.hotpotqa import inference
from tasks.hotpotqa.model import HotpotQaModel
from tasks.hotpotqa.task import TASK
from tasks.hotpotqa.text import TextTokenizer

CONFIG = fl.HotpotFeatureConfig(long_seq_len=32, global_seq_len=16, max_question_pieces=8,
                                question_piece_global_ids=True)
ENCODER = dict(vocab_size=200, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
               intermediate_size=32, local_radius=3, relative_pos_max_distance=2,
               relative_vocab_size=8, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
               use_hard_g2l_mask=True, residual_attention="sum")


def _features(tmp_path, examples, is_training=True):
  tokenizer = TextTokenizer(hf.tokenizer(tmp_path).tokenizer)
  out = []
  for example in examples:
    f = fl.convert_example(example, tokenizer, CONFIG.long_seq_len, CONFIG.global_seq_len,
                           is_training=is_training, options=fl.ConverterOptions.of(CONFIG))
    fl.pop_stats(f)
    out.append(f)
  names = fl.MODEL_INPUTS + (fl.LABELS if is_training else ())
  batch = {}
  for name in names:
    value = np.stack([f[name] for f in out]).astype(np.int32)       # [B, L] / [B, G] / [B, 1]
    batch[name] = tf.constant(value[:, 0] if name in fl.SCALAR_LABELS else value)
  return batch


def test_model_basics(tmp_path):
  batch = _features(tmp_path, [hf.example(), hf.example(answer="yes")])
  check_layer_basics(lambda: HotpotQaModel(ENCODER, span_loss_in_sentences=True, name="hotpotqa"),
                     lambda m, x, training: m(x, training=training), lambda: batch,
                     half_dtype=tf.float32)  # the heads' logits are cast to float32


def test_config_and_saved_model_round_trip(tmp_path):
  batch = _features(tmp_path, [hf.example()], is_training=False)
  model = HotpotQaModel(ENCODER, span_loss_in_sentences=True, name="hotpotqa")
  clone = HotpotQaModel.from_config(model.get_config())
  assert clone.get_config() == model.get_config() and clone.span_loss_in_sentences
  expected, got = saved_model_round_trip(model, batch, lambda m, x: m(x)["sp_logits"])
  assert rel_err(got, expected) < 1e-6


def test_export_serves_the_same_outputs(tmp_path):
  tok = hf.tokenizer(tmp_path)
  model = HotpotQaModel(ENCODER, name="hotpotqa")
  batch = {k: v.numpy() for k, v in _features(tmp_path, [hf.example()], False).items()}
  expected = model(batch)
  export = TASK.export_model(model, CONFIG, str(tmp_path / "vocab.txt"),
                             str(tmp_path / "export"), {"sp_threshold": 0.3})
  predictor = inference.Predictor.from_export(export)
  assert predictor.threshold == 0.3 and predictor.feature_config == CONFIG
  got = predictor.run_batch(batch)
  for name in decode.OUTPUT_NAMES:
    assert rel_err(got[name], expected[name]) < 1e-6
  # Predictions for the example through the export equal those of the in-memory model.
  in_memory = inference.Predictor.from_model(model, CONFIG, tok, {"sp_threshold": 0.3})
  assert predictor.predict([hf.example()]) == in_memory.predict([hf.example()])
