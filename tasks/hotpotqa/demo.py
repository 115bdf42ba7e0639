r"""The HotpotQA demo, end to end on generated data (no download):

  python -m tasks.hotpotqa.demo [--output_dir=runs/hotpotqa_demo]

1. writes synthetic HotpotQA-format train/dev files (official distractor format);
2. fine-tunes a tiny ETC-RealFormer with model.fit (configs/hotpotqa/tiny.yaml), choosing the
   supporting-fact threshold on dev, and exports it as a SavedModel;
3. predicts the dev file with the exported model and writes the leaderboard prediction file;
4. scores it with the official metrics next to a trivial baseline.
Prints the time of each step; <output_dir>/demo_summary.json keeps every figure. Re-running
resumes training from the last checkpoint (a finished run is not trained again).
"""

import json
import os

from absl import app
from absl import flags
from absl import logging

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from tasks.hotpotqa import metrics as metrics_lib
from tasks.hotpotqa.pipeline import run_demo

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
flags.DEFINE_string("config", os.path.join(_ROOT, "configs", "hotpotqa", "tiny.yaml"),
                    "Fine-tuning config.")
flags.DEFINE_string("output_dir", "runs/hotpotqa_demo", "Data, run, predictions, summary.")
flags.DEFINE_integer("num_train", 3000, "Synthetic training questions.")
flags.DEFINE_integer("num_dev", 300, "Synthetic dev questions.")
flags.DEFINE_integer("seed", 0, "Seed of the synthetic world.")
flags.DEFINE_multi_string("set", [], "Config override, e.g. --set model.residual_attention=none.")
flags.DEFINE_integer("verbose", 2, "Keras progress: 0 silent, 1 progress bar, 2 one line.")
FLAGS = flags.FLAGS


def main(argv):
  del argv
  logging.set_verbosity(logging.INFO)
  try:
    summary = run_demo(FLAGS.config, FLAGS.output_dir, FLAGS.num_train, FLAGS.num_dev,
                       FLAGS.seed, FLAGS.set, FLAGS.verbose)
  except (ValueError, FileNotFoundError) as e:
    raise app.UsageError(str(e)) from None
  print("\nHotpotQA demo, synthetic dev set: fine-tuned model")
  print(metrics_lib.format_metrics(summary["dev_metrics"]))
  print("\nbaseline: always 'yes', first sentence of every paragraph")
  print(metrics_lib.format_metrics(summary["baseline_metrics"]))
  print("\ntime per step (s):")
  for name, seconds in summary["timings_seconds"].items():
    print(f"  {name:<24}{seconds:8.1f}")
  print(f"\nprediction file: {summary['prediction_file']}")
  print(json.dumps({"dev": summary["dev_metrics"]}, sort_keys=True))


if __name__ == "__main__":
  app.run(main)
