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
import time

from absl import app
from absl import flags
from absl import logging

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from etc_realformer.io_utils import atomic_write_json
from etc_realformer.training import run_config as run_config_lib
from tasks.hotpotqa import baselines
from tasks.hotpotqa import metrics as metrics_lib
from tasks.hotpotqa import predict
from tasks.hotpotqa import run
from tasks.hotpotqa import synthetic
from tasks.hotpotqa.data import read_examples

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


def run_demo(config_path, output_dir, num_train, num_dev, seed=0, overrides=(), verbose=2):
  """Runs the four steps; returns the summary dict (also written to demo_summary.json)."""
  timings = {}
  t0 = time.perf_counter()
  train_file, dev_file = synthetic.ensure_demo_data(os.path.join(output_dir, "data"), num_train,
                                                    num_dev, seed)
  timings["generate_data"] = time.perf_counter() - t0
  logging.info("step 1/4: data in %s (%d train, %d dev questions)",
               os.path.dirname(train_file), num_train, num_dev)

  run_config = run.load_run_config(config_path)
  run_config["train"].update(train_file=train_file, dev_file=dev_file)
  run_config_lib.apply_overrides(run_config, overrides)
  run_dir = os.path.join(output_dir, "run")
  logging.info("step 2/4: fine-tuning (%s steps) in %s", run_config["train"].get(
      "num_train_steps"), run_dir)
  t0 = time.perf_counter()
  finetune = run.run_finetuning(run_config, run_dir, verbose=verbose)
  timings["finetune_total"] = time.perf_counter() - t0
  timings.update({f"finetune_{k}": v for k, v in finetune.get("timings", {}).items()})

  logging.info("step 3/4: predicting %s with the exported model", dev_file)
  prediction_file = os.path.join(output_dir, "dev_prediction.json")
  t0 = time.perf_counter()
  predict.predict_file(os.path.join(run_dir, "export"), dev_file, prediction_file)
  timings["predict"] = time.perf_counter() - t0

  logging.info("step 4/4: scoring")
  t0 = time.perf_counter()
  scores = metrics_lib.evaluate_files(prediction_file, dev_file)
  examples, _ = read_examples(dev_file, with_labels=False)
  gold = metrics_lib.load_json(dev_file, "gold")
  baseline = metrics_lib.evaluate(baselines.trivial_prediction(examples), gold)
  timings["evaluate"] = time.perf_counter() - t0
  summary = {"dev_metrics": scores, "baseline_metrics": baseline, "timings_seconds": timings,
             "sp_threshold": finetune.get("sp_threshold"),
             "train_metrics": {k: v for k, v in finetune.items()
                               if k not in ("dev", "timings")},
             "model": run_config["model"], "prediction_file": prediction_file}
  atomic_write_json(os.path.join(output_dir, "demo_summary.json"), summary)
  return summary


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
