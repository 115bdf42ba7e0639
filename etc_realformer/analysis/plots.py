"""Figures of the attention analysis, drawn with matplotlib's Agg canvas (no display needed).

  entropy_figure          violins of per-query entropy per layer, long and global queries,
                          one model or several side by side, plus the adjacent-layer JS panel
  attention_map_figure    heatmaps sentences x global tokens of one example, per layer

Figures are matplotlib.figure.Figure objects with an Agg canvas attached, never pyplot ones, so
drawing needs no display and leaves the caller's pyplot backend alone.
"""

import math
import os
from typing import Dict, List, Optional, Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch
import numpy as np

from etc_realformer.analysis.attention_stats import StreamStats

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")
STREAM_TITLES = {"long": "long-token queries", "global": "global-token queries"}


def _new_figure(width: float, height: float) -> Figure:
  figure = Figure(figsize=(width, height))
  FigureCanvasAgg(figure)
  return figure


def save(figure: Figure, path: str, dpi: int = 100) -> str:
  """Writes `figure` as PNG to `path` (creating the folder); returns the path."""
  os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
  figure.savefig(path, dpi=dpi, format="png")
  return path


def _violins(ax, values: Sequence[np.ndarray], positions: Sequence[float], width: float,
             color: str):
  """One violin per array (empty arrays are skipped) with its mean as a white dot."""
  keep = [(np.ravel(v), p) for v, p in zip(values, positions) if np.size(v)]
  if not keep:
    return
  data = [v for v, _ in keep]
  where = [p for _, p in keep]
  parts = ax.violinplot(data, positions=where, widths=width, showextrema=False)
  for body in parts["bodies"]:
    body.set_facecolor(color)
    body.set_edgecolor(color)
    body.set_alpha(0.55)
  ax.scatter(where, [float(np.mean(v)) for v in data], s=14, color="white", edgecolor=color,
             zorder=3)


def entropy_figure(runs: Dict[str, Dict[str, StreamStats]], js_panel: Optional[bool] = None
                   ) -> Figure:
  """Violin plots of per-query attention entropy per layer (heads and queries pooled).

  runs: label -> {"long": StreamStats, "global": StreamStats}. With one run each layer has one
  violin; with several, the runs' violins sit side by side at each layer with a legend.
  js_panel (default: when there are several runs) adds the mean adjacent-layer JS divergence
  per layer pair, solid for long queries and dashed for global queries.
  """
  labels = list(runs)
  if js_panel is None:
    js_panel = len(labels) > 1
  panels = 3 if js_panel else 2
  figure = _new_figure(4.2 * panels, 3.6)
  axes = figure.subplots(1, panels)
  width = 0.8 / len(labels)
  num_layers = max(len(r["long"].entropy) for r in runs.values())
  for ax, stream in zip(axes, ("long", "global")):
    for k, label in enumerate(labels):
      offset = (k - (len(labels) - 1) / 2) * width
      values = runs[label][stream].entropy
      _violins(ax, values, [l + offset for l in range(len(values))], width * 0.95,
               COLORS[k % len(COLORS)])
    ax.set_xticks(range(num_layers))
    ax.set_xlabel("layer")
    ax.set_ylabel("entropy per query (nats)")
    ax.set_title(STREAM_TITLES[stream], fontsize=10)
    ax.grid(axis="y", alpha=0.3)
  if len(labels) > 1:
    handles = [Patch(color=COLORS[k % len(COLORS)], alpha=0.6, label=label)
               for k, label in enumerate(labels)]
    axes[0].legend(handles=handles, fontsize=8, loc="best")
  if js_panel:
    _js_panel(axes[2], runs, labels, num_layers)
  figure.tight_layout()
  return figure


def _js_panel(ax, runs, labels, num_layers):
  pairs = np.arange(max(num_layers - 1, 0))
  if not len(pairs):
    ax.text(0.5, 0.5, "needs at least 2 layers", ha="center", va="center",
            transform=ax.transAxes)
  for k, label in enumerate(labels):
    color = COLORS[k % len(COLORS)]
    for stream, style in (("long", "-"), ("global", "--")):
      js = runs[label][stream].js
      means = [float(np.mean(v)) if np.size(v) else np.nan for v in js]
      if means:
        ax.plot(np.arange(len(means)), means, style, marker="o", color=color,
                label=f"{label}, {stream}")
  ax.set_xticks(pairs)
  ax.set_xticklabels([f"{l}\u2192{l + 1}" for l in pairs])
  ax.set_xlabel("layer pair")
  ax.set_ylabel("mean JS divergence (nats)")
  ax.set_title("adjacent-layer JS (lower = more alike)", fontsize=10)
  ax.set_ylim(bottom=0)
  ax.grid(alpha=0.3)
  if len(pairs):
    ax.legend(fontsize=7, loc="best")


def attention_map_figure(maps: Dict[str, List[np.ndarray]], num_global: Dict[str, int],
                         layers: Optional[Sequence[int]] = None, head: Optional[int] = None,
                         example_index: int = 0) -> Figure:
  """Heatmaps of sentence -> global attention for one example.

  maps: label -> per layer [heads, S, G] (attention_stats.sentence_global_map); one row of
  panels per label and one column per layer in `layers` (default: all). head: a head index,
  or None for the mean over heads. num_global crops the columns to the real global tokens.
  """
  labels = list(maps)
  all_layers = range(max(len(m) for m in maps.values()))
  layers = list(all_layers if layers is None else layers)
  ncols = len(layers)
  nrows = len(labels)
  figure = _new_figure(min(3.4 * ncols, 16) + 0.8, 3.2 * nrows + 0.4)
  axes = np.atleast_2d(figure.subplots(nrows, ncols, squeeze=False))
  what = "mean over heads" if head is None else f"head {head}"
  for row, label in enumerate(labels):
    for col, layer in enumerate(layers):
      ax = axes[row, col]
      per_head = maps[label][layer]  # [heads, S, G]
      matrix = per_head.mean(axis=0) if head is None else per_head[head]  # [S, G]
      matrix = matrix[:, :num_global[label]]
      image = ax.imshow(np.ma.masked_invalid(matrix), aspect="auto", cmap="viridis",
                        interpolation="nearest", vmin=0.0)
      ax.set_xlabel("global token")
      ax.set_ylabel("sentence (its long tokens)")
      prefix = f"{label}: " if len(labels) > 1 else ""
      ax.set_title(f"{prefix}layer {layer}", fontsize=10)
      _sparse_ticks(ax, matrix.shape)
      figure.colorbar(image, ax=ax, fraction=0.046, pad=0.03)
  figure.suptitle(f"Attention of each sentence's long tokens to the global tokens "
                  f"(example {example_index}, {what})", fontsize=10)
  figure.tight_layout()
  return figure


def _sparse_ticks(ax, shape):
  rows, cols = shape
  ax.set_yticks(range(0, rows, max(1, math.ceil(rows / 8))))
  ax.set_xticks(range(0, cols, max(1, math.ceil(cols / 8))))
