"""The OpenKP steps as functions: predicting a file with an export, and the whole demo.

The command lines (`predict`, `demo`) are thin wrappers over these.
"""

from typing import List

from absl import logging

from tasks import demo_steps
from tasks.openkp import baselines
from tasks.openkp import decode
from tasks.openkp import inference
from tasks.openkp import metrics as metrics_lib
from tasks.openkp import run
from tasks.openkp.data import read_pages


def predict_file(export_dir: str, input_file: str, output_file: str,
                 batch_size: int = 16) -> List[dict]:
  """Predicts every url of `input_file` and writes the JSONL prediction file."""
  pages, report = read_pages(input_file, with_labels=False)
  logging.info(report.summary())
  lines = inference.Predictor.from_export(export_dir).predict(pages, batch_size)
  run.write_predictions(output_file, lines)
  logging.info("%d prediction line(s) written to %s", len(lines), output_file)
  return lines


def run_demo(config_path, output_dir, num_train, num_dev, seed=0, overrides=(), verbose=2):
  """Synthetic data -> fine-tune -> predict through the export -> P/R/F1 next to the two
  trivial baselines. Returns the summary (also in <output_dir>/demo_summary.json)."""
  from tasks.openkp import synthetic   # pylint: disable=import-outside-toplevel

  def make_data(directory):
    files = synthetic.ensure_demo_data(directory, num_train, num_dev, seed)
    return files["train"], files["dev"]

  def score(dev_file, prediction_file):
    pages, _ = read_pages(dev_file, with_labels=False)
    chosen = {"first_five_words": baselines.first_words(pages),
              "frequent_ngrams": baselines.frequent_ngrams(pages)}
    return {"dev_metrics": metrics_lib.evaluate(dev_file, prediction_file,
                                                skip_empty_references=True),
            "baseline_metrics": {
                name: metrics_lib.evaluate(dev_file, decode.prediction_lines(pages, lines),
                                           skip_empty_references=True)
                for name, lines in chosen.items()}}

  return demo_steps.run_task_demo(run, make_data, predict_file, score, config_path, output_dir,
                                  "dev_predictions.jsonl", overrides, verbose)
