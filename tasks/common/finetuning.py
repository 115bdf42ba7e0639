"""The training half of a fine-tuning run, shared by every task (tasks.common.task).

`prepare_vocab` puts the run's vocabulary in its output directory: a given file (a WordPiece
vocab.txt or a SentencePiece *.model) is copied, or a WordPiece vocabulary is learned from the
task's training texts. With no vocab_file, the init_checkpoint's own vocabulary is used: the one
released with an official checkpoint (`tokenization.vocab_from_checkpoint_folder`,
docs/tokenizers.md) or the one beside this package's pretrained encoder (`vocab_source`).

`train_task_model` is the shared body of every task's fine-tuning run: vocabulary, conversion of
the training file (through `TaskData`: `train.num_conversion_shards` TFRecord files written by
`train.num_conversion_workers` processes, reused while unchanged), run_config.json and the
resumable model.fit; the `Task` scores dev and exports after it. With several training workers,
`train.input_sharding` chooses whether each reads every record ("slice": N workers train exactly
as one) or only its own shards ("shards").

`train.init_checkpoint` is read by `etc_realformer.training.initialization.make_initializer`:
this package's encoder checkpoint or an official ETC `model.ckpt` prefix.
"""

import dataclasses
import os
import shutil
import time
from typing import Any, Callable, Dict, Iterable, List

from absl import logging
import tf_keras

from etc_realformer.config import EtcConfig
from etc_realformer.data import tfrecords
from etc_realformer.data import vocab_learner
from etc_realformer.data.span_tokenization import OffsetTokenizer
from etc_realformer.data import tokenization
from etc_realformer.dataclass_utils import check_known_keys
from etc_realformer.io_utils import atomic_write_json
from etc_realformer.training.distribution import Distribution
from etc_realformer.data import pretraining_data
from etc_realformer.training import initialization
from etc_realformer.training.initialization import make_initializer
from etc_realformer.training.loop import LoopConfig, check_distribution, run_training_loop


def prepare_vocab(vocab_file: str, learned_vocab_size: int, output_dir: str,
                  texts: Callable[[], Iterable[str]], source: str = "") -> str:
  """Copies `vocab_file` (or learns one from `texts()`) to <output_dir>/vocab.txt; -> its path.

  A SentencePiece model (*.model) is copied to <output_dir>/vocab.model. A vocabulary already
  learned into output_dir is reused (a resumed run keeps its ids).
  """
  path = os.path.join(output_dir, "vocab.txt")
  if vocab_file:
    if not os.path.exists(vocab_file):
      raise FileNotFoundError(f"vocab_file: {vocab_file} does not exist")
    if tokenization.is_sentencepiece_file(vocab_file):
      path = os.path.join(output_dir, "vocab.model")
    if os.path.abspath(vocab_file) != os.path.abspath(path):
      shutil.copyfile(vocab_file, path)
    return path
  if os.path.exists(path):
    return path
  logging.info("learning a %d-piece WordPiece vocab from %s", learned_vocab_size, source)
  vocab_learner.write_vocab(vocab_learner.learn_wordpiece_vocab(
      list(texts()), vocab_size=learned_vocab_size), path)
  return path


@dataclasses.dataclass
class TaskTrainConfig(LoopConfig):
  """The `train:` section of a task config (a task may subclass it to add settings)."""
  train_file: str = ""          # the task's official training file
  dev_file: str = ""            # labelled: predicted and scored after training
  vocab_file: str = ""          # vocab.txt (WordPiece) or *.model (SentencePiece); empty: the
                                # vocabulary beside an official init_checkpoint, else a WordPiece
                                # vocab learned from train_file
  learned_vocab_size: int = 2000
  init_checkpoint: str = ""     # a pretraining run's final/encoder (or a run directory), or
                                # an official ETC model.ckpt prefix (converted on load)
  split_punctuation: bool = False  # SentencePiece only: BERT's basic cut first (the
                                   # etc_large_split_punctuation checkpoint)
  eval_batch_size: int = 16
  num_conversion_shards: int = 1   # TFRecord files the training file is converted into
  num_conversion_workers: int = 1  # processes converting them (the records do not depend on it)
  input_sharding: str = "slice"    # how training workers read the records: "slice" (each reads
                                   # every record and keeps its slice of each global batch: N
                                   # workers train as 1) or "shards" (each reads only its own
                                   # files; needs num_conversion_shards >= workers)

  def validate(self, source="train config"):
    super().validate(source)
    for name in ("num_conversion_shards", "num_conversion_workers"):
      value = getattr(self, name)
      if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{source}: {name} must be a positive integer, got {value!r}")
    if self.input_sharding not in tfrecords.SHARDING_MODES:
      raise ValueError(f"{source}: input_sharding must be one of "
                       f"{', '.join(tfrecords.SHARDING_MODES)}, got {self.input_sharding!r}")
    return self


def parse_task_sections(run_config: Dict[str, Any], feature_cls, train_cls,
                        source: str = "config"):
  """{model, features, train} dicts -> (EtcConfig, feature_cls, train_cls), errors naming keys."""
  model = EtcConfig.from_dict(dict(run_config["model"]), source=f"{source} (model)")
  feature_values = dict(run_config.get("features") or {})
  check_known_keys(feature_cls, feature_values, source, "features")
  try:
    feature_config = feature_cls(**feature_values)
  except ValueError as e:
    raise ValueError(f"{source} (features): {e}") from None
  train = train_cls.from_dict(dict(run_config.get("train") or {}), source)
  return model, feature_config, train


@dataclasses.dataclass
class TaskData:
  """How a task turns its training file into TFRecords (the task-specific part of training)."""
  prepare_vocab: Callable[[], str]                         # -> vocab file in the output dir
  convert: Callable[[Any, str, str], dict]                 # (tokenizer, vocab_file, directory)
  record_files: Callable[[str], List[str]]                 # directory -> TFRecord files
  parse_fn: Callable                                       # for tfrecords.make_dataset
  long_seq_len: int


def vocab_source(train) -> str:
  """train.vocab_file, else the vocabulary of train.init_checkpoint, else "" (learn one).

  The checkpoint's vocabulary is the one released with an official ETC checkpoint, or the
  vocab.txt / vocab.model beside this package's encoder checkpoint (a pretraining run's final/).
  """
  if train.vocab_file:
    return train.vocab_file
  if not train.init_checkpoint:
    return ""
  official = tokenization.vocab_from_checkpoint_folder(train.init_checkpoint)
  if official:
    return official
  if initialization.official_prefix(train.init_checkpoint) is not None:
    return ""
  prefix = initialization.package_prefix(train.init_checkpoint)
  return pretraining_data.find_vocab(os.path.dirname(prefix)) or ""


@dataclasses.dataclass
class Trained:
  """What `train_task_model` hands back to the task for dev scoring and export."""
  model: Any
  metrics: Dict[str, Any]
  tokenizer: OffsetTokenizer
  vocab_file: str
  conversion: dict
  timings: Dict[str, float]


def keep_precision_policy(fn: Callable[[], Any]) -> Any:
  """Runs fn and restores the global mixed-precision policy (a config may change it)."""
  previous_policy = tf_keras.mixed_precision.global_policy()
  try:
    return fn()
  finally:
    tf_keras.mixed_precision.set_global_policy(previous_policy)


def train_task_model(model_config: EtcConfig, feature_config, train: LoopConfig, task: TaskData,
                     build_model: Callable[[], Any], output_dir: str, distribution: Distribution,
                     verbose: int = 1, extra_callbacks=()) -> Trained:
  """Vocab, conversion, run_config.json and the resumable model.fit of a fine-tuning run.

  `train` is the task's LoopConfig subclass (with train_file, init_checkpoint).
  """
  check_distribution(train, distribution)
  if not train.train_file:
    raise ValueError("train_file: no training file given")
  timings = {}
  os.makedirs(output_dir, exist_ok=True)
  t0 = time.perf_counter()
  vocab_file = task.prepare_vocab()
  tokenizer = OffsetTokenizer(tokenization.tokenizer_for_vocab(
      vocab_file, split_punctuation=getattr(train, "split_punctuation", False)))
  atomic_write_json(os.path.join(output_dir, "tokenizer.json"),  # exported with the vocabulary
                    {"split_punctuation": bool(getattr(train, "split_punctuation", False))})
  if tokenizer.tokenizer.vocab_size > model_config.vocab_size:
    raise ValueError(f"{vocab_file}: {tokenizer.tokenizer.vocab_size} pieces but the model's "
                     f"vocab_size is {model_config.vocab_size}")
  timings["vocab_seconds"] = time.perf_counter() - t0
  t0 = time.perf_counter()
  record_dir = os.path.join(output_dir, "train_records")
  conversion = task.convert(tokenizer, vocab_file, record_dir)
  timings["convert_seconds"] = time.perf_counter() - t0
  files = task.record_files(record_dir)
  global_batch = train.global_batch_size(distribution)
  if distribution.is_chief:
    atomic_write_json(os.path.join(output_dir, "run_config.json"), {
        "model": model_config.to_dict(), "features": dataclasses.asdict(feature_config),
        "train": dataclasses.asdict(train), "distribution": distribution.kind,
        "num_workers": distribution.num_workers, "global_batch_size": global_batch})

  sharding = getattr(train, "input_sharding", "slice")
  if sharding == "shards":
    tfrecords.worker_files(files, distribution.num_workers, distribution.worker_index)  # checks

  def make(num_slices, slice_index, start_step):
    return tfrecords.make_dataset(files, None, global_batch, num_slices, slice_index,
                                  shuffle_buffer=train.shuffle_buffer, seed=train.seed,
                                  skip_batches=start_step, parse_fn=task.parse_fn,
                                  sharding=sharding)

  t0 = time.perf_counter()
  model, metrics = run_training_loop(
      build_model, make, train, output_dir, distribution, verbose=verbose,
      extra_callbacks=extra_callbacks, tokens_per_step=global_batch * task.long_seq_len,
      initialize=make_initializer(train.init_checkpoint, model_config))
  timings["train_seconds"] = time.perf_counter() - t0
  return Trained(model, metrics, tokenizer, vocab_file, conversion, timings)
