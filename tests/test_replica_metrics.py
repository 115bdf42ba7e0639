"""Logged losses and metrics.json values are means over replicas, not sums.

The same global batches (4 examples, a plain-mean loss) through the training loop with one
process, 2 MirroredStrategy replicas (2 logical CPUs), 2 MultiWorkerMirroredStrategy workers
and 2 Horovod ranks: every step logs the
same loss, and the final metrics (what metrics.json holds) agree. Before, MirroredStrategy logged
the sum over its replicas (twice the loss) and each Horovod rank its own half-batch loss.
"""

import json
import os
import socket
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "metric_worker.py")

pytestmark = pytest.mark.slow


def _env():
  return dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="2",
              PYTHONPATH=os.pathsep.join([os.path.dirname(HERE), HERE]))


def _run(mode, out_dir, launcher=()):
  env = _env()
  result = subprocess.run(list(launcher) + [sys.executable, WORKER, mode, str(out_dir)], env=env,
                          capture_output=True, text=True, timeout=600, check=False)
  assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


def _load(path):
  with open(path) as f:
    return json.load(f)


@pytest.fixture(scope="module")
def single(tmp_path_factory):
  out = tmp_path_factory.mktemp("single")
  _run("single", out)
  return _load(out / "single.json")


def _same_logs(run, reference):
  assert len(run["steps"]) == len(reference["steps"]) == 2
  for step, expected in zip(run["steps"], reference["steps"]):
    assert step["loss"] == pytest.approx(expected["loss"], rel=1e-5)
  assert run["metrics"]["loss"] == pytest.approx(reference["metrics"]["loss"], rel=1e-5)


def test_two_mirrored_replicas_log_what_one_process_logs(single, tmp_path):
  _run("mirrored", tmp_path)
  mirrored = _load(tmp_path / "mirrored.json")
  assert mirrored["replicas"] == 2
  _same_logs(mirrored, single)


def test_two_horovod_ranks_log_what_one_process_logs(single, tmp_path):
  horovodrun = os.path.join(os.path.dirname(sys.executable), "horovodrun")
  assert os.path.exists(horovodrun), "horovodrun not found: run `bash .ci/build_horovod.sh`"
  _run("horovod", tmp_path, (horovodrun, "-np", "2", "-H", "localhost:2", "--gloo"))
  ranks = [_load(tmp_path / f"horovod{r}.json") for r in range(2)]
  for rank in ranks:
    _same_logs(rank, single)


def test_two_multi_worker_mirrored_workers_log_what_one_process_logs(single, tmp_path):
  socks = [socket.socket() for _ in range(2)]
  for s in socks:
    s.bind(("localhost", 0))
  workers = [f"localhost:{s.getsockname()[1]}" for s in socks]
  for s in socks:
    s.close()
  procs = []
  for index in range(2):
    env = _env()
    env["TF_CONFIG"] = json.dumps({"cluster": {"worker": workers},
                                   "task": {"type": "worker", "index": index}})
    procs.append(subprocess.Popen([sys.executable, WORKER, "multi_worker_mirrored",
                                   str(tmp_path)], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True))
  outputs = [p.communicate(timeout=600) for p in procs]
  for p, (out, err) in zip(procs, outputs):
    assert p.returncode == 0, out[-2000:] + err[-4000:]
  chief = _load(tmp_path / "multi_worker_mirrored0.json")
  assert chief["replicas"] == 2
  _same_logs(chief, single)
