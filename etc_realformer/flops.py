"""Analytic floating-point operation counts of the encoder (one multiply-add = 2 FLOPs).

Counted: every matrix product of the forward pass, as this package computes it. For the
blocked long-to-long attention that includes the wasted slots: each query is scored against the
3b keys of its three neighbouring blocks (b = local_radius + 1) although only 2r + 1 are inside
its window, and the long axis is padded up to whole blocks. `useful_*` entries count only the
2r + 1 window keys of the L real queries, so `blocked_waste` is the share of attention products
spent on slots the mask throws away. Relative positions are counted as computed here: the
per-id table q.a (Q x R per head) and the one-hot lookups of the long-to-long and
global-to-global ids (Q x K x R per head; the long-to-long one is a product with the window's
one-hot matrix, Q x (3b + 1) x R, counted as Q x 3b x R). The long-to-global and
global-to-long ids of ETC's side inputs hold two values, which ops/lookup.py selects
element-wise, so those lookups are not counted. Element-wise work (softmax, LayerNorm, GELU,
masks, selects) is not counted; it is memory-bound, not FLOP-bound.

A training step is counted as 3x the forward pass (the backward pass runs two products of the
same size for each forward product). With `grad_checkpointing_period` > 0 the backward pass also
runs every layer's forward pass again (tf.recompute_grad), so the work actually executed is 4x
the forward pass (`training_step_executed`); `training_step` stays the model's own count, the
one utilisation figures are usually quoted against.
"""

from typing import Dict

from etc_realformer.config import EtcConfig
from etc_realformer.layers.global_local_attention import input_stream, projection_names


def layer_forward_flops(config: EtcConfig, long_len: int, global_len: int,
                        implementation: str = "blocked") -> Dict[str, float]:
  """FLOPs of one encoder layer's forward pass for ONE example, by part."""
  hidden = config.hidden_size
  heads = config.num_attention_heads
  head_size = config.att_size_per_head or hidden // heads
  inner = heads * head_size  # width of the attention products
  length, glen = long_len, global_len
  r = config.local_radius
  b = r + 1
  padded = -(-length // b) * b  # long axis padded to whole blocks
  memory = config.num_persistent_memory
  rel_vocab = config.relative_vocab_size or 0

  # Projections: one matmul per distinct weight per input stream.
  names = projection_names(config.share_qkv_projections, config.share_kv_projections)
  per_stream = {"long": set(), "global": set()}
  for key, name in names.items():
    per_stream[input_stream(key)].add(name)
  rows = {"long": length, "global": glen}
  parts = {"projections": sum(2.0 * rows[s] * hidden * inner * len(n)
                              for s, n in per_stream.items())}

  if implementation == "blocked":
    queries = padded
    l2l_keys = 3 * b
  else:
    queries = length
    l2l_keys = length
  # Scores and the probability-weighted sum of values: two products of the same size.
  parts["l2l"] = 2 * (2.0 * queries * l2l_keys * inner)
  parts["l2g"] = 2 * (2.0 * queries * glen * inner)
  parts["g2g"] = 2 * (2.0 * glen * glen * inner)
  parts["g2l"] = 2 * (2.0 * glen * length * inner)
  parts["memory"] = 2 * (2.0 * (queries + glen) * memory * inner)
  if rel_vocab:
    # Per-id tables: once per distinct query tensor of each path.
    long_tables = 1 if names["l2l_q"] == names["l2g_q"] else 2
    global_tables = 1 if names["g2g_q"] == names["g2l_q"] else 2
    parts["relative"] = (2.0 * (long_tables * queries + global_tables * glen) * inner * rel_vocab +
                         2.0 * heads * rel_vocab * (queries * l2l_keys + glen * glen))
  else:
    parts["relative"] = 0.0
  parts["output_projection"] = 2.0 * (length + glen) * inner * hidden
  parts["feed_forward"] = (2 * (2.0 * (length + glen) * hidden * config.intermediate_size)
                           if config.use_feed_forward else 0.0)
  parts["useful_l2l"] = 2 * (2.0 * length * (2 * r + 1) * inner)
  return parts


def encoder_flops(config: EtcConfig, long_len: int, global_len: int, batch_size: int = 1,
                  implementation: str = "blocked") -> Dict[str, float]:
  """Forward and training-step FLOPs of the whole encoder (all layers, the whole batch).

  Returns per-part forward totals (`forward_<part>`), `forward`, `training_step` (3x forward),
  `training_step_executed` (4x forward with gradient checkpointing, which recomputes the forward
  pass during the backward pass; else 3x) and `blocked_waste` (the share of l2l products spent
  outside the windows).
  """
  per_layer = layer_forward_flops(config, long_len, global_len, implementation)
  scale = batch_size * config.num_hidden_layers
  out = {f"forward_{k}": v * scale for k, v in per_layer.items() if k != "useful_l2l"}
  out["forward"] = sum(out.values())
  out["training_step"] = 3 * out["forward"]
  out["training_step_executed"] = (4 if config.grad_checkpointing_period else 3) * out["forward"]
  out["blocked_waste"] = 1.0 - per_layer["useful_l2l"] / per_layer["l2l"]
  return out


def full_attention_layer_flops(hidden: int, heads: int, intermediate: int, tokens: int) -> float:
  """Forward FLOPs of one standard Transformer layer over `tokens` tokens (full attention)."""
  del heads  # the products do not depend on how the width is split into heads
  return (2.0 * tokens * hidden * hidden * 3 + 2 * (2.0 * tokens * tokens * hidden) +
          2.0 * tokens * hidden * hidden + 2 * (2.0 * tokens * hidden * intermediate))


def mlm_head_flops(config: EtcConfig, num_predictions: int, batch_size: int = 1) -> float:
  """Forward FLOPs of the MLM head: transform (hidden x hidden) and the tied output layer."""
  width = config.embedding_size or config.hidden_size
  return batch_size * num_predictions * (2.0 * config.hidden_size * width +
                                         2.0 * width * config.vocab_size)
