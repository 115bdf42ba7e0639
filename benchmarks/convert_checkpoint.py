"""Benchmark: converting a full-size official ETC checkpoint (the released base layout).

A random ETC-base encoder (12 layers, hidden 768, vocab 30522, the released variable layout:
one query projection per stream, separate l2l/l2g/g2g/g2l keys and values) is written as an
official checkpoint; then, each in its own process (so each peak memory is its own):
  to_package   official -> this package's encoder checkpoint (python -m etc_realformer.convert_checkpoint)
  to_official  this package -> official (--to_official)
  load         EtcModel.from_official_checkpoint alone (what fine-tuning does on init)
Prints a table and writes benchmarks/results/convert_checkpoint.json.

  python benchmarks/convert_checkpoint.py [--output results/convert_checkpoint.json]
"""

import argparse
import json
import os
import resource
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from child_runs import run_child  # pylint: disable=g-import-not-at-top,wrong-import-position

MODEL_CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "configs", "models", "etc_base_official.yaml")


def _peak_gb() -> float:
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2  # KiB -> GiB


def make_random_official_checkpoint(directory: str) -> str:
  """Writes <directory>/model.ckpt + etc_config.json of a randomly initialised ETC-base."""
  from etc_realformer.config import EtcConfig  # pylint: disable=g-import-not-at-top
  from etc_realformer.checkpoint_conversion import official_config_dict
  from etc_realformer.models import official_checkpoint
  from etc_realformer.models.encoder import EtcModel
  config = EtcConfig.from_file(MODEL_CONFIG)
  model = EtcModel(config)
  model.build()
  prefix = official_checkpoint.write_official_checkpoint(
      official_checkpoint.official_weights(model), os.path.join(directory, "model.ckpt"))
  with open(os.path.join(directory, "etc_config.json"), "w") as f:
    json.dump(official_config_dict(config), f, indent=2, sort_keys=True)
  return prefix


def child(step: str, source: str, output: str) -> None:
  """Runs one step and prints its JSON line."""
  start = time.perf_counter()
  if step == "to_package":
    from etc_realformer.checkpoint_conversion import official_to_package  # pylint: disable=g-import-not-at-top
    report = official_to_package(source, output)
  elif step == "to_official":
    from etc_realformer.checkpoint_conversion import package_to_official  # pylint: disable=g-import-not-at-top
    report = package_to_official(source, output)
  else:
    from etc_realformer.models.encoder import EtcModel  # pylint: disable=g-import-not-at-top
    model = EtcModel.from_official_checkpoint(source)
    report = {"weights": len(model.weights)}
  seconds = time.perf_counter() - start
  print(json.dumps({"step": step, "seconds": round(seconds, 2), "peak_gb": round(_peak_gb(), 2),
                    "weights": report["weights"]}))


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "results",
                                                       "convert_checkpoint.json"))
  parser.add_argument("--child", nargs=3, metavar=("STEP", "SOURCE", "OUTPUT"),
                      help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.child:
    child(*args.child)
    return
  with tempfile.TemporaryDirectory() as tmp:
    official = os.path.join(tmp, "official")
    os.makedirs(official)
    t0 = time.perf_counter()
    make_random_official_checkpoint(official)
    size_gb = sum(os.path.getsize(os.path.join(official, f)) for f in os.listdir(official)) / 1e9
    print(f"random ETC-base checkpoint written in {time.perf_counter() - t0:.1f} s "
          f"({size_gb:.2f} GB)")
    rows = []
    for step, source, output in (
        ("to_package", os.path.join(official, "model.ckpt"), os.path.join(tmp, "ours")),
        ("to_official", os.path.join(tmp, "ours", "encoder"), os.path.join(tmp, "back")),
        ("load", os.path.join(official, "model.ckpt"), "")):
      rows.append(run_child(__file__, ["--child", step, source, output], {"step": step}, 1200))
  print(f"{'step':<12} {'seconds':>8} {'peak GB':>8} {'weights':>8}")
  for row in rows:
    if "error" in row:
      print(f"{row['step']:<12} {row['error']}")
    else:
      print(f"{row['step']:<12} {row['seconds']:>8.2f} {row['peak_gb']:>8.2f} {row['weights']:>8}")
  os.makedirs(os.path.dirname(args.output), exist_ok=True)
  with open(args.output, "w") as f:
    json.dump({"model": "etc_base_official (12 layers, hidden 768, vocab 30522)",
               "checkpoint_gb": round(size_gb, 3), "rows": rows}, f, indent=2)
  print(f"wrote {args.output}")


if __name__ == "__main__":
  main()
