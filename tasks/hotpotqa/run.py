"""HotpotQA fine-tuning run: config -> vocab, features, model.fit, export, dev threshold.

`run_finetuning(run_config, output_dir)` is what `python -m tasks.hotpotqa.finetune` calls.
Output directory:
  run_config.json      the resolved config
  vocab.txt            the vocabulary (copied, or learned from the training file)
  train_records/       the converted training features (reused when unchanged)
  checkpoints/, logs/  as for pretraining; an interrupted run resumes from the latest checkpoint
  export/              the SavedModel + vocab + task config (tasks.hotpotqa.inference)
  dev_predictions.json, dev_metrics.json   when a dev file is given: the threshold is chosen on it
"""

import dataclasses
import json
import os
import shutil
import time
from typing import Any, Dict, Optional

from absl import logging
import tensorflow as tf
import tf_keras

from etc_realformer.config import EtcConfig
from etc_realformer.data import vocab_learner
from etc_realformer.data.span_tokenization import OffsetTokenizer
from etc_realformer.data.tokenization import load_tokenizer
from etc_realformer.dataclass_utils import check_known_keys
from etc_realformer.io_utils import atomic_write_json
from etc_realformer.data import tfrecords
from etc_realformer.training.distribution import Distribution
from etc_realformer.training import run_config as run_config_lib
from etc_realformer.training.loop import LoopConfig, check_distribution, run_training_loop
from tasks.hotpotqa import decode
from tasks.hotpotqa import features as features_lib
from tasks.hotpotqa import inference
from tasks.hotpotqa import metrics as metrics_lib
from tasks.hotpotqa import records
from tasks.hotpotqa.data import load_json_array, read_examples
from tasks.hotpotqa.model import HotpotQaModel

# Encoder fields a pretrained checkpoint must share with the fine-tuned model.
_SHAPE_KEYS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
               "intermediate_size", "relative_vocab_size", "segment_vocab_size",
               "embedding_size", "att_size_per_head", "num_persistent_memory",
               "share_qkv_projections", "share_kv_projections", "share_feed_forward_params",
               "share_att_output_projection", "use_feed_forward",
               "max_absolute_position_embeddings", "use_pre_activation_order")


@dataclasses.dataclass
class HotpotTrainConfig(LoopConfig):
  """The `train:` section of a HotpotQA config."""
  train_file: str = ""          # official-format JSON array
  dev_file: str = ""            # labelled; chooses the supporting-fact threshold when given
  vocab_file: str = ""          # empty: learn a WordPiece vocab from train_file
  learned_vocab_size: int = 2000
  init_checkpoint: str = ""     # a pretraining run's final/encoder (or a run directory)
  eval_batch_size: int = 8


def load_run_config(path: str) -> Dict[str, Any]:
  """A HotpotQA config file -> {model, features, train} dicts (model paths resolved)."""
  return run_config_lib.load_run_config(path, ("features", "train"))


def parse_sections(run_config: Dict[str, Any], source: str = "config"):
  model = EtcConfig.from_dict(dict(run_config["model"]), source=f"{source} (model)")
  feature_values = dict(run_config.get("features") or {})
  check_known_keys(features_lib.HotpotFeatureConfig, feature_values, source, "features")
  feature_config = features_lib.HotpotFeatureConfig(**feature_values)
  train = HotpotTrainConfig.from_dict(dict(run_config.get("train") or {}), source)
  return model, feature_config, train


def prepare_vocab(train: HotpotTrainConfig, output_dir: str) -> str:
  """Copies the given vocab (or learns one from the training file) to <output_dir>/vocab.txt."""
  path = os.path.join(output_dir, "vocab.txt")
  if train.vocab_file:
    if not os.path.exists(train.vocab_file):
      raise FileNotFoundError(f"vocab_file: {train.vocab_file} does not exist")
    if os.path.abspath(train.vocab_file) != os.path.abspath(path):
      shutil.copyfile(train.vocab_file, path)
    return path
  if os.path.exists(path):
    return path
  logging.info("learning a %d-piece WordPiece vocab from %s", train.learned_vocab_size,
               train.train_file)
  texts = []
  for record in load_json_array(train.train_file):
    if isinstance(record, dict):
      texts.append(str(record.get("question", "")))
      for paragraph in record.get("context") or []:
        if isinstance(paragraph, list) and len(paragraph) == 2:
          texts.append(str(paragraph[0]))
          texts.extend(s for s in paragraph[1] if isinstance(s, str))
  vocab_learner.write_vocab(vocab_learner.learn_wordpiece_vocab(
      texts, vocab_size=train.learned_vocab_size), path)
  return path


def _resolve_init_checkpoint(path: str) -> str:
  """A checkpoint prefix from a prefix, a `final/` directory or a pretraining run directory."""
  for candidate in (path, os.path.join(path, "encoder"), os.path.join(path, "final", "encoder")):
    if tf.io.gfile.exists(candidate + ".index"):
      return candidate
  raise FileNotFoundError(f"init_checkpoint: no encoder checkpoint at {path} (expected "
                          "<pretraining run>/final/encoder written by etc_realformer.pretrain)")


def make_initializer(init_checkpoint: str, model_config: EtcConfig):
  """-> a function that loads pretrained encoder weights into a HotpotQaModel (or None)."""
  if not init_checkpoint:
    return None
  prefix = _resolve_init_checkpoint(init_checkpoint)
  config_path = os.path.join(os.path.dirname(prefix), "etc_config.json")
  if os.path.exists(config_path):
    with open(config_path) as f:
      pretrained = json.load(f)
    mine = model_config.to_dict()
    different = [k for k in _SHAPE_KEYS if k in pretrained and pretrained[k] != mine.get(k)]
    if different:
      raise ValueError(f"init_checkpoint: {prefix} was trained with a different encoder: " +
                       ", ".join(f"{k} {pretrained[k]!r} != {mine.get(k)!r}" for k in different))

  def initialize(model):
    tf.train.Checkpoint(encoder=model.encoder).read(prefix).assert_existing_objects_matched() \
        .expect_partial()
    logging.info("encoder initialised from %s", prefix)
  return initialize


def run_finetuning(run_config: Dict[str, Any], output_dir: str,
                   distribution: Optional[Distribution] = None, verbose: int = 1,
                   extra_callbacks=()) -> Dict[str, Any]:
  """Fine-tunes (or resumes), exports, and scores dev if given. Returns the run's figures."""
  previous_policy = tf_keras.mixed_precision.global_policy()
  try:
    return _run(run_config, output_dir, distribution or Distribution("none"), verbose,
                extra_callbacks)
  finally:
    tf_keras.mixed_precision.set_global_policy(previous_policy)


def _run(run_config, output_dir, distribution, verbose, extra_callbacks):
  model_config, feature_config, train = parse_sections(run_config)
  check_distribution(train, distribution)
  if not train.train_file:
    raise ValueError("train_file: no HotpotQA training file given")
  timings = {}
  os.makedirs(output_dir, exist_ok=True)
  t0 = time.perf_counter()
  vocab_file = prepare_vocab(train, output_dir)
  tokenizer = OffsetTokenizer(load_tokenizer(vocab_file=vocab_file))
  if tokenizer.tokenizer.vocab_size > model_config.vocab_size:
    raise ValueError(f"{vocab_file}: {tokenizer.tokenizer.vocab_size} pieces but the model's "
                     f"vocab_size is {model_config.vocab_size}")
  timings["vocab_seconds"] = time.perf_counter() - t0
  t0 = time.perf_counter()
  record_dir = os.path.join(output_dir, "train_records")
  info = records.convert_file(train.train_file, record_dir, tokenizer, vocab_file, feature_config)
  timings["convert_seconds"] = time.perf_counter() - t0
  files = records.record_files(record_dir)
  global_batch = train.global_batch_size(distribution)
  if distribution.is_chief:
    atomic_write_json(os.path.join(output_dir, "run_config.json"), {
        "model": model_config.to_dict(), "features": dataclasses.asdict(feature_config),
        "train": dataclasses.asdict(train), "distribution": distribution.kind,
        "num_workers": distribution.num_workers, "global_batch_size": global_batch})

  def build():
    model = HotpotQaModel(model_config, name="hotpotqa")
    model.build()
    return model

  def make(num_slices, slice_index, start_step):
    return tfrecords.make_dataset(files, None, global_batch, num_slices, slice_index,
                                  shuffle_buffer=train.shuffle_buffer, seed=train.seed,
                                  skip_batches=start_step,
                                  parse_fn=records.parse_fn(feature_config))

  t0 = time.perf_counter()
  model, metrics = run_training_loop(
      build, make, train, output_dir, distribution, verbose=verbose,
      extra_callbacks=extra_callbacks, tokens_per_step=global_batch * feature_config.long_seq_len,
      initialize=make_initializer(train.init_checkpoint, model_config))
  timings["train_seconds"] = time.perf_counter() - t0
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
