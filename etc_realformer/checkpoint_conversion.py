"""Conversion between Google's ETC checkpoints and this package's encoder checkpoints.

`official_to_package` writes <output_dir>/encoder.* (tf.train.Checkpoint(encoder=EtcModel)),
etc_config.json and the vocabulary; `package_to_official` writes an official-format
model.ckpt.*, an official etc_config.json and the vocabulary. The command line is
`python -m etc_realformer.convert_checkpoint` (see that module).
"""

import json
import os
import shutil
import tempfile
import time
from typing import Dict, List, Optional

from absl import logging

import tensorflow as tf

from etc_realformer.config import EtcConfig
from etc_realformer.models import official_checkpoint
from etc_realformer.models.encoder import EtcModel
from etc_realformer.training import initialization

# The files a released checkpoint folder may hold besides the checkpoint: its vocabulary.
VOCAB_FILES = ("vocab.txt", "vocab_bert_uncased_english.txt", "vocab_gpt_for_etc.model")
# Fields of this package's EtcConfig that official ETC does not have.
EXTRA_KEYS = ("residual_attention", "residual_paths", "num_persistent_memory", "use_feed_forward")


def official_config_dict(config: EtcConfig) -> Dict:
  """The official etc_config.json fields of `config`."""
  return {k: v for k, v in config.to_dict().items() if k not in EXTRA_KEYS}


def copy_vocab(source_dir: str, output_dir: str) -> List[str]:
  """Copies the vocabulary files of a checkpoint folder; returns the names copied."""
  copied = []
  for name in VOCAB_FILES:
    path = os.path.join(source_dir, name)
    if os.path.exists(path):
      shutil.copyfile(path, os.path.join(output_dir, name))
      copied.append(name)
  if not copied:
    logging.warning("%s holds no vocabulary (%s): none copied", source_dir, " or ".join(VOCAB_FILES))
  return copied


def _staging_dir(output_dir: str):
  """A temporary folder beside output_dir (same file system, so the final moves are renames)."""
  parent = os.path.dirname(os.path.abspath(output_dir))
  os.makedirs(parent, exist_ok=True)
  return tempfile.TemporaryDirectory(dir=parent, prefix=f".{os.path.basename(output_dir)}-")


def _publish(tmp_dir: str, output_dir: str, last: str) -> None:
  """Moves every file of tmp_dir into output_dir, `last` at the end (a reader that sees it
  sees complete weights)."""
  os.makedirs(output_dir, exist_ok=True)
  names = sorted(os.listdir(tmp_dir), key=lambda n: n == last)
  for name in names:
    os.replace(os.path.join(tmp_dir, name), os.path.join(output_dir, name))


def load_encoder_checkpoint(prefix: str, config_file: Optional[str] = None) -> EtcModel:
  """An EtcModel with the weights of this package's encoder checkpoint (`.../encoder`)."""
  config_file = config_file or os.path.join(os.path.dirname(prefix), "etc_config.json")
  if not os.path.exists(config_file):
    raise FileNotFoundError(f"{config_file}: no etc_config.json next to the checkpoint {prefix}")
  if not tf.io.gfile.exists(prefix + ".index"):
    raise FileNotFoundError(f"{prefix}: no checkpoint there (expected {prefix}.index)")
  model = EtcModel(EtcConfig.from_json_file(config_file))
  model.build()
  initialization.read_encoder(model, prefix)
  return model


def official_to_package(official_prefix: str, output_dir: str,
                        config_file: Optional[str] = None) -> Dict:
  """Writes this package's encoder checkpoint, etc_config.json and vocabulary; -> a report."""
  prefix = official_checkpoint.resolve_prefix(official_prefix)
  start = time.perf_counter()
  model = EtcModel.from_official_checkpoint(prefix, config_file=config_file)
  with _staging_dir(output_dir) as tmp:
    tf.train.Checkpoint(encoder=model).write(os.path.join(tmp, "encoder"))
    with open(os.path.join(tmp, "etc_config.json"), "w", encoding="utf-8") as f:
      json.dump(model.etc_config.to_dict(), f, indent=2, sort_keys=True)
    vocab = copy_vocab(os.path.dirname(prefix), tmp)
    _publish(tmp, output_dir, last="etc_config.json")
  return {"checkpoint": os.path.join(output_dir, "encoder"), "vocab": vocab,
          "weights": len(official_checkpoint.weight_links(model)),
          "parameters": int(sum(v.shape.num_elements() for v in model.weights)),
          "seconds": time.perf_counter() - start}


def package_to_official(prefix: str, output_dir: str, config_file: Optional[str] = None) -> Dict:
  """Writes an official-format model.ckpt, etc_config.json and vocabulary; -> a report."""
  start = time.perf_counter()
  model = load_encoder_checkpoint(prefix, config_file)
  config = model.etc_config
  if config.num_persistent_memory or not config.use_feed_forward:
    raise ValueError(f"{prefix}: num_persistent_memory={config.num_persistent_memory} and "
                     f"use_feed_forward={config.use_feed_forward} have no official equivalent; "
                     "only models with no memory and with feed-forward layers convert.")
  if config.residual_attention != "none":
    logging.warning("%s was built with residual_attention=%s; the official model computes "
                    "without residual attention, so its outputs will differ.", prefix,
                    config.residual_attention)
  weights = official_checkpoint.official_weights(model)
  with _staging_dir(output_dir) as tmp:
    official_checkpoint.write_official_checkpoint(weights, os.path.join(tmp, "model.ckpt"))
    with open(os.path.join(tmp, "etc_config.json"), "w", encoding="utf-8") as f:
      json.dump(official_config_dict(config), f, indent=2, sort_keys=True)
    vocab = copy_vocab(os.path.dirname(prefix), tmp)
    _publish(tmp, output_dir, last="etc_config.json")
  return {"checkpoint": os.path.join(output_dir, "model.ckpt"), "vocab": vocab,
          "weights": len(weights), "seconds": time.perf_counter() - start}
