"""The steps every task demo shares: data in, fine-tune, predict through the export, score.

`run_task_demo` runs them for a `Task`: its synthetic data, its fine-tuning run, its
`predict_file` on the dev file with the exported model, and its `demo_scores` (the model next to
the trivial baselines). Each step is timed; the summary goes to <output_dir>/demo_summary.json.
"""

import os
from typing import Any, Callable, Dict, Sequence

from absl import logging

from etc_realformer.io_utils import atomic_write_json
from etc_realformer.training import determinism
from etc_realformer.training import run_config as run_config_lib
from tasks.common.finetuning import timed


def run_task_demo(task, make_data: Callable[[str], Dict[str, str]], config_path: str,
                  output_dir: str, overrides: Sequence[str] = (), verbose: int = 2
                  ) -> Dict[str, Any]:
  """Runs the four demo steps of `task` (a tasks.common.task.Task).

  Args:
    make_data: data directory -> {split: file} with "train" and "dev" and possibly other
      evaluation splits (e.g. "dev_unseen"), generated or reused.
    config_path: the fine-tuning config; `overrides` are --set style "section.key=value".
  Returns:
    The summary (also written to demo_summary.json): the task's demo_scores on dev, those of
    every other evaluation split under "splits", timings, the in-memory dev metrics of the run
    (None unless it chose settings on dev), its training metrics and settings, the model config
    and the prediction files.
  """
  timings: Dict[str, float] = {}
  run_config = task.load_run_config(config_path)
  run_config_lib.apply_overrides(run_config, overrides)
  if run_config["train"].get("deterministic"):
    determinism.enable()  # before TensorFlow's runtime starts
  with timed(timings, "generate_data"):
    files = make_data(os.path.join(output_dir, "data"))
  train_file, dev_file = files["train"], files["dev"]
  logging.info("step 1/4: data in %s", os.path.dirname(train_file))
  # The fine-tuning run scores dev in memory only where it chooses a setting on dev (a
  # predictor with setting_names, e.g. HotpotQA's sp_threshold): step 3 scores dev through the
  # export either way, and doing it twice cost NQ's reduced demo 27 s of 500.
  chooses_settings = bool(task.predictor_class.setting_names)
  run_config["train"].update(train_file=train_file,
                             dev_file=dev_file if chooses_settings else "")
  run_dir = os.path.join(output_dir, "run")
  logging.info("step 2/4: fine-tuning (%s steps) in %s",
               run_config["train"].get("num_train_steps"), run_dir)
  with timed(timings, "finetune_total"):
    finetune = task.run_finetuning(run_config, run_dir, verbose=verbose)
  timings.update({f"finetune_{k}": v for k, v in finetune.get("timings", {}).items()})

  extra = [split for split in files if split.startswith(("dev_", "test_"))]  # e.g. dev_unseen
  logging.info("step 3/4: predicting %s with the exported model", ", ".join(["dev"] + extra))
  predictions = {}
  for split in ["dev"] + extra:
    predictions[split] = os.path.join(output_dir,
                                      task.prediction_file_name.replace("dev", split, 1))
    with timed(timings, "predict" if split == "dev" else f"predict_{split}"):
      task.predict_file(os.path.join(run_dir, "export"), files[split], predictions[split])

  logging.info("step 4/4: scoring")
  with timed(timings, "evaluate"):
    summary = dict(task.demo_scores(dev_file, predictions["dev"]))
    summary["splits"] = {split: task.demo_scores(files[split], predictions[split])
                         for split in extra}
  settings = {name: finetune[name] for name in task.predictor_class.setting_names
              if name in finetune}
  summary.update(settings, timings_seconds=timings, in_memory_dev_metrics=finetune.get("dev"),
                 train_metrics={k: v for k, v in finetune.items() if k not in ("dev", "timings")},
                 model=run_config["model"], prediction_file=predictions["dev"],
                 seed=run_config["train"].get("seed", 0),
                 deterministic=bool(run_config["train"].get("deterministic")),
                 prediction_files=predictions)
  atomic_write_json(os.path.join(output_dir, "demo_summary.json"), summary)
  return summary
