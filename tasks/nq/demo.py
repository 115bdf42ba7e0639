r"""The Natural Questions demo, end to end on generated data (no download):

  python -m tasks.nq.demo [--output_dir=runs/nq_demo]

1. writes synthetic NQ files in the original format (html, tokens with byte offsets, nested
   candidates; dev with five annotations);
2. fine-tunes a tiny ETC-RealFormer with model.fit (configs/nq/tiny.yaml) and exports it;
3. predicts the dev file with the exported model (the official predictions JSON);
4. scores it with the official scorer next to the "always null" baseline.

Prints the time of each step; <output_dir>/demo_summary.json keeps every figure. Re-running
resumes training from the last checkpoint (a finished run is not trained again).
"""

import json
import os

from absl import app
from absl import flags
from absl import logging

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from tasks.nq import metrics as metrics_lib
from tasks.nq.data import NqDataError
from tasks.nq.pipeline import run_demo

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
flags.DEFINE_string("config", os.path.join(_ROOT, "configs", "nq", "tiny.yaml"),
                    "Fine-tuning config.")
flags.DEFINE_string("output_dir", "runs/nq_demo", "Data, run, predictions, summary.")
flags.DEFINE_integer("num_train", 1500, "Synthetic training examples.")
flags.DEFINE_integer("num_dev", 200, "Synthetic dev examples.")
flags.DEFINE_integer("seed", 0, "Seed of the synthetic data.")
flags.DEFINE_multi_string("set", [], "Config override, e.g. --set model.residual_attention=none.")
flags.DEFINE_integer("verbose", 2, "Keras progress: 0 silent, 1 progress bar, 2 one line.")
FLAGS = flags.FLAGS


def main(argv):
  del argv
  logging.set_verbosity(logging.INFO)
  try:
    summary = run_demo(FLAGS.config, FLAGS.output_dir, FLAGS.num_train, FLAGS.num_dev,
                       FLAGS.seed, FLAGS.set, FLAGS.verbose)
  except (NqDataError, ValueError, FileNotFoundError) as e:
    raise app.UsageError(str(e)) from None
  print("\nNatural Questions demo, synthetic dev set (official scorer): fine-tuned model")
  print(metrics_lib.format_metrics(summary["dev_metrics"]))
  print("\nbaseline: always null")
  print(metrics_lib.format_metrics(summary["baseline_metrics"]))
  print("\ntime per step (s):")
  for name, seconds in summary["timings_seconds"].items():
    print(f"  {name:<24}{seconds:8.1f}")
  print(f"\nprediction file: {summary['prediction_file']}")
  print(json.dumps({k: summary["dev_metrics"][k] for k in metrics_lib.MAIN_KEYS}, sort_keys=True))


if __name__ == "__main__":
  app.run(main)
