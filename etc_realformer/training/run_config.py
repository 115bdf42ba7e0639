"""Run config files (YAML or JSON): a model config plus named sections.

  model: ../models/tiny.yaml        # a model config path (relative to this file or the working
                                    # directory) or an inline mapping of EtcConfig fields
  model_overrides: {hidden_size: 64}
  <section>: {...}                  # e.g. train / data for pretraining, train / features for tasks

In the sections, a string value that starts with `./` or `../` is a path relative to the config
file (like `model:`), so a config can name files that travel with it, e.g.
`init_checkpoint: ../../pretrained/tiny_english`; any other path is taken as given.

`--set section.key=value` overrides are applied by the command-line tools with `apply_override`.

One key of the model section is not an EtcConfig field: `from_init_checkpoint: true` (or
`--set model.from_init_checkpoint=true`) takes the encoder's architecture (sizes, layers, heads,
vocabulary size, activation) from `train.init_checkpoint` instead of the config
(`etc_realformer.training.initialization.model_config_for_run`).
"""

import json
import os
from typing import Any, Dict, Sequence

from etc_realformer import io_utils
from etc_realformer.config import EtcConfig

# The model-section switch that takes the architecture from train.init_checkpoint.
FROM_INIT_CHECKPOINT = "from_init_checkpoint"


def load_run_config(path: str, sections: Sequence[str]) -> Dict[str, Any]:
  """-> {"model": resolved EtcConfig dict, section: dict for each of `sections`}."""
  with open(path) as f:
    raw = io_utils.yaml_load(f) if path.endswith((".yaml", ".yml")) else json.load(f)
  if not isinstance(raw, dict) or "model" not in raw:
    raise ValueError(f"{path}: expected a mapping with a 'model' entry")
  allowed = ("model", "model_overrides") + tuple(sections)
  extra = sorted(set(raw) - set(allowed))
  if extra:
    raise ValueError(f"{path}: unknown top-level key(s) {extra}; expected {', '.join(allowed)}")
  model = raw["model"]
  if isinstance(model, str):
    candidates = [os.path.join(os.path.dirname(path), model), model]
    found = next((c for c in candidates if os.path.exists(c)), None)
    if found is None:
      raise FileNotFoundError(f"{path}: model config {model!r} not found")
    model = EtcConfig.from_file(found).to_dict()
  model = dict(model)
  model.update(raw.get("model_overrides") or {})
  switch = model.pop(FROM_INIT_CHECKPOINT, None)
  out = {"model": EtcConfig.from_dict(model, source=f"{path} (model)").to_dict()}
  if switch is not None:
    out["model"][FROM_INIT_CHECKPOINT] = switch
  for section in sections:
    value = raw.get(section) or {}
    if not isinstance(value, dict):
      raise ValueError(f"{path}: section {section!r} must be a mapping, got {value!r}")
    out[section] = {key: relative_to(path, item) for key, item in value.items()}
  return out


def relative_to(config_path: str, value: Any) -> Any:
  """`value` as a path next to `config_path` if it starts with ./ or ../; else unchanged."""
  if isinstance(value, str) and value.startswith(("./", "../")):
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(config_path)), value))
  return value


def apply_overrides(run_config: Dict[str, Any], overrides: Sequence[str]) -> Dict[str, Any]:
  """`section.key=value` strings (value parsed as YAML; `4e-5` is a float) applied to a loaded
  run config."""
  sections = sorted(run_config)
  for item in overrides:
    key, sep, value = item.partition("=")
    section, dot, name = key.partition(".")
    if not sep or not dot or section not in run_config:
      raise ValueError(f"--set {item!r}: expected <section>.<key>=<value> with a section in "
                       f"{sections}")
    # An empty value is the empty string (`--set train.init_checkpoint=`), not YAML's null.
    run_config[section][name] = io_utils.yaml_load(value) if value.strip() else ""
  return run_config
