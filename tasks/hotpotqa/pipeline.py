"""The HotpotQA steps as functions: predicting a file with an export, and the whole demo.

The command lines (`predict`, `demo`) are thin wrappers over these.
"""

import os
import time

from absl import logging

from etc_realformer.io_utils import atomic_write_json
from etc_realformer.training import run_config as run_config_lib
from tasks.hotpotqa import baselines
from tasks.hotpotqa import decode
from tasks.hotpotqa import inference
from tasks.hotpotqa import metrics as metrics_lib
from tasks.hotpotqa import run
from tasks.hotpotqa import synthetic
from tasks.hotpotqa.data import load_json_array, read_examples


def predict_file(export_dir: str, input_file: str, output_file: str, batch_size: int = 8,
                 threshold=None, choose_threshold: bool = False) -> dict:
  """Predicts every id of `input_file` and writes `output_file`; returns the prediction."""
  examples, report = read_examples(input_file, with_labels=False)
  logging.info(report.summary())
  predictor = inference.Predictor.from_export(export_dir)
  layouts, outputs = predictor.run(examples, batch_size)
  if choose_threshold:
    threshold, _ = decode.choose_threshold(examples, layouts, outputs, load_json_array(input_file))
    inference.set_threshold(export_dir, threshold)
    logging.info("chose supporting-fact threshold %.2f (stored in %s)", threshold, export_dir)
  threshold = predictor.threshold if threshold is None else threshold
  prediction = decode.make_predictions(examples, layouts, outputs, threshold)
  empty = sum(1 for answer in prediction["answer"].values() if not answer)
  logging.info("%d prediction(s) written to %s (threshold %.2f; %d empty answer(s); %d "
               "example(s) truncated)", len(prediction["answer"]), output_file, threshold, empty,
               sum(1 for l in layouts.values() if l.dropped or l.question_truncated))
  os.makedirs(os.path.dirname(os.path.abspath(output_file)), exist_ok=True)
  atomic_write_json(output_file, prediction)
  return prediction


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
  predict_file(os.path.join(run_dir, "export"), dev_file, prediction_file)
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
