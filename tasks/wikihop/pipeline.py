"""The WikiHop steps as functions: predicting a file with an export, and the whole demo.

The command lines (`predict`, `demo`) are thin wrappers over these.
"""

from typing import Dict

from absl import logging

from etc_realformer.io_utils import atomic_write_json
from tasks import demo_steps
from tasks.wikihop import baselines
from tasks.wikihop import inference
from tasks.wikihop import metrics as metrics_lib
from tasks.wikihop import run
from tasks.wikihop.data import read_examples
from tasks.wikihop.features import CandidatesDoNotFit


def predict_file(export_dir: str, input_file: str, output_file: str,
                 batch_size: int = 16) -> Dict[str, str]:
  """Predicts every item of `input_file` and writes {id: candidate} to `output_file`."""
  examples, report = read_examples(input_file, with_labels=False)
  logging.info(report.summary())
  try:
    prediction = inference.Predictor.from_export(export_dir).predict(examples, batch_size)
  except CandidatesDoNotFit as e:
    raise CandidatesDoNotFit(f"{input_file}: {e}") from None
  atomic_write_json(output_file, prediction)
  logging.info("%d prediction(s) written to %s", len(prediction), output_file)
  return prediction


def run_demo(config_path, output_dir, num_train, num_dev, seed=0, overrides=(), verbose=2):
  """Synthetic data -> fine-tune -> predict through the export -> accuracy next to the
  most-mentioned-candidate baseline and random guessing. Returns the summary (also in
  <output_dir>/demo_summary.json)."""
  from tasks.wikihop import synthetic   # pylint: disable=import-outside-toplevel

  def make_data(directory):
    files = synthetic.ensure_demo_data(directory, num_train, num_dev, seed)
    return files["train"], files["dev"]

  def score(dev_file, prediction_file):
    examples, _ = read_examples(dev_file, with_labels=False)
    return {"dev_metrics": metrics_lib.evaluate(dev_file, prediction_file),
            "baseline_metrics": metrics_lib.evaluate(dev_file,
                                                     baselines.most_mentioned(examples)),
            "chance_accuracy": sum(1 / len(e.candidates) for e in examples) / len(examples)}

  return demo_steps.run_task_demo(run, make_data, predict_file, score, config_path, output_dir,
                                  "dev_predictions.json", overrides, verbose)
