"""Finding and restoring an encoder, reading analysis examples, and the batched attention run.

A `--checkpoint` may be
  - a pretraining output directory: its `final/encoder` if present, else the latest
    `checkpoints/ckpt-N` (the encoder is restored out of the pretraining model);
  - a `final` directory (`encoder.*` + `etc_config.json`), or a `checkpoints` directory;
  - a checkpoint prefix: an encoder checkpoint (tf.train.Checkpoint(encoder=...)) or a
    pretraining checkpoint (tf.train.Checkpoint(model=..., optimizer=...)).
The EtcConfig comes from `etc_config.json` next to the prefix, or from the `model` entry of the
run's `run_config.json`. Every problem is a ValueError / FileNotFoundError naming the path.
"""

import dataclasses
import json
import os
from typing import Dict, Iterator, List, Optional, Tuple

import numpy as np
import tensorflow as tf

from etc_realformer.analysis import attention_stats
from etc_realformer.config import EtcConfig
from etc_realformer.data import tfrecords
from etc_realformer.models.encoder import EtcModel

ETC_CONFIG_FILE = "etc_config.json"
RUN_CONFIG_FILE = "run_config.json"
# Features of a pretraining record the encoder reads (the rest are MLM / CPC targets).
ENCODER_FEATURES = ("token_ids", "global_token_ids", "sentence_ids", "long_breakpoints",
                    "global_breakpoints", "segment_ids", "global_segment_ids")
_MAX_ERROR_CHARS = 600


@dataclasses.dataclass
class ResolvedCheckpoint:
  prefix: str                  # checkpoint prefix to read
  config_path: str             # etc_config.json or run_config.json holding the model config
  run_dir: Optional[str]       # the pretraining output directory, when known


@dataclasses.dataclass
class LoadedEncoder:
  model: EtcModel
  config: EtcConfig
  checkpoint: ResolvedCheckpoint


def _is_prefix(path: str) -> bool:
  return os.path.exists(path + ".index")


def _find_config(prefix: str, run_dir: Optional[str]) -> str:
  here = os.path.dirname(prefix)
  candidates = [os.path.join(here, ETC_CONFIG_FILE), os.path.join(here, RUN_CONFIG_FILE),
                os.path.join(os.path.dirname(here), RUN_CONFIG_FILE)]
  if run_dir:
    candidates.append(os.path.join(run_dir, RUN_CONFIG_FILE))
  for path in candidates:
    if os.path.exists(path):
      return path
  raise FileNotFoundError(f"{prefix}: no {ETC_CONFIG_FILE} or {RUN_CONFIG_FILE} found next to "
                          f"the checkpoint (looked for {', '.join(candidates)})")


def resolve_checkpoint(path: str) -> ResolvedCheckpoint:
  """--checkpoint (run directory, final directory or prefix) -> prefix + config file."""
  if not path:
    raise ValueError("checkpoint: no path given")
  path = os.path.normpath(path)
  if os.path.isdir(path):
    final_prefix = os.path.join(path, "final", "encoder")
    if _is_prefix(final_prefix):
      return ResolvedCheckpoint(final_prefix, _find_config(final_prefix, path), path)
    if _is_prefix(os.path.join(path, "encoder")):  # a final directory
      prefix = os.path.join(path, "encoder")
      parent = os.path.dirname(path)
      run_dir = parent if os.path.exists(os.path.join(parent, RUN_CONFIG_FILE)) else None
      return ResolvedCheckpoint(prefix, _find_config(prefix, run_dir), run_dir)
    latest = tf.train.latest_checkpoint(os.path.join(path, "checkpoints"))
    if latest:
      return ResolvedCheckpoint(latest, _find_config(latest, path), path)
    latest = tf.train.latest_checkpoint(path)  # a checkpoints/ directory itself
    if latest:
      parent = os.path.dirname(path)
      run_dir = parent if os.path.exists(os.path.join(parent, RUN_CONFIG_FILE)) else None
      return ResolvedCheckpoint(latest, _find_config(latest, run_dir), run_dir)
    raise FileNotFoundError(
        f"{path}: no encoder checkpoint in this directory (expected final/encoder.index, "
        "encoder.index, or checkpoints/ckpt-N from a pretraining run)")
  if _is_prefix(path):
    here = os.path.dirname(path)
    candidates = (os.path.dirname(here), here)
    run_dir = next((d for d in candidates if os.path.exists(os.path.join(d, RUN_CONFIG_FILE))),
                   None)
    return ResolvedCheckpoint(path, _find_config(path, run_dir), run_dir)
  raise FileNotFoundError(f"{path}: not found (expected a pretraining output directory, a "
                          "final/ directory or a checkpoint prefix with a .index file)")


def read_model_config(config_path: str) -> EtcConfig:
  """etc_config.json (the config itself) or run_config.json (its `model` entry)."""
  try:
    with open(config_path) as f:
      payload = json.load(f)
  except (OSError, json.JSONDecodeError) as e:
    raise ValueError(f"{config_path}: cannot read the model config ({e})") from None
  if os.path.basename(config_path) == RUN_CONFIG_FILE:
    if not isinstance(payload, dict) or not isinstance(payload.get("model"), dict):
      raise ValueError(f"{config_path}: no 'model' entry with the encoder config")
    payload = payload["model"]
  try:
    return EtcConfig.from_dict(dict(payload), source=config_path)
  except TypeError as e:
    raise ValueError(f"{config_path}: not an EtcConfig ({e})") from None


def _short(error: Exception) -> str:
  text = " ".join(str(error).split())
  return text if len(text) <= _MAX_ERROR_CHARS else text[:_MAX_ERROR_CHARS] + " ..."


def load_encoder(path: str, implementation: str = "blocked") -> LoadedEncoder:
  """Builds an EtcModel from the checkpoint's config and restores every encoder weight."""
  resolved = resolve_checkpoint(path)
  config = read_model_config(resolved.config_path)
  model = EtcModel(config, implementation=implementation, name="encoder")
  model.build()
  try:
    names = [name for name, _ in tf.train.list_variables(resolved.prefix)]
  except (tf.errors.OpError, ValueError) as e:
    raise ValueError(f"{resolved.prefix}: not a readable checkpoint ({_short(e)})") from None
  if any(n.startswith("encoder/") for n in names):
    root, checkpoint = "encoder/", tf.train.Checkpoint(encoder=model)
  elif any(n.startswith("model/encoder/") for n in names):  # a pretraining checkpoint
    root = "model/encoder/"
    checkpoint = tf.train.Checkpoint(model=tf.train.Checkpoint(encoder=model))
  else:
    raise ValueError(f"{resolved.prefix}: holds no encoder weights (no 'encoder/' or "
                     "'model/encoder/' variables)")
  try:
    checkpoint.read(resolved.prefix).assert_existing_objects_matched().expect_partial()
  except (AssertionError, ValueError, tf.errors.OpError) as e:
    raise ValueError(f"{resolved.prefix}: its weights do not fit the model of "
                     f"{resolved.config_path} (missing or mismatched weight: "
                     f"{_short(e)})") from None
  # Every model weight was found; the checkpoint must not hold more (e.g. extra layers).
  stored = [n for n in names if n.startswith(root) and ".OPTIMIZER_SLOT" not in n]
  if len(stored) != len(model.variables):
    raise ValueError(f"{resolved.prefix}: holds {len(stored)} encoder weights but the model of "
                     f"{resolved.config_path} has {len(model.variables)} (a different number of "
                     "layers or different sharing options?)")
  return LoadedEncoder(model, config, resolved)


def run_train_data(resolved: ResolvedCheckpoint) -> Optional[str]:
  """The pretraining data directory named by the run's run_config.json, if it exists."""
  if not resolved.run_dir:
    return None
  path = os.path.join(resolved.run_dir, RUN_CONFIG_FILE)
  try:
    with open(path) as f:
      data = (json.load(f).get("train") or {}).get("train_data")
  except (OSError, json.JSONDecodeError, AttributeError):
    return None
  if not data:
    return None
  # Relative paths were relative to where training ran: try there and from the run's parent.
  for candidate in (data, os.path.join(os.path.dirname(resolved.run_dir), data)):
    if os.path.exists(os.path.join(candidate, tfrecords.DATA_CONFIG_FILE)):
      return candidate
  return None


def read_examples(data_dir: str, num_examples: int, vocab_size: int) -> Dict[str, np.ndarray]:
  """The first `num_examples` records of a pretraining data directory, in file order.

  -> dict of int32 arrays [N, ...] of the encoder features (N may be smaller when the
  directory holds fewer records). Examples are read as stored, MLM / CPC masks included.
  """
  if num_examples < 1:
    raise ValueError(f"num_examples: must be >= 1, got {num_examples}")
  if not os.path.isdir(data_dir):
    raise FileNotFoundError(f"{data_dir}: data directory not found")
  data_config, data_vocab = tfrecords.read_data_config(data_dir)
  if data_vocab > vocab_size:
    raise ValueError(f"{data_dir}: data uses a vocabulary of {data_vocab} ids but the model's "
                     f"vocab_size is {vocab_size}")
  try:
    files = tfrecords.expand_files(os.path.join(data_dir, "*.tfrecord"))
  except FileNotFoundError:
    raise FileNotFoundError(f"{data_dir}: no *.tfrecord shards in this directory") from None
  dataset = tf.data.TFRecordDataset(files).take(num_examples).batch(num_examples)
  try:
    serialized = next(iter(dataset), None)
    if serialized is None:
      raise ValueError(f"{data_dir}: the shards hold no records")
    parsed = tfrecords.parse_batch(serialized, data_config)
  except tf.errors.OpError as e:
    raise ValueError(f"{data_dir}: records do not match data_config.json ({_short(e)})") from None
  return {name: parsed[name].numpy().astype(np.int32) for name in ENCODER_FEATURES
          if name in parsed}


def batches(examples: Dict[str, np.ndarray], batch_size: int) -> Iterator[Tuple[int, Dict]]:
  """-> (index of the first example, feature dict) for consecutive slices of `batch_size`."""
  if batch_size < 1:
    raise ValueError(f"batch_size: must be >= 1, got {batch_size}")
  total = len(examples["token_ids"])
  for start in range(0, total, batch_size):
    yield start, {name: value[start:start + batch_size] for name, value in examples.items()}


@dataclasses.dataclass
class AttentionRun:
  """What one model's pass over the examples produced."""
  stats: Dict[str, attention_stats.StreamStats]
  num_examples: int
  # The map example: per layer [heads, S, G] sentence -> global attention.
  sentence_maps: List[np.ndarray]
  map_example: Dict[str, np.ndarray]


def collect_attention(model: EtcModel, examples: Dict[str, np.ndarray], batch_size: int,
                      example_index: int = 0, log=print) -> AttentionRun:
  """Runs `model` (training=False) over the examples in batches and accumulates the stats.

  Only per-query scalars are kept across batches, plus the sentence -> global maps of
  example `example_index`; each batch's probability tensors are dropped after use.
  """
  total = len(examples["token_ids"])
  if not 0 <= example_index < total:
    raise ValueError(f"example_index: {example_index} is outside the {total} examples read")
  accumulator = attention_stats.AttentionStatsAccumulator()
  maps, map_example = None, None
  num_batches = (total + batch_size - 1) // batch_size
  for number, (start, features) in enumerate(batches(examples, batch_size), 1):
    out = model(features, training=False, return_attention_scores=True)
    attention = [{k: layer[k].numpy() for k in ("long_probs", "global_probs")}
                 for layer in out["attention"]]
    accumulator.add(attention, features["token_ids"], features["global_token_ids"])
    if start <= example_index < start + len(features["token_ids"]):
      i = example_index - start
      map_example = {name: value[i] for name, value in features.items()}
      global_len = features["global_token_ids"].shape[1]
      maps = [attention_stats.sentence_global_map(
          layer["long_probs"][i], map_example["token_ids"], map_example["sentence_ids"],
          global_len) for layer in attention]
    last = start + len(features["token_ids"]) - 1
    log(f"  batch {number}/{num_batches}: examples {start}..{last}")
    del out, attention
  return AttentionRun(accumulator.result(), accumulator.num_examples, maps, map_example)
