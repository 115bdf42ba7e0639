"""The NQ steps as functions: predicting a file with an export, and the whole demo.

The command lines (`predict`, `demo`) are thin wrappers over these.
"""

import os
import time

from absl import logging

from etc_realformer.io_utils import atomic_write_json
from etc_realformer.training import run_config as run_config_lib
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
  """Synthetic data -> fine-tune -> predict through the export -> official scorer.

  Returns the summary dict (also written to demo_summary.json).
  """
  from tasks.nq import synthetic   # pylint: disable=import-outside-toplevel
  timings = {}
  t0 = time.perf_counter()
  files = synthetic.ensure_demo_data(os.path.join(output_dir, "data"), num_train, num_dev, seed)
  train_file, dev_file = files["train"], files["dev"]
  timings["generate_data"] = time.perf_counter() - t0
  logging.info("step 1/4: data in %s (%d train, %d dev examples)",
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
  prediction_file = os.path.join(output_dir, "dev_predictions.json")
  t0 = time.perf_counter()
  predict_file(os.path.join(run_dir, "export"), dev_file, prediction_file)
  timings["predict"] = time.perf_counter() - t0

  logging.info("step 4/4: scoring with the official scorer")
  t0 = time.perf_counter()
  scores = metrics_lib.evaluate(dev_file, prediction_file)
  examples, _ = read_examples(dev_file, with_labels=False)
  baseline = metrics_lib.evaluate(dev_file, decode.null_predictions(examples))
  timings["evaluate"] = time.perf_counter() - t0
  summary = {"dev_metrics": scores, "baseline_metrics": baseline, "timings_seconds": timings,
             "in_memory_dev_metrics": finetune.get("dev"),
             "train_metrics": {k: v for k, v in finetune.items() if k not in ("dev", "timings")},
             "model": run_config["model"], "prediction_file": prediction_file}
  atomic_write_json(os.path.join(output_dir, "demo_summary.json"), summary)
  return summary
