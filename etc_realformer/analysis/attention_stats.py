"""Statistics of ETC attention probabilities: entropy, adjacent-layer similarity, l2g maps.

Pure NumPy (no TensorFlow), so every function can be checked on hand-made arrays.

Layouts, as returned by `EtcModel(..., return_attention_scores=True)` (one dict per layer):
  long_probs   blocked [B, heads, nb, b, 3b + G (+ M)] with b = local_radius + 1: slot c < 3b of
               query q in block n is long token (n - 1) * b + c, slots 3b .. 3b + G - 1 are the
               global tokens and M persistent-memory slots follow; or, from the dense
               implementation, [B, heads, L, L + G (+ M)] (column j < L is long token j).
  global_probs [B, heads, G, G + L (+ M)]: first the G global keys, then the L long keys.

Valid queries: long token i < L with token_ids[i] != 0 (block-padding rows past L and padding
tokens are dropped), global token g with global_token_ids[g] != 0.

All logarithms are natural (nats); p = 0 contributes 0 to an entropy or a divergence.
"""

import dataclasses
from typing import Dict, List, Optional, Sequence

import numpy as np

# A row is "constant" for the correlation when its standard deviation over the keys is below
# this fraction of its mean (float32 softmax rounding leaves ~1e-7 relative noise).
_CONSTANT_ROW_TOLERANCE = 1e-5


def entropy(probs, axis: int = -1) -> np.ndarray:
  """-sum p log p along `axis` in nats (terms with p == 0 count 0)."""
  p = np.asarray(probs, np.float64)
  log_p = np.log(np.where(p > 0, p, 1.0))
  return -np.sum(p * log_p, axis=axis)


def kl_divergence(p, q, axis: int = -1) -> np.ndarray:
  """sum p log(p / q) along `axis` in nats; terms with p == 0 count 0 (q must be > 0 there)."""
  p = np.asarray(p, np.float64)
  q = np.asarray(q, np.float64)
  positive = p > 0
  ratio = np.where(positive, p, 1.0) / np.where(positive, q, 1.0)
  return np.sum(np.where(positive, p * np.log(ratio), 0.0), axis=axis)


def js_divergence(p, q, axis: int = -1) -> np.ndarray:
  """Jensen-Shannon divergence 0.5 KL(p || m) + 0.5 KL(q || m), m = (p + q) / 2, in nats.

  0 for identical distributions, at most log 2 (disjoint supports).
  """
  p = np.asarray(p, np.float64)
  q = np.asarray(q, np.float64)
  m = 0.5 * (p + q)
  return 0.5 * kl_divergence(p, m, axis) + 0.5 * kl_divergence(q, m, axis)


def row_correlation(p, q, axis: int = -1) -> np.ndarray:
  """Pearson correlation of each pair of probability rows along `axis`.

  Only keys with p + q > 0 take part: masked keys have probability exactly 0 in every layer
  and would otherwise make any two rows look correlated (and make the blocked and dense
  layouts disagree). NaN where either row is constant over those keys (e.g. a single key).
  """
  p = np.asarray(p, np.float64)
  q = np.asarray(q, np.float64)
  support = (p + q) > 0
  count = np.maximum(np.sum(support, axis=axis, keepdims=True), 1)
  mean_p = np.sum(np.where(support, p, 0.0), axis=axis, keepdims=True) / count
  mean_q = np.sum(np.where(support, q, 0.0), axis=axis, keepdims=True) / count
  dev_p = np.where(support, p - mean_p, 0.0)
  dev_q = np.where(support, q - mean_q, 0.0)
  var_p = np.sum(dev_p * dev_p, axis=axis)
  var_q = np.sum(dev_q * dev_q, axis=axis)
  cov = np.sum(dev_p * dev_q, axis=axis)
  n = np.squeeze(count, axis=axis)
  tol_p = (_CONSTANT_ROW_TOLERANCE * np.squeeze(mean_p, axis=axis)) ** 2 * n
  tol_q = (_CONSTANT_ROW_TOLERANCE * np.squeeze(mean_q, axis=axis)) ** 2 * n
  defined = (var_p > tol_p) & (var_q > tol_q)
  with np.errstate(invalid="ignore", divide="ignore"):
    corr = cov / np.sqrt(var_p * var_q)
  return np.where(defined, np.clip(corr, -1.0, 1.0), np.nan)


# ------------------------------------------------------------------ selecting query rows
def long_query_rows(long_probs, token_ids) -> np.ndarray:
  """Rows of the valid long queries: -> [heads, n_valid, keys], batch-major order.

  long_probs: blocked [B, heads, nb, b, K] or dense [B, heads, L, K]; token_ids [B, L].
  """
  probs = np.asarray(long_probs)
  token_ids = np.asarray(token_ids)
  batch, long_len = token_ids.shape
  if probs.ndim == 5:
    _, heads, nb, b, keys = probs.shape
    if nb * b < long_len:
      raise ValueError(f"long_probs has {nb} blocks of {b} rows, fewer than L = {long_len}")
    probs = probs.reshape(batch, heads, nb * b, keys)[:, :, :long_len]  # [B, heads, L, K]
  elif probs.ndim != 4 or probs.shape[2] != long_len:
    raise ValueError(f"long_probs must be [B, heads, nb, b, K] or [B, heads, L={long_len}, K], "
                     f"got shape {probs.shape}")
  return np.moveaxis(probs, 1, 0)[:, token_ids != 0]  # [heads, n_valid, K]


def global_query_rows(global_probs, global_token_ids) -> np.ndarray:
  """global_probs [B, heads, G, K], global_token_ids [B, G] -> [heads, n_valid, K]."""
  probs = np.asarray(global_probs)
  global_token_ids = np.asarray(global_token_ids)
  if probs.ndim != 4 or probs.shape[2] != global_token_ids.shape[1]:
    raise ValueError(f"global_probs must be [B, heads, G={global_token_ids.shape[1]}, K], "
                     f"got shape {probs.shape}")
  return np.moveaxis(probs, 1, 0)[:, global_token_ids != 0]  # [heads, n_valid, K]


def long_entropy(long_probs, token_ids) -> np.ndarray:
  """Entropy (nats) of every valid long query: -> [heads, n_valid]."""
  return entropy(long_query_rows(long_probs, token_ids))


def global_entropy(global_probs, global_token_ids) -> np.ndarray:
  """Entropy (nats) of every valid global query: -> [heads, n_valid]."""
  return entropy(global_query_rows(global_probs, global_token_ids))


# ------------------------------------------------------------ one example, dense views
def blocked_to_dense(long_probs, long_len: int) -> np.ndarray:
  """One example's blocked long probs [heads, nb, b, 3b + E] -> dense [heads, L, L + E].

  Column j < L is long token j; the E = G (+ M) global and memory slots follow unchanged.
  Blocked slots that point outside [0, L) (neighbours of the first and last blocks) are masked,
  so their zero probability is dropped; dense entries no blocked slot reaches are 0.
  """
  probs = np.asarray(long_probs)
  heads, nb, b, keys = probs.shape
  extra = keys - 3 * b
  if extra < 0 or nb * b < long_len:
    raise ValueError(f"not a blocked layout for L = {long_len}: shape {probs.shape}")
  rows = probs.reshape(heads, nb * b, keys)[:, :long_len]  # [heads, L, 3b + E]
  query = np.arange(long_len)[:, None]  # [L, 1]
  key = (query // b - 1) * b + np.arange(3 * b)[None, :]  # [L, 3b] long token of each slot
  inside = (key >= 0) & (key < long_len)
  query = np.broadcast_to(query, key.shape)
  dense = np.zeros([heads, long_len, long_len + extra], probs.dtype)
  dense[:, query[inside], key[inside]] = rows[:, :, :3 * b][:, inside]
  dense[:, :, long_len:] = rows[:, :, 3 * b:]
  return dense


def sentence_global_map(long_probs, token_ids, sentence_ids, global_len: int) -> np.ndarray:
  """Mean l2g attention of each sentence's long tokens, for one example.

  long_probs: blocked [heads, nb, b, 3b + G (+ M)] or dense [heads, L, L + G (+ M)];
  token_ids, sentence_ids: [L]. Returns [heads, S, G] with S = 1 + the largest sentence id of
  a real token: entry [h, s, g] is the mean, over the real long tokens i with
  sentence_ids[i] == s, of the probability head h of query i puts on global token g. Rows of
  sentences without a real token are NaN. Average over axis 0 for the head mean.
  """
  probs = np.asarray(long_probs)
  token_ids = np.asarray(token_ids)
  sentence_ids = np.asarray(sentence_ids)
  long_len = token_ids.shape[0]
  if probs.ndim == 4:
    heads, nb, b, keys = probs.shape
    first_global = 3 * b
    rows = probs.reshape(heads, nb * b, keys)[:, :long_len]  # [heads, L, 3b + G (+ M)]
  elif probs.ndim == 3:
    heads = probs.shape[0]
    first_global = long_len
    rows = probs
  else:
    raise ValueError(f"long_probs of one example must have rank 3 or 4, got {probs.shape}")
  to_global = rows[:, :, first_global:first_global + global_len].astype(np.float64)  # [h, L, G]
  real = token_ids != 0
  num_sentences = int(sentence_ids[real].max()) + 1 if real.any() else 0
  member = (real[:, None] & (sentence_ids[:, None] == np.arange(num_sentences)[None, :]))
  member = member.astype(np.float64)  # [L, S]
  counts = member.sum(axis=0)  # [S]
  sums = np.einsum("hlg,ls->hsg", to_global, member)  # [heads, S, G]
  with np.errstate(invalid="ignore", divide="ignore"):
    return np.where(counts[None, :, None] > 0, sums / counts[None, :, None], np.nan)


# ------------------------------------------------------------------ accumulation
@dataclasses.dataclass
class StreamStats:
  """Per-query values of one query stream (long or global), pooled over batches.

  entropy[l]: [heads, n] for layer l; js[l] and correlation[l]: [heads, n] between layers l and
  l + 1 (correlation NaN where undefined).
  """
  entropy: List[np.ndarray]
  js: List[np.ndarray]
  correlation: List[np.ndarray]


def _concat(parts: Sequence[np.ndarray], heads: int) -> np.ndarray:
  return np.concatenate(parts, axis=1) if parts else np.zeros([heads, 0])


class AttentionStatsAccumulator:
  """Collects entropies and adjacent-layer JS / correlation batch by batch.

  Only per-query scalars are kept (a few floats per query, head and layer); the probability
  tensors of a batch can be dropped once `add` returns.
  """

  def __init__(self):
    self._parts = None  # stream -> kind -> layer -> list of [heads, n] arrays
    self.num_layers = 0
    self.num_heads = 0
    self.num_examples = 0

  def add(self, attention: Sequence[Dict[str, np.ndarray]], token_ids, global_token_ids):
    """attention: one dict per layer with long_probs and global_probs (NumPy) for a batch."""
    if self._parts is None:
      self.num_layers = len(attention)
      self.num_heads = int(np.shape(attention[0]["long_probs"])[1]) if attention else 0
      self._parts = {s: {k: [[] for _ in range(self.num_layers)]
                         for k in ("entropy", "js", "correlation")} for s in ("long", "global")}
    elif len(attention) != self.num_layers:
      raise ValueError(f"got {len(attention)} layers, expected {self.num_layers}")
    self.num_examples += int(np.shape(token_ids)[0])
    previous = {}
    for layer, probs in enumerate(attention):
      rows = {"long": long_query_rows(probs["long_probs"], token_ids),
              "global": global_query_rows(probs["global_probs"], global_token_ids)}
      for stream, current in rows.items():
        parts = self._parts[stream]
        parts["entropy"][layer].append(entropy(current))
        if layer:
          parts["js"][layer - 1].append(js_divergence(previous[stream], current))
          parts["correlation"][layer - 1].append(row_correlation(previous[stream], current))
      previous = rows

  def result(self) -> Dict[str, StreamStats]:
    """-> {"long": StreamStats, "global": StreamStats}."""
    out = {}
    pairs = max(self.num_layers - 1, 0)
    for stream in ("long", "global"):
      parts = self._parts[stream] if self._parts else None
      if parts is None:
        out[stream] = StreamStats([], [], [])
        continue
      out[stream] = StreamStats(
          entropy=[_concat(p, self.num_heads) for p in parts["entropy"]],
          js=[_concat(p, self.num_heads) for p in parts["js"][:pairs]],
          correlation=[_concat(p, self.num_heads) for p in parts["correlation"][:pairs]])
    return out


# ------------------------------------------------------------------ summaries
def _mean(values) -> Optional[float]:
  """NaN-ignoring mean as a Python float (None when no value is defined)."""
  values = np.asarray(values, np.float64)
  finite = values[np.isfinite(values)]
  return float(finite.mean()) if finite.size else None


def _per_head_mean(values) -> List[Optional[float]]:
  """[heads, n] -> per-head NaN-ignoring means."""
  return [_mean(row) for row in np.asarray(values, np.float64)]


def summarize(stats: Dict[str, StreamStats]) -> Dict[str, list]:
  """Means for the report: {"layers": [...], "adjacent_layers": [...]}.

  layers[l][stream] = {mean_entropy, mean_entropy_per_head, num_queries} and
  adjacent_layers[l][stream] = {js_divergence(_per_head), correlation(_per_head), num_queries,
  num_correlation_queries_per_head} for the layer pair (l, l + 1); stream is "long" or
  "global". num_queries counts queries (over the batch), not query-head pairs; the correlation
  leaves out queries whose rows are constant (see row_correlation), hence its own counts.
  """
  num_layers = len(stats["long"].entropy)
  layers = []
  for layer in range(num_layers):
    entry = {"layer": layer}
    for stream, s in stats.items():
      values = s.entropy[layer]  # [heads, n]
      entry[stream] = {"mean_entropy": _mean(values),
                       "mean_entropy_per_head": _per_head_mean(values),
                       "num_queries": int(values.shape[1])}
    layers.append(entry)
  adjacent = []
  for layer in range(max(num_layers - 1, 0)):
    entry = {"layers": [layer, layer + 1]}
    for stream, s in stats.items():
      js, corr = s.js[layer], s.correlation[layer]  # [heads, n] each
      entry[stream] = {"js_divergence": _mean(js),
                       "js_divergence_per_head": _per_head_mean(js),
                       "correlation": _mean(corr),
                       "correlation_per_head": _per_head_mean(corr),
                       "num_queries": int(js.shape[1]),
                       "num_correlation_queries_per_head":
                           [int(n) for n in np.sum(np.isfinite(corr), axis=1)]}
    adjacent.append(entry)
  return {"layers": layers, "adjacent_layers": adjacent}
