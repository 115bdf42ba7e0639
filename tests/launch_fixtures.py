"""Launching a task's command line as the user does: `python -m tasks.<task> ...`, alone or as 2
Horovod ranks (`horovodrun -np 2 -H localhost:2 --gloo`), and reading what the runs wrote."""

import json
import os
import re
import subprocess
import sys
from typing import Dict, List, Sequence

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# One "step k/n ... loss=x" line of the chief's TrainingLog (etc_realformer/training/callbacks.py).
STEP_LINE = re.compile(r"step (\d+)/(\d+) .*?\bloss=([-+0-9.eE]+|nan|inf)")


def env() -> Dict[str, str]:
  """The test environment for a command's processes: Keras 2, quiet TensorFlow, this checkout."""
  values = dict(os.environ)
  values.update(TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=ROOT)
  return values


def horovodrun() -> str:
  path = os.path.join(os.path.dirname(sys.executable), "horovodrun")
  assert os.path.exists(path), ("horovodrun not found next to the Python executable: run "
                                "`bash .ci/build_horovod.sh`")
  return path


def task_command(task: str, command: str, *flags: str, ranks: int = 1) -> List[str]:
  """The argv of `python -m tasks.<task> <command> <flags>`, under horovodrun for ranks > 1."""
  argv = [sys.executable, "-m", f"tasks.{task}", command, *flags]
  if ranks > 1:
    argv = [horovodrun(), "-np", str(ranks), "-H", f"localhost:{ranks}", "--gloo", *argv,
            "--distribution=horovod"]
  return argv


def run(argv: Sequence[str], timeout: int = 600) -> subprocess.CompletedProcess:
  """Runs a command from the checkout; asserts it succeeded (showing the end of its output)."""
  result = subprocess.run(list(argv), cwd=ROOT, env=env(), capture_output=True, text=True,
                          timeout=timeout, check=False)
  assert result.returncode == 0, (f"{' '.join(argv[:6])} ... failed:\n" + result.stdout[-3000:] +
                                  "\n" + result.stderr[-5000:])
  return result


def set_flags(overrides: Dict[str, object]) -> List[str]:
  """{"train.batch_size": 4} -> ["--set", "train.batch_size=4"]."""
  flags = []
  for key, value in overrides.items():
    flags += ["--set", f"{key}={value}"]
  return flags


def logged_losses(output: str) -> Dict[int, float]:
  """{step: loss} of the chief's training log lines in a command's output."""
  return {int(m.group(1)): float(m.group(3)) for m in STEP_LINE.finditer(output)}


def read_json(path: str):
  with open(path) as f:
    return json.load(f)


def checkpoint_weights(path: str) -> Dict[str, np.ndarray]:
  """Every float tensor of a checkpoint prefix (or of the latest one in a folder)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  if os.path.isdir(path):
    path = tf.train.latest_checkpoint(path)
  reader = tf.train.load_checkpoint(path)
  weights = {}
  for name, dtype in reader.get_variable_to_dtype_map().items():
    if dtype.is_floating:
      weights[name] = reader.get_tensor(name)
  return weights


def model_weights(weights: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
  """The model's weights among `checkpoint_weights` (not optimizer slots, nor the Keras metric
  totals in model/tracked/, which each rank keeps for its own examples)."""
  return {name: value for name, value in weights.items()
          if name.startswith("model/") and "OPTIMIZER_SLOT" not in name
          and not name.startswith("model/tracked/")}
