"""Lifting a pretrained BERT into ETC: BERT checkpoint variables -> EtcModel weights.

ETC's paper starts its large model from RoBERTa's weights and continues pretraining from there.
This module does the same for the BERT checkpoints people hold:

  - Google's original TF format: `bert_model.ckpt.*` (variables under `bert/`) with
    `bert_config.json` (and usually `vocab.txt`) beside it;
  - Hugging Face files: `model.safetensors` (or a sharded `model.safetensors.index.json`) with
    `config.json`, of a BERT (`bert.*` names) or a RoBERTa (`roberta.*`).

Both are read into one form, `BertWeights`: Google's variable names and orientations (kernels
[in, out]), so one mapping serves every source:

  BERT (Google's names, under bert/)                 EtcModel weight
  embeddings/word_embeddings [V, H]                  embeddings.token_table (global-token rows
                                                     may be re-initialised, see below)
  embeddings/token_type_embeddings [T, H]            embeddings.segment_table rows 0..T-1
                                                     (rows T.. keep their fresh initialisation)
  embeddings/position_embeddings [P, H]              embeddings.position_tables long and global
                                                     (repeated to fill a longer table; dropped
                                                     when the model has none)
  embeddings/LayerNorm/{gamma,beta}                  embeddings.norms long and global
  encoder/layer_i/attention/self/query/{kernel,bias} layer_i attention: every query projection
  encoder/layer_i/attention/self/key/...             ... every key projection
  encoder/layer_i/attention/self/value/...           ... every value projection
      ([H, heads*d] -> [H, heads, d]; with share_qkv_projections one Q/K/V serves all four ETC
      attention pieces, otherwise the same numbers go into each of them)
  encoder/layer_i/attention/output/dense/...         long and global output projections
                                                     ([heads*d, H] -> [heads, d, H])
  encoder/layer_i/attention/output/LayerNorm/...     long and global attention LayerNorms
  encoder/layer_i/intermediate/dense/...             feed-forward inner Dense (each stream's)
  encoder/layer_i/output/dense/...                   feed-forward outer Dense (each stream's)
  encoder/layer_i/output/LayerNorm/...               feed-forward LayerNorm (each stream's)
  pooler/dense/{kernel,bias}                         not part of the encoder: kept in the
                                                     report (`LiftReport.pooler`)
  (none)                                             relative tables: zeros (no relative term)

With no global tokens and local_radius >= the input length, a lifted model computes exactly what
BERT computes (tests/test_bert_lifting.py). Global tokens use the token table like word pieces;
the ids this package gives them (data/vocab.py: sentence 1, CPC-hidden sentence 2, question 3,
candidate 4, paragraph 5) are `[unusedN]` slots in BERT's vocabularies, never trained. With
`global_token_init="cls"` (the default) each of these rows whose piece in `vocab.txt` is an
unused slot gets a copy of the `[CLS]` row (the CPC-hidden sentence: of `[MASK]`); rows that hold
a real piece, or a checkpoint without vocab.txt, are left as they are and the report says so.

Every checkpoint variable is either mapped, or skipped by rule and listed (optimizer slots and
step counters, pretraining heads outside `bert/`, the pooler, a position table the model drops);
anything else, a missing variable or a shape that differs raises ValueError naming the file and
the variables.

Why one long module: reading (Google's checkpoint, safetensors, a Hugging Face folder), the one
name mapping above and its report are one contract; the readers only produce `BertWeights` and
the mapping only consumes it, but every rule about a variable (mapped, skipped, refused) is
written once here, next to the table, so a reader checks a name against one file.
"""

import dataclasses
import json
import os
import re
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import safetensors
import tensorflow as tf

from etc_realformer.data import hf_tokenizer
from etc_realformer.data import vocab as vocab_ids
from etc_realformer.data import vocab_learner

PREFIX = "bert"
CONFIG_NAME = "bert_config.json"
# TF checkpoint prefixes tried inside a folder, in order.
TF_PREFIXES = ("bert_model.ckpt", "model.ckpt")
HF_WEIGHTS = "model.safetensors"
HF_INDEX = "model.safetensors.index.json"
HF_CONFIG = "config.json"
POSITION_MODES = ("copy", "drop")
GLOBAL_INIT_MODES = ("cls", "keep")
# This package's LayerNorms all use this epsilon (BERT's too; RoBERTa's is 1e-5).
PACKAGE_LAYER_NORM_EPS = 1e-12
# Global token id -> the BERT piece whose row it starts from (global_token_init="cls").
GLOBAL_TOKEN_SOURCES = {
    vocab_ids.SENTENCE_ID: "[CLS]",
    vocab_ids.CPC_MASK_ID: "[MASK]",
    vocab_ids.QUESTION_ID: "[CLS]",
    vocab_ids.CANDIDATE_ID: "[CLS]",
    vocab_ids.PARAGRAPH_ID: "[CLS]",
}
UNUSED_PIECE = re.compile(r"^(\[unused\d+\]|<unused_?\d+>)$")
# Training state a checkpoint may hold beside the weights (BERT's AdamWeightDecay writes adam_m
# and adam_v per variable, and global_step).
_TRAINING_STATE_SUFFIXES = ("/adam_m", "/adam_v", "/lamb_m", "/lamb_v", "/Momentum", "/Adam",
                            "/Adam_1", "/ExponentialMovingAverage")
_TRAINING_STATE_NAMES = ("global_step", "good_steps", "loss_scale",
                         "_CHECKPOINTABLE_OBJECT_GRAPH")
# Google's BERT code calls the tanh approximation "gelu" (this package's "gelu" too). Hugging
# Face's "gelu" is the erf form; its tanh approximation is "gelu_new" / "gelu_pytorch_tanh" /
# "gelu_fast" (the same function, computed differently).
_TF_ACTIVATIONS = {"gelu": "gelu", "relu": "relu", "tanh": "tanh", "linear": "linear",
                   "swish": "swish"}
_HF_ACTIVATIONS = {"gelu": "gelu_exact", "gelu_new": "gelu", "gelu_pytorch_tanh": "gelu",
                   "gelu_fast": "gelu", "relu": "relu", "tanh": "tanh", "linear": "linear",
                   "silu": "swish", "swish": "swish"}


# ---------------------------------------------------------------------------- reading sources
@dataclasses.dataclass
class BertWeights:
  """A BERT's weights under Google's names, whatever file they came from.

  `shapes` maps each canonical name (e.g. bert/encoder/layer_0/attention/self/query/kernel) to
  its shape in Google's orientation; `read(name)` returns it as float32. `original` gives the
  name in the file (the same for TF checkpoints), `skipped` the file's names that are not
  weights of the encoder, with the reason. `config` is BERT's config with Google's keys
  (hidden_act already in this package's spelling, max_position_embeddings counted without
  RoBERTa's offset, layer_norm_eps).
  """
  source: str
  kind: str                                     # "tf" | "hf"
  config: Dict
  shapes: Dict[str, Tuple[int, ...]]
  read: Callable[[str], np.ndarray]
  original: Dict[str, str]
  skipped: List[Tuple[str, str]]
  vocab_file: Optional[str] = None
  notes: List[str] = dataclasses.field(default_factory=list)


def _is_training_state(name: str) -> bool:
  return name in _TRAINING_STATE_NAMES or name.endswith(_TRAINING_STATE_SUFFIXES)


def tf_prefix(path: str) -> Optional[str]:
  """The prefix of a TF checkpoint with Google's BERT names at `path` (a prefix or its
  folder), or None."""
  candidates = [path] + [os.path.join(path, name) for name in TF_PREFIXES]
  if os.path.isdir(path):
    indexes = sorted(n for n in os.listdir(path) if n.endswith(".index"))
    if len(indexes) == 1:
      candidates.append(os.path.join(path, indexes[0][:-len(".index")]))
  for candidate in candidates:
    if tf.io.gfile.exists(candidate + ".index") and any(
        name.startswith(PREFIX + "/embeddings/")
        for name, _ in tf.train.list_variables(candidate)):
      return candidate
  return None


def hf_files(path: str) -> Optional[Tuple[str, str]]:
  """(weights file, config.json) of Hugging Face files at `path`, or None.

  `path` is a folder holding model.safetensors (or model.safetensors.index.json) and
  config.json, or a .safetensors / .index.json file with config.json beside it.
  """
  if os.path.isdir(path):
    folder = path
    weights = next((os.path.join(path, n) for n in (HF_WEIGHTS, HF_INDEX)
                    if os.path.isfile(os.path.join(path, n))), None)
  elif path.endswith((".safetensors", ".index.json")) and os.path.isfile(path):
    folder, weights = os.path.dirname(path), path
  else:
    return None
  config = os.path.join(folder, HF_CONFIG)
  if weights is None or not os.path.isfile(config):
    return None
  return weights, config


def is_bert_checkpoint(path: str) -> bool:
  """True when `path` holds a BERT: Google's TF checkpoint (bert/ names) or Hugging Face
  safetensors files with config.json."""
  return bool(path) and (tf_prefix(path) is not None or hf_files(path) is not None)


def find_vocab(path: str) -> Optional[str]:
  """The WordPiece vocabulary beside a BERT checkpoint (or in its folder): vocab.txt, else a
  Hugging Face tokenizer.json (read by `vocab_learner.read_vocab`); None when neither is there."""
  folder = path if os.path.isdir(path) else os.path.dirname(path)
  for name in ("vocab.txt", hf_tokenizer.TOKENIZER_JSON):
    candidate = os.path.join(folder, name)
    if os.path.isfile(candidate):
      return candidate
  return None


def _read_json(path: str) -> Dict:
  with open(path, encoding="utf-8") as f:
    try:
      values = json.load(f)
    except json.JSONDecodeError as e:
      raise ValueError(f"{path}: not valid JSON ({e}).") from None
  if not isinstance(values, dict):
    raise ValueError(f"{path}: expected a JSON object of config keys.")
  return values


def _required(values: Dict, keys: Sequence[str], path: str) -> None:
  missing = [k for k in keys if k not in values]
  if missing:
    raise ValueError(f"{path}: BERT config keys missing: {', '.join(missing)}.")


_CONFIG_KEYS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                "intermediate_size", "max_position_embeddings", "type_vocab_size")


def _activation(name: str, table: Dict[str, str], path: str) -> str:
  if name not in table:
    raise ValueError(f"{path}: hidden_act {name!r} has no equivalent in this package "
                     f"(supported: {', '.join(sorted(table))}).")
  return table[name]


def read_tf_config(path: str) -> Dict:
  """Google's bert_config.json, with hidden_act in this package's spelling."""
  values = _read_json(path)
  _required(values, _CONFIG_KEYS, path)
  values = dict(values)
  values["hidden_act"] = _activation(values.get("hidden_act", "gelu"), _TF_ACTIVATIONS, path)
  values.setdefault("layer_norm_eps", PACKAGE_LAYER_NORM_EPS)  # fixed in Google's code
  return values


def read_hf_config(path: str) -> Dict:
  """A Hugging Face BERT/RoBERTa config.json in Google's keys (positions without the offset)."""
  values = _read_json(path)
  _required(values, _CONFIG_KEYS, path)
  model_type = values.get("model_type", "bert")
  if model_type not in ("bert", "roberta"):
    raise ValueError(f"{path}: model_type {model_type!r} is not a BERT or a RoBERTa.")
  kind = values.get("position_embedding_type", "absolute")
  if kind != "absolute":
    raise ValueError(f"{path}: position_embedding_type {kind!r}: only absolute positions lift.")
  out = {k: values[k] for k in _CONFIG_KEYS}
  out.update(model_type=model_type,
             hidden_act=_activation(values.get("hidden_act", "gelu"), _HF_ACTIVATIONS, path),
             hidden_dropout_prob=values.get("hidden_dropout_prob", 0.1),
             attention_probs_dropout_prob=values.get("attention_probs_dropout_prob", 0.1),
             initializer_range=values.get("initializer_range", 0.02),
             layer_norm_eps=values.get("layer_norm_eps", PACKAGE_LAYER_NORM_EPS),
             position_offset=0)
  if model_type == "roberta":
    # RoBERTa numbers positions from padding_idx + 1: row padding_idx + 1 + i is position i.
    offset = int(values.get("pad_token_id", 1)) + 1
    out["position_offset"] = offset
    out["max_position_embeddings"] = values["max_position_embeddings"] - offset
  return out


_HF_EMBEDDINGS = {"word_embeddings.weight": "word_embeddings",
                  "token_type_embeddings.weight": "token_type_embeddings",
                  "position_embeddings.weight": "position_embeddings"}
_HF_LAYER_DENSE = {"attention.self.query": "attention/self/query",
                   "attention.self.key": "attention/self/key",
                   "attention.self.value": "attention/self/value",
                   "attention.output.dense": "attention/output/dense",
                   "intermediate.dense": "intermediate/dense",
                   "output.dense": "output/dense"}
_HF_LAYER_NORMS = {"attention.output.LayerNorm": "attention/output/LayerNorm",
                   "output.LayerNorm": "output/LayerNorm"}
_HF_NORM_PARAMS = {"weight": "gamma", "gamma": "gamma", "bias": "beta", "beta": "beta"}
_HF_HEADS = ("cls.", "lm_head.", "classifier.", "qa_outputs.", "pre_classifier.")


def hf_to_google_name(name: str) -> Tuple[Optional[str], bool, str]:
  """(Google's name or None, transpose?, reason when None) for a Hugging Face tensor name."""
  short = re.sub(r"^(bert|roberta)\.", "", name)
  if short.startswith(_HF_HEADS):
    return None, False, "head outside the encoder"
  if short in ("embeddings.position_ids", "embeddings.token_type_ids"):
    return None, False, "buffer, not a weight"
  if short.startswith("embeddings."):
    rest = short[len("embeddings."):]
    if rest in _HF_EMBEDDINGS:
      return f"{PREFIX}/embeddings/{_HF_EMBEDDINGS[rest]}", False, ""
    match = re.fullmatch(r"LayerNorm\.(\w+)", rest)
    if match and match.group(1) in _HF_NORM_PARAMS:
      return f"{PREFIX}/embeddings/LayerNorm/{_HF_NORM_PARAMS[match.group(1)]}", False, ""
  match = re.fullmatch(r"encoder\.layer\.(\d+)\.(.+)\.(\w+)", short)
  if match:
    index, module, param = match.groups()
    scope = f"{PREFIX}/encoder/layer_{index}"
    if module in _HF_LAYER_DENSE and param in ("weight", "bias"):
      # torch Linear stores weight [out, in]; Google's kernel is [in, out].
      return (f"{scope}/{_HF_LAYER_DENSE[module]}/{'kernel' if param == 'weight' else 'bias'}",
              param == "weight", "")
    if module in _HF_LAYER_NORMS and param in _HF_NORM_PARAMS:
      return f"{scope}/{_HF_LAYER_NORMS[module]}/{_HF_NORM_PARAMS[param]}", False, ""
  match = re.fullmatch(r"pooler\.dense\.(weight|bias)", short)
  if match:
    return (f"{PREFIX}/pooler/dense/{'kernel' if match.group(1) == 'weight' else 'bias'}",
            match.group(1) == "weight", "")
  return None, False, ""


def open_tf(path: str, config_file: Optional[str] = None) -> BertWeights:
  """Google's TF BERT checkpoint (a prefix or its folder) with bert_config.json beside it."""
  prefix = tf_prefix(path)
  if prefix is None:
    raise FileNotFoundError(f"{path}: no TF checkpoint with BERT variables (bert/...) there "
                            f"(expected <prefix>.index, e.g. {TF_PREFIXES[0]}).")
  config_file = config_file or os.path.join(os.path.dirname(prefix), CONFIG_NAME)
  if not os.path.isfile(config_file):
    raise FileNotFoundError(f"{config_file}: no {CONFIG_NAME} next to the checkpoint {prefix} "
                            "(pass config_file=...)")
  reader = tf.train.load_checkpoint(prefix)
  shapes, skipped = {}, []
  for name, shape in sorted(reader.get_variable_to_shape_map().items()):
    if _is_training_state(name):
      skipped.append((name, "training state"))
    elif not name.startswith(PREFIX + "/"):
      skipped.append((name, "outside the encoder (e.g. a pretraining head)"))
    else:
      shapes[name] = tuple(int(d) for d in shape)
  return BertWeights(
      source=prefix, kind="tf", config=read_tf_config(config_file), shapes=shapes,
      read=lambda name: np.asarray(reader.get_tensor(name), np.float32),
      original={name: name for name in shapes}, skipped=skipped, vocab_file=find_vocab(prefix))


def _safe_open(path: str):
  """The safetensors library's reader of `path` (NumPy arrays), errors naming the file."""
  try:
    return safetensors.safe_open(path, framework="numpy")
  except (OSError, safetensors.SafetensorError) as e:
    raise ValueError(f"{path}: not a readable safetensors file ({e})") from None


def _safetensors_names(path: str) -> List[str]:
  return list(_safe_open(path).keys())


def open_hf(path: str, config_file: Optional[str] = None) -> BertWeights:
  """Hugging Face safetensors files of a BERT or a RoBERTa, with config.json."""
  found = hf_files(path)
  if found is None:
    raise FileNotFoundError(f"{path}: no {HF_WEIGHTS} (or {HF_INDEX}) with {HF_CONFIG} there.")
  weights_file, default_config = found
  config = read_hf_config(config_file or default_config)
  if weights_file.endswith(".index.json"):
    weight_map = _read_json(weights_file).get("weight_map", {})
    files = {name: os.path.join(os.path.dirname(weights_file), file)
             for name, file in weight_map.items()}
  else:
    files = dict.fromkeys(_safetensors_names(weights_file), weights_file)
  names = sorted(files)
  opened = {}

  def tensors(file):  # the safetensors library's lazy NumPy view of one file
    if file not in opened:
      opened[file] = _safe_open(file)
    return opened[file]

  shapes, original, transposed, skipped = {}, {}, set(), []
  offset = config["position_offset"]
  for name in names:
    google, transpose, reason = hf_to_google_name(name)
    if google is None:
      skipped.append((name, reason or "not a BERT encoder weight"))
      continue
    shape = tuple(tensors(files[name]).get_slice(name).get_shape())
    if transpose:
      shape = shape[::-1]
      transposed.add(google)
    if google.endswith("/position_embeddings") and offset:
      shape = (shape[0] - offset,) + shape[1:]
    shapes[google], original[google] = shape, name
  notes = []
  if config["model_type"] == "roberta":
    notes.append(f"RoBERTa positions: rows {offset}.. of its position table are positions "
                 "0.. (the rows before are skipped)")
    notes.append("RoBERTa pads with id 1 and uses a byte-level BPE vocabulary: neither is "
                 "supported by this package's tokenizers (padding must be id 0)")

  def read(google):
    name = original[google]
    value = np.asarray(tensors(files[name]).get_tensor(name), np.float32)  # bfloat16 widens
    if google in transposed:
      value = value.T
    if google.endswith("/position_embeddings") and offset:
      value = value[offset:]
    return value

  source = weights_file
  return BertWeights(source=source, kind="hf", config=config, shapes=shapes, read=read,
                     original=original, skipped=skipped,
                     vocab_file=find_vocab(weights_file) if config["model_type"] == "bert"
                     else None, notes=notes)


def open_bert(path: str, config_file: Optional[str] = None) -> BertWeights:
  """A BERT from Google's TF files or Hugging Face safetensors files (whichever `path` holds)."""
  if tf_prefix(path) is not None:
    return open_tf(path, config_file)
  if hf_files(path) is not None:
    return open_hf(path, config_file)
  raise FileNotFoundError(
      f"{path}: no BERT checkpoint there (expected Google's {TF_PREFIXES[0]}.* with "
      f"{CONFIG_NAME}, or Hugging Face {HF_WEIGHTS} with {HF_CONFIG})")


def read_bert_config(path: str, config_file: Optional[str] = None) -> Dict:
  """BERT's config (Google's keys) of the checkpoint at `path`, without reading weights."""
  prefix = tf_prefix(path)
  if prefix is not None:
    return read_tf_config(config_file or os.path.join(os.path.dirname(prefix), CONFIG_NAME))
  found = hf_files(path)
  if found is not None:
    return read_hf_config(config_file or found[1])
  raise FileNotFoundError(f"{path}: no BERT checkpoint there")


# ------------------------------------------------------------------------------- the config
def etc_config_from_bert(bert_config: Dict, position_embeddings: str = "copy",
                         source: str = "BERT config", **overrides):
  """The EtcConfig of a lifted BERT: BERT's shape, plain ETC (residual_attention "none").

  Args:
    bert_config: BERT's config in Google's keys (`read_bert_config`).
    position_embeddings: "copy" keeps absolute positions (max_absolute_position_embeddings =
      BERT's max_position_embeddings unless overridden; a larger table repeats BERT's rows);
      "drop" gives a purely relative model (no position tables).
    source: the config's file, for error messages.
    **overrides: any EtcConfig field (local_radius, residual_attention="sum", ...).
  """
  from etc_realformer.config import EtcConfig  # pylint: disable=g-import-not-at-top
  if position_embeddings not in POSITION_MODES:
    raise ValueError(f"position_embeddings must be one of {POSITION_MODES}, "
                     f"got {position_embeddings!r}")
  defaults = EtcConfig.defaults()
  values = {
      "vocab_size": bert_config["vocab_size"],
      "hidden_size": bert_config["hidden_size"],
      "num_hidden_layers": bert_config["num_hidden_layers"],
      "num_attention_heads": bert_config["num_attention_heads"],
      "intermediate_size": bert_config["intermediate_size"],
      "hidden_act": bert_config["hidden_act"],
      "hidden_dropout_prob": bert_config.get("hidden_dropout_prob", 0.1),
      "attention_probs_dropout_prob": bert_config.get("attention_probs_dropout_prob", 0.1),
      "initializer_range": bert_config.get("initializer_range", 0.02),
      # BERT's token types fill the first rows; the package's default keeps room for more.
      "segment_vocab_size": max(bert_config["type_vocab_size"],
                                defaults["segment_vocab_size"]),
      "max_absolute_position_embeddings": (bert_config["max_position_embeddings"]
                                           if position_embeddings == "copy" else 0),
      "residual_attention": "none",
  }
  if position_embeddings == "drop" and overrides.get("max_absolute_position_embeddings"):
    raise ValueError("position_embeddings='drop' builds a model without position tables, but "
                     "max_absolute_position_embeddings="
                     f"{overrides['max_absolute_position_embeddings']} was also given.")
  values.update(overrides)
  return EtcConfig.from_dict(values, source=f"{source} with overrides {sorted(overrides)}")


def layout_problems(config, hidden_size: int) -> List[str]:
  """What in an EtcConfig's layer layout BERT's layout (hidden-sized token table, heads of
  hidden_size / heads, Post-LN, feed-forward layers) cannot match."""
  problems = []
  if config.embedding_size not in (None, hidden_size):
    problems.append(f"embedding_size {config.embedding_size!r}: BERT's token table is "
                    f"hidden-sized ({hidden_size}), with no projection")
  if config.head_size * config.num_attention_heads != hidden_size:
    problems.append(f"att_size_per_head {config.att_size_per_head!r}: BERT's heads are "
                    f"{hidden_size // config.num_attention_heads} wide")
  if config.use_pre_activation_order:
    problems.append("use_pre_activation_order true: BERT is Post-LN")
  if not config.use_feed_forward:
    problems.append("use_feed_forward false: BERT has feed-forward layers")
  return problems


def check_compatible(bert_config: Dict, model_config, source: str) -> None:
  """Raises ValueError naming every EtcConfig field with which BERT's weights cannot fill
  `model_config` (an EtcConfig)."""
  problems = []
  for key in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
              "intermediate_size", "hidden_act"):
    if getattr(model_config, key) != bert_config[key]:
      problems.append(f"{key} {bert_config[key]!r} != {getattr(model_config, key)!r}")
  problems += layout_problems(model_config, bert_config["hidden_size"])
  if model_config.segment_vocab_size < bert_config["type_vocab_size"]:
    problems.append(f"segment_vocab_size {model_config.segment_vocab_size} < BERT's "
                    f"type_vocab_size {bert_config['type_vocab_size']}")
  if problems:
    raise ValueError(f"{source}: this BERT cannot initialise the configured encoder: " +
                     "; ".join(problems))


# ------------------------------------------------------------------------------ the mapping
@dataclasses.dataclass
class _Target:
  variable: tf.Variable
  expected: Tuple[int, ...]  # the BERT shape this weight takes (rows free for "rows"/"tile")
  how: str = "reshape"       # "reshape" | "rows" (first rows) | "tile" (repeat rows)


@dataclasses.dataclass
class LiftReport:
  """What a lift did: every mapped, skipped and new weight, and BERT's pooler."""
  source: str
  mapped: List[Tuple[str, List[str]]]           # (file name, [model weights it fills])
  skipped: List[Tuple[str, str]]                # (file name, reason)
  new: List[Tuple[str, str]]                    # (model weight, how it starts)
  global_rows: List[str]                        # what each global-token row holds
  pooler: Optional[Dict[str, np.ndarray]]       # {"kernel" [H, H], "bias" [H]} or None
  notes: List[str]
  vocab_file: Optional[str] = None              # the BERT's vocab.txt or tokenizer.json

  def summary(self, verbose: bool = False) -> str:
    lines = [f"{self.source}: {len(self.mapped)} BERT variables mapped to "
             f"{sum(len(t) for _, t in self.mapped)} encoder weights, {len(self.skipped)} "
             f"skipped, {len(self.new)} encoder weights not from BERT"]
    if verbose:
      lines += [f"  mapped   {name} -> {', '.join(targets)}" for name, targets in self.mapped]
    lines += [f"  skipped  {name} ({reason})" for name, reason in self.skipped]
    lines += [f"  new      {name} ({how})" for name, how in self.new]
    lines += [f"  global   {what}" for what in self.global_rows]
    pooler = "kept (LiftReport.pooler)" if self.pooler else "none in the checkpoint"
    lines.append(f"  pooler   {pooler}")
    lines += [f"  note     {note}" for note in self.notes]
    return "\n".join(lines)

  def to_dict(self) -> Dict:
    return {"source": self.source, "mapped": {n: t for n, t in self.mapped},
            "skipped": {n: r for n, r in self.skipped}, "new": {n: h for n, h in self.new},
            "global_rows": self.global_rows, "vocab_file": self.vocab_file,
            "pooler": bool(self.pooler), "notes": self.notes}


def _shape(variable) -> Tuple[int, ...]:
  return tuple(int(d) for d in variable.shape)


def weight_name(variable) -> str:
  return variable.name.split(":")[0]


def _plan(model) -> Dict[str, List[_Target]]:
  """{Google's name: the EtcModel weights it fills}, for a built EtcModel."""
  plan: Dict[str, List[_Target]] = {}

  def add(name, variable, expected, how="reshape"):
    plan.setdefault(f"{PREFIX}/{name}", []).append(_Target(variable, tuple(expected), how))

  def norm(name, layer):
    add(f"{name}/gamma", layer.gamma, _shape(layer.gamma))
    add(f"{name}/beta", layer.beta, _shape(layer.beta))

  def dense(name, layer):
    add(f"{name}/kernel", layer.kernel, _shape(layer.kernel))
    add(f"{name}/bias", layer.bias, _shape(layer.bias))

  emb = model.embeddings
  hidden = model.etc_config.hidden_size
  add("embeddings/word_embeddings", emb.token_table, _shape(emb.token_table))
  add("embeddings/token_type_embeddings", emb.segment_table, (None, hidden), "rows")
  for table in emb.position_tables.values():
    add("embeddings/position_embeddings", table, (None, hidden), "tile")
  for stream in ("long", "global"):
    norm("embeddings/LayerNorm", emb.norms[stream])
  for index, block in enumerate(model.blocks):
    scope = f"encoder/layer_{index}"
    attention = block.attention
    heads, d = attention.num_attention_heads, attention.head_size
    roles = {"q": "query", "k": "key", "v": "value"}
    for name in sorted(attention.projection_kernels):  # e.g. long_q, l2l_k, g2g_v
      role = roles[name[-1]]
      add(f"{scope}/attention/self/{role}/kernel", attention.projection_kernels[name],
          (hidden, heads * d))
      add(f"{scope}/attention/self/{role}/bias", attention.projection_biases[name], (heads * d,))
    for name in sorted(attention.output_kernels):  # long_out (, global_out)
      add(f"{scope}/attention/output/dense/kernel", attention.output_kernels[name],
          (heads * d, hidden))
      add(f"{scope}/attention/output/dense/bias", attention.output_biases[name], (hidden,))
    for stream in ("long", "global"):
      norm(f"{scope}/attention/output/LayerNorm", block.attention_norms[stream])
    seen = set()
    for stream in ("long", "global"):  # shared feed-forward layers appear once
      if stream not in block.feed_forwards or id(block.feed_forwards[stream]) in seen:
        continue
      seen.add(id(block.feed_forwards[stream]))
      dense(f"{scope}/intermediate/dense", block.feed_forwards[stream].inner)
      dense(f"{scope}/output/dense", block.feed_forwards[stream].outer)
      norm(f"{scope}/output/LayerNorm", block.feed_forward_norms[stream])
  return plan


def _not_from_bert(model) -> List[Tuple[tf.Variable, str]]:
  """The encoder weights BERT has no counterpart of, with how each starts."""
  out = []
  for block in model.blocks:
    attention = block.attention
    for emb, bias in attention.relative_tables.values():
      out += [(emb, "zeros"), (bias, "zeros")]
    if attention.num_persistent_memory:
      out += [(attention.memory_keys, "fresh initialisation"),
              (attention.memory_values, "fresh initialisation")]
  return out


def _format(items) -> str:
  return "\n".join(f"    {name} {list(shape)}" for name, shape in items)


def _fits(shape: Tuple[int, ...], expected: Tuple[Optional[int], ...]) -> bool:
  return len(shape) == len(expected) and all(e is None or s == e for s, e in
                                             zip(shape, expected))


def _global_rows(weights: BertWeights, table: np.ndarray, mode: str,
                 report_rows: List[str]) -> None:
  """Re-initialises the global-token rows of `table` [V, H] in place (see the module doc)."""
  if mode not in GLOBAL_INIT_MODES:
    raise ValueError(f"global_token_init must be one of {GLOBAL_INIT_MODES}, got {mode!r}")
  if mode == "keep":
    report_rows.append("global-token rows kept as in BERT (global_token_init='keep')")
    return
  if not weights.vocab_file:
    report_rows.append("no vocab.txt or tokenizer.json beside the checkpoint: global-token "
                       "rows kept as in BERT")
    return
  pieces = vocab_learner.read_vocab(weights.vocab_file)
  index = {piece: i for i, piece in reversed(list(enumerate(pieces)))}
  for token, piece in sorted(GLOBAL_TOKEN_SOURCES.items()):
    current = pieces[token] if token < len(pieces) else None
    if current is None or not UNUSED_PIECE.match(current):
      report_rows.append(f"id {token} kept: it is the piece {current!r} in "
                         f"{os.path.basename(weights.vocab_file)}, not an unused slot")
    elif piece not in index or index[piece] >= table.shape[0]:
      report_rows.append(f"id {token} kept: no {piece} in the vocabulary")
    else:
      table[token] = table[index[piece]]
      report_rows.append(f"id {token} ({current}) starts as a copy of {piece} (id {index[piece]})")


def lift_weights(model, weights: BertWeights, global_token_init: str = "cls") -> LiftReport:
  """Fills every weight of the built EtcModel `model` from `weights`; -> the report.

  The model's config decides how positions lift: its tables (if any) take BERT's rows, repeated
  when longer (Longformer's copy); a model without tables drops BERT's.

  Raises:
    ValueError: naming the file and every model weight the checkpoint does not fill, every
      encoder variable the model does not use, and every shape that differs.
  """
  plan = _plan(model)
  shapes = weights.shapes
  unfilled, mismatched = [], []
  for name, targets in plan.items():
    if name not in shapes:
      unfilled.append((name, targets[0].expected))
      continue
    for target in targets:
      if not _fits(shapes[name], target.expected):
        mismatched.append((weights.original[name], shapes[name],
                           tuple("*" if e is None else e for e in target.expected)))
        break
  segment_rows = _shape(model.embeddings.segment_table)[0]
  types = shapes.get(f"{PREFIX}/embeddings/token_type_embeddings", (0,))[0]
  if types > segment_rows:
    mismatched.append((weights.original[f"{PREFIX}/embeddings/token_type_embeddings"],
                       shapes[f"{PREFIX}/embeddings/token_type_embeddings"],
                       f"at most segment_vocab_size={segment_rows} rows"))
  skipped = list(weights.skipped)
  pooler = {}
  unused = []
  for name, shape in sorted(shapes.items()):
    if name in plan:
      continue
    if name.startswith(f"{PREFIX}/pooler/dense/"):
      pooler[name.rsplit("/", 1)[1]] = name
      skipped.append((weights.original[name], "pooler: kept in the report, not an encoder "
                                              "weight"))
    elif name == f"{PREFIX}/embeddings/position_embeddings":
      skipped.append((weights.original[name], "the model has no absolute position tables "
                                              "(position_embeddings='drop')"))
    else:
      unused.append((weights.original[name], shape))
  problems = []
  if unfilled:
    problems.append(f"  model weights the checkpoint does not have ({len(unfilled)}):\n" +
                    _format((n, ["*" if e is None else e for e in s]) for n, s in unfilled))
  if unused:
    problems.append(f"  checkpoint variables the model does not use ({len(unused)}):\n" +
                    _format(unused))
  if mismatched:
    problems.append(f"  shapes that differ ({len(mismatched)}, checkpoint vs model):\n" +
                    "\n".join(f"    {n} {list(a)} vs {b if isinstance(b, str) else list(b)}"
                              for n, a, b in mismatched))
  if problems:
    config = model.etc_config
    raise ValueError(
        f"{weights.source}: the BERT checkpoint does not match the encoder "
        f"(num_hidden_layers={config.num_hidden_layers}, hidden_size={config.hidden_size}, "
        f"num_attention_heads={config.num_attention_heads}, intermediate_size="
        f"{config.intermediate_size}, vocab_size={config.vocab_size}, segment_vocab_size="
        f"{config.segment_vocab_size}, embedding_size={config.embedding_size}, "
        f"use_feed_forward={config.use_feed_forward}):\n" + "\n".join(problems))

  # Every encoder weight must be filled from BERT or start in a documented way.
  new = _not_from_bert(model)
  covered = {id(t.variable) for targets in plan.values() for t in targets}
  covered |= {id(v) for v, _ in new}
  missing = [weight_name(v) for v in model.weights if id(v) not in covered]
  if missing:
    raise ValueError(f"{weights.source}: the lifting does not know how to fill the encoder "
                     f"weights {', '.join(missing)}")

  report_new = [(weight_name(v), how) for v, how in new]
  global_rows, mapped = [], []
  for name, targets in plan.items():
    value = weights.read(name)
    if name == f"{PREFIX}/embeddings/word_embeddings":
      value = value.copy()
      _global_rows(weights, value, global_token_init, global_rows)
    for target in targets:
      variable = target.variable
      if target.how == "rows":  # BERT's token types, then the fresh rows
        current = variable.numpy()
        current[:value.shape[0]] = value
        if current.shape[0] > value.shape[0]:
          report_new.append((weight_name(variable),
                             f"rows {value.shape[0]}..{current.shape[0] - 1} fresh "
                             "initialisation (BERT has "
                             f"{value.shape[0]} token types)"))
        variable.assign(current)
      elif target.how == "tile":  # Longformer's copy: BERT's positions again and again
        rows = _shape(variable)[0]
        reps = -(-rows // value.shape[0])
        variable.assign(np.tile(value, (reps, 1))[:rows])
        if rows != value.shape[0]:
          report_new.append((weight_name(variable),
                             f"{rows} rows: BERT's {value.shape[0]} positions "
                             f"{'repeated' if rows > value.shape[0] else 'cut'}"))
      else:
        variable.assign(np.reshape(value, _shape(variable)))
    mapped.append((weights.original[name], [weight_name(t.variable) for t in targets]))
  for variable, how in new:
    if how == "zeros":
      variable.assign(tf.zeros_like(variable))

  notes = list(weights.notes)
  eps = weights.config.get("layer_norm_eps", PACKAGE_LAYER_NORM_EPS)
  if abs(eps - PACKAGE_LAYER_NORM_EPS) > 1e-15:
    notes.append(f"the checkpoint's LayerNorm epsilon is {eps:g}; this package's LayerNorms use "
                 f"{PACKAGE_LAYER_NORM_EPS:g}, so outputs differ slightly from the original")
  config = model.etc_config
  same_up_to = config.local_radius + 1
  if config.max_absolute_position_embeddings:
    same_up_to = min(same_up_to, weights.config["max_position_embeddings"])
  notes.append(f"with no global tokens this encoder computes BERT's outputs for inputs of up to "
               f"{same_up_to} pieces (local_radius {config.local_radius}: each long token sees "
               f"{config.local_radius} pieces on either side; BERT has "
               f"{weights.config['max_position_embeddings']} positions); longer inputs attend "
               "within that window and through the global tokens")
  if model.etc_config.residual_attention != "none":
    notes.append(f"residual_attention={model.etc_config.residual_attention!r}: layer 0 "
                 "computes what BERT's does, later layers add the earlier layers' attention "
                 "scores (a different function until trained further)")
  pooler_values = None
  if pooler:
    pooler_values = {key: weights.read(name) for key, name in pooler.items()}
  return LiftReport(source=weights.source, mapped=mapped, skipped=skipped, new=report_new,
                    global_rows=global_rows, pooler=pooler_values, notes=notes,
                    vocab_file=weights.vocab_file)


def pooled_output(long_output: tf.Tensor, pooler: Dict[str, np.ndarray]) -> tf.Tensor:
  """BERT's pooled output: tanh(first token's output [B, H] x kernel [H, H] + bias) -> [B, H]."""
  first = long_output[:, 0]  # [B, H]
  return tf.tanh(tf.matmul(first, tf.cast(pooler["kernel"], first.dtype)) +
                 tf.cast(pooler["bias"], first.dtype))


# BERT's pooler beside a lifted encoder (lift_bert writes it).
POOLER_FILE = "bert_pooler.npz"
