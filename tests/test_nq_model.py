"""NQ model (Google's heads): Keras basics, serialisation, and the export serving the in-memory
model (outputs and predictions). The loss is checked against its formula in test_nq_layout.py."""

import json
import os

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

ENCODER = dict(vocab_size=200, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
               intermediate_size=32, local_radius=3, relative_pos_max_distance=2,
               relative_vocab_size=8, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
               use_hard_g2l_mask=True, residual_attention="sum")
# Token:    0       1     2    3    4      5      6      7    8       9       10     11   12
TOKENS = ["<HTML>", "<P>", "a", "b", "</P>", "<Ul>", "<Li>", "c", "cafe", "</Li>", "<Li>", "d",
          "</Li>", "</Ul>", "<P>", "e", "f", "g", "</P>", "</HTML>"]
#           13      14     15   16   17    18      19
CONFIG = fl.NqFeatureConfig(long_seq_len=16, global_seq_len=10, doc_stride=6,
                            max_question_pieces=3, html_tag_markers=True,
                            snap_long_answers_to_candidates=True)


def _batch(features, names=fl.MODEL_FEATURES):
  return {k: tf.constant(np.stack([f[k] for f in features]).astype(np.int32)) for k in names}


def windows(tmp_path, example_id=7, question="what is a"):
  example = data.parse_record(nf.record(example_id, question, TOKENS, []), False, [])
  features = fl.convert_example(example, nf.tokenizer(tmp_path), CONFIG, is_train=False)
  assert len(features) >= 2
  return example, features


def test_model_basics(tmp_path):
  _, features = windows(tmp_path)
  # Google's heads read only long_output: the last layer's global-side attention cannot be
  # trained.
  last = f"nq/encoder/layer_{ENCODER['num_hidden_layers'] - 1}"
  unused = [f"{last}/{name}:0" for name in (
      "attention/global_out_kernel", "attention/global_out_bias", "attention/global_rel_emb",
      "attention/global_rel_bias", "global_attention_norm/gamma", "global_attention_norm/beta")]
  check_layer_basics(lambda: NqModel(ENCODER, name="nq"),
                     lambda m, x, training: m(x, training=training),
                     lambda: _batch(features[:2]),
                     half_dtype=tf.float32,  # the heads' logits are cast to float32
                     no_gradient=unused)


def test_config_and_saved_model_round_trip(tmp_path):
  _, features = windows(tmp_path)
  model = NqModel(ENCODER, name="nq")
  clone = NqModel.from_config(model.get_config())
  assert clone.get_config() == model.get_config()
  expected, got = saved_model_round_trip(model, _batch(features[:2]),
                                         lambda m, x: m(x)["answer_type_logits"])
  assert rel_err(got, expected) < 1e-6


def test_export_serves_the_same_outputs_and_predictions(tmp_path):
  config = CONFIG
  example, features = windows(tmp_path)
  model = NqModel(ENCODER, name="nq")
  batch = {k: v.numpy() for k, v in _batch(features).items()}
  expected = model(batch)
  export = TASK.export_model(model, config, str(tmp_path / "vocab.txt"),
                             str(tmp_path / "export"))
  predictor = inference.Predictor.from_export(export)
  assert predictor.feature_config == config
  got = predictor.run_batch(batch)
  for name in decode.OUTPUT_NAMES:
    assert rel_err(got[name], expected[name]) < 1e-6
  other = data.parse_record(nf.record(8, "what is b", TOKENS, []), False, [])
  in_memory = inference.Predictor.from_model(model, config, nf.tokenizer(tmp_path))
  # Batches of 3 windows mix the two examples' windows; the entries must not.
  from_export = predictor.predict([example, other], batch_size=3)
  from_model = in_memory.predict([example, other], batch_size=8)
  for a, b in zip(from_export["predictions"], from_model["predictions"]):
    for key in ("long_answer_score", "short_answers_score"):
      assert a.pop(key) == pytest.approx(b.pop(key), abs=1e-5)
    assert a == b
  assert [e["example_id"] for e in from_export["predictions"]] == [7, 8]
  # Snapped: every long answer is a top-level candidate of the page.
  tops = {(c.span.start_token, c.span.end_token) for c in example.candidates if c.top_level}
  for entry in from_model["predictions"]:
    assert (entry["long_answer"]["start_token"], entry["long_answer"]["end_token"]) in tops
  with pytest.raises(FileNotFoundError, match="not an NQ export"):
    inference.Predictor.from_export(str(tmp_path))
  # An export written with the removed package layout: an error naming the file and the field.
  path = os.path.join(export, "task_config.json")
  with open(path) as f:
    task_config = json.load(f)
  task_config["feature_config"]["layout"] = "package"
  with open(path, "w") as f:
    json.dump(task_config, f)
  with pytest.raises(ValueError, match=r"task_config.json: field 'feature_config': layout: "
                     r"'package' was removed.*trained again"):
    inference.Predictor.from_export(export)
