"""Lifting a BERT into ETC (models/bert_lifting.py): a checkpoint written by Google's BERT code
(tests/fixtures/official_bert/, see its README) lifts into an EtcModel that reproduces BERT's
outputs; every variable is accounted for; the command line, Hugging Face files and
`train.init_checkpoint` take the same checkpoint."""

import json
import os
import shutil
import subprocess
import sys

import ml_dtypes
import numpy as np
import safetensors
import safetensors.numpy
import pytest
import tensorflow as tf

from etc_realformer import ops
from etc_realformer.checkpoint_conversion import load_encoder_checkpoint
from etc_realformer.config import EtcConfig
from etc_realformer.lift_bert import POOLER_FILE, REPORT_FILE, lift_to_package
from etc_realformer.models import bert_export
from etc_realformer.models import bert_lifting
from etc_realformer.models import official_checkpoint
from etc_realformer.models.encoder import EtcModel
from etc_realformer.training.initialization import make_initializer

FOLDER = os.path.join(os.path.dirname(__file__), "fixtures", "official_bert")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LENGTH = 24  # the fixture's input length
# Every long token sees every other one; no global token is open to them.
EXACT = {"local_radius": LENGTH}


def _fixture():
  features = dict(np.load(os.path.join(FOLDER, "features.npz")))
  expected = dict(np.load(os.path.join(FOLDER, "expected.npz")))
  return features, expected


def _etc_features(features):
  """BERT's inputs as ETC features: one global token, padding (id 0), so that no long token
  attends to a global one; no breakpoints (token id 0 is padding, each row one example)."""
  batch = features["input_ids"].shape[0]
  return {"token_ids": features["input_ids"], "segment_ids": features["token_type_ids"],
          "global_token_ids": np.zeros([batch, 1], np.int32)}


def _max_diff_on_real_tokens(model, features, expected):
  out = model(_etc_features(features), training=False)["long_output"].numpy()
  real = features["input_mask"] > 0
  return float(np.abs(out[real] - expected["sequence_output"][real]).max())


def _variables():
  with open(os.path.join(FOLDER, "variables.txt")) as f:
    return [line.split()[0] for line in f if line.strip()]


def _copy_checkpoint(tmp_path, change=None, extra=None, drop=()):
  """The fixture written again into tmp_path with `change` ({name: new array}), `extra`
  variables added and `drop` names removed; bert_config.json and vocab.txt copied."""
  reader = tf.train.load_checkpoint(os.path.join(FOLDER, "bert_model.ckpt"))
  weights = {n: reader.get_tensor(n) for n in reader.get_variable_to_shape_map() if n not in drop}
  weights.update(change or {})
  weights.update(extra or {})
  folder = tmp_path / "bert"
  folder.mkdir()
  official_checkpoint.write_official_checkpoint(weights, str(folder / "bert_model.ckpt"))
  for name in ("bert_config.json", "vocab.txt"):
    shutil.copyfile(os.path.join(FOLDER, name), folder / name)
  return folder


# ------------------------------------------------------------------------------- exactness
@pytest.mark.parametrize("implementation", ["blocked", "dense"])
def test_lifted_bert_reproduces_berts_outputs(implementation):
  features, expected = _fixture()
  model = EtcModel.from_bert_checkpoint(FOLDER, implementation=implementation, **EXACT)
  assert model.etc_config.residual_attention == "none"
  assert model.etc_config.hidden_act == "gelu"  # BERT's gelu: the tanh approximation
  assert model.etc_config.max_absolute_position_embeddings == 64
  assert _max_diff_on_real_tokens(model, features, expected) < 1e-5
  # BERT's pooler is kept: tanh(W h[CLS] + b) gives BERT's pooled output.
  out = model(_etc_features(features), training=False)
  pooled = bert_lifting.pooled_output(out["long_output"], model.lift_report.pooler)
  np.testing.assert_allclose(pooled.numpy(), expected["pooled_output"], atol=1e-5)


def test_every_variable_is_mapped_or_named_as_skipped():
  report = EtcModel.from_bert_checkpoint(FOLDER, **EXACT).lift_report
  mapped = {name for name, _ in report.mapped}
  skipped = {name for name, _ in report.skipped}
  assert mapped | skipped == set(_variables())
  assert skipped == {"bert/pooler/dense/kernel", "bert/pooler/dense/bias"}
  # Every model weight is filled from BERT or listed as new (relative tables, segment rows).
  targets = {t for _, names in report.mapped for t in names}
  new = {name for name, _ in report.new}
  model = EtcModel.from_bert_checkpoint(FOLDER, **EXACT)
  assert {w.name.split(":")[0] for w in model.weights} == targets | new
  for block in model.blocks:
    for emb, bias in block.attention.relative_tables.values():
      assert not emb.numpy().any() and not bias.numpy().any()


def test_unshared_layout_copies_bert_into_every_projection():
  features, expected = _fixture()
  model = EtcModel.from_bert_checkpoint(FOLDER, share_qkv_projections=False,
                                        share_feed_forward_params=False, **EXACT)
  attention = model.blocks[1].attention
  kernels = attention.projection_kernels
  assert set(kernels) == {"long_q", "global_q", "l2l_k", "l2g_k", "g2g_k", "g2l_k", "l2l_v",
                          "l2g_v", "g2g_v", "g2l_v"}
  reader = tf.train.load_checkpoint(os.path.join(FOLDER, "bert_model.ckpt"))
  key = reader.get_tensor("bert/encoder/layer_1/attention/self/key/kernel")
  for name in ("l2l_k", "l2g_k", "g2g_k", "g2l_k"):
    np.testing.assert_array_equal(kernels[name].numpy().reshape(key.shape), key)
  assert _max_diff_on_real_tokens(model, features, expected) < 1e-5


def test_wrong_shape_missing_and_unused_variables_name_themselves_and_the_file(tmp_path):
  name = "bert/encoder/layer_1/attention/self/key/kernel"
  folder = _copy_checkpoint(tmp_path, change={name: np.zeros([32, 16], np.float32)})
  with pytest.raises(ValueError) as error:
    EtcModel.from_bert_checkpoint(str(folder))
  message = str(error.value)
  assert str(folder / "bert_model.ckpt") in message
  assert f"{name} [32, 16] vs [32, 32]" in message
  assert "layer_0" not in message  # only the variable that differs is named

  other = tmp_path / "other"
  other.mkdir()
  folder = _copy_checkpoint(
      other, drop=["bert/encoder/layer_0/output/LayerNorm/beta"],
      extra={"bert/encoder/layer_2/output/LayerNorm/beta": np.zeros([32], np.float32)})
  with pytest.raises(ValueError) as error:
    EtcModel.from_bert_checkpoint(str(folder))
  message = str(error.value)
  assert "does not have (1):\n    bert/encoder/layer_0/output/LayerNorm/beta [32]" in message
  assert "does not use (1):\n    bert/encoder/layer_2/output/LayerNorm/beta [32]" in message


def test_training_state_and_heads_are_skipped_by_rule_and_listed(tmp_path):
  extra = {"global_step": np.array(7, np.int64),
           "bert/embeddings/word_embeddings/adam_m": np.zeros([120, 32], np.float32),
           "bert/embeddings/word_embeddings/adam_v": np.zeros([120, 32], np.float32),
           "cls/predictions/output_bias": np.zeros([120], np.float32)}
  folder = _copy_checkpoint(tmp_path, extra=extra)
  features, expected = _fixture()
  model = EtcModel.from_bert_checkpoint(str(folder), **EXACT)
  skipped = dict(model.lift_report.skipped)
  assert set(extra) <= set(skipped)
  assert skipped["global_step"] == "training state"
  assert "outside the encoder" in skipped["cls/predictions/output_bias"]
  assert _max_diff_on_real_tokens(model, features, expected) < 1e-5


def test_residual_attention_sum_keeps_layer_0_and_changes_later_layers():
  features, _ = _fixture()
  inputs = _etc_features(features)
  real = features["input_mask"] > 0

  def per_layer(model):
    """The long output of every layer (the encoder's call loop, unrolled)."""
    side = ops.blocked_side_inputs(model.side_inputs(inputs), model.etc_config.local_radius)
    long_x, global_x = model.embeddings(inputs["token_ids"], inputs["segment_ids"],
                                        inputs["global_token_ids"],
                                        np.zeros_like(inputs["global_token_ids"]))
    scores, outputs = [None, None], []
    for block in model.blocks:
      out = block(long_x, global_x, side, long_scores=scores[0], global_scores=scores[1])
      long_x, global_x = out["long_output"], out["global_output"]
      scores = [out["long_scores"], out["global_scores"]]
      outputs.append(long_x.numpy()[real])
    return outputs

  plain = per_layer(EtcModel.from_bert_checkpoint(FOLDER, **EXACT))
  summed_model = EtcModel.from_bert_checkpoint(FOLDER, residual_attention="sum", **EXACT)
  summed = per_layer(summed_model)
  assert np.abs(summed[0] - plain[0]).max() < 1e-6
  assert np.abs(summed[-1] - plain[-1]).max() > 1e-3  # 1000x the rounding error
  final = summed_model(inputs, training=False)["long_output"].numpy()[real]
  np.testing.assert_allclose(final, summed[-1], atol=1e-5)
  assert any("residual_attention" in note for note in summed_model.lift_report.notes)


def test_positions_copy_repeats_bert_table_and_drop_removes_it():
  model = EtcModel.from_bert_checkpoint(FOLDER, max_absolute_position_embeddings=150)
  reader = tf.train.load_checkpoint(os.path.join(FOLDER, "bert_model.ckpt"))
  bert = reader.get_tensor("bert/embeddings/position_embeddings")  # [64, 32]
  for table in model.embeddings.position_tables.values():
    value = table.numpy()  # [150, 32]
    np.testing.assert_array_equal(value[:64], bert)
    np.testing.assert_array_equal(value[64:128], bert)
    np.testing.assert_array_equal(value[128:], bert[:22])
  # A 100-token input now runs (BERT alone stops at 64 positions).
  ids = np.random.default_rng(0).integers(5, 120, (1, 100)).astype(np.int32)
  out = model({"token_ids": ids, "global_token_ids": np.ones([1, 2], np.int32)}, training=False)
  assert out["long_output"].shape == (1, 100, 32)

  dropped = EtcModel.from_bert_checkpoint(FOLDER, position_embeddings="drop")
  assert dropped.etc_config.max_absolute_position_embeddings == 0
  assert not dropped.embeddings.position_tables
  assert "position_embeddings='drop'" in dict(dropped.lift_report.skipped)[
      "bert/embeddings/position_embeddings"]


def test_global_token_rows_start_from_cls_and_mask_in_berts_vocabulary_layout(tmp_path):
  folder = _copy_checkpoint(tmp_path)
  # BERT's reserved layout ([PAD], [unused0..98], [UNK], [CLS], [SEP], [MASK]), then words.
  pieces = (["[PAD]"] + [f"[unused{i}]" for i in range(99)] + ["[UNK]", "[CLS]", "[SEP]",
                                                                  "[MASK]"])
  pieces += [f"w{i}" for i in range(120 - len(pieces))]
  (folder / "vocab.txt").write_text("\n".join(pieces) + "\n")
  table = EtcModel.from_bert_checkpoint(str(folder)).embeddings.token_table.numpy()
  bert = tf.train.load_checkpoint(str(folder / "bert_model.ckpt")).get_tensor(
      "bert/embeddings/word_embeddings")
  for token in (1, 3, 4, 5):
    np.testing.assert_array_equal(table[token], bert[101])  # [CLS]
  np.testing.assert_array_equal(table[2], bert[103])  # [MASK], for the CPC-hidden sentence
  np.testing.assert_array_equal(table[6:], bert[6:])
  kept = EtcModel.from_bert_checkpoint(str(folder), global_token_init="keep")
  np.testing.assert_array_equal(kept.embeddings.token_table.numpy(), bert)


# --------------------------------------------------------------------------- the command
def test_lift_writes_a_checkpoint_that_loads_with_the_same_outputs(tmp_path):
  features, expected = _fixture()
  out_dir = str(tmp_path / "lifted")
  result = lift_to_package(FOLDER, out_dir, overrides=EXACT)
  assert sorted(os.listdir(out_dir)) == sorted(
      ["encoder.index", "encoder.data-00000-of-00001", "etc_config.json", "vocab.txt",
       POOLER_FILE, REPORT_FILE])
  assert not [n for n in os.listdir(tmp_path) if n.startswith(".")]  # no staging folder left
  loaded = load_encoder_checkpoint(os.path.join(out_dir, "encoder"))
  assert _max_diff_on_real_tokens(loaded, features, expected) < 1e-5
  lifted = EtcModel.from_bert_checkpoint(FOLDER, **EXACT)
  for a, b in zip(loaded.weights, lifted.weights):
    rows = 2 if "segment_embeddings" in a.name else None  # rows 2.. are freshly drawn
    np.testing.assert_array_equal(a.numpy()[:rows], b.numpy()[:rows], a.name)
  pooler = np.load(os.path.join(out_dir, POOLER_FILE))
  np.testing.assert_array_equal(pooler["kernel"], result["report"].pooler["kernel"])
  with open(os.path.join(out_dir, REPORT_FILE)) as f:
    report = json.load(f)
  assert set(report["mapped"]) | set(report["skipped"]) == set(_variables())


def test_command_line_prints_mapped_and_skipped_and_the_time(tmp_path):
  out_dir = tmp_path / "lifted"
  run = subprocess.run(
      [sys.executable, "-m", "etc_realformer.lift_bert",
       f"--bert_checkpoint={os.path.join(FOLDER, 'bert_model.ckpt')}", f"--output_dir={out_dir}",
       "--set", "model.local_radius=24", "--set", "model.residual_attention=sum", "--noverbose"],
      cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
  assert run.returncode == 0, run.stderr[-2000:]
  assert "37 BERT variables mapped" in run.stdout
  assert "skipped  bert/pooler/dense/kernel" in run.stdout
  assert "wrote " in run.stdout and " s\n" in run.stdout
  config = EtcConfig.from_json_file(str(out_dir / "etc_config.json"))
  assert (config.local_radius, config.residual_attention) == (24, "sum")


# -------------------------------------------------------------------- Hugging Face files
def _hf_folder(tmp_path, model_type):
  """The fixture's weights written as Hugging Face files (model.safetensors, config.json)."""
  reader = tf.train.load_checkpoint(os.path.join(FOLDER, "bert_model.ckpt"))
  with open(os.path.join(FOLDER, "bert_config.json")) as f:
    config = json.load(f)
  prefix = model_type + "."
  tensors = {}
  for name in _variables():
    value = reader.get_tensor(name)
    short = name[len("bert/"):]
    if short.startswith("embeddings/") and not short.startswith("embeddings/LayerNorm"):
      hf = f"embeddings.{short.split('/')[1]}.weight"
      if short.endswith("position_embeddings") and model_type == "roberta":
        # RoBERTa: rows 0 and 1 (padding_idx 1 and before) are not positions.
        value = np.concatenate([np.full([2, value.shape[1]], 9.0, np.float32), value])
    else:
      parts = short.split("/")
      param = {"kernel": "weight", "bias": "bias", "gamma": "weight", "beta": "bias"}[parts[-1]]
      module = ".".join(p.replace("layer_", "layer.") for p in parts[:-1])
      hf = f"{module}.{param}"
      if parts[-1] == "kernel":
        value = value.T  # torch Linear: [out, in]
    tensors[prefix + hf] = value
  tensors[prefix + "embeddings.position_ids"] = np.arange(64, dtype=np.int64)[None]
  tensors["lm_head.bias" if model_type == "roberta" else "cls.predictions.bias"] = np.zeros(
      [120], np.float16)
  folder = tmp_path / model_type
  folder.mkdir()
  save_safetensors(tensors, str(folder / "model.safetensors"))
  config.update(model_type=model_type, hidden_act="gelu_new", layer_norm_eps=1e-12)
  if model_type == "roberta":
    config.update(max_position_embeddings=66, pad_token_id=1)
  (folder / "config.json").write_text(json.dumps(config))
  shutil.copyfile(os.path.join(FOLDER, "vocab.txt"), folder / "vocab.txt")
  return folder


def save_safetensors(tensors, path):
  """The safetensors library's writer; it writes a transposed view's memory, not its values, so
  every array is made contiguous first."""
  safetensors.numpy.save_file({k: np.ascontiguousarray(v) for k, v in tensors.items()}, path)


@pytest.mark.parametrize("model_type", ["bert", "roberta"])
def test_hugging_face_safetensors_give_the_same_outputs(tmp_path, model_type):
  features, expected = _fixture()
  folder = _hf_folder(tmp_path, model_type)
  model = EtcModel.from_bert_checkpoint(str(folder), **EXACT)
  assert model.etc_config.max_absolute_position_embeddings == 64
  assert _max_diff_on_real_tokens(model, features, expected) < 1e-5
  skipped = dict(model.lift_report.skipped)
  assert f"{model_type}.embeddings.position_ids" in skipped
  assert {n for n, _ in model.lift_report.mapped} | set(skipped) == set(
      safetensors.safe_open(str(folder / "model.safetensors"), "numpy").keys())


def test_hugging_face_activation_names_and_bfloat16_weights(tmp_path):
  folder = _hf_folder(tmp_path, "bert")
  path = str(folder / "model.safetensors")
  with safetensors.safe_open(path, "numpy") as f:
    tensors = {name: f.get_tensor(name) for name in f.keys()}
  halves = {name: value.astype(ml_dtypes.bfloat16) if value.dtype == np.float32 else value
            for name, value in tensors.items()}
  save_safetensors(halves, path)
  weights = bert_lifting.open_hf(str(folder))
  name = "bert/encoder/layer_0/attention/self/query/kernel"
  np.testing.assert_array_equal(  # widened to float32, torch's [out, in] turned to [in, out]
      weights.read(name), halves[weights.original[name]].astype(np.float32).T)
  config = {"vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2,
            "intermediate_size": 16, "max_position_embeddings": 16, "type_vocab_size": 2}
  for hf, ours in (("gelu", "gelu_exact"), ("gelu_new", "gelu"), ("silu", "swish")):
    (tmp_path / "config.json").write_text(json.dumps(dict(config, hidden_act=hf)))
    assert bert_lifting.read_hf_config(str(tmp_path / "config.json"))["hidden_act"] == ours


# ------------------------------------------------------------------- train.init_checkpoint
def test_init_checkpoint_accepts_a_bert_folder_and_checks_the_shape():
  config = bert_lifting.etc_config_from_bert(bert_lifting.read_bert_config(FOLDER),
                                             position_embeddings="drop", local_radius=4)
  initialize = make_initializer(FOLDER, config)

  class Holder:  # any model with an `encoder` attribute
    encoder = EtcModel(config)
  Holder.encoder.build()
  initialize(Holder)
  bert = tf.train.load_checkpoint(os.path.join(FOLDER, "bert_model.ckpt"))
  np.testing.assert_array_equal(Holder.encoder.embeddings.token_table.numpy(),
                                bert.get_tensor("bert/embeddings/word_embeddings"))
  with pytest.raises(ValueError, match=r"hidden_size 32 != 64.*intermediate_size 64 != 128"):
    make_initializer(FOLDER, config.replace(hidden_size=64, intermediate_size=128))


@pytest.mark.slow
def test_task_fine_tunes_from_a_bert_folder(tmp_path):
  from synthetic_data import wikihop as synthetic  # pylint: disable=g-import-not-at-top
  from tasks.wikihop.task import TASK  # pylint: disable=g-import-not-at-top
  data = synthetic.ensure_demo_data(str(tmp_path / "data"), 8, 4, seed=0, preset="short")
  model = bert_lifting.etc_config_from_bert(bert_lifting.read_bert_config(FOLDER),
                                            local_radius=8, hidden_dropout_prob=0.0,
                                            # BERT's 64 positions, repeated
                                            max_absolute_position_embeddings=256,
                                            attention_probs_dropout_prob=0.0).to_dict()
  run_config = {
      "model": model,
      "features": {"long_seq_len": 256, "global_seq_len": 96, "max_num_sentences": 20},
      "train": {"train_file": data["train"], "dev_file": "", "vocab_file": "",
                "init_checkpoint": FOLDER, "batch_size": 2, "num_train_steps": 1,
                "warmup_steps": 0, "learning_rate": 1e-9, "optimizer": "adamw",
                "checkpoint_every": 1, "log_every": 1},
  }
  out = str(tmp_path / "run")
  TASK.run_finetuning(run_config, out, verbose=0)
  # The BERT folder's vocabulary was used, not one learned from the training file.
  with open(os.path.join(FOLDER, "vocab.txt")) as f, open(os.path.join(out, "vocab.txt")) as g:
    assert f.read() == g.read()
  # The encoder started from the lifted weights (one step at lr 1e-9 barely moves them).
  bert = tf.train.load_checkpoint(os.path.join(FOLDER, "bert_model.ckpt"))
  restored = tf.train.load_checkpoint(tf.train.latest_checkpoint(os.path.join(out, "checkpoints")))
  names = [n for n in restored.get_variable_to_shape_map()
           if "embeddings/token_embeddings/" in n and "OPTIMIZER_SLOT" not in n]
  assert names, "no token table in the run's checkpoint"
  np.testing.assert_allclose(restored.get_tensor(names[0]),
                             bert.get_tensor("bert/embeddings/word_embeddings"), atol=1e-6)


# ------------------------------ a random BERT folder (the ETC-large recipe rehearsal starts from it)
def _random_bert_folder(folder, vocab_file, hidden=32, layers=2, intermediate=64):
  """A random BERT (Hugging Face names) over `vocab_file`'s pieces, with that vocab.txt."""
  rng = np.random.default_rng(5)
  with open(vocab_file, encoding="utf-8") as f:
    vocab = sum(1 for _ in f)
  weight = lambda *shape: rng.normal(0, 0.05, shape).astype(np.float32)  # pylint: disable=unnecessary-lambda-assignment
  tensors = {"bert.embeddings.word_embeddings.weight": weight(vocab, hidden),
             "bert.embeddings.token_type_embeddings.weight": weight(2, hidden),
             "bert.embeddings.position_embeddings.weight": weight(64, hidden),
             "bert.embeddings.LayerNorm.weight": 1 + weight(hidden),
             "bert.embeddings.LayerNorm.bias": weight(hidden)}
  for i in range(layers):
    layer = f"bert.encoder.layer.{i}."
    for name, (rows, cols) in {"attention.self.query": (hidden, hidden),
                               "attention.self.key": (hidden, hidden),
                               "attention.self.value": (hidden, hidden),
                               "attention.output.dense": (hidden, hidden),
                               "intermediate.dense": (intermediate, hidden),
                               "output.dense": (hidden, intermediate)}.items():
      tensors[layer + name + ".weight"] = weight(rows, cols)  # torch Linear: [out, in]
      tensors[layer + name + ".bias"] = weight(rows)
    for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
      tensors[layer + norm + ".weight"] = 1 + weight(hidden)
      tensors[layer + norm + ".bias"] = weight(hidden)
  os.makedirs(folder)
  save_safetensors(tensors, os.path.join(folder, "model.safetensors"))
  with open(os.path.join(folder, "config.json"), "w") as f:
    json.dump({"model_type": "bert", "vocab_size": vocab, "hidden_size": hidden,
               "num_hidden_layers": layers, "num_attention_heads": 2,
               "intermediate_size": intermediate, "hidden_act": "gelu_new",
               "max_position_embeddings": 64, "type_vocab_size": 2,
               "layer_norm_eps": 1e-12}, f)
  shutil.copyfile(vocab_file, os.path.join(folder, "vocab.txt"))
  return tensors


# ------------------------------------------------------------- the way back: BERT's format
TINY_ENGLISH = os.path.join(REPO, "pretrained", "tiny_english")


def test_export_of_the_lifted_fixture_gives_back_its_checkpoint(tmp_path):
  features, expected = _fixture()
  model = EtcModel.from_bert_checkpoint(FOLDER, **EXACT)
  out_dir = str(tmp_path / "bert")
  report = bert_export.export_bert_checkpoint(model, out_dir,
                                               vocab_file=os.path.join(FOLDER, "vocab.txt"))
  assert sorted(os.listdir(out_dir)) == sorted(
      ["bert_model.ckpt.index", "bert_model.ckpt.data-00000-of-00001", "bert_config.json",
       "vocab.txt"])
  assert not [n for n in os.listdir(tmp_path) if n.startswith(".")]  # no staging folder left
  # Read back as the lifting reads a BERT: every variable of the fixture, pooler included,
  # with the same values; the token-type table holds every row of the segment table (16),
  # BERT's 2 first.
  written = bert_lifting.open_tf(out_dir)
  assert set(written.shapes) == set(_variables())
  original = tf.train.load_checkpoint(os.path.join(FOLDER, "bert_model.ckpt"))
  for name in _variables():
    value, want = written.read(name), original.get_tensor(name)
    if name == "bert/embeddings/token_type_embeddings":
      assert value.shape == (16, 32)
      np.testing.assert_array_equal(value[:2], want, name)
      np.testing.assert_array_equal(value, model.embeddings.segment_table.numpy(), name)
    else:
      np.testing.assert_array_equal(value, want, name)
  with open(os.path.join(FOLDER, "bert_config.json")) as f:
    config = json.load(f)
  with open(os.path.join(out_dir, "bert_config.json")) as f:
    assert json.load(f) == dict(config, type_vocab_size=16)
  with open(os.path.join(FOLDER, "vocab.txt")) as f, open(os.path.join(out_dir, "vocab.txt")) as g:
    assert f.read() == g.read()
  # A freshly lifted model loses nothing: zero relative tables, a global stream that copies
  # the long one, no residual attention.
  assert report.lost == [next(x for x in report.lost if x.startswith("relative"))]
  assert "nothing lost" in report.lost[0]
  # And the written BERT lifts again into a model with BERT's outputs.
  again = EtcModel.from_bert_checkpoint(out_dir, **EXACT)
  assert _max_diff_on_real_tokens(again, features, expected) < 1e-5


def test_export_of_tiny_english_lifts_back_to_the_same_long_stream(tmp_path):
  original = load_encoder_checkpoint(os.path.join(TINY_ENGLISH, "encoder"))
  out_dir = str(tmp_path / "bert")
  report = bert_export.export_bert_checkpoint(TINY_ENGLISH, out_dir)
  with open(os.path.join(out_dir, "bert_config.json")) as f:
    config = json.load(f)
  assert config == {"vocab_size": 2048, "hidden_size": 64, "num_hidden_layers": 2,
                    "num_attention_heads": 2, "intermediate_size": 128, "hidden_act": "gelu",
                    "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0,
                    "max_position_embeddings": 512, "type_vocab_size": 16,
                    "initializer_range": 0.02}
  reader = tf.train.load_checkpoint(os.path.join(out_dir, "bert_model.ckpt"))
  assert not reader.get_tensor("bert/embeddings/position_embeddings").any()  # none: zeros
  assert "bert/pooler/dense/kernel" not in reader.get_variable_to_shape_map()
  with open(os.path.join(TINY_ENGLISH, "vocab.txt")) as f, \
      open(os.path.join(out_dir, "vocab.txt")) as g:
    assert f.read() == g.read()
  # What BERT's format cannot hold is named.
  lost = " ".join(report.lost)
  assert "relative position tables (4" in lost and "4 not all zero" in lost
  assert "the global stream (22 weights" in lost
  assert "residual_attention='sum'" in lost
  assert any("512 rows of zeros" in note for note in report.notes)
  assert any("ids 1, 2, 3, 4, 5" in note for note in report.notes)
  # Lifted back into the encoder's own config (no position table, its global-token rows
  # kept), every long-stream weight is the original's.
  lifted = EtcModel.from_bert_checkpoint(out_dir, position_embeddings="drop",
                                         global_token_init="keep",
                                         **original.etc_config.to_dict())
  assert lifted.etc_config == original.etc_config
  sources = {weight for _, _, weight in report.written if not weight.startswith("(")}
  # token and segment tables, the LayerNorm; per layer Q, K, V, output, 2 Dense, 2 LayerNorms
  assert len(sources) == 4 + 2 * 16
  ours = {w.name.split(":")[0]: w.numpy() for w in lifted.weights}
  theirs = {w.name.split(":")[0]: w.numpy() for w in original.weights}
  assert sources <= set(ours)
  for name in sources:
    np.testing.assert_array_equal(ours[name], theirs[name], name)
  # The rest starts as a lift starts it: relative tables zero, the global stream a copy.
  assert not ours["layer_1/attention/long_rel_emb"].any()
  np.testing.assert_array_equal(ours["layer_1/global_feed_forward/inner/kernel"],
                                theirs["layer_1/long_feed_forward/inner/kernel"])


def test_export_refuses_what_berts_format_cannot_express(tmp_path):
  config = EtcConfig.from_file(os.path.join(REPO, "configs", "models", "tiny.yaml"))
  model = EtcModel(config.replace(hidden_act="gelu_exact", use_pre_activation_order=True))
  model.build()
  with pytest.raises(ValueError, match=r"hidden_act 'gelu_exact'.*use_pre_activation_order"):
    bert_export.export_bert_checkpoint(model, str(tmp_path / "bert"))
  model = EtcModel(config)
  model.build()
  vocab = tmp_path / "big_vocab.txt"
  vocab.write_text("".join(f"w{i}\n" for i in range(config.vocab_size + 1)))
  with pytest.raises(ValueError, match=f"{vocab}: 1001 pieces.*1000 rows"):
    bert_export.export_bert_checkpoint(model, str(tmp_path / "bert"), vocab_file=str(vocab))
  assert not os.path.exists(tmp_path / "bert")
  with pytest.raises(FileNotFoundError, match="no encoder checkpoint"):
    bert_export.export_bert_checkpoint(str(tmp_path), str(tmp_path / "bert"))


def test_export_command_line_prints_what_is_not_kept(tmp_path):
  out_dir = tmp_path / "bert"
  run = subprocess.run(
      [sys.executable, "-m", "etc_realformer.lift_bert", "--export_bert",
       f"--encoder={TINY_ENGLISH}", f"--output_dir={out_dir}", "--noverbose"],
      cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
  assert run.returncode == 0, run.stderr[-2000:]
  assert "37 BERT variables written" in run.stdout
  assert "not kept residual attention" in run.stdout
  assert bert_lifting.is_bert_checkpoint(str(out_dir))
