"""Google's ETC checkpoints <-> EtcModel weights.

Google's released ETC checkpoints (`etc_base_2x_pretrain`, `etc_large`, ...) are TF1 name-based
checkpoints whose variables live under `etc_document_bert/` (the two absolute position tables,
when the model has them, are named without that prefix). This module pairs every such name with
the EtcModel variable that holds the same numbers:

  official                                              here
  token_emb_lookup/embedding_table [V, E]               embeddings.token_table [V, E]
  token_emb_lookup/projection/{kernel,bias}             embeddings.projection (E < hidden only)
  segment_emb_lookup/embedding_table [S, H]             embeddings.segment_table
  position_emb_lookup_{long,global}/embedding_table     embeddings.position_tables[stream]
  {long,global}_emb_layer_norm/{gamma,beta}             embeddings.norms[stream]
  .../fused_att_layer_i/fused_global_local_att/
      <name>_projection/linear/kernel [H, heads*d]      attention.projection_kernels [H, heads, d]
      <name>_projection/linear/bias [heads*d]           attention.projection_biases [heads, d]
      {long,global}_output_projection/kernel [heads*d, H]  attention.output_kernels [heads, d, H]
      long_qkv_attention/qkv_relative_attention/relative_{emb,bias}_table   relative_tables["long"]
      global_qkv_attention/relative_{emb,bias}_table    relative_tables["global"]
  .../fused_att_layer_i/layer_norm_{0,1}                attention_norms[long, global]
  .../[{long,global}_]feed_forward_layer_i/dense_layers/layer_{0,1}   FeedForward inner/outer
  .../[{long,global}_]feed_forward_layer_i/layer_norm   feed_forward_norms

Every pair differs at most by a reshape (heads split or merged); nothing is scaled or transposed
(the 1/sqrt(d) of the attention logits is applied at run time, as the official code does).
"""

import dataclasses
import os
from typing import Dict, List, Optional, Sequence, Tuple

from absl import logging
import numpy as np
import tensorflow as tf

PREFIX = "etc_document_bert"
_LAYERS = f"{PREFIX}/global_local_transformer_layers"
# Official name of each projection weight of GlobalLocalAttention (see projection_names).
_PROJECTION_NAMES = {
    "long_q": "long_query_projection", "global_q": "global_query_projection",
    "l2l_k": "l2l_key_projection", "l2g_k": "l2g_key_projection",
    "g2g_k": "g2g_key_projection", "g2l_k": "g2l_key_projection",
    "l2l_v": "l2l_value_projection", "l2g_v": "l2g_value_projection",
    "g2g_v": "g2g_value_projection", "g2l_v": "g2l_value_projection",
}
_RELATIVE_SCOPES = {"long": "long_qkv_attention/qkv_relative_attention",
                    "global": "global_qkv_attention"}
# Training state that a checkpoint may hold next to the weights; never part of the model.
_OPTIMIZER_SUFFIXES = ("/adam_m", "/adam_v", "/lamb_m", "/lamb_v", "/Momentum",
                       "/ExponentialMovingAverage", "/Adam", "/Adam_1")
_BOOKKEEPING = ("global_step", "_CHECKPOINTABLE_OBJECT_GRAPH")


@dataclasses.dataclass
class WeightLink:
  """One official checkpoint variable and the EtcModel variable with the same numbers."""
  name: str                              # the official name (the one written)
  variable: tf.Variable                  # the EtcModel weight
  official_shape: Tuple[int, ...]        # its shape in the official checkpoint
  aliases: Tuple[str, ...] = ()          # other names the official code may have used

  def to_official(self, value: np.ndarray) -> np.ndarray:
    return np.reshape(value, self.official_shape)

  def to_model(self, value: np.ndarray) -> np.ndarray:
    return np.reshape(value, self.variable.shape)


def _shape(variable) -> Tuple[int, ...]:
  return tuple(int(d) for d in variable.shape)


def _dense_links(scope: str, dense) -> List[WeightLink]:
  return [WeightLink(f"{scope}/kernel", dense.kernel, _shape(dense.kernel)),
          WeightLink(f"{scope}/bias", dense.bias, _shape(dense.bias))]


def _norm_links(scope: str, norm) -> List[WeightLink]:
  return [WeightLink(f"{scope}/gamma", norm.gamma, _shape(norm.gamma)),
          WeightLink(f"{scope}/beta", norm.beta, _shape(norm.beta))]


def _embedding_links(embeddings) -> List[WeightLink]:
  links = [WeightLink(f"{PREFIX}/token_emb_lookup/embedding_table", embeddings.token_table,
                      _shape(embeddings.token_table)),
           WeightLink(f"{PREFIX}/segment_emb_lookup/embedding_table", embeddings.segment_table,
                      _shape(embeddings.segment_table))]
  if embeddings.projection is not None:
    links += _dense_links(f"{PREFIX}/token_emb_lookup/projection", embeddings.projection)
  for stream, table in embeddings.position_tables.items():
    # The official model creates these tables outside its name scope.
    name = f"position_emb_lookup_{stream}/embedding_table"
    links.append(WeightLink(name, table, _shape(table), aliases=(f"{PREFIX}/{name}",)))
  for stream in ("long", "global"):
    links += _norm_links(f"{PREFIX}/{stream}_emb_layer_norm", embeddings.norms[stream])
  return links


def _attention_links(scope: str, attention) -> List[WeightLink]:
  heads, d, hidden = attention.num_attention_heads, attention.head_size, attention.hidden_size
  links = []
  for name in sorted(attention.projection_kernels):
    official = f"{scope}/{_PROJECTION_NAMES[name]}/linear"
    links.append(WeightLink(f"{official}/kernel", attention.projection_kernels[name],
                            (hidden, heads * d)))
    links.append(WeightLink(f"{official}/bias", attention.projection_biases[name], (heads * d,)))
  for name in sorted(attention.output_kernels):
    official = f"{scope}/{name[:-len('_out')]}_output_projection"
    links.append(WeightLink(f"{official}/kernel", attention.output_kernels[name],
                            (heads * d, hidden)))
    links.append(WeightLink(f"{official}/bias", attention.output_biases[name], (hidden,)))
  for path, (emb, bias) in sorted(attention.relative_tables.items()):
    links.append(WeightLink(f"{scope}/{_RELATIVE_SCOPES[path]}/relative_emb_table", emb,
                            _shape(emb)))
    links.append(WeightLink(f"{scope}/{_RELATIVE_SCOPES[path]}/relative_bias_table", bias,
                            _shape(bias)))
  return links


def _block_links(index: int, block) -> List[WeightLink]:
  layer = f"{_LAYERS}/fused_att_layer_{index}"
  links = _attention_links(f"{layer}/fused_global_local_att", block.attention)
  links += _norm_links(f"{layer}/layer_norm_0", block.attention_norms["long"])
  links += _norm_links(f"{layer}/layer_norm_1", block.attention_norms["global"])
  shared = block.feed_forwards.get("long") is block.feed_forwards.get("global")
  for stream in (("long",) if shared else ("long", "global")):
    if stream not in block.feed_forwards:
      continue
    scope = f"{_LAYERS}/{'' if shared else stream + '_'}feed_forward_layer_{index}"
    feed_forward = block.feed_forwards[stream]
    links += _dense_links(f"{scope}/dense_layers/layer_0", feed_forward.inner)
    links += _dense_links(f"{scope}/dense_layers/layer_1", feed_forward.outer)
    links += _norm_links(f"{scope}/layer_norm", block.feed_forward_norms[stream])
  return links


def weight_links(model) -> List[WeightLink]:
  """Every official variable name of `model` (a built EtcModel), paired with its weight."""
  links = _embedding_links(model.embeddings)
  for index, block in enumerate(model.blocks):
    links += _block_links(index, block)
  return links


def _is_training_state(name: str) -> bool:
  return name in _BOOKKEEPING or name.endswith(_OPTIMIZER_SUFFIXES)


def _is_encoder_name(name: str) -> bool:
  return name.startswith(PREFIX + "/") or name.startswith("position_emb_lookup_")


def _format(names_shapes: Sequence[Tuple[str, Sequence[int]]]) -> str:
  return "\n".join(f"    {name} {list(shape)}" for name, shape in names_shapes)


def match_weights(model, shapes: Dict[str, Sequence[int]], source: str):
  """Pairs the checkpoint variables `shapes` ({name: shape}) with the model's weights.

  Returns ([(link, checkpoint name)], [ignored names]). Raises ValueError listing, with their
  shapes, every model weight the checkpoint does not fill, every encoder variable the model does
  not use, and every pair whose shapes differ. Names outside the encoder (training state such as
  global_step or optimizer slots, pretraining heads) are returned as ignored.
  """
  pairs, unfilled, mismatched, used = [], [], [], set()
  for link in weight_links(model):
    found = next((n for n in (link.name,) + link.aliases if n in shapes), None)
    if found is None:
      unfilled.append((link.name, link.official_shape))
      continue
    used.add(found)
    if tuple(shapes[found]) != tuple(link.official_shape):
      mismatched.append((found, shapes[found], link.official_shape))
      continue
    pairs.append((link, found))
  unused = [(n, s) for n, s in sorted(shapes.items())
            if n not in used and _is_encoder_name(n) and not _is_training_state(n)]
  ignored = sorted(n for n in shapes if n not in used and (n, shapes[n]) not in unused)
  problems = []
  if unfilled:
    problems.append(f"  model weights the checkpoint does not have ({len(unfilled)}):\n" +
                    _format(unfilled))
  if unused:
    problems.append(f"  checkpoint variables the model does not use ({len(unused)}):\n" +
                    _format(unused))
  if mismatched:
    problems.append(f"  shapes that differ ({len(mismatched)}, checkpoint vs model):\n" +
                    "\n".join(f"    {n} {list(a)} vs {list(b)}" for n, a, b in mismatched))
  if problems:
    config = model.etc_config
    raise ValueError(
        f"{source}: the checkpoint does not match the model built from its config "
        f"(num_hidden_layers={config.num_hidden_layers}, hidden_size={config.hidden_size}, "
        f"relative_vocab_size={config.relative_vocab_size}, share_qkv_projections="
        f"{config.share_qkv_projections}, share_kv_projections={config.share_kv_projections}, "
        f"share_feed_forward_params={config.share_feed_forward_params}, "
        f"share_att_output_projection={config.share_att_output_projection}, "
        f"embedding_size={config.embedding_size}, max_absolute_position_embeddings="
        f"{config.max_absolute_position_embeddings}):\n" + "\n".join(problems))
  return pairs, ignored


def is_official_checkpoint(prefix: str) -> bool:
  """True when `prefix` names a TF checkpoint holding official ETC variable names."""
  if not tf.io.gfile.exists(prefix + ".index"):
    return False
  return any(_is_encoder_name(name) for name, _ in tf.train.list_variables(prefix))


def resolve_prefix(path: str) -> str:
  """A checkpoint prefix from a prefix or a folder holding `model.ckpt.*`."""
  for candidate in (path, os.path.join(path, "model.ckpt")):
    if tf.io.gfile.exists(candidate + ".index"):
      return candidate
  raise FileNotFoundError(f"{path}: no TF checkpoint there (expected <prefix>.index, e.g. "
                          "etc_base_2x_pretrain/model.ckpt)")


def load_official_weights(model, checkpoint_prefix: str) -> List[str]:
  """Fills every weight of the built EtcModel `model` from an official checkpoint.

  Returns the checkpoint names that are not part of the encoder (ignored, and logged).
  """
  prefix = resolve_prefix(checkpoint_prefix)
  reader = tf.train.load_checkpoint(prefix)
  pairs, ignored = match_weights(model, reader.get_variable_to_shape_map(), prefix)
  for link, name in pairs:
    link.variable.assign(link.to_model(reader.get_tensor(name)))
  if ignored:
    logging.info("%s: %d variables outside the encoder were not loaded (e.g. %s)", prefix,
                 len(ignored), ", ".join(ignored[:3]))
  logging.info("loaded %d official ETC weights from %s", len(pairs), prefix)
  return ignored


def official_weights(model) -> Dict[str, np.ndarray]:
  """The model's weights under their official names and shapes."""
  return {link.name: link.to_official(link.variable.numpy()) for link in weight_links(model)}


def write_official_checkpoint(weights: Dict[str, np.ndarray], prefix: str) -> str:
  """Writes {official name: array} as a name-based TF checkpoint at `prefix`; returns it.

  The files are written under a temporary prefix in the same folder and renamed into place,
  so an interrupted write never leaves a half-written checkpoint under `prefix`.
  """
  directory = os.path.dirname(os.path.abspath(prefix))
  os.makedirs(directory, exist_ok=True)
  names = sorted(weights)
  tmp = os.path.join(directory, f".{os.path.basename(prefix)}-tmp")
  tf.raw_ops.SaveV2(prefix=tmp, tensor_names=names, shape_and_slices=[""] * len(names),
                    tensors=[tf.constant(weights[n]) for n in names])
  for path in tf.io.gfile.glob(tmp + ".*"):
    os.replace(path, prefix + path[len(tmp):])
  return prefix


def read_official_config(checkpoint_prefix: str, config_file: Optional[str] = None,
                         **overrides):
  """The EtcConfig of an official checkpoint: `config_file` or the etc_config.json beside it.

  This package's extras are off unless `overrides` turn them on (residual_attention "none").
  """
  from etc_realformer.config import EtcConfig  # pylint: disable=g-import-not-at-top
  path = config_file or os.path.join(os.path.dirname(checkpoint_prefix), "etc_config.json")
  if not os.path.exists(path):
    raise FileNotFoundError(f"{path}: no etc_config.json next to the checkpoint "
                            f"{checkpoint_prefix} (pass config_file=...)")
  values = EtcConfig.from_json_file(path).to_dict()
  values["residual_attention"] = "none"
  values.update(overrides)
  return EtcConfig.from_dict(values, source=f"{path} with overrides {sorted(overrides)}")
