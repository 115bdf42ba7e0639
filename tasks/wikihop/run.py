"""WikiHop fine-tuning run: config -> vocab, features, model.fit, export, dev accuracy.

`run_finetuning(run_config, output_dir)` is what `python -m tasks.wikihop.finetune` calls.
Output directory:
  run_config.json      the resolved config
  vocab.txt            the vocabulary (copied, or learned from the training file);
                       vocab.model for a SentencePiece model
  train_records/       the converted training features (reused when unchanged)
  checkpoints/, logs/  as for pretraining; an interrupted run resumes from the latest checkpoint
  export/              the SavedModel + vocab + task config (tasks.wikihop.inference)
  dev_predictions.json, dev_metrics.json   when a dev file is given
"""

import os
from typing import Any, Dict, Optional

from absl import logging

from etc_realformer.io_utils import atomic_write_json
from etc_realformer.training import finetuning
from etc_realformer.training.distribution import Distribution
from tasks.wikihop import features as features_lib
from tasks.wikihop import inference
from tasks.wikihop import metrics as metrics_lib
from tasks.wikihop import records
from tasks.wikihop.data import load_items, read_examples
from tasks.wikihop.model import WikiHopModel

WikiHopTrainConfig = finetuning.TaskTrainConfig


load_run_config = finetuning.load_task_run_config


def parse_sections(run_config: Dict[str, Any], source: str = "config"):
  return finetuning.parse_task_sections(run_config, features_lib.WikiHopFeatureConfig,
                                        WikiHopTrainConfig, source)


def _training_texts(train_file: str):
  for item in load_items(train_file):
    if isinstance(item, dict):
      yield str(item.get("query", "")).replace("_", " ")
      yield from (c for c in item.get("candidates") or [] if isinstance(c, str))
      yield from (s for s in item.get("supports") or [] if isinstance(s, str))


def run_finetuning(run_config: Dict[str, Any], output_dir: str,
                   distribution: Optional[Distribution] = None, verbose: int = 1,
                   extra_callbacks=()) -> Dict[str, Any]:
  """Fine-tunes (or resumes), exports, and scores dev if given. Returns the run's figures."""
  return finetuning.run_task(_run, run_config, output_dir, distribution, verbose,
                             extra_callbacks)


def _run(run_config, output_dir, distribution, verbose, extra_callbacks):
  model_config, feature_config, train = parse_sections(run_config)
  task = finetuning.standard_task_data(train, feature_config, output_dir, records,
                                      _training_texts)
  build = finetuning.model_builder(WikiHopModel, model_config, name="wikihop")

  def score_dev(trained):
    examples, report = read_examples(train.dev_file, with_labels=False)
    logging.info(report.summary())
    predictor = inference.Predictor.from_model(trained.model, feature_config, trained.tokenizer)
    prediction = predictor.predict(examples, train.eval_batch_size)
    atomic_write_json(os.path.join(output_dir, "dev_predictions.json"), prediction)
    scores = metrics_lib.evaluate(train.dev_file, prediction)
    atomic_write_json(os.path.join(output_dir, "dev_metrics.json"), scores)
    logging.info("dev: %s", metrics_lib.format_metrics(scores))
    return scores

  return finetuning.train_score_export(
      model_config, feature_config, train, task, build, output_dir, distribution, score_dev,
      lambda model, vocab_file, directory: inference.export_model(
          model, feature_config, vocab_file, directory), verbose, extra_callbacks)
