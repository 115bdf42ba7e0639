"""The NQ steps as functions: predicting a file with an export, and the whole demo.

The command lines (`predict`, `demo`) are thin wrappers over these.
"""

import os

from absl import logging

from etc_realformer.io_utils import atomic_write_json
from tasks import demo_steps
from tasks.nq import decode
from tasks.nq import inference
from tasks.nq import metrics as metrics_lib
from tasks.nq import run
from tasks.nq.data import read_examples


def predict_file(export_dir: str, input_file: str, output_file: str, batch_size: int = 8) -> dict:
  """Predicts every example of `input_file` (a file or glob) and writes the predictions JSON."""
  examples, report = read_examples(input_file, with_labels=False)
  logging.info(report.summary())
  predictor = inference.Predictor.from_export(export_dir)
  predictions = predictor.predict(examples, batch_size)
  entries = predictions["predictions"]
  logging.info("%d prediction(s) written to %s: %d with a long answer, %d with short spans, %d "
               "yes/no, %d null because the example could not be converted", len(entries),
               output_file, sum(e["long_answer"]["start_token"] >= 0 for e in entries),
               sum(bool(e["short_answers"]) for e in entries),
               sum(e["yes_no_answer"] != "NONE" for e in entries),
               sum(bool(e.problem) for e in examples))
  os.makedirs(os.path.dirname(os.path.abspath(output_file)), exist_ok=True)
  atomic_write_json(output_file, predictions)
  return predictions


def run_demo(config_path, output_dir, num_train, num_dev, seed=0, overrides=(), verbose=2):
  """Synthetic data -> fine-tune -> predict through the export -> official scorer, next to the
  always-null baseline. Returns the summary (also written to demo_summary.json)."""
  from tasks.nq import synthetic   # pylint: disable=import-outside-toplevel

  def make_data(directory):
    files = synthetic.ensure_demo_data(directory, num_train, num_dev, seed)
    return files["train"], files["dev"]

  def score(dev_file, prediction_file):
    examples, _ = read_examples(dev_file, with_labels=False)
    return {"dev_metrics": metrics_lib.evaluate(dev_file, prediction_file),
            "baseline_metrics": metrics_lib.evaluate(dev_file,
                                                     decode.null_predictions(examples))}

  return demo_steps.run_task_demo(run, make_data, predict_file, score, config_path, output_dir,
                                  "dev_predictions.json", overrides, verbose)
