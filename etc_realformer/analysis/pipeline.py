"""The whole analysis: load the models, read the examples, collect the stats, draw, write JSON.

`run_analysis` is what `python -m etc_realformer.analyze` calls (tests call it directly).
Outputs in `output_dir`:
  entropy.png (one model) or entropy_comparison.png (several)   violin plots (+ JS panel)
  attention_map.png                                              sentence -> global heatmaps
  analysis.json                                                  all numbers, keyed by label
"""

import dataclasses
import os
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np

from etc_realformer.analysis import loading
from etc_realformer.analysis import plots
from etc_realformer.analysis import report
from etc_realformer.io_utils import atomic_write_json

ANALYSIS_FILE = "analysis.json"
MAP_FILE = "attention_map.png"


@dataclasses.dataclass
class AnalysisSettings:
  num_examples: int = 8
  batch_size: int = 4
  example_index: int = 0     # example drawn in attention_map.png
  map_layer: int = -1        # -1: one panel per layer; else only this layer
  map_head: int = -1         # -1: mean over heads; else this head
  dpi: int = 100

  def validate(self):
    for name in ("num_examples", "batch_size", "dpi"):
      if getattr(self, name) < 1:
        raise ValueError(f"{name}: must be >= 1, got {getattr(self, name)}")
    if self.example_index < 0:
      raise ValueError(f"example_index: must be >= 0, got {self.example_index}")
    if self.example_index >= self.num_examples:
      raise ValueError(f"example_index: {self.example_index} is not among the first "
                       f"num_examples = {self.num_examples} examples")
    return self


def make_labels(labels: Optional[Sequence[str]], configs) -> List[str]:
  """The given labels (one per checkpoint, distinct) or ones derived from the configs."""
  if labels:
    labels = [l.strip() for l in labels]
    if len(labels) != len(configs):
      raise ValueError(f"labels: {len(labels)} label(s) {labels} for {len(configs)} "
                       "checkpoint(s)")
    if len(set(labels)) != len(labels) or not all(labels):
      raise ValueError(f"labels: must be distinct and non-empty, got {labels}")
    return labels
  out = []
  for config in configs:
    label = report.default_label(config)
    while label in out:
      label += "'"
    out.append(label)
  return out


def _map_summary(maps: List[np.ndarray], example: Dict[str, np.ndarray], index: int):
  """How much of a sentence's l2g attention lands on its own global token, per layer."""
  num_global = int(np.sum(example["global_token_ids"] != 0))
  own, total = [], []
  for layer_map in maps:  # [heads, S, G]
    mean_map = layer_map.mean(axis=0)  # [S, G]
    rows = [s for s in range(mean_map.shape[0])
            if s < mean_map.shape[1] and np.isfinite(mean_map[s]).all()]
    own.append(float(np.mean([mean_map[s, s] for s in rows])) if rows else None)
    total.append(float(np.mean([mean_map[s].sum() for s in rows])) if rows else None)
  return {"example_index": index, "num_sentences": int(maps[0].shape[1]) if maps else 0,
          "num_global_tokens": num_global, "mean_mass_on_own_global": own,
          "mean_mass_on_all_globals": total}


def run_analysis(checkpoints: Sequence[str], output_dir: str, data: Optional[str] = None,
                 labels: Optional[Sequence[str]] = None,
                 settings: Optional[AnalysisSettings] = None,
                 log: Callable[[str], None] = print) -> Dict:
  """Analyses one checkpoint (or several, compared on the same examples); -> the JSON payload."""
  settings = (settings or AnalysisSettings()).validate()
  encoders = []
  for path in checkpoints:
    encoder = loading.load_encoder(path)
    log(f"loaded {path}: {encoder.checkpoint.prefix} "
        f"({encoder.config.num_hidden_layers} layers, residual_attention="
        f"{encoder.config.residual_attention})")
    encoders.append(encoder)
  labels = make_labels(labels, [e.config for e in encoders])
  for label, encoder in zip(labels, encoders):
    layers, heads = encoder.config.num_hidden_layers, encoder.config.num_attention_heads
    if settings.map_layer >= layers or settings.map_layer < -1:
      raise ValueError(f"map_layer: {settings.map_layer} is not -1 or a layer of {label} "
                       f"(0..{layers - 1})")
    if settings.map_head >= heads or settings.map_head < -1:
      raise ValueError(f"map_head: {settings.map_head} is not -1 or a head of {label} "
                       f"(0..{heads - 1})")

  if not data:
    data = loading.run_train_data(encoders[0].checkpoint)
    if not data:
      raise ValueError(f"data: not given, and {checkpoints[0]} is not a pretraining run whose "
                       "run_config.json names an existing train_data directory")
  vocab_size = min(e.config.vocab_size for e in encoders)
  examples = loading.read_examples(data, settings.num_examples, vocab_size)
  count = len(examples["token_ids"])
  log(f"read {count} example(s) from {data} (L = {examples['token_ids'].shape[1]}, "
      f"G = {examples['global_token_ids'].shape[1]})")
  if settings.example_index >= count:
    raise ValueError(f"example_index: {settings.example_index} but {data} holds only {count} "
                     "example(s)")

  runs, maps, num_global, entries = {}, {}, {}, {}
  for label, path, encoder in zip(labels, checkpoints, encoders):
    log(f"running {label} ...")
    result = loading.collect_attention(encoder.model, examples, settings.batch_size,
                                       settings.example_index, log=log)
    runs[label] = result.stats
    maps[label] = result.sentence_maps
    num_global[label] = int(np.sum(result.map_example["global_token_ids"] != 0))
    entries[label] = report.model_entry(
        path, encoder.checkpoint.prefix, data, encoder.config, result.num_examples,
        result.stats, _map_summary(result.sentence_maps, result.map_example,
                                   settings.example_index))

  os.makedirs(output_dir, exist_ok=True)
  entropy_name = "entropy.png" if len(labels) == 1 else "entropy_comparison.png"
  written = [plots.save(plots.entropy_figure(runs), os.path.join(output_dir, entropy_name),
                        settings.dpi)]
  map_layers = None if settings.map_layer == -1 else [settings.map_layer]
  head = None if settings.map_head == -1 else settings.map_head
  if map_layers is None:
    # Models of different depth: the layers they all have.
    depth = min(len(m) for m in maps.values())
    map_layers = list(range(depth))
  written.append(plots.save(
      plots.attention_map_figure(maps, num_global, map_layers, head, settings.example_index),
      os.path.join(output_dir, MAP_FILE), settings.dpi))
  result = report.payload(entries, dataclasses.asdict(settings))
  written.append(atomic_write_json(os.path.join(output_dir, ANALYSIS_FILE), result))
  for label in labels:
    log(report.table(label, entries[label]))
  for path in written:
    log(f"wrote {path}")
  return result
