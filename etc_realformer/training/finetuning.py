"""Starting a fine-tuning run from a pretraining run's encoder checkpoint.

`prepare_vocab` puts the run's vocabulary in its output directory: a given file is copied, or a
WordPiece vocabulary is learned from the task's training texts.

`make_initializer(init_checkpoint, model_config)` checks that the pretrained encoder has the
shape of the task model's encoder (naming every field that differs) and returns a function that
loads its weights into `model.encoder` (any task model with an `encoder` attribute).
"""

import json
import os
import shutil
from typing import Callable, Iterable

from absl import logging
import tensorflow as tf

from etc_realformer.config import EtcConfig
from etc_realformer.data import vocab_learner

# Encoder fields a pretrained checkpoint must share with the fine-tuned model.
_SHAPE_KEYS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
               "intermediate_size", "relative_vocab_size", "segment_vocab_size",
               "embedding_size", "att_size_per_head", "num_persistent_memory",
               "share_qkv_projections", "share_kv_projections", "share_feed_forward_params",
               "share_att_output_projection", "use_feed_forward",
               "max_absolute_position_embeddings", "use_pre_activation_order")


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


def prepare_vocab(vocab_file: str, learned_vocab_size: int, output_dir: str,
                  texts: Callable[[], Iterable[str]], source: str = "") -> str:
  """Copies `vocab_file` (or learns one from `texts()`) to <output_dir>/vocab.txt; -> its path.

  A vocabulary already learned into output_dir is reused (a resumed run keeps its ids).
  """
  path = os.path.join(output_dir, "vocab.txt")
  if vocab_file:
    if not os.path.exists(vocab_file):
      raise FileNotFoundError(f"vocab_file: {vocab_file} does not exist")
    if os.path.abspath(vocab_file) != os.path.abspath(path):
      shutil.copyfile(vocab_file, path)
    return path
  if os.path.exists(path):
    return path
  logging.info("learning a %d-piece WordPiece vocab from %s", learned_vocab_size, source)
  vocab_learner.write_vocab(vocab_learner.learn_wordpiece_vocab(
      list(texts()), vocab_size=learned_vocab_size), path)
  return path
