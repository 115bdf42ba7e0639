"""The shared parts of the task command lines: flags and mains for fine-tune, predict, evaluate
and demo. A task's command-line module defines its flags with these helpers at import time and
calls the matching main; bad input or settings end as a usage error naming the problem, never a
traceback.
"""

import json
import os
from typing import Callable, Dict

from absl import app
from absl import flags
from absl import logging

from etc_realformer.io_utils import atomic_write_json
from etc_realformer.training import distribution as distribution_lib
from etc_realformer.training import run_config as run_config_lib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
USER_ERRORS = (ValueError, FileNotFoundError)
FLAGS = flags.FLAGS


def default_config(task: str) -> str:
  return os.path.join(ROOT, "configs", task, "tiny.yaml")


def define_finetune_flags(task: str, example_train_file: str) -> None:
  flags.DEFINE_string("config", default_config(task),
                      "Fine-tuning config (YAML/JSON: model, model_overrides, features, train).")
  flags.DEFINE_string("output_dir", f"runs/{task}", "Checkpoints, logs, export, dev predictions.")
  flags.DEFINE_enum("distribution", "none", list(distribution_lib.CHOICES),
                    "How to parallelise.")
  flags.DEFINE_multi_string("set", [], "Override, e.g. --set train.train_file="
                                       f"{example_train_file}.")
  flags.DEFINE_integer("verbose", 2, "Keras progress: 0 silent, 1 progress bar, 2 one line.")


def finetune_main(run_module) -> None:
  """Loads the config, applies --set, checks it, runs `run_module.run_finetuning`."""
  logging.set_verbosity(logging.INFO)
  try:
    run_config = run_module.load_run_config(FLAGS.config)
    run_config_lib.apply_overrides(run_config, FLAGS.set)
    run_module.parse_sections(run_config, FLAGS.config)  # fail early on a bad setting
    distribution = distribution_lib.Distribution(FLAGS.distribution)
    metrics = run_module.run_finetuning(run_config, FLAGS.output_dir, distribution,
                                        verbose=FLAGS.verbose)
  except USER_ERRORS as e:
    raise app.UsageError(str(e)) from None
  if distribution.is_chief:
    print(json.dumps(metrics, indent=2, sort_keys=True))


def define_predict_flags(task: str, input_help: str, output_help: str, batch_size: int,
                         batch_help: str = "Examples per model call.") -> None:
  flags.DEFINE_string("export_dir", f"runs/{task}/export", "A model exported by finetune.")
  flags.DEFINE_string("input_file", None, input_help)
  flags.DEFINE_string("output_file", None, output_help)
  flags.DEFINE_integer("batch_size", batch_size, batch_help)


def predict_main(predict_file: Callable[[str, str, str, int], object]) -> None:
  """Calls predict_file(export_dir, input_file, output_file, batch_size)."""
  logging.set_verbosity(logging.INFO)
  if not FLAGS.input_file or not FLAGS.output_file:
    raise app.UsageError("--input_file and --output_file are required")
  try:
    predict_file(FLAGS.export_dir, FLAGS.input_file, FLAGS.output_file, FLAGS.batch_size)
  except USER_ERRORS as e:
    raise app.UsageError(str(e)) from None


def define_evaluate_flags(prediction_help: str, gold_help: str) -> None:
  flags.DEFINE_string("prediction_file", None, prediction_help)
  flags.DEFINE_string("gold_file", None, gold_help)
  flags.DEFINE_string("output_file", None, "Optional: also write the metrics here as JSON.")


def evaluate_main(score: Callable[[], Dict], format_metrics: Callable[[Dict], str]) -> None:
  """Prints format_metrics(score()) and the metrics as one JSON line (last line of output)."""
  if not FLAGS.prediction_file or not FLAGS.gold_file:
    raise app.UsageError("--prediction_file and --gold_file are required")
  try:
    scores = score()
  except USER_ERRORS as e:
    raise app.UsageError(str(e)) from None
  print(format_metrics(scores))
  print(json.dumps(scores, sort_keys=True))
  if FLAGS.output_file:
    atomic_write_json(FLAGS.output_file, scores)


def define_demo_flags(task: str, num_train: int, num_dev: int, unit: str) -> None:
  flags.DEFINE_string("config", default_config(task), "Fine-tuning config.")
  flags.DEFINE_string("output_dir", f"runs/{task}_demo", "Data, run, predictions, summary.")
  flags.DEFINE_integer("num_train", num_train, f"Synthetic training {unit}.")
  flags.DEFINE_integer("num_dev", num_dev, f"Synthetic dev {unit}.")
  flags.DEFINE_integer("seed", 0, "Seed of the synthetic data.")
  flags.DEFINE_multi_string("set", [], "Config override, e.g. "
                                       "--set model.residual_attention=none.")
  flags.DEFINE_integer("verbose", 2, "Keras progress: 0 silent, 1 progress bar, 2 one line.")


def demo_main(run_demo: Callable[..., Dict], report: Callable[[Dict], None],
              last_line: Callable[[Dict], Dict]) -> None:
  """Runs the demo, prints report(summary), the time of each step, the prediction file and
  last_line(summary) as one JSON line."""
  logging.set_verbosity(logging.INFO)
  try:
    summary = run_demo(FLAGS.config, FLAGS.output_dir, FLAGS.num_train, FLAGS.num_dev,
                       FLAGS.seed, FLAGS.set, FLAGS.verbose)
  except USER_ERRORS as e:
    raise app.UsageError(str(e)) from None
  report(summary)
  print("\ntime per step (s):")
  for name, seconds in summary["timings_seconds"].items():
    print(f"  {name:<24}{seconds:8.1f}")
  print(f"\nprediction file: {summary['prediction_file']}")
  print(json.dumps(last_line(summary), sort_keys=True))
