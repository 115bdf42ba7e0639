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

With several workers (Horovod ranks, multi-worker tf.distribute) sharing one output directory,
only the chief (worker 0) prepares the vocabulary and converts the training file, recording it
in <output_dir>/preparation.json (`PREPARATION_FILE`) under this launch's token; the others
reuse what is already there or wait for the chief's "done" (`wait_for_chief`), then take its
files without writing anything. The marker, the wait and the fixes: docs/gpu_training.md.

`train.init_checkpoint` is read by `etc_realformer.training.initialization.make_initializer`:
this package's encoder checkpoint, an official ETC `model.ckpt` prefix, or a BERT folder (lifted
on load; docs/lifting.md).
"""

import contextlib
import dataclasses
import json
import os
import socket
import time
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence
import uuid

from absl import logging
import tf_keras

from etc_realformer.config import EtcConfig
from etc_realformer.data import hf_tokenizer
from etc_realformer.data import tfrecords
from etc_realformer.data import vocab_learner
from etc_realformer.data.span_tokenization import OffsetTokenizer
from etc_realformer.data import tokenization
from etc_realformer.dataclass_utils import check_known_keys
from etc_realformer.io_utils import atomic_write_bytes, atomic_write_json
from etc_realformer.training.distribution import Distribution
from etc_realformer.data import pretraining_data
from etc_realformer.data import sharded_conversion
from etc_realformer.training import initialization
from etc_realformer.training.initialization import make_initializer
from etc_realformer.training.loop import LoopConfig, check_distribution, run_training_loop
from tasks.common.serving import TOKENIZER_FILE


PREPARATION_FILE = "preparation.json"  # the chief's marker (see the module docstring)
WAIT_POLL_SECONDS = 2.0                # how often a waiting worker reads the marker
WAIT_LOG_SECONDS = 60.0                # how often it logs that it is still waiting


class NotPrepared(Exception):
  """A worker that only reuses the chief's files did not find them (yet)."""


class PreparationError(RuntimeError):
  """A worker cannot get the chief's vocabulary and records: the chief failed, or the wait
  timed out, or the chief prepared other settings."""


def prepare_vocab(vocab_file: str, learned_vocab_size: int, output_dir: str,
                  texts: Callable[[], Iterable[str]], source: str = "",
                  reuse_only: bool = False) -> str:
  """Copies `vocab_file` (or learns one from `texts()`) to <output_dir>/vocab.txt; -> its path.

  A Hugging Face tokenizer.json (a BERT WordPiece model) becomes the vocab.txt of its pieces; a
  SentencePiece model (*.model) is copied to <output_dir>/vocab.model. A vocabulary already
  learned into output_dir is reused (a resumed run keeps its ids), and a copy that is already
  there with the same content is not written again. Writes are atomic (a worker reading the
  file sees the old or the new one). `reuse_only` (the workers other than the chief): write
  nothing; NotPrepared when the vocabulary is not there yet (or differs from `vocab_file`).
  """
  path = os.path.join(output_dir, "vocab.txt")
  if vocab_file:
    if not os.path.exists(vocab_file):
      raise FileNotFoundError(f"vocab_file: {vocab_file} does not exist")
    if tokenization.is_sentencepiece_file(vocab_file):
      path = os.path.join(output_dir, "vocab.model")
    if os.path.abspath(vocab_file) == os.path.abspath(path):
      return path
    if hf_tokenizer.is_tokenizer_json(vocab_file):  # a Hugging Face folder's: its pieces
      content = "".join(p + "\n" for p in hf_tokenizer.read_wordpiece(vocab_file)).encode()
    else:
      with open(vocab_file, "rb") as f:
        content = f.read()
    if os.path.exists(path):
      with open(path, "rb") as f:
        if f.read() == content:
          return path
    if reuse_only:
      raise NotPrepared(f"{path}: not yet a copy of {vocab_file}")
    atomic_write_bytes(path, content)
    return path
  if os.path.exists(path):
    return path
  if reuse_only:
    raise NotPrepared(f"{path}: no vocabulary learned yet")
  logging.info("learning a %d-piece WordPiece vocab from %s", learned_vocab_size, source)
  vocab_learner.write_vocab(vocab_learner.learn_wordpiece_vocab(  # atomic
      list(texts()), vocab_size=learned_vocab_size), path)
  return path


def file_stamps(paths: Sequence[str]) -> List[Dict[str, Any]]:
  """[{path (absolute), size, mtime}] of files (FileNotFoundError naming a missing one)."""
  stamps = []
  for path in paths:
    if not os.path.exists(path):
      raise FileNotFoundError(f"{path} does not exist")
    info = os.stat(path)
    stamps.append({"path": os.path.abspath(path), "size": info.st_size,
                   "mtime": info.st_mtime})
  return stamps


def preparation_stamp(train_files: Sequence[str], vocab_source_file: str,
                      learned_vocab_size: int, split_punctuation: bool, feature_config,
                      num_shards: int) -> Dict[str, Any]:
  """The fingerprint of what the chief prepares: the training files (path, size, time), the
  vocabulary's source (a file, or the size of a vocabulary learned from the training files),
  the tokenizer option, the feature config and the number of conversion shards."""
  return {"train_files": file_stamps(train_files),
          "vocab": (file_stamps([vocab_source_file])[0] if vocab_source_file
                    else {"learned_vocab_size": learned_vocab_size}),
          "split_punctuation": bool(split_punctuation),
          "features": dataclasses.asdict(feature_config), "num_shards": num_shards}


stamp_digest = sharded_conversion.digest   # a fingerprint's short hash (as in done files)


def read_marker(path: str) -> Optional[Dict[str, Any]]:
  """The chief's marker, or None when it is missing or unreadable."""
  try:
    with open(path) as f:
      marker = json.load(f)
  except (OSError, ValueError):
    return None
  return marker if isinstance(marker, dict) else None


def launch_token(distribution: Distribution) -> str:
  """A random id of this launch, the same in every worker: the chief's, sent to the others
  (Horovod: broadcast; multi-worker tf.distribute: an all-reduce where only the chief adds its
  value). Markers of earlier launches of the same command carry other tokens."""
  token = uuid.uuid4().hex[:15]
  if distribution.num_workers <= 1:
    return token
  if distribution.hvd is not None:
    import horovod.tensorflow as hvd_tf  # pylint: disable=g-import-not-at-top
    return hvd_tf.broadcast_object(token, root_rank=0, name="launch_token")
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  strategy = distribution.strategy
  mine = int(token, 16) if distribution.is_chief else 0  # 60 bits: fits an int64

  def value(context):
    return tf.constant(mine if context.replica_id_in_sync_group == 0 else 0, tf.int64)
  total = strategy.reduce(tf.distribute.ReduceOp.SUM,
                          strategy.experimental_distribute_values_from_function(value), axis=None)
  return format(int(total.numpy()), "015x")


def chief_stopped(marker: Dict[str, Any]) -> bool:
  """True when the marker's chief ran on this host and its process is gone (killed while
  preparing: it could not write "failed"). Unknown (another host) counts as running."""
  if marker.get("host") != socket.gethostname() or not isinstance(marker.get("pid"), int):
    return False
  try:
    os.kill(marker["pid"], 0)
  except ProcessLookupError:
    return True
  except OSError:   # e.g. a process of another user
    return False
  return False


def _describe_marker(marker: Optional[Dict[str, Any]], token: str) -> str:
  if marker is None:
    return "does not exist"
  if marker.get("token") != token:
    return (f"is from another launch (status {marker.get('status')!r}, written "
            f"{marker.get('time', '?')}): not trusted")
  return f"says the chief is {marker.get('status')!r} since {marker.get('started', '?')}"


def wait_for_chief(marker_path: str, token: str, digest: str, worker_index: int,
                   timeout_seconds: float, task_name: str = "<task>",
                   poll_seconds: float = WAIT_POLL_SECONDS,
                   log_seconds: float = WAIT_LOG_SECONDS,
                   clock: Callable[[], float] = time.monotonic,
                   sleep: Callable[[float], None] = time.sleep) -> Dict[str, Any]:
  """Waits until the chief's marker of this launch (`token`) says "done"; returns it.

  Only a marker with this launch's token is taken: one left by an earlier launch (a chief that
  was killed, failed or prepared other settings) is ignored. Raises PreparationError at once
  when the chief's marker says "failed" (with the chief's error) or that it prepared settings
  of another digest, when the chief ran on this host and its process is gone, and when
  `timeout_seconds` pass (naming the marker, this worker and the fixes). Logs every
  `log_seconds` while waiting.
  """
  start = clock()
  next_log = start + log_seconds
  logging.info("worker %d: waiting for the chief (worker 0) to prepare the vocabulary and the "
               "training records (%s, up to %.0f s: train.conversion_wait_seconds)",
               worker_index, marker_path, timeout_seconds)
  while True:
    marker = read_marker(marker_path)
    if marker is not None and marker.get("token") == token:
      if marker.get("status") == "failed":
        raise PreparationError(
            f"worker {worker_index}: the chief (worker 0) failed to prepare the vocabulary and "
            f"training records ({marker_path}): {marker.get('error', 'no message')}")
      if marker.get("status") == "done":
        if marker.get("digest") != digest:
          raise PreparationError(
              f"worker {worker_index}: the chief (worker 0) prepared other settings than this "
              f"worker's ({marker_path}: digest {marker.get('digest')}, here {digest}); give "
              "every worker the same config, --set overrides and files")
        logging.info("worker %d: the chief prepared the vocabulary and training records after "
                     "%.0f s of waiting", worker_index, clock() - start)
        return marker
      if chief_stopped(marker):
        raise PreparationError(
            f"worker {worker_index}: the chief (worker 0, process {marker.get('pid')} on this "
            f"host) stopped while preparing the vocabulary and training records "
            f"({marker_path} still says {marker.get('status')!r}); run the command again: the "
            "conversion keeps the shards already done")
    now = clock()
    if now - start >= timeout_seconds:
      raise PreparationError(
          f"worker {worker_index}: timed out after {timeout_seconds:.0f} s "
          f"(train.conversion_wait_seconds) waiting for the chief (worker 0) to prepare the "
          f"vocabulary and convert the training file: {marker_path} "
          f"{_describe_marker(marker, token)}. If the chief is still converting, raise the "
          "limit (--set train.conversion_wait_seconds=<seconds>), or convert before launch "
          f"with `python -m tasks.{task_name} convert` (docs/gpu_training.md) so that every "
          "worker finds the records ready. With several hosts the output directory must be on "
          "a file system they share (or converted on each host before launch).")
    if now >= next_log:
      next_log = now + log_seconds
      logging.info("worker %d: still waiting for the chief (worker 0): %.0f of %.0f s "
                   "(train.conversion_wait_seconds); %s %s", worker_index, now - start,
                   timeout_seconds, marker_path, _describe_marker(marker, token))
    sleep(poll_seconds)


def prepare_as_chief(marker_path: str, token: str, stamp: Callable[[], Dict[str, Any]],
                     prepare: Callable[[], Any]) -> Any:
  """Runs `prepare()` (vocabulary and conversion) under the marker: "preparing" before, then
  "done" with the stamp's digest, or "failed" with the error (re-raised) for the workers."""
  started = time.strftime("%Y-%m-%d %H:%M:%S")
  base = {"token": token, "worker": 0, "host": socket.gethostname(), "pid": os.getpid(),
          "started": started}
  atomic_write_json(marker_path, dict(base, status="preparing", time=started))
  try:
    fingerprint = stamp()
    result = prepare()
  except BaseException as e:
    try:
      atomic_write_json(marker_path, dict(base, status="failed", time=time.strftime(
          "%Y-%m-%d %H:%M:%S"), error=f"{type(e).__name__}: {e}"))
    except OSError as write_error:  # keep the original error
      logging.error("could not write %s: %s", marker_path, write_error)
    raise
  atomic_write_json(marker_path, dict(base, status="done", time=time.strftime(
      "%Y-%m-%d %H:%M:%S"), fingerprint=fingerprint, digest=stamp_digest(fingerprint)))
  return result


def prepare_as_worker(marker_path: str, token: str, stamp: Callable[[], Dict[str, Any]],
                      reuse: Callable[[], Any], worker_index: int, timeout_seconds: float,
                      task_name: str = "<task>", **wait_options) -> Any:
  """A worker other than the chief: `reuse()` (NotPrepared when something is missing) at once
  when everything is already prepared, else after the chief's "done" (`wait_for_chief`)."""
  try:
    result = reuse()
  except NotPrepared as e:
    logging.info("worker %d: not prepared yet (%s)", worker_index, e)
  else:
    logging.info("worker %d: the vocabulary and training records are already prepared; "
                 "reusing them", worker_index)
    return result
  wait_for_chief(marker_path, token, stamp_digest(stamp()), worker_index, timeout_seconds,
                 task_name, **wait_options)
  try:
    return reuse()
  except NotPrepared as e:
    raise PreparationError(
        f"worker {worker_index}: the chief (worker 0) reports the vocabulary and training "
        f"records done ({marker_path}) but this worker does not find them: {e}. With several "
        "hosts the output directory must be on a file system they share (or converted on "
        "each host before launch)") from None


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
  conversion_wait_seconds: float = 6 * 3600.0  # several workers: how long the others wait for
                                   # the chief to prepare the vocabulary and convert
  train_records: str = ""          # comma-separated globs of TFRecords to train on instead of
                                   # converting train_file (e.g. written by Google's ETC
                                   # pipeline: they must hold the features of `features.layout`)

  def validate(self, source="train config"):
    super().validate(source)
    for name in ("num_conversion_shards", "num_conversion_workers"):
      value = getattr(self, name)
      if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{source}: {name} must be a positive integer, got {value!r}")
    wait = self.conversion_wait_seconds
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not wait > 0:
      raise ValueError(f"{source}: conversion_wait_seconds must be a positive number of "
                       f"seconds, got {wait!r}")
    if self.input_sharding not in tfrecords.SHARDING_MODES:
      raise ValueError(f"{source}: input_sharding must be one of "
                       f"{', '.join(tfrecords.SHARDING_MODES)}, got {self.input_sharding!r}")
    return self


def external_records(patterns: str) -> Dict[str, Any]:
  """The conversion figures of TFRecords written elsewhere (`train.train_records`): every file
  they match and the number of records (read once)."""
  files = tfrecords.expand_files(patterns)
  return {"examples": tfrecords.count_records(files), "records": len(files), "written": 0,
          "skipped": {}, "counts": {"external record files": len(files)}, "files": files}


def parse_task_sections(run_config: Dict[str, Any], feature_cls, train_cls,
                        source: str = "config"):
  """{model, features, train} dicts -> (EtcConfig, feature_cls, train_cls), errors naming keys."""
  feature_values = dict(run_config.get("features") or {})
  check_known_keys(feature_cls, feature_values, source, "features")
  try:
    feature_config = feature_cls(**feature_values)
  except ValueError as e:
    raise ValueError(f"{source} (features): {e}") from None
  model = initialization.model_config_for_run(
      run_config["model"], (run_config.get("train") or {}).get("init_checkpoint", ""), source,
      max(feature_config.long_seq_len, feature_config.global_seq_len))
  train = train_cls.from_dict(dict(run_config.get("train") or {}), source)
  return model, feature_config, train


@dataclasses.dataclass
class TaskData:
  """How a task turns its training file into TFRecords (the task-specific part of training).

  `prepare_vocab` and `convert` take `reuse_only`: True in the workers other than the chief,
  which must write nothing and raise NotPrepared when the chief's files are not (yet) there.
  """
  prepare_vocab: Callable[..., str]            # (reuse_only=False) -> vocab file in output dir
  convert: Callable[..., dict]                 # (tokenizer, vocab_file, directory,
                                               #  reuse_only=False) -> the conversion manifest
  record_files: Callable[[str], List[str]]     # directory -> TFRecord files
  parse_fn: Callable                           # for tfrecords.make_dataset
  long_seq_len: int
  stamp: Callable[[], Dict[str, Any]] = dict   # the marker's fingerprint (preparation_stamp)
  name: str = "<task>"                         # the task's name, for messages


def vocab_source(train) -> str:
  """train.vocab_file, else the vocabulary of train.init_checkpoint, else "" (learn one).

  The checkpoint's vocabulary is the one released with an official ETC checkpoint, the vocab.txt
  beside a BERT checkpoint, or the vocab.txt / vocab.model beside this package's encoder
  checkpoint (a pretraining run's final/).
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
  bert = initialization.bert_vocab(train.init_checkpoint)  # a BERT's folder: its vocab.txt
  if bert:
    return bert
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


@contextlib.contextmanager
def timed(timings: Dict[str, float], name: str):
  """Puts the seconds the block took in timings[name] (not when it raises)."""
  start = time.perf_counter()
  yield
  timings[name] = time.perf_counter() - start


def keep_precision_policy(fn: Callable[[], Any]) -> Any:
  """Runs fn and restores the global mixed-precision policy (a config may change it)."""
  previous_policy = tf_keras.mixed_precision.global_policy()
  try:
    return fn()
  finally:
    tf_keras.mixed_precision.set_global_policy(previous_policy)


def train_task_model(model_config: EtcConfig, feature_config, train: TaskTrainConfig,
                     task: TaskData, build_model: Callable[[], Any], output_dir: str,
                     distribution: Distribution, verbose: int = 1, extra_callbacks=()) -> Trained:
  """Vocab, conversion, run_config.json and the resumable model.fit of a fine-tuning run.

  `train` is the task's `train:` section. With several workers only the chief prepares the
  vocabulary and the records (`prepare_as_chief`); the others take them when it is done
  (`prepare_as_worker`, see the module docstring).
  """
  check_distribution(train, distribution)
  if not train.train_file and not train.train_records:
    raise ValueError("train_file: no training file given (or train_records: TFRecords to "
                     "train on)")
  timings = {}
  os.makedirs(output_dir, exist_ok=True)
  record_dir = os.path.join(output_dir, "train_records")
  split_punctuation = bool(train.split_punctuation)

  def prepare(reuse_only: bool):
    """Vocabulary, tokenizer and conversion; only reading what is there when reuse_only."""
    with timed(timings, "vocab_seconds"):
      vocab_file = task.prepare_vocab(reuse_only=reuse_only)
      tokenizer = OffsetTokenizer(tokenization.tokenizer_for_vocab(
          vocab_file, split_punctuation=split_punctuation))
      if not reuse_only:
        atomic_write_json(os.path.join(output_dir, TOKENIZER_FILE),  # exported with the vocab
                          {"split_punctuation": split_punctuation})
      if tokenizer.tokenizer.vocab_size > model_config.vocab_size:
        raise ValueError(f"{vocab_file}: {tokenizer.tokenizer.vocab_size} pieces but the "
                         f"model's vocab_size is {model_config.vocab_size}")
    with timed(timings, "convert_seconds"):
      info = task.convert(tokenizer, vocab_file, record_dir, reuse_only=reuse_only)
    return vocab_file, tokenizer, info

  with timed(timings, "prepare_seconds"):
    token = launch_token(distribution)
    marker = os.path.join(output_dir, PREPARATION_FILE)
    if distribution.is_chief:
      vocab_file, tokenizer, conversion = prepare_as_chief(
          marker, token, task.stamp, lambda: prepare(reuse_only=False))
    else:
      vocab_file, tokenizer, conversion = prepare_as_worker(
          marker, token, task.stamp, lambda: prepare(reuse_only=True),
          distribution.worker_index, train.conversion_wait_seconds, task.name)
  files = conversion.get("files") or task.record_files(record_dir)
  global_batch = train.global_batch_size(distribution)
  if distribution.is_chief:
    atomic_write_json(os.path.join(output_dir, "run_config.json"), {
        "model": model_config.to_dict(), "features": dataclasses.asdict(feature_config),
        "train": dataclasses.asdict(train), "distribution": distribution.kind,
        "num_workers": distribution.num_workers, "global_batch_size": global_batch})

  if train.input_sharding == "shards":
    tfrecords.worker_files(files, distribution.num_workers, distribution.worker_index)  # checks

  def make(num_slices, slice_index, start_step):
    return tfrecords.make_dataset(files, None, global_batch, num_slices, slice_index,
                                  shuffle_buffer=train.shuffle_buffer, seed=train.seed,
                                  skip_batches=start_step, parse_fn=task.parse_fn,
                                  sharding=train.input_sharding)

  with timed(timings, "train_seconds"):
    model, metrics = run_training_loop(
        build_model, make, train, output_dir, distribution, verbose=verbose,
        extra_callbacks=extra_callbacks, tokens_per_step=global_batch * task.long_seq_len,
        initialize=make_initializer(train.init_checkpoint, model_config))
  return Trained(model, metrics, tokenizer, vocab_file, conversion, timings)
