"""Starting a run from pretrained encoder weights: this package's, Google's ETC, or a BERT.

`make_initializer(init_checkpoint, model_config)` accepts
  - this package's encoder checkpoint: a prefix (`.../final/encoder`), a `final/` folder or a
    pretraining run folder, with its etc_config.json beside it;
  - an official ETC checkpoint: a `model.ckpt` prefix or the folder holding it (e.g. Google's
    `etc_base_2x_pretrain/`), converted on load;
  - a BERT: Google's TF checkpoint (`bert_model.ckpt` prefix or its folder, variables under
    `bert/`, bert_config.json beside it) or Hugging Face files (a folder with model.safetensors
    and config.json), lifted on load (models/bert_lifting.py). The model config decides the
    rest: relative tables start at zero, extra segment rows fresh, and BERT's positions fill
    the model's position tables (repeated when longer) or are dropped when it has none.
It checks that the checkpoint's encoder has the shape of `model_config` (naming every field that
differs) and returns a function that loads the weights into `model.encoder` (any model with an
`encoder` attribute), or None when no checkpoint is given.
"""

import json
import os
from typing import Callable, Dict, Optional

from absl import logging
import tensorflow as tf

from etc_realformer.config import EtcConfig
from etc_realformer.models import bert_lifting
from etc_realformer.models import official_checkpoint
from etc_realformer.training.run_config import FROM_INIT_CHECKPOINT

# Encoder fields a pretrained checkpoint must share with the model it initialises.
SHAPE_KEYS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
              "intermediate_size", "relative_vocab_size", "segment_vocab_size",
              "embedding_size", "att_size_per_head", "num_persistent_memory",
              "share_qkv_projections", "share_kv_projections", "share_feed_forward_params",
              "share_att_output_projection", "use_feed_forward",
              "max_absolute_position_embeddings", "use_pre_activation_order")


# What a BERT decides of the encoder (the rest of its layout is fixed by `bert_lifting`).
BERT_KEYS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
             "intermediate_size", "hidden_act")
# The layer layout a BERT's weights fill: hidden-sized token table and heads, Post-LN, FF.
BERT_LAYOUT = {"embedding_size": None, "att_size_per_head": None,
               "use_pre_activation_order": False, "use_feed_forward": True}


def architecture_of(init_checkpoint: str, model_values: Dict, input_length: int = 0) -> Dict:
  """The EtcConfig fields the checkpoint at `init_checkpoint` decides, to update the run's
  model values with: SHAPE_KEYS and hidden_act of an official ETC or this package's encoder;
  for a BERT, BERT_KEYS, BERT_LAYOUT, enough segment rows, and absolute positions: a table of
  at least BERT's rows and `input_length` (the run's longest input), filled with BERT's
  positions repeated. Window, dropout and residual attention stay the run's."""
  official = official_prefix(init_checkpoint)
  if official is not None:
    config = official_checkpoint.read_official_config(official).to_dict()
    return {key: config[key] for key in SHAPE_KEYS + ("hidden_act",)}
  if bert_lifting.is_bert_checkpoint(init_checkpoint):
    bert = bert_lifting.read_bert_config(init_checkpoint)
    values = {key: bert[key] for key in BERT_KEYS}
    values.update(BERT_LAYOUT)
    values["segment_vocab_size"] = max(bert["type_vocab_size"],
                                       model_values.get("segment_vocab_size", 0))
    values["max_absolute_position_embeddings"] = max(
        bert["max_position_embeddings"], input_length,
        model_values.get("max_absolute_position_embeddings", 0))
    return values
  prefix = package_prefix(init_checkpoint)
  config_path = os.path.join(os.path.dirname(prefix), "etc_config.json")
  if not os.path.exists(config_path):
    raise FileNotFoundError(f"model.from_init_checkpoint: {prefix} has no etc_config.json "
                            "beside it to take the architecture from")
  with open(config_path, encoding="utf-8") as f:
    config = json.load(f)
  return {key: config[key] for key in SHAPE_KEYS + ("hidden_act",) if key in config}


def model_config_for_run(model_values: Dict, init_checkpoint: str, source: str,
                         input_length: int = 0) -> EtcConfig:
  """The run's EtcConfig from its model section; with `from_init_checkpoint: true` there, the
  architecture comes from `init_checkpoint` (`architecture_of`; `input_length`: the run's longest
  input, long or global) and the other fields from the section. Errors name the config and the
  key."""
  values = dict(model_values)
  switch = values.pop(FROM_INIT_CHECKPOINT, False)
  if not isinstance(switch, bool):
    raise ValueError(f"{source} (model): {FROM_INIT_CHECKPOINT} must be true or false, got "
                     f"{switch!r}")
  if switch:
    if not init_checkpoint:
      raise ValueError(f"{source} (model): {FROM_INIT_CHECKPOINT} is true but "
                       "train.init_checkpoint is empty")
    taken = architecture_of(init_checkpoint, values, input_length)
    changed = {k: v for k, v in taken.items() if values.get(k) != v}
    values.update(taken)
    logging.info("model architecture from %s: %s", init_checkpoint,
                 ", ".join(f"{k}={v!r}" for k, v in sorted(changed.items())) or "as configured")
  return EtcConfig.from_dict(values, source=f"{source} (model)")


def official_prefix(path: str) -> Optional[str]:
  """The official checkpoint prefix at `path` (a prefix or its folder), or None."""
  for candidate in (path, os.path.join(path, "model.ckpt")):
    if official_checkpoint.is_official_checkpoint(candidate):
      return candidate
  return None


def bert_initializer(path: str, model_config: EtcConfig) -> Callable[[object], None]:
  """An initializer lifting the BERT at `path` into `model.encoder` (see the module doc)."""
  bert_config = bert_lifting.read_bert_config(path)
  bert_lifting.check_compatible(bert_config, model_config, f"init_checkpoint {path}")

  def initialize_bert(model):
    weights = bert_lifting.open_bert(path)
    report = bert_lifting.lift_weights(model.encoder, weights)
    logging.info("encoder initialised from the BERT %s (positions: %s)\n%s", weights.source,
                 "copied" if model_config.max_absolute_position_embeddings else "dropped",
                 report.summary())
  return initialize_bert


def bert_vocab(path: str) -> Optional[str]:
  """The vocab.txt (or Hugging Face tokenizer.json) of the BERT at `path`, or None when `path`
  is not a BERT.

  Raises:
    FileNotFoundError: a BERT with neither beside it (e.g. a RoBERTa, whose byte-level BPE
      vocabulary this package cannot tokenize with).
  """
  if not path or not bert_lifting.is_bert_checkpoint(path):
    return None
  vocab = bert_lifting.find_vocab(path)
  if vocab is None:
    raise FileNotFoundError(f"init_checkpoint: the BERT at {path} has no vocab.txt or "
                            "tokenizer.json beside it; set train.vocab_file to the WordPiece "
                            "vocabulary it was trained with")
  return vocab


def package_prefix(path: str) -> str:
  """This package's encoder prefix from a prefix, a `final/` folder or a pretraining run."""
  for candidate in (path, os.path.join(path, "encoder"), os.path.join(path, "final", "encoder")):
    if tf.io.gfile.exists(candidate + ".index"):
      return candidate
  raise FileNotFoundError(
      f"init_checkpoint: no encoder checkpoint at {path} (expected <pretraining run>/final/encoder "
      "written by etc_realformer.pretrain, or an official ETC model.ckpt prefix)")


def read_encoder(encoder, prefix: str) -> None:
  """Loads this package's encoder checkpoint (tf.train.Checkpoint(encoder=...)) into `encoder`."""
  tf.train.Checkpoint(encoder=encoder).read(prefix).assert_existing_objects_matched() \
      .expect_partial()


def check_shapes(pretrained: Dict, model_config: EtcConfig, source: str) -> None:
  """Raises ValueError naming every SHAPE_KEYS field where `pretrained` and the model differ."""
  mine = model_config.to_dict()
  different = [k for k in SHAPE_KEYS if k in pretrained and pretrained[k] != mine.get(k)]
  if different:
    raise ValueError(f"init_checkpoint: {source} was trained with a different encoder: " +
                     ", ".join(f"{k} {pretrained[k]!r} != {mine.get(k)!r}" for k in different))


def make_initializer(init_checkpoint: str,
                     model_config: EtcConfig) -> Optional[Callable[[object], None]]:
  """-> a function that loads pretrained encoder weights into `model.encoder` (or None)."""
  if not init_checkpoint:
    return None
  official = official_prefix(init_checkpoint)
  if official is not None:
    check_shapes(official_checkpoint.read_official_config(official).to_dict(), model_config,
                 official)

    def initialize_official(model):
      official_checkpoint.load_official_weights(model.encoder, official)
      logging.info("encoder initialised from the official ETC checkpoint %s", official)
    return initialize_official

  if bert_lifting.is_bert_checkpoint(init_checkpoint):
    return bert_initializer(init_checkpoint, model_config)

  prefix = package_prefix(init_checkpoint)
  config_path = os.path.join(os.path.dirname(prefix), "etc_config.json")
  if os.path.exists(config_path):
    with open(config_path) as f:
      check_shapes(json.load(f), model_config, prefix)

  def initialize(model):
    read_encoder(model.encoder, prefix)
    logging.info("encoder initialised from %s", prefix)
  return initialize
