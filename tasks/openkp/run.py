"""OpenKP fine-tuning run: config -> vocab, features, model.fit, export, dev P/R/F1.

`run_finetuning(run_config, output_dir)` is what `python -m tasks.openkp.finetune` calls.
Output directory:
  run_config.json      the resolved config
  vocab.txt            the vocabulary (copied, or learned from the training file);
                       vocab.model for a SentencePiece model
  train_records/       the converted training features (reused when unchanged)
  checkpoints/, logs/  as for pretraining; an interrupted run resumes from the latest checkpoint
  export/              the SavedModel + vocab + task config (tasks.openkp.inference)
  dev_predictions.jsonl, dev_metrics.json   when a dev file is given
"""

import json
import os
from typing import Any, Dict, List, Optional

from absl import logging

from etc_realformer.io_utils import atomic_write_json, atomic_write_text
from etc_realformer.training import finetuning
from etc_realformer.training.distribution import Distribution
from tasks.openkp import features as features_lib
from tasks.openkp import inference
from tasks.openkp import metrics as metrics_lib
from tasks.openkp import records
from tasks.openkp.data import read_pages
from tasks.openkp.model import OpenKpModel

OpenKpTrainConfig = finetuning.TaskTrainConfig


load_run_config = finetuning.load_task_run_config


def parse_sections(run_config: Dict[str, Any], source: str = "config"):
  return finetuning.parse_task_sections(run_config, features_lib.OpenKpFeatureConfig,
                                        OpenKpTrainConfig, source)


def write_predictions(path: str, lines: List[dict]) -> str:
  """The prediction JSONL, written atomically."""
  return atomic_write_text(path, "".join(json.dumps(line, ensure_ascii=False) + "\n"
                                         for line in lines))


def _training_texts(train_file: str):
  with open(train_file, encoding="utf-8") as f:
    for line in f:
      try:
        record = json.loads(line)
      except json.JSONDecodeError:
        continue
      words = str(record.get("text", "")).split() if isinstance(record, dict) else []
      for begin in range(0, len(words), 64):
        yield " ".join(words[begin:begin + 64])


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
  build = finetuning.model_builder(
      OpenKpModel, model_config, max_phrase_words=feature_config.max_phrase_words, name="openkp")

  def score_dev(trained):
    pages, report = read_pages(train.dev_file, with_labels=False)
    logging.info(report.summary())
    predictor = inference.Predictor.from_model(trained.model, feature_config, trained.tokenizer)
    lines = predictor.predict(pages, train.eval_batch_size)
    write_predictions(os.path.join(output_dir, "dev_predictions.jsonl"), lines)
    scores = metrics_lib.evaluate(train.dev_file, lines, skip_empty_references=True)
    atomic_write_json(os.path.join(output_dir, "dev_metrics.json"), scores)
    logging.info("dev:\n%s", metrics_lib.format_metrics(scores))
    return scores

  return finetuning.train_score_export(
      model_config, feature_config, train, task, build, output_dir, distribution, score_dev,
      lambda model, vocab_file, directory: inference.export_model(
          model, feature_config, vocab_file, directory), verbose, extra_callbacks)
