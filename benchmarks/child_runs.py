"""Runs one benchmark configuration in a child process and reads back its JSON line.

Each configuration gets its own process so that its peak resident memory (ru_maxrss) is its own.
"""

import json
import os
import subprocess
import sys


def run_child(script: str, child_args, spec: dict, timeout: int) -> dict:
  """Runs `python script *child_args`; returns the last JSON line it printed, or `spec` plus an
  `error` (timeout, or the exit code and the last lines of stderr)."""
  cmd = [sys.executable, os.path.abspath(script)] + list(child_args)
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TF_USE_LEGACY_KERAS="1")
  try:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                          check=False)
  except subprocess.TimeoutExpired:
    return dict(spec, error=f"timeout {timeout}s")
  for line in reversed(proc.stdout.splitlines()):
    if line.startswith("{"):
      return json.loads(line)
  tail = (proc.stderr or "").strip().splitlines()[-3:]
  return dict(spec, error=f"exit {proc.returncode}: {' | '.join(tail)}")
