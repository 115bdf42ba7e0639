"""HotpotQA fine-tuning run: config -> vocab, features, model.fit, export, dev threshold.

`run_finetuning(run_config, output_dir)` is what `python -m tasks.hotpotqa.finetune` calls.
Output directory:
  run_config.json      the resolved config
  vocab.txt            the vocabulary (copied, or learned from the training file);
                       vocab.model for a SentencePiece model
  train_records/       the converted training features (reused when unchanged)
  checkpoints/, logs/  as for pretraining; an interrupted run resumes from the latest checkpoint
  export/              the SavedModel + vocab + task config (tasks.hotpotqa.inference)
  dev_predictions.json, dev_metrics.json   when a dev file is given: the threshold is chosen on it
"""

import dataclasses
import os
import time
from typing import Any, Dict, Optional

from absl import logging

from etc_realformer.config import EtcConfig
from etc_realformer.dataclass_utils import check_known_keys
from etc_realformer.io_utils import atomic_write_json
from etc_realformer.training.distribution import Distribution
from etc_realformer.training import finetuning
from etc_realformer.training.loop import LoopConfig
from tasks.hotpotqa import decode
from tasks.hotpotqa import features as features_lib
from tasks.hotpotqa import inference
from tasks.hotpotqa import metrics as metrics_lib
from tasks.hotpotqa import records
from tasks.hotpotqa.data import load_json_array, read_examples
from tasks.hotpotqa.model import HotpotQaModel

@dataclasses.dataclass
class HotpotTrainConfig(LoopConfig):
  """The `train:` section of a HotpotQA config."""
  train_file: str = ""          # official-format JSON array
  dev_file: str = ""            # labelled; chooses the supporting-fact threshold when given
  vocab_file: str = ""          # vocab.txt (WordPiece) or *.model (SentencePiece); empty: the
                                # vocabulary beside an official init_checkpoint, else a WordPiece
                                # vocab learned from train_file
  learned_vocab_size: int = 2000
  init_checkpoint: str = ""     # a pretraining run's final/encoder (or a run directory)
  split_punctuation: bool = False  # SentencePiece only: BERT's basic cut first (the
                                   # etc_large_split_punctuation checkpoint)
  eval_batch_size: int = 8


load_run_config = finetuning.load_task_run_config


def parse_sections(run_config: Dict[str, Any], source: str = "config"):
  model = EtcConfig.from_dict(dict(run_config["model"]), source=f"{source} (model)")
  feature_values = dict(run_config.get("features") or {})
  check_known_keys(features_lib.HotpotFeatureConfig, feature_values, source, "features")
  feature_config = features_lib.HotpotFeatureConfig(**feature_values)
  train = HotpotTrainConfig.from_dict(dict(run_config.get("train") or {}), source)
  return model, feature_config, train


def _training_texts(train_file: str):
  for record in load_json_array(train_file):
    if isinstance(record, dict):
      yield str(record.get("question", ""))
      for paragraph in record.get("context") or []:
        if isinstance(paragraph, list) and len(paragraph) == 2:
          yield str(paragraph[0])
          yield from (s for s in paragraph[1] if isinstance(s, str))


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
  build = finetuning.model_builder(HotpotQaModel, model_config, name="hotpotqa")

  trained = finetuning.train_task_model(model_config, feature_config, train, task, build,
                                        output_dir, distribution, verbose, extra_callbacks)
  model, metrics, tokenizer, timings = (trained.model, trained.metrics, trained.tokenizer,
                                        trained.timings)
  vocab_file, info = trained.vocab_file, trained.conversion
  metrics.update(train_examples=info["examples"], train_records=info["records"],
                 train_skipped=info["skipped"])
  if not distribution.is_chief:
    return metrics

  threshold = decode.DEFAULT_THRESHOLD
  if train.dev_file:
    t0 = time.perf_counter()
    examples, report = read_examples(train.dev_file, with_labels=False)
    logging.info(report.summary())
    predictor = inference.Predictor.from_model(model, feature_config, tokenizer)
    layouts, outputs = predictor.run(examples, train.eval_batch_size)
    gold = load_json_array(train.dev_file)
    threshold, table = decode.choose_threshold(examples, layouts, outputs, gold)
    prediction = decode.make_predictions(examples, layouts, outputs, threshold)
    atomic_write_json(os.path.join(output_dir, "dev_predictions.json"), prediction)
    dev_metrics = metrics_lib.evaluate(prediction, gold)
    atomic_write_json(os.path.join(output_dir, "dev_metrics.json"), {
        "sp_threshold": threshold, "metrics": dev_metrics,
        "by_threshold": {str(t): m for t, m in table.items()}})
    logging.info("dev (threshold %.2f):\n%s", threshold, metrics_lib.format_metrics(dev_metrics))
    metrics["dev"] = dev_metrics
    timings["dev_seconds"] = time.perf_counter() - t0
  metrics["sp_threshold"] = threshold
  t0 = time.perf_counter()
  inference.export_model(model, feature_config, vocab_file, os.path.join(output_dir, "export"),
                         threshold)
  timings["export_seconds"] = time.perf_counter() - t0
  metrics["timings"] = timings
  atomic_write_json(os.path.join(output_dir, "metrics.json"), metrics)
  return metrics
