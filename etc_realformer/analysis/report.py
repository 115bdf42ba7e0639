"""The analysis.json payload and the per-layer table printed by the command line."""

from typing import Any, Dict, List, Optional

from etc_realformer.analysis import attention_stats
from etc_realformer.config import EtcConfig

# Config fields worth repeating next to the numbers.
_CONFIG_KEYS = ("num_hidden_layers", "num_attention_heads", "hidden_size", "local_radius",
                "residual_attention", "residual_paths", "use_pre_activation_order",
                "num_persistent_memory")


def default_label(config: EtcConfig) -> str:
  """"RealFormer" with residual attention, else "Post-LN" / "Pre-LN"."""
  if config.residual_attention != "none":
    return "RealFormer"
  return "Pre-LN" if config.use_pre_activation_order else "Post-LN"


def model_entry(checkpoint: str, prefix: str, data: str, config: EtcConfig, num_examples: int,
                stats: Dict[str, attention_stats.StreamStats],
                attention_map: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
  """One model's part of analysis.json."""
  entry = {"checkpoint": checkpoint, "checkpoint_prefix": prefix, "data": data,
           "num_examples": num_examples,
           "config": {k: getattr(config, k) for k in _CONFIG_KEYS}}
  entry["config"]["residual_paths"] = list(entry["config"]["residual_paths"])
  entry.update(attention_stats.summarize(stats))
  if attention_map is not None:
    entry["attention_map"] = attention_map
  return entry


def payload(models: Dict[str, Dict[str, Any]], settings: Dict[str, Any]) -> Dict[str, Any]:
  return {"labels": list(models), "models": models, "settings": settings,
          "units": {"entropy": "nats", "js_divergence": "nats (natural log, at most log 2)",
                    "correlation": "Pearson r over the keys a query can attend to"}}


def _fmt(value: Optional[float], digits: int = 3) -> str:
  return "-" if value is None else f"{value:.{digits}f}"


def table(label: str, entry: Dict[str, Any]) -> str:
  """Per-layer table: mean entropy of long / global queries, and JS / correlation with the
  next layer."""
  lines = [f"{label}: {entry['num_examples']} examples, "
           f"{entry['config']['num_hidden_layers']} layers, "
           f"{entry['config']['num_attention_heads']} heads "
           f"(entropy in nats; JS and r between layer l and l+1)",
           f"{'layer':>5} {'H long':>8} {'H global':>9} {'JS long':>8} {'JS global':>9} "
           f"{'r long':>7} {'r global':>8} {'queries long/global':>20}"]
  adjacent: List[Dict[str, Any]] = entry["adjacent_layers"]
  for layer in entry["layers"]:
    index = layer["layer"]
    pair = adjacent[index] if index < len(adjacent) else None
    js_long = pair["long"]["js_divergence"] if pair else None
    js_global = pair["global"]["js_divergence"] if pair else None
    r_long = pair["long"]["correlation"] if pair else None
    r_global = pair["global"]["correlation"] if pair else None
    counts = f"{layer['long']['num_queries']}/{layer['global']['num_queries']}"
    lines.append(f"{index:>5} {_fmt(layer['long']['mean_entropy']):>8} "
                 f"{_fmt(layer['global']['mean_entropy']):>9} {_fmt(js_long, 4):>8} "
                 f"{_fmt(js_global, 4):>9} {_fmt(r_long):>7} {_fmt(r_global):>8} {counts:>20}")
  return "\n".join(lines)
