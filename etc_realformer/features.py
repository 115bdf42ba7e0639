"""Model input features: names, expected shapes and validation with errors that name the feature.

Features follow the ETC names (docs/model_inputs.md, "Input features"): `token_ids` [B, L]
and `global_token_ids` [B, G] are required; everything else is optional:
  segment_ids [B, L], global_segment_ids [B, G]          (default 1 for long tokens and 0 for
                                                          global tokens, as in official ETC)
  position_ids [B, L], global_position_ids [B, G]        (absolute positions, only with
                                                          max_absolute_position_embeddings > 0;
                                                          default 0..L-1 / 0..G-1)
  long_breakpoints [B, L], global_breakpoints [B, G]     (default: one example per row, the
                                                          non-zero token ids)
  sentence_ids [B, L]                                    (owner global token of each long token)
  long_paragraph_ids [B, L], global_paragraph_ids [B, G] (multi-hop contexts; 0 = shared)
  ignore_hard_g2l_mask [B, G]                            (global tokens exempt from hard g2l)
  l2g_linked_ids [B, L]                                  (global token a long token is linked
                                                          to, -1 = none)
  the eight side inputs of ops.SIDE_INPUT_NAMES          (given together, they replace the derived ones)
Keys the model does not know (labels, ids) are ignored so one tf.data dict can feed model and loss.
"""

from typing import Dict, Mapping

import numpy as np
import tensorflow as tf

from etc_realformer.config import EtcConfig
from etc_realformer.ops import SIDE_INPUT_NAMES

# feature -> (second axis, third axis) in terms of "L", "G", "W" (2r+1); None = no third axis.
FEATURE_SHAPES = {
    "token_ids": ("L", None),
    "global_token_ids": ("G", None),
    "segment_ids": ("L", None),
    "global_segment_ids": ("G", None),
    "long_breakpoints": ("L", None),
    "global_breakpoints": ("G", None),
    "sentence_ids": ("L", None),
    "position_ids": ("L", None),
    "global_position_ids": ("G", None),
    "long_paragraph_ids": ("L", None),
    "global_paragraph_ids": ("G", None),
    "ignore_hard_g2l_mask": ("G", None),
    "l2g_linked_ids": ("L", None),
    "l2l_att_mask": ("L", "W"), "l2l_relative_att_ids": ("L", "W"),
    "g2g_att_mask": ("G", "G"), "g2g_relative_att_ids": ("G", "G"),
    "l2g_att_mask": ("L", "G"), "l2g_relative_att_ids": ("L", "G"),
    "g2l_att_mask": ("G", "L"), "g2l_relative_att_ids": ("G", "L"),
}


def _value_ranges(config: EtcConfig, global_len):
  """feature -> (low, high exclusive, what the range is)."""
  ranges = {
      "token_ids": (0, config.vocab_size, "vocab_size"),
      "global_token_ids": (0, config.vocab_size, "vocab_size"),
      "segment_ids": (0, config.segment_vocab_size, "segment_vocab_size"),
      "global_segment_ids": (0, config.segment_vocab_size, "segment_vocab_size"),
  }
  if config.max_absolute_position_embeddings:
    for name in ("position_ids", "global_position_ids"):
      ranges[name] = (0, config.max_absolute_position_embeddings,
                      "max_absolute_position_embeddings")
  if global_len is not None:
    ranges["sentence_ids"] = (-1, global_len, "-1 (no owner) or a global token index")
    ranges["l2g_linked_ids"] = (-1, global_len, "-1 or a global token index")
  if config.relative_vocab_size:
    for name in SIDE_INPUT_NAMES:
      if name.endswith("relative_att_ids"):
        ranges[name] = (0, config.relative_vocab_size, "relative_vocab_size")
  ranges["ignore_hard_g2l_mask"] = (0, 2, "0/1 values")
  for name in SIDE_INPUT_NAMES:
    if name.endswith("att_mask"):
      ranges[name] = (0, 2, "0/1 mask values")
  return ranges


def check_features(features: Mapping[str, tf.Tensor], config: EtcConfig) -> Dict[str, tf.Tensor]:
  """Validates the features the model reads and returns them as int32 tensors.

  Static problems (missing feature, wrong rank, batch or length mismatch) raise ValueError at
  once. Value ranges are checked eagerly with a ValueError, and inside a graph with
  tf.debugging assertions whose message names the feature (no-ops under XLA).
  """
  if not isinstance(features, Mapping):
    raise ValueError(f"EtcModel expects a dict of features, got {type(features).__name__}.")
  for name in ("token_ids", "global_token_ids"):
    if name not in features:
      raise ValueError(f"Feature {name!r} is missing (features given: {sorted(features)}).")
  given_side = [n for n in SIDE_INPUT_NAMES if n in features]
  needed_side = [n for n in SIDE_INPUT_NAMES
                 if n.endswith("att_mask") or config.relative_vocab_size]
  missing = sorted(set(needed_side) - set(given_side))
  if given_side and missing:
    raise ValueError(f"Side inputs are given only in part: missing {missing}. Give all of them "
                     "or none (then they are derived from breakpoints and sentence_ids).")

  out = {}
  for name in FEATURE_SHAPES:
    if name not in features or features[name] is None:
      continue
    value = features[name]
    if not isinstance(value, (tf.Tensor, tf.Variable, np.ndarray)):
      value = np.asarray(value)
    if not (value.dtype.is_integer if isinstance(value, (tf.Tensor, tf.Variable))
            else np.issubdtype(value.dtype, np.integer) or value.dtype == np.bool_):
      raise ValueError(f"Feature {name!r} must hold integers, got dtype {value.dtype}.")
    out[name] = tf.cast(value, tf.int32) if value.dtype != tf.int32 else tf.convert_to_tensor(value)

  lengths = {"L": out["token_ids"].shape[1] if out["token_ids"].shape.rank == 2 else None,
             "G": (out["global_token_ids"].shape[1]
                   if out["global_token_ids"].shape.rank == 2 else None),
             "W": 2 * config.local_radius + 1}
  batch = out["token_ids"].shape[0] if out["token_ids"].shape.rank else None
  if config.max_absolute_position_embeddings:
    for name, symbol in (("token_ids", "L"), ("global_token_ids", "G")):
      if lengths[symbol] is not None and lengths[symbol] > config.max_absolute_position_embeddings:
        raise ValueError(
            f"Feature {name!r} has length {lengths[symbol]} but the absolute position tables have "
            f"max_absolute_position_embeddings = {config.max_absolute_position_embeddings} rows.")
  for name, value in out.items():
    axis1, axis2 = FEATURE_SHAPES[name]
    rank = 2 if axis2 is None else 3
    if value.shape.rank is not None and value.shape.rank != rank:
      raise ValueError(f"Feature {name!r} must have rank {rank} ([batch, {axis1}"
                       f"{', ' + axis2 if axis2 else ''}]), got shape {value.shape}.")
    dims = [value.shape[0], value.shape[1]] + ([value.shape[2]] if axis2 else [])
    if batch is not None and dims[0] is not None and dims[0] != batch:
      raise ValueError(f"Feature {name!r} has batch size {dims[0]} but token_ids has {batch}.")
    for got, symbol in zip(dims[1:], (axis1, axis2)):
      want = lengths.get(symbol)
      if got is not None and want is not None and got != want:
        what = {"L": "the long length (token_ids)", "G": "the global length (global_token_ids)",
                "W": f"2 * local_radius + 1 = {want}"}[symbol]
        raise ValueError(f"Feature {name!r} has shape {value.shape}: its {symbol} axis must equal "
                         f"{what} = {want}, got {got}.")

  for name, (low, high, what) in _value_ranges(config, lengths["G"]).items():
    if name not in out:
      continue
    value = out[name]
    if tf.executing_eagerly():
      array = value.numpy()
      if array.size and (array.min() < low or array.max() >= high):
        bad = array[(array < low) | (array >= high)][0]
        raise ValueError(f"Feature {name!r} has value {bad} outside [{low}, {high}) ({what}).")
    else:
      # One min and one max per feature, not an element-wise comparison per bound: the checks
      # of WikiHop's [B, G, L] side inputs were 2% of its demo's training step.
      low_seen, high_seen = tf.reduce_min(value), tf.reduce_max(value)  # scalars
      in_range = tf.logical_and(low_seen >= low, high_seen < high)  # (true for no values)
      with tf.control_dependencies([tf.debugging.Assert(in_range, [
          f"Feature {name!r} has values outside [{low}, {high}) ({what}); its smallest and "
          "largest values:", low_seen, high_seen])]):
        out[name] = tf.identity(value)
  return out
