"""Attention analysis: statistics on hand-made arrays, the blocked layout against the dense
model, checkpoint / data resolution, and the command line end to end."""

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from etc_realformer import EtcConfig, EtcModel, EtcPretrainingModel
from etc_realformer.analysis import attention_stats as stats_lib
from etc_realformer.analysis import loading
from etc_realformer.analysis import pipeline
from etc_realformer.analysis import plots
from etc_realformer.data import pretraining_examples as pe
from etc_realformer.data import tfrecords

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# initializer_range 0.5 makes the attention peaked, so a misplaced probability shows.
CONFIG = dict(vocab_size=160, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
              intermediate_size=32, local_radius=3, relative_pos_max_distance=2,
              relative_vocab_size=8, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
              initializer_range=0.5, residual_attention="sum")
# L = 30 is not a multiple of the block length 4: the last block has 2 padding rows.
DATA_CONFIG = pe.PretrainingDataConfig(long_seq_len=30, global_seq_len=6,
                                       max_predictions_per_seq=6, max_cpc_per_seq=1,
                                       cpc_sentence_len=8)
NUM_RECORDS = 10


# ---------------------------------------------------------------------------- fixtures
def _documents(rng, count):
  """Tokenised documents: sentences of words of word-piece ids (ids above the specials)."""
  docs = []
  for _ in range(count):
    docs.append([[list(rng.integers(104, 160, rng.integers(1, 3)))
                  for _ in range(rng.integers(2, 5))] for _ in range(rng.integers(2, 4))])
  return docs


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
  directory = str(tmp_path_factory.mktemp("data"))
  rng = np.random.default_rng(5)
  examples = list(pe.create_examples(_documents(rng, 30), DATA_CONFIG, vocab_size=160, seed=1))
  assert len(examples) >= NUM_RECORDS
  tfrecords.write_shards(examples[:NUM_RECORDS], os.path.join(directory, "pretrain"), 2)
  tfrecords.write_data_config(directory, DATA_CONFIG, 160)
  return directory


def _write_run(run_dir, config, data, seed):
  """A pretraining-like output dir: final/encoder + etc_config.json, run_config.json."""
  tf_keras.utils.set_random_seed(seed)
  model = EtcModel(config, name="encoder")
  model.build()
  final = os.path.join(run_dir, "final")
  os.makedirs(final, exist_ok=True)
  tf.train.Checkpoint(encoder=model).write(os.path.join(final, "encoder"))
  with open(os.path.join(final, "etc_config.json"), "w") as f:
    json.dump(EtcConfig.from_dict(config).to_dict(), f)
  with open(os.path.join(run_dir, "run_config.json"), "w") as f:
    json.dump({"model": EtcConfig.from_dict(config).to_dict(), "train": {"train_data": data}}, f)
  return run_dir


@pytest.fixture(scope="module")
def runs(tmp_path_factory, data_dir):
  base = tmp_path_factory.mktemp("runs")
  realformer = _write_run(str(base / "realformer"), CONFIG, data_dir, 3)
  postln = _write_run(str(base / "postln"), dict(CONFIG, residual_attention="none"), data_dir, 4)
  return {"realformer": realformer, "postln": postln}


def _examples(data_dir, n=NUM_RECORDS):
  return loading.read_examples(data_dir, n, CONFIG["vocab_size"])


# ------------------------------------------------------------------ hand-made arrays
def test_entropy_uniform_one_hot_and_hand_value():
  for k in (1, 2, 5, 37):
    row = np.zeros(40)
    row[3:3 + k] = 1.0 / k  # zeros around it count 0
    assert stats_lib.entropy(row) == pytest.approx(math.log(k), abs=1e-12)
  assert stats_lib.entropy(np.eye(6)).tolist() == [0.0] * 6
  assert stats_lib.entropy([0.5, 0.25, 0.25]) == pytest.approx(1.5 * math.log(2))


def _blocked_uniform(token_ids, heads, b, global_len, keys_of_query):
  """Blocked long probs where query i is uniform over keys_of_query(i) slots."""
  batch, long_len = token_ids.shape
  nb = -(-long_len // b)
  probs = np.zeros([batch, heads, nb, b, 3 * b + global_len])
  for i in range(nb * b):
    k = keys_of_query(i)
    probs[:, :, i // b, i % b, :k] = 1.0 / k
  return probs


def test_long_and_global_entropy_skip_padding():
  b, heads, global_len = 2, 2, 3
  token_ids = np.array([[7, 7, 7, 7, 0], [7, 7, 0, 0, 0]])  # L = 5: 3 blocks, 1 padding row
  probs = _blocked_uniform(token_ids, heads, b, global_len, lambda i: i + 1)
  values = stats_lib.long_entropy(probs, token_ids)
  # Valid queries, batch-major: example 0 tokens 0..3, example 1 tokens 0..1.
  expected = [math.log(k) for k in (1, 2, 3, 4, 1, 2)]
  assert values.shape == (heads, 6)
  np.testing.assert_allclose(values, [expected] * heads, atol=1e-12)

  global_ids = np.array([[1, 1, 0], [1, 0, 0]])
  gprobs = np.zeros([2, heads, 3, 3 + 5])
  gprobs[..., 0, :] = 1.0 / 8            # query 0: uniform over 8 keys
  gprobs[..., 1, 4] = 1.0                # query 1: one-hot
  gprobs[..., 2, :2] = 0.5               # query 2 is padding in both examples
  values = stats_lib.global_entropy(gprobs, global_ids)
  np.testing.assert_allclose(values, [[math.log(8), 0.0, math.log(8)]] * heads, atol=1e-12)


def test_js_divergence_values():
  rng = np.random.default_rng(0)
  p = rng.dirichlet(np.ones(9), size=4)
  np.testing.assert_allclose(stats_lib.js_divergence(p, p), 0.0, atol=1e-15)
  assert stats_lib.js_divergence([1.0, 0.0], [0.0, 1.0]) == pytest.approx(math.log(2))
  # p = (1/2, 1/2), q = (1, 0): m = (3/4, 1/4); KL(p||m) = KL(q||m) = log(4/3) / 2 and log(4/3).
  assert stats_lib.js_divergence([0.5, 0.5], [1.0, 0.0]) == pytest.approx(0.75 * math.log(4 / 3))
  # Symmetric, and extra zero slots change nothing.
  q = rng.dirichlet(np.ones(9), size=4)
  np.testing.assert_allclose(stats_lib.js_divergence(p, q), stats_lib.js_divergence(q, p))
  padded = lambda x: np.concatenate([x, np.zeros([4, 5])], axis=1)
  np.testing.assert_allclose(stats_lib.js_divergence(padded(p), padded(q)),
                             stats_lib.js_divergence(p, q), rtol=1e-12)


def test_row_correlation_ignores_masked_keys():
  p = np.array([0.7, 0.2, 0.1, 0.0, 0.0])
  q = np.array([0.5, 0.1, 0.4, 0.0, 0.0])
  expected = np.corrcoef(p[:3], q[:3])[0, 1]
  assert stats_lib.row_correlation(p, q) == pytest.approx(expected)
  assert expected != pytest.approx(np.corrcoef(p, q)[0, 1])  # the zeros would matter
  assert stats_lib.row_correlation(p, p) == pytest.approx(1.0)
  assert np.isnan(stats_lib.row_correlation(np.full(3, 1 / 3), p[:3]))  # constant row
  assert np.isnan(stats_lib.row_correlation([1.0, 0.0], [1.0, 0.0]))  # a single key


def test_accumulator_pairs_and_summary():
  b, heads, global_len = 2, 2, 2
  token_ids = np.array([[5, 5, 5, 0]])
  rng = np.random.default_rng(1)
  layer0 = rng.dirichlet(np.ones(3 * b + global_len), size=(1, heads, 2, b))
  layer1 = rng.dirichlet(np.ones(3 * b + global_len), size=(1, heads, 2, b))
  gprobs = rng.dirichlet(np.ones(global_len + 4), size=(1, heads, global_len))
  attention = [{"long_probs": layer0, "global_probs": gprobs},
               {"long_probs": layer0, "global_probs": gprobs},
               {"long_probs": layer1, "global_probs": gprobs}]
  accumulator = stats_lib.AttentionStatsAccumulator()
  accumulator.add(attention, token_ids, np.array([[1, 0]]))
  accumulator.add(attention, token_ids, np.array([[1, 0]]))  # a second batch doubles counts
  result = accumulator.result()
  assert [e.shape for e in result["long"].entropy] == [(heads, 6)] * 3
  np.testing.assert_allclose(result["long"].js[0], 0.0, atol=1e-15)
  np.testing.assert_allclose(result["long"].correlation[0], 1.0)
  rows0 = layer0.reshape(1, heads, 2 * b, -1)[0, :, :3]
  rows1 = layer1.reshape(1, heads, 2 * b, -1)[0, :, :3]
  np.testing.assert_allclose(result["long"].js[1][:, :3], stats_lib.js_divergence(rows0, rows1))
  summary = stats_lib.summarize(result)
  assert [l["long"]["num_queries"] for l in summary["layers"]] == [6, 6, 6]
  assert [l["global"]["num_queries"] for l in summary["layers"]] == [2, 2, 2]
  assert [a["layers"] for a in summary["adjacent_layers"]] == [[0, 1], [1, 2]]
  assert summary["adjacent_layers"][0]["global"]["js_divergence"] == pytest.approx(0.0)
  assert summary["adjacent_layers"][1]["long"]["js_divergence"] == pytest.approx(
      float(np.mean(stats_lib.js_divergence(rows0, rows1))))
  assert len(summary["layers"][0]["long"]["mean_entropy_per_head"]) == heads


# ------------------------------------------------------ blocked layout vs dense model
def test_blocked_views_match_dense_model(runs, data_dir):
  blocked = loading.load_encoder(runs["realformer"]).model
  dense = loading.load_encoder(runs["realformer"], implementation="dense").model
  features = _examples(data_dir, 4)
  out_b = blocked(features, training=False, return_attention_scores=True)["attention"]
  out_d = dense(features, training=False, return_attention_scores=True)["attention"]
  token_ids, sentence_ids = features["token_ids"], features["sentence_ids"]
  long_len, global_len = token_ids.shape[1], features["global_token_ids"].shape[1]
  assert (token_ids == 0).any() and sentence_ids.max() >= 2  # padding and several sentences
  acc_b, acc_d = stats_lib.AttentionStatsAccumulator(), stats_lib.AttentionStatsAccumulator()
  for layer_b, layer_d in zip(out_b, out_d):
    probs_b, probs_d = layer_b["long_probs"].numpy(), layer_d["long_probs"].numpy()
    assert probs_d.shape == (4, 2, long_len, long_len + global_len)
    for ex in range(4):
      real = token_ids[ex] != 0
      dense_view = stats_lib.blocked_to_dense(probs_b[ex], long_len)  # [heads, L, L + G]
      np.testing.assert_allclose(dense_view[:, real], probs_d[ex][:, real], atol=2e-6)
      # Brute force: sentence s, global g -> mean over its real tokens of P(i -> g).
      expected = np.full([2, sentence_ids[ex][real].max() + 1, global_len], np.nan)
      for s in range(expected.shape[1]):
        tokens = [i for i in range(long_len) if real[i] and sentence_ids[ex, i] == s]
        for h in range(2):
          for g in range(global_len):
            if tokens:
              expected[h, s, g] = np.mean([probs_d[ex, h, i, long_len + g] for i in tokens])
      for probs in (probs_b[ex], probs_d[ex]):
        got = stats_lib.sentence_global_map(probs, token_ids[ex], sentence_ids[ex], global_len)
        np.testing.assert_allclose(got, expected, atol=2e-6)
    # The attention is far from uniform, so the comparisons above can tell slots apart.
    assert stats_lib.long_entropy(probs_b, token_ids).mean() < 0.8 * math.log(2 * 3 + 1 + 6)
  for acc, out in ((acc_b, out_b), (acc_d, out_d)):
    acc.add([{k: layer[k].numpy() for k in ("long_probs", "global_probs")} for layer in out],
            token_ids, features["global_token_ids"])
  res_b, res_d = acc_b.result(), acc_d.result()
  for stream in ("long", "global"):
    for name in ("entropy", "js", "correlation"):
      for got, want in zip(getattr(res_b[stream], name), getattr(res_d[stream], name)):
        np.testing.assert_allclose(got, want, atol=1e-4)
  assert res_b["long"].entropy[0].shape == (2, int((token_ids != 0).sum()))


# ---------------------------------------------------------- checkpoints and data
def test_encoder_restored_out_of_pretraining_checkpoint(tmp_path, data_dir):
  tf_keras.utils.set_random_seed(9)
  model = EtcPretrainingModel(CONFIG, name="pretraining")
  model.build()
  run_dir = str(tmp_path / "run")
  manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model),
                                       os.path.join(run_dir, "checkpoints"), max_to_keep=2)
  manager.save(checkpoint_number=7)
  with open(os.path.join(run_dir, "run_config.json"), "w") as f:
    json.dump({"model": CONFIG, "train": {"train_data": data_dir}}, f)
  loaded = loading.load_encoder(run_dir)  # no final/: the latest ckpt-N
  assert loaded.checkpoint.prefix.endswith("ckpt-7")
  for form in (os.path.join(run_dir, "checkpoints"), loaded.checkpoint.prefix):
    assert loading.resolve_checkpoint(form).prefix == loaded.checkpoint.prefix
  for want, got in zip(model.encoder.weights, loaded.model.weights):
    np.testing.assert_array_equal(want.numpy(), got.numpy())
  assert loading.run_train_data(loaded.checkpoint) == data_dir


def test_checkpoint_forms_and_errors(runs, tmp_path):
  prefix = os.path.join(runs["realformer"], "final", "encoder")
  for form in (runs["realformer"], os.path.join(runs["realformer"], "final"), prefix):
    assert loading.resolve_checkpoint(form).prefix == prefix
  missing = str(tmp_path / "no_such_run")
  with pytest.raises(FileNotFoundError, match=missing):
    loading.load_encoder(missing)
  os.makedirs(tmp_path / "empty")
  with pytest.raises(FileNotFoundError, match="no encoder checkpoint"):
    loading.load_encoder(str(tmp_path / "empty"))
  # The same weights with a config of another width: the error names the checkpoint.
  bad = tmp_path / "bad"
  os.makedirs(bad)
  for name in os.listdir(os.path.dirname(prefix)):
    if name.startswith("encoder"):
      os.symlink(os.path.join(os.path.dirname(prefix), name), bad / name)
  with open(bad / "etc_config.json", "w") as f:
    json.dump(dict(CONFIG, hidden_size=24), f)
  with pytest.raises(ValueError, match="do not fit the model"):
    loading.load_encoder(str(bad))
  # A 3-layer checkpoint read with a 2-layer config: every model weight is found, but not all
  # of the checkpoint's are used.
  deep = _write_run(str(tmp_path / "deep"), dict(CONFIG, num_hidden_layers=3), "", 5)
  with open(os.path.join(deep, "final", "etc_config.json"), "w") as f:
    json.dump(CONFIG, f)
  with pytest.raises(ValueError, match="holds .* encoder weights but the model"):
    loading.load_encoder(deep)


def test_data_errors(tmp_path, data_dir):
  with pytest.raises(FileNotFoundError, match="data_config.json"):
    loading.read_examples(str(tmp_path), 4, 160)
  with pytest.raises(ValueError, match="vocabulary of 160"):
    loading.read_examples(data_dir, 4, 100)
  first = _examples(data_dir, 3)
  again = _examples(data_dir, NUM_RECORDS + 5)  # asks for more than there are
  assert len(again["token_ids"]) == NUM_RECORDS
  np.testing.assert_array_equal(first["token_ids"], again["token_ids"][:3])  # file order


# ------------------------------------------------------------------ end to end
def _check_png(path):
  with open(path, "rb") as f:
    head = f.read(8)
  assert head == PNG_SIGNATURE and os.path.getsize(path) > 1000, path


def test_run_analysis_one_model(runs, data_dir, tmp_path):
  out = str(tmp_path / "out")
  settings = pipeline.AnalysisSettings(num_examples=5, batch_size=2, example_index=3)
  pipeline.run_analysis([runs["realformer"]], out, settings=settings, log=lambda *_: None)
  _check_png(os.path.join(out, "entropy.png"))
  _check_png(os.path.join(out, "attention_map.png"))
  with open(os.path.join(out, "analysis.json")) as f:
    result = json.load(f)
  assert result["labels"] == ["RealFormer"]
  entry = result["models"]["RealFormer"]
  assert entry["data"] == data_dir  # taken from the run's run_config.json
  features = _examples(data_dir, 5)
  assert len(entry["layers"]) == 2 and len(entry["adjacent_layers"]) == 1
  for layer in entry["layers"]:
    assert layer["long"]["num_queries"] == int((features["token_ids"] != 0).sum())
    assert layer["global"]["num_queries"] == int((features["global_token_ids"] != 0).sum())
    assert len(layer["long"]["mean_entropy_per_head"]) == 2
    assert 0 < layer["long"]["mean_entropy"] < math.log(2 * 3 + 1 + 6)
  pair = entry["adjacent_layers"][0]
  assert 0 < pair["long"]["js_divergence"] < math.log(2)
  assert -1 <= pair["global"]["correlation"] <= 1
  assert entry["attention_map"]["example_index"] == 3
  assert entry["attention_map"]["num_global_tokens"] == int(
      (features["global_token_ids"][3] != 0).sum())


def _cli(*args):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", TF_USE_LEGACY_KERAS="1", PYTHONPATH=ROOT)
  return subprocess.run([sys.executable, "-m", "etc_realformer.analyze", *args], cwd=ROOT,
                        env=env, capture_output=True, text=True, timeout=300, check=False)


def test_cli_comparison_mode(runs, data_dir, tmp_path):
  out = str(tmp_path / "compare")
  proc = _cli(f"--checkpoint={runs['realformer']}", f"--compare_checkpoint={runs['postln']}",
              "--labels=RealFormer,Post-LN", f"--data={data_dir}", f"--output_dir={out}",
              "--num_examples=4", "--batch_size=3", "--map_layer=1")
  assert proc.returncode == 0, proc.stderr[-3000:]
  assert sorted(os.listdir(out)) == ["analysis.json", "attention_map.png",
                                     "entropy_comparison.png"]
  _check_png(os.path.join(out, "entropy_comparison.png"))
  _check_png(os.path.join(out, "attention_map.png"))
  with open(os.path.join(out, "analysis.json")) as f:
    result = json.load(f)
  assert result["labels"] == ["RealFormer", "Post-LN"]
  assert set(result["models"]) == {"RealFormer", "Post-LN"}
  assert result["models"]["Post-LN"]["config"]["residual_attention"] == "none"
  for entry in result["models"].values():
    assert entry["num_examples"] == 4
    assert len(entry["layers"]) == 2 and len(entry["adjacent_layers"]) == 1
  # The two models' numbers differ (different weights), and the table names both.
  assert (result["models"]["RealFormer"]["layers"][0]["long"]["mean_entropy"] !=
          result["models"]["Post-LN"]["layers"][0]["long"]["mean_entropy"])
  assert "RealFormer:" in proc.stdout and "Post-LN:" in proc.stdout


def test_cli_bad_checkpoint_names_the_path(tmp_path):
  missing = str(tmp_path / "not_a_run")
  proc = _cli(f"--checkpoint={missing}", f"--output_dir={tmp_path / 'out'}")
  assert proc.returncode != 0
  assert missing in proc.stderr
  assert "Traceback" not in proc.stderr
  assert not os.path.exists(tmp_path / "out")


def test_comparison_figure_has_both_models():
  rng = np.random.default_rng(2)
  def run(shift):
    ent = [rng.normal(2 + shift, 0.3, (2, 50)) for _ in range(3)]
    js = [rng.uniform(0, 0.1, (2, 50)) for _ in range(2)]
    return {s: stats_lib.StreamStats(ent, js, js) for s in ("long", "global")}
  figure = plots.entropy_figure({"RealFormer": run(0.0), "Post-LN": run(0.5)})
  long_ax, global_ax, js_ax = figure.axes
  assert [t.get_text() for t in long_ax.get_legend().get_texts()] == ["RealFormer", "Post-LN"]
  assert len(long_ax.collections) == 2 * (3 + 1)  # per model: 3 violins + 1 scatter of means
  assert [l.get_label() for l in js_ax.get_lines()] == [
      "RealFormer, long", "RealFormer, global", "Post-LN, long", "Post-LN, global"]
  assert [t.get_text() for t in js_ax.get_xticklabels()] == ["0\u21921", "1\u21922"]
  single = plots.entropy_figure({"RealFormer": run(0.0)})
  assert len(single.axes) == 2 and single.axes[0].get_legend() is None
