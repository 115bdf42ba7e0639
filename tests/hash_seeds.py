"""Runs a snippet of Python under several PYTHONHASHSEED values (generators must not depend on
string hashing or set order)."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def outputs_under_hash_seeds(code: str, hash_seeds=("1", "2")) -> set:
  """The distinct stripped stdouts of `python -c code` (run from the repository root), one run
  per hash seed: one element when the output does not depend on the seed."""
  outputs = set()
  for hash_seed in hash_seeds:
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                            capture_output=True, text=True, check=True)
    outputs.add(result.stdout.strip())
  return outputs
