"""Writing a benchmark's JSON results file atomically (temp file, then rename)."""

import json
import os


def write_results(result, path):
  """Writes `result` as indented JSON to `path`, creating its folder; prints where."""
  os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
  tmp = path + ".tmp"
  with open(tmp, "w", encoding="utf-8") as f:
    json.dump(result, f, indent=2)
  os.replace(tmp, path)
  print(f"\nwrote {path}")
