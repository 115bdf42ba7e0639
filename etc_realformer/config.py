"""The model configuration: one dataclass whose fields are the official ETC config keys.

Field names equal the official ETC `etc_config.json` keys and the constructor arguments of
`EtcModel`, so an official config file loads unchanged. The fields added by this project
(RealFormer residual attention, persistent memory, optional feed-forward) are listed last.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any, Dict, Optional, Sequence, Tuple, Union

from etc_realformer import io_utils

RESIDUAL_MODES = ("none", "sum", "mean")
RESIDUAL_PATHS = ("global", "local")
# "gelu" is the tanh approximation, as in BERT and official ETC; "gelu_exact" is the erf form.
ACTIVATIONS = ("gelu", "gelu_approximate", "gelu_exact", "relu", "tanh", "linear", "swish")

# Older ETC releases spell the feed-forward activation `inner_activation`; it is the same field.
_KEY_ALIASES = {"inner_activation": "hidden_act"}


def relative_vocab_needed(relative_pos_max_distance: int) -> int:
  """Smallest relative vocabulary for max distance k: ids 0..2k, plus l2g/g2l and multi-hop ids."""
  return 2 * relative_pos_max_distance + 4


def _as_paths(paths) -> Tuple[str, ...]:
  """residual_paths as a tuple (a single path may be given as a string)."""
  return (paths,) if isinstance(paths, str) else tuple(paths)


@dataclasses.dataclass
class EtcConfig:
  """Hyper-parameters of an ETC-RealFormer encoder (docs/model_inputs.md, "Configuration keys").

  Defaults are ETC-base. Every invalid value raises a ValueError naming the key.
  """

  vocab_size: int = 30522
  segment_vocab_size: int = 16
  embedding_size: Optional[int] = None
  hidden_size: int = 768
  num_hidden_layers: int = 12
  num_attention_heads: int = 12
  local_radius: int = 84
  att_size_per_head: Optional[int] = None
  relative_pos_max_distance: int = 12
  relative_vocab_size: Optional[int] = 32
  max_absolute_position_embeddings: int = 0
  intermediate_size: int = 3072
  hidden_act: str = "gelu"
  hidden_dropout_prob: float = 0.1
  attention_probs_dropout_prob: float = 0.1
  initializer_range: float = 0.02
  share_feed_forward_params: bool = True
  share_kv_projections: bool = False
  share_qkv_projections: bool = True
  share_att_output_projection: bool = False
  use_pre_activation_order: bool = False
  use_hard_g2l_mask: bool = False
  use_hard_l2g_mask: bool = False
  grad_checkpointing_period: int = 0
  # Added by this project.
  residual_attention: str = "sum"
  residual_paths: Tuple[str, ...] = ("global", "local")
  num_persistent_memory: int = 0
  use_feed_forward: bool = True

  def __post_init__(self):
    self.residual_paths = _as_paths(self.residual_paths)
    self.validate()

  # ---------------------------------------------------------------- validation
  def validate(self) -> None:
    """Raises ValueError naming the first invalid key."""

    def positive_int(key, allow_zero=False, allow_none=False):
      value = getattr(self, key)
      if value is None and allow_none:
        return
      low = 0 if allow_zero else 1
      if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(
            f"EtcConfig.{key} must be an integer >= {low}"
            f"{' or null' if allow_none else ''}, got {value!r}.")

    for key in ("vocab_size", "segment_vocab_size", "hidden_size", "num_hidden_layers",
                "num_attention_heads", "intermediate_size"):
      positive_int(key)
    for key in ("local_radius", "relative_pos_max_distance", "max_absolute_position_embeddings",
                "grad_checkpointing_period", "num_persistent_memory"):
      positive_int(key, allow_zero=True)
    for key in ("embedding_size", "att_size_per_head"):
      positive_int(key, allow_none=True)
    positive_int("relative_vocab_size", allow_none=True)

    if self.att_size_per_head is None and self.hidden_size % self.num_attention_heads:
      raise ValueError(
          f"EtcConfig.hidden_size ({self.hidden_size}) must be divisible by "
          f"num_attention_heads ({self.num_attention_heads}) when att_size_per_head is not set.")
    if self.relative_vocab_size is not None:
      needed = relative_vocab_needed(self.relative_pos_max_distance)
      if self.relative_vocab_size < needed:
        raise ValueError(
            f"EtcConfig.relative_vocab_size ({self.relative_vocab_size}) is too small for "
            f"relative_pos_max_distance {self.relative_pos_max_distance}: it needs at least "
            f"2k+4 = {needed} ids.")
    for key in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
      value = getattr(self, key)
      if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise ValueError(f"EtcConfig.{key} must be a number in [0, 1), got {value!r}.")
    if isinstance(self.initializer_range, bool) or not isinstance(
        self.initializer_range, (int, float)) or self.initializer_range <= 0:
      raise ValueError(
          f"EtcConfig.initializer_range must be a positive number, got {self.initializer_range!r}.")
    if self.hidden_act not in ACTIVATIONS:
      raise ValueError(f"EtcConfig.hidden_act must be one of {ACTIVATIONS}, got {self.hidden_act!r}.")
    if self.residual_attention not in RESIDUAL_MODES:
      raise ValueError(
          f"EtcConfig.residual_attention must be one of {RESIDUAL_MODES}, "
          f"got {self.residual_attention!r}.")
    bad = [p for p in self.residual_paths if p not in RESIDUAL_PATHS]
    if bad or len(set(self.residual_paths)) != len(self.residual_paths):
      raise ValueError(
          f"EtcConfig.residual_paths must be distinct values from {RESIDUAL_PATHS}, "
          f"got {self.residual_paths!r}.")
    for key in ("share_feed_forward_params", "share_kv_projections", "share_qkv_projections",
                "share_att_output_projection", "use_pre_activation_order", "use_hard_g2l_mask",
                "use_hard_l2g_mask", "use_feed_forward"):
      if not isinstance(getattr(self, key), bool):
        raise ValueError(f"EtcConfig.{key} must be true or false, got {getattr(self, key)!r}.")

  # ------------------------------------------------------------ derived values
  @property
  def head_size(self) -> int:
    return self.att_size_per_head or self.hidden_size // self.num_attention_heads

  # ----------------------------------------------------------------- (de)serialise
  @classmethod
  def field_names(cls):
    return [f.name for f in dataclasses.fields(cls)]

  @classmethod
  def defaults(cls) -> Dict[str, Any]:
    """{field: default value}. The encoder layers take their defaults from here, so each
    option's default is written once: in the field list above."""
    return {f.name: f.default for f in dataclasses.fields(cls)}

  def subset(self, keys: Sequence[str]) -> Dict[str, Any]:
    """{key: value} for the fields named in `keys` (one layer's share of the config)."""
    return {key: getattr(self, key) for key in keys}

  @classmethod
  def coerce(cls, config: Union["EtcConfig", Dict[str, Any]]) -> "EtcConfig":
    """An EtcConfig as it is, or one built from its dict (what models accept as `config`)."""
    return config if isinstance(config, cls) else cls.from_dict(dict(config))

  @classmethod
  def from_dict(cls, values: Dict[str, Any], source: str = "config") -> "EtcConfig":
    """Builds a config from a dict; an unknown key raises ValueError naming it and `source`."""
    if not isinstance(values, dict):
      raise ValueError(f"{source}: expected a mapping of config keys, got {type(values).__name__}.")
    known = set(cls.field_names())
    kwargs = {}
    for key, value in values.items():
      name = _KEY_ALIASES.get(key, key)
      if name not in known:
        raise ValueError(
            f"{source}: unknown EtcConfig key {key!r} (known keys: {', '.join(sorted(known))}).")
      if name in kwargs:
        raise ValueError(f"{source}: key {key!r} is given twice (also as {name!r}).")
      kwargs[name] = value
    try:
      return cls(**kwargs)
    except ValueError as e:
      raise ValueError(f"{source}: {e}") from None

  @classmethod
  def from_json_file(cls, path: str) -> "EtcConfig":
    with open(path, encoding="utf-8") as f:
      try:
        values = json.load(f)
      except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e}).") from None
    return cls.from_dict(values, source=path)

  @classmethod
  def from_yaml_file(cls, path: str) -> "EtcConfig":
    import yaml  # pylint: disable=g-import-not-at-top
    with open(path, encoding="utf-8") as f:
      try:
        values = io_utils.yaml_load(f)
      except yaml.YAMLError as e:
        raise ValueError(f"{path}: not valid YAML ({e}).") from None
    return cls.from_dict(values or {}, source=path)

  @classmethod
  def from_file(cls, path: str) -> "EtcConfig":
    """Reads a `.json`, `.yaml` or `.yml` config file."""
    ext = os.path.splitext(path)[1].lower()
    if ext == ".json":
      return cls.from_json_file(path)
    if ext in (".yaml", ".yml"):
      return cls.from_yaml_file(path)
    raise ValueError(f"{path}: config files must end in .json, .yaml or .yml.")

  def to_dict(self) -> Dict[str, Any]:
    values = dataclasses.asdict(self)
    values["residual_paths"] = list(self.residual_paths)
    return values

  def to_json_string(self) -> str:
    return json.dumps(self.to_dict(), indent=2, sort_keys=False)

  def replace(self, **changes) -> "EtcConfig":
    return dataclasses.replace(self, **changes)


# ---------------------------------------------------------------- layer options
def layer_options(keys: Sequence[str], args: Sequence[Any], kwargs: Dict[str, Any],
                  owner: str) -> Tuple[Dict[str, Any], Dict[str, Any]]:
  """Splits a layer constructor's arguments into its EtcConfig options and the rest.

  The encoder layers take the EtcConfig fields named in their `CONFIG_KEYS`, positionally in
  that order or by name; this binds them like a Python signature would.

  Args:
    keys: the EtcConfig fields the layer takes, in positional-argument order.
    args: the positional arguments: values of the first len(args) fields of `keys`.
    kwargs: the keyword arguments; those not named in `keys` are returned as the rest.
    owner: the layer class name, for error messages.

  Returns:
    (options, rest): `options` maps every key of `keys`, in order, to its given value or
    EtcConfig's default (residual_paths as a tuple); `rest` holds the other keyword arguments
    (for Keras Layer.__init__, which rejects unknown ones).

  Raises:
    TypeError: too many positional arguments, or an option given both ways.
  """
  if len(args) > len(keys):
    raise TypeError(f"{owner}() takes at most {len(keys)} positional arguments "
                    f"({', '.join(keys)}), got {len(args)}.")
  defaults = EtcConfig.defaults()
  given = dict(zip(keys, args))
  rest = dict(kwargs)
  for key in keys:
    if key in rest:
      if key in given:
        raise TypeError(f"{owner}() got multiple values for argument {key!r}.")
      given[key] = rest.pop(key)
  options = {key: given.get(key, defaults[key]) for key in keys}
  if "residual_paths" in options:
    options["residual_paths"] = _as_paths(options["residual_paths"])
  return options, rest


def options_config(options: Dict[str, Any]) -> Dict[str, Any]:
  """Layer options as get_config() values: tuples (residual_paths) become JSON-style lists."""
  return {key: list(value) if isinstance(value, tuple) else value
          for key, value in options.items()}
