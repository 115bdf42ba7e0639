"""run_selfcheck on the tiny config; and `--device`, the machine check (in a subprocess, and as
2 Horovod ranks under horovodrun, there with --require_gpu)."""

import json
import os
import subprocess
import sys

import numpy as np
import tensorflow as tf
import tf_keras

from etc_realformer import EtcConfig
from etc_realformer.selfcheck import check_train_step, run_selfcheck, synthetic_features
import pretrain_fixtures as fx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_synthetic_features_layout():
  config = EtcConfig.from_file(os.path.join(ROOT, "configs", "models", "tiny.yaml"))
  f = synthetic_features(config, 1, 160, 16, 0)
  assert f["global_token_ids"].shape == (1, 10)
  used = 160 - 16  # the last 10% (16 tokens) is padding
  assert (f["token_ids"][0, :used] > 0).all() and (f["token_ids"][0, used:] == 0).all()
  assert f["long_breakpoints"][0].nonzero()[0].tolist() == [used - 1]
  np.testing.assert_array_equal(f["sentence_ids"][0, :32], [0] * 16 + [1] * 16)
  assert f["global_token_ids"][0].tolist() == [1] * 9 + [0]


def test_selfcheck_blocked_matches_dense():
  config = EtcConfig.from_file(os.path.join(ROOT, "configs", "models", "tiny.yaml"))
  report = run_selfcheck(config, batch_size=1, long_len=96, sentence_len=8, max_dense_len=128)
  assert report["long_output_shape"] == [1, 96, 32]
  assert report["global_output_shape"] == [1, 12, 32]
  assert report["blocked_vs_dense_max_relative_difference"] <= 1e-5
  assert 0.0 < report["layer0_own_sentence_share_of_global_attention"] <= 1.0


# ------------------------------------------------------------------------ --device (subprocess)
def _device_json(stdout):
  """The JSON summary: the last line of stdout that holds one (horovodrun prefixes each line
  with "[rank]<stdout>:")."""
  for line in reversed(stdout.splitlines()):
    start = line.find('{"selfcheck"')
    if start >= 0:
      return json.loads(line[start:])
  raise AssertionError(f"no JSON summary in the output:\n{stdout[-3000:]}")


def _run(argv, timeout=300):
  return subprocess.run(argv, env=fx.worker_env(), cwd=ROOT, capture_output=True, text=True,
                        timeout=timeout, check=False)


def test_device_check_on_this_machine(tmp_path):
  # XLA's compile of the training step is most of the time (30 to 50 s for the 2-layer tiny
  # model on this machine): one layer, L = 128 and one timed step keep the test short.
  # The horovodrun test below runs the 2-layer tiny config.
  config = EtcConfig.from_file(os.path.join(ROOT, "configs", "models", "tiny.yaml")).to_dict()
  config["num_hidden_layers"] = 1
  config_path = tmp_path / "one_layer.json"
  config_path.write_text(json.dumps(config), encoding="utf-8")
  result = _run([sys.executable, "-m", "etc_realformer.selfcheck", "--device",
                 f"--config={config_path}", "--long_len=128", "--device_steps=1",
                 f"--output_dir={tmp_path}"])
  assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
  summary = _device_json(result.stdout)
  assert summary["passed"] is True
  expected = {"devices": "pass", "train_step_xla_off": "pass", "train_step_xla_on": "pass",
              "blocked_vs_dense": "pass", "horovod_allreduce": "skip"}
  assert summary["checks"] == expected
  if not tf.config.list_physical_devices("GPU"):
    assert summary["gpus"] == 0 and summary["device"] == "CPU:0"
    assert "no GPU visible: checking the CPU path" in result.stdout
  assert "not launched with horovodrun: Horovod allreduce not checked" in result.stdout
  assert set(summary["tokens_per_second"]) == {"xla_off", "xla_on"}
  assert all(v > 0 for v in summary["tokens_per_second"].values())
  assert summary["blocked_vs_dense_max_relative_difference"] <= 1e-5
  # The full report: numbers behind every check.
  with open(tmp_path / "device_check.json", encoding="utf-8") as f:
    report = json.load(f)
  for name in ("train_step_xla_off", "train_step_xla_on"):
    step = report["checks"][name]
    assert step["policy"] == "mixed_float16" and step["updates_applied"] >= 1
    assert all(np.isfinite(step["losses"]))


def test_train_step_check_restores_the_policy():
  config = EtcConfig.from_file(os.path.join(ROOT, "configs", "models", "tiny.yaml"))
  before = tf_keras.mixed_precision.global_policy().name
  check = check_train_step(config, synthetic_features(config, 1, 64, 8, 0), jit_compile=False,
                           steps=1)
  assert check["status"] == "pass", check["message"]
  assert check["policy"] == "mixed_float16" and check["tokens_per_second"] > 0
  assert tf_keras.mixed_precision.global_policy().name == before


def test_device_check_under_horovodrun():
  horovodrun = os.path.join(os.path.dirname(sys.executable), "horovodrun")
  assert os.path.exists(horovodrun), ("horovodrun not found next to the Python executable: "
                                      "run `bash .ci/build_horovod.sh`")
  # --noxla: both ranks share this machine's cores, and the XLA step is tested above. Without
  # a GPU, --require_gpu fails the devices check (exit code 1) and the other checks still run.
  gpu = bool(tf.config.list_physical_devices("GPU"))
  result = _run([horovodrun, "-np", "2", "-H", "localhost:2", "--gloo", sys.executable, "-m",
                 "etc_realformer.selfcheck", "--device", "--long_len=128", "--device_steps=1",
                 "--noxla", "--require_gpu"])
  assert result.returncode == (0 if gpu else 1), result.stdout[-3000:] + result.stderr[-3000:]
  summary = _device_json(result.stdout)
  assert summary["passed"] is gpu and summary["horovod_size"] == 2
  assert summary["checks"]["devices"] == ("pass" if gpu else "fail")
  assert summary["checks"]["train_step_xla_on"] == "skip"
  assert summary["checks"]["horovod_allreduce"] == "pass"
  # Rank 0 gathers every rank's failures (here each rank's devices check).
  assert summary["checks"]["horovod_ranks"] == ("pass" if gpu else "fail")
  if not gpu:
    assert "rank 0 failed devices; rank 1 failed devices" in result.stdout, result.stdout[-3000:]
  assert summary["checks"]["train_step_xla_off"] == "pass"
  assert summary["checks"]["blocked_vs_dense"] == "pass"
  # Only rank 0 reports.
  lines = result.stdout.splitlines()
  assert any(line.startswith("[0]<stdout>:") and '{"selfcheck"' in line for line in lines)
  assert not any(line.startswith("[1]<stdout>:") for line in lines), result.stdout[-3000:]
