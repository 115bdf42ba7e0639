"""Natural Questions fine-tuning run: config -> vocab, windows, model.fit, export, dev scores.

`run_finetuning(run_config, output_dir)` is what `python -m tasks.nq.finetune` calls.
Output directory:
  run_config.json      the resolved config
  vocab.txt            the vocabulary (copied, or learned from the training file);
                       vocab.model for a SentencePiece model
  train_records/       the converted training windows (reused when unchanged)
  checkpoints/, logs/  as for pretraining; an interrupted run resumes from the latest checkpoint
  export/              the SavedModel + vocab + task config (tasks.nq.inference)
  dev_predictions.json, dev_metrics.json   when a dev file is given (official scorer)
"""

import dataclasses
import os
import time
from typing import Any, Dict, Optional

from absl import logging

from etc_realformer.config import EtcConfig
from etc_realformer.data.read_report import ReadReport
from etc_realformer.dataclass_utils import check_known_keys
from etc_realformer.io_utils import atomic_write_json
from etc_realformer.training import finetuning
from etc_realformer.training.distribution import Distribution
from etc_realformer.training.loop import LoopConfig
from tasks.nq import features as features_lib
from tasks.nq import inference
from tasks.nq import metrics as metrics_lib
from tasks.nq import records
from tasks.nq.data import iter_examples, read_examples
from tasks.nq.model import NqModel


@dataclasses.dataclass
class NqTrainConfig(LoopConfig):
  """The `train:` section of an NQ config."""
  train_file: str = ""          # gzipped JSONL (original or simplified format), or a glob
  dev_file: str = ""            # original format with annotations: scored by the official scorer
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
  check_known_keys(features_lib.NqFeatureConfig, feature_values, source, "features")
  feature_config = features_lib.NqFeatureConfig(**feature_values)
  train = NqTrainConfig.from_dict(dict(run_config.get("train") or {}), source)
  return model, feature_config, train


def _training_texts(train_file: str):
  """Questions and text tokens of the training file (html tokens have their own markers)."""
  for example in iter_examples(train_file, with_labels=True, report=ReadReport(train_file)):
    yield example.question
    words = [t for t, html in zip(example.tokens, example.is_html) if not html]
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
  build = finetuning.model_builder(NqModel, model_config, name="nq")

  trained = finetuning.train_task_model(model_config, feature_config, train, task, build,
                                        output_dir, distribution, verbose, extra_callbacks)
  model, metrics, tokenizer, timings = (trained.model, trained.metrics, trained.tokenizer,
                                        trained.timings)
  vocab_file, info = trained.vocab_file, trained.conversion
  metrics.update(train_windows=info["windows"], train_examples=info["examples"],
                 train_records=info["records"], train_skipped=info["skipped"],
                 train_window_counts=info["counts"])
  if not distribution.is_chief:
    return metrics

  if train.dev_file:
    t0 = time.perf_counter()
    examples, report = read_examples(train.dev_file, with_labels=False)
    logging.info(report.summary())
    predictor = inference.Predictor.from_model(model, feature_config, tokenizer)
    predictions = predictor.predict(examples, train.eval_batch_size)
    atomic_write_json(os.path.join(output_dir, "dev_predictions.json"), predictions)
    dev_metrics = metrics_lib.evaluate(train.dev_file, predictions)
    atomic_write_json(os.path.join(output_dir, "dev_metrics.json"), dev_metrics)
    logging.info("dev:\n%s", metrics_lib.format_metrics(dev_metrics))
    metrics["dev"] = dev_metrics
    timings["dev_seconds"] = time.perf_counter() - t0
  t0 = time.perf_counter()
  inference.export_model(model, feature_config, vocab_file, os.path.join(output_dir, "export"))
  timings["export_seconds"] = time.perf_counter() - t0
  metrics["timings"] = timings
  atomic_write_json(os.path.join(output_dir, "metrics.json"), metrics)
  return metrics
