"""Parity with Google's ETC: checkpoints written by the official code load, and the encoder
reproduces the official model's outputs (tests/fixtures/official_etc/, see its README)."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from etc_realformer import ops
from etc_realformer.checkpoint_conversion import official_to_package, package_to_official
from etc_realformer.models import official_checkpoint
from etc_realformer.models.encoder import EtcModel
from etc_realformer.training.initialization import make_initializer
from helpers import rel_err

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "official_etc")
LAYOUTS = ("released_layout", "variants")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _fixture(layout):
  folder = os.path.join(FIXTURES, layout)
  features = dict(np.load(os.path.join(folder, "features.npz")))
  expected = dict(np.load(os.path.join(folder, "expected.npz")))
  return os.path.join(folder, "model.ckpt"), features, expected


def _real_tokens(breakpoints):
  """[B, N] bool: the tokens of some example (padding after the last breakpoint is False)."""
  return ops.example_ids_from_breakpoints(breakpoints).numpy() > 0


def _without_side_inputs(features):
  return {k: v for k, v in features.items() if k not in ops.SIDE_INPUT_NAMES}


@pytest.fixture(scope="module", params=LAYOUTS)
def layout(request):
  return request.param


@pytest.mark.parametrize("implementation", ["blocked", "dense"])
@pytest.mark.parametrize("side", ["given", "derived"])
def test_outputs_equal_the_official_model(layout, implementation, side):
  prefix, features, expected = _fixture(layout)
  model = EtcModel.from_official_checkpoint(prefix, implementation=implementation)
  inputs = features if side == "given" else _without_side_inputs(features)
  out = model(inputs, training=False)
  long_real = _real_tokens(features["long_breakpoints"])
  global_real = _real_tokens(features["global_breakpoints"])
  assert rel_err(out["long_output"].numpy()[long_real], expected["long_output"][long_real]) < 1e-5
  assert rel_err(out["global_output"].numpy()[global_real],
                 expected["global_output"][global_real]) < 1e-5


def test_derived_side_inputs_equal_the_official_ones_on_real_tokens(layout):
  prefix, features, _ = _fixture(layout)
  config = official_checkpoint.read_official_config(prefix)
  side = EtcModel(config).side_inputs(_without_side_inputs(features))
  long_real = _real_tokens(features["long_breakpoints"])
  global_real = _real_tokens(features["global_breakpoints"])
  for name in ops.SIDE_INPUT_NAMES:
    queries = long_real if name.startswith("l2") else global_real
    np.testing.assert_array_equal(side[name].numpy()[queries], features[name][queries], name)


def test_mixed_float16_within_two_percent(layout):
  prefix, features, expected = _fixture(layout)
  tf_keras.mixed_precision.set_global_policy("mixed_float16")
  try:
    model = EtcModel.from_official_checkpoint(prefix)
    out = model(_without_side_inputs(features), training=False)
  finally:
    tf_keras.mixed_precision.set_global_policy("float32")
  assert out["long_output"].dtype == tf.float16
  long_real = _real_tokens(features["long_breakpoints"])
  assert rel_err(out["long_output"].numpy()[long_real], expected["long_output"][long_real]) < 0.02


def test_segment_ids_default_to_one_for_long_and_zero_for_global(layout):
  prefix, features, _ = _fixture(layout)
  model = EtcModel.from_official_checkpoint(prefix)
  inputs = _without_side_inputs(features)
  inputs.pop("segment_ids")
  inputs.pop("global_segment_ids")
  implicit = model(inputs)
  explicit = model(dict(inputs, segment_ids=np.ones_like(features["segment_ids"]),
                        global_segment_ids=np.zeros_like(features["global_segment_ids"])))
  np.testing.assert_array_equal(implicit["long_output"], explicit["long_output"])
  np.testing.assert_array_equal(implicit["global_output"], explicit["global_output"])


def test_every_official_variable_is_consumed(layout):
  prefix, _, _ = _fixture(layout)
  with open(os.path.join(FIXTURES, layout, "variables.txt")) as f:
    listed = {line.split(" [")[0]: json.loads("[" + line.split(" [")[1]) for line in f if line.strip()}
  model = EtcModel(official_checkpoint.read_official_config(prefix))
  model.build()
  pairs, ignored = official_checkpoint.match_weights(
      model, dict(tf.train.list_variables(prefix)), prefix)
  assert {name for _, name in pairs} == set(listed) and not ignored
  assert len(pairs) == len(model.weights)  # every model weight is filled
  for link, name in pairs:
    assert list(link.official_shape) == listed[name]


@pytest.mark.parametrize("override, expected_text", [
    ({"num_hidden_layers": 1}, "checkpoint variables the model does not use (38)"),
    ({"relative_vocab_size": 11}, "relative_emb_table [10, 4, 8] vs [11, 4, 8]"),
    ({"share_kv_projections": True}, "l2g_key_projection/linear/kernel [32, 32]"),
    ({"share_feed_forward_params": False},
     "model weights the checkpoint does not have"),
])
def test_a_wrong_config_names_the_variables_and_shapes(override, expected_text):
  prefix, _, _ = _fixture("released_layout")
  with pytest.raises(ValueError) as error:
    EtcModel.from_official_checkpoint(prefix, **override)
  message = str(error.value)
  assert expected_text in message and prefix in message
  assert "etc_document_bert/" in message


def test_training_state_and_heads_outside_the_encoder_are_ignored(tmp_path):
  prefix, features, expected = _fixture("released_layout")
  reader = tf.train.load_checkpoint(prefix)
  weights = {n: reader.get_tensor(n) for n in reader.get_variable_to_shape_map()}
  weights["global_step"] = np.array(7, np.int64)
  weights["etc_document_bert/token_emb_lookup/embedding_table/adam_m"] = np.zeros([200, 32],
                                                                                  np.float32)
  weights["cls/predictions/output_bias"] = np.zeros([200], np.float32)
  extended = official_checkpoint.write_official_checkpoint(weights, str(tmp_path / "model.ckpt"))
  shutil.copyfile(os.path.join(FIXTURES, "released_layout", "etc_config.json"),
                  tmp_path / "etc_config.json")
  model = EtcModel.from_official_checkpoint(extended)
  out = model(_without_side_inputs(features))
  real = _real_tokens(features["long_breakpoints"])
  assert rel_err(out["long_output"].numpy()[real], expected["long_output"][real]) < 1e-5


def test_overrides_such_as_residual_attention_are_allowed():
  prefix, features, expected = _fixture("released_layout")
  model = EtcModel.from_official_checkpoint(prefix, residual_attention="sum")
  assert model.etc_config.residual_attention == "sum"
  out = model(_without_side_inputs(features))
  real = _real_tokens(features["long_breakpoints"])
  # Layer 1 adds layer 0's scores: the outputs move away from the official ones.
  assert rel_err(out["long_output"].numpy()[real], expected["long_output"][real]) > 1e-3


def test_round_trip_official_to_package_to_official_is_bit_identical(layout, tmp_path):
  prefix, features, expected = _fixture(layout)
  ours = official_to_package(prefix, str(tmp_path / "ours"))
  assert sorted(os.listdir(tmp_path / "ours")) == [
      "encoder.data-00000-of-00001", "encoder.index", "etc_config.json", "vocab.txt"]
  with open(tmp_path / "ours" / "etc_config.json") as f:
    assert json.load(f)["residual_attention"] == "none"
  back = package_to_official(ours["checkpoint"], str(tmp_path / "back"))
  original, copy = tf.train.load_checkpoint(prefix), tf.train.load_checkpoint(back["checkpoint"])
  names = original.get_variable_to_shape_map()
  assert names == copy.get_variable_to_shape_map()
  for name in names:
    a, b = original.get_tensor(name), copy.get_tensor(name)
    assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name
  with open(os.path.join(FIXTURES, layout, "etc_config.json")) as f1, \
       open(tmp_path / "back" / "etc_config.json") as f2:
    assert json.load(f1) == json.load(f2)
  # The converted checkpoint is an ordinary init_checkpoint of this package.
  model = EtcModel(official_checkpoint.read_official_config(prefix))
  model.build()
  make_initializer(str(tmp_path / "ours"), model.etc_config)(type("M", (), {"encoder": model}))
  out = model(_without_side_inputs(features))
  real = _real_tokens(features["long_breakpoints"])
  assert rel_err(out["long_output"].numpy()[real], expected["long_output"][real]) < 1e-5


def test_convert_checkpoint_command_line(tmp_path):
  prefix, _, _ = _fixture("variants")
  env = dict(os.environ, PYTHONPATH=REPO)
  run = lambda *args: subprocess.run([sys.executable, "-m", "etc_realformer.convert_checkpoint",
                                      *args], capture_output=True, text=True, env=env, cwd=REPO)
  done = run(f"--official_checkpoint={os.path.dirname(prefix)}", f"--output_dir={tmp_path}/ours")
  assert done.returncode == 0, done.stderr
  assert "94 weights" in done.stdout
  done = run("--to_official", f"--checkpoint={tmp_path}/ours/encoder", f"--output_dir={tmp_path}/b")
  assert done.returncode == 0, done.stderr
  assert os.path.exists(tmp_path / "b" / "model.ckpt.index")
  missing = run(f"--official_checkpoint={tmp_path}/nothing", f"--output_dir={tmp_path}/x")
  assert missing.returncode != 0 and "no TF checkpoint there" in missing.stderr


def test_init_checkpoint_accepts_an_official_prefix_and_checks_the_shape():
  prefix, features, expected = _fixture("variants")
  config = official_checkpoint.read_official_config(prefix)
  model = EtcModel(config)
  model.build()
  make_initializer(prefix, config)(type("M", (), {"encoder": model}))
  out = model(_without_side_inputs(features))
  real = _real_tokens(features["global_breakpoints"])
  assert rel_err(out["global_output"].numpy()[real], expected["global_output"][real]) < 1e-5
  with pytest.raises(ValueError, match="num_hidden_layers 3 != 2"):
    make_initializer(os.path.dirname(prefix), config.replace(num_hidden_layers=2))


def test_numpy_reference_encoder_reproduces_the_official_outputs(layout):
  """The float64 NumPy reference, reading the official variable names directly, agrees with
  Google's outputs: the reference that the blocked/dense equivalence tests trust is ETC."""
  import numpy_reference  # pylint: disable=g-import-not-at-top
  prefix, features, expected = _fixture(layout)
  with open(os.path.join(FIXTURES, layout, "etc_config.json")) as f:
    config = json.load(f)
  reader = tf.train.load_checkpoint(prefix)
  weights = {n: reader.get_tensor(n) for n in reader.get_variable_to_shape_map()}
  side = {name: features[name] for name in ops.SIDE_INPUT_NAMES}
  long_out, global_out = numpy_reference.official_encoder_reference(weights, config, features, side)
  long_real = _real_tokens(features["long_breakpoints"])
  global_real = _real_tokens(features["global_breakpoints"])
  assert rel_err(long_out[long_real], expected["long_output"][long_real]) < 1e-5
  assert rel_err(global_out[global_real], expected["global_output"][global_real]) < 1e-5
