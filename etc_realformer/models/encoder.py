"""EtcModel: the ETC-RealFormer encoder built from an EtcConfig."""

from typing import Any, Dict, Union

import tensorflow as tf
import tf_keras

from etc_realformer import features as features_lib
from etc_realformer import ops
from etc_realformer.config import EtcConfig
from etc_realformer.layers import EtcEmbeddings, TransformerBlock
from etc_realformer.autograph import without_autograph
from etc_realformer.layers.global_local_attention import joined
from etc_realformer.layers.scopes import build_in_scope
from etc_realformer.ops import dropout as dropout_ops


class EtcModel(tf_keras.Model):
  """ETC encoder with RealFormer residual attention.

  Input: a dict of features (see etc_realformer.features). Output: a dict with
  `long_output` [B, L, hidden] and `global_output` [B, G, hidden]; with
  return_attention_scores=True also `attention`: one dict per layer with `long_probs`
  (blocked layout [B, heads, nb, r+1, 3(r+1)+G(+M)], or [B, heads, L, L+G(+M)] for the dense
  implementation), `global_probs` [B, heads, G, G+L(+M)] and the carried residual scores.

  Args:
    config: an EtcConfig or a dict of its fields.
    implementation: "blocked" (linear in L) or "dense" (the O(L^2) reference path).
  """

  def __init__(self, config: Union[EtcConfig, Dict[str, Any]], implementation: str = "blocked",
               **kwargs):
    super().__init__(**kwargs)
    self.etc_config = config = EtcConfig.coerce(config)
    self.implementation = implementation
    self.embeddings = EtcEmbeddings(
        vocab_size=config.vocab_size, hidden_size=config.hidden_size,
        segment_vocab_size=config.segment_vocab_size, embedding_size=config.embedding_size,
        max_absolute_position_embeddings=config.max_absolute_position_embeddings,
        hidden_dropout_prob=config.hidden_dropout_prob,
        initializer_range=config.initializer_range, name="embeddings")
    self.blocks = [TransformerBlock.from_etc_config(config, layer_index=i,
                                                   implementation=implementation,
                                                   name=f"layer_{i}")
                   for i in range(config.num_hidden_layers)]

  @classmethod
  def from_official_checkpoint(cls, checkpoint_prefix: str, config_file: str = None,
                               implementation: str = "blocked", **config_overrides):
    """Builds the model of a Google ETC checkpoint and loads every weight.

    Args:
      checkpoint_prefix: e.g. `etc_base_2x_pretrain/model.ckpt` (or the folder holding it).
      config_file: the official etc_config.json; default: the one next to the checkpoint.
      implementation: "blocked" or "dense".
      **config_overrides: EtcConfig fields to change, e.g. use_hard_g2l_mask=True, or
        residual_attention="sum" (a research option: the released weights were trained
        without residual attention).

    Raises:
      ValueError: listing, with shapes, the checkpoint variables the model does not use and
        the model weights the checkpoint does not fill.
    """
    from etc_realformer.models import official_checkpoint  # pylint: disable=g-import-not-at-top
    prefix = official_checkpoint.resolve_prefix(checkpoint_prefix)
    config = official_checkpoint.read_official_config(prefix, config_file, **config_overrides)
    model = cls(config, implementation=implementation)
    model.build()
    official_checkpoint.load_official_weights(model, prefix)
    return model

  @classmethod
  def from_bert_checkpoint(cls, prefix_or_folder: str, config_file: str = None,
                           implementation: str = "blocked", position_embeddings: str = "copy",
                           global_token_init: str = "cls", **overrides):
    """Builds an ETC encoder with the shape of a pretrained BERT and lifts its weights in.

    Args:
      prefix_or_folder: Google's TF BERT (`bert_model.ckpt` or its folder, variables under
        `bert/`) or Hugging Face files (a folder with model.safetensors and config.json, BERT
        or RoBERTa).
      config_file: BERT's config; default: bert_config.json (config.json) beside the weights.
      implementation: "blocked" or "dense".
      position_embeddings: "copy" keeps BERT's absolute positions (repeated when
        max_absolute_position_embeddings is overridden past BERT's); "drop" gives a purely
        relative model.
      global_token_init: "cls" starts the global-token rows (ids 1..5) from [CLS] / [MASK]
        when they are unused slots of the vocabulary; "keep" leaves BERT's rows.
      **overrides: EtcConfig fields, e.g. local_radius=..., residual_attention="sum" (the
        default "none" reproduces BERT; "sum" changes the function from the second layer on).

    The lifting report (mapped and skipped variables, BERT's pooler) is `model.lift_report`
    (etc_realformer.models.bert_lifting.LiftReport).

    Raises:
      ValueError: naming the file and the variables, for a missing variable, an unused one or
        a shape that differs.
    """
    from etc_realformer.models import bert_lifting  # pylint: disable=g-import-not-at-top
    weights = bert_lifting.open_bert(prefix_or_folder, config_file)
    config = bert_lifting.etc_config_from_bert(weights.config, position_embeddings,
                                               source=weights.source, **overrides)
    bert_lifting.check_compatible(weights.config, config, weights.source)
    model = cls(config, implementation=implementation)
    model.build()
    model.lift_report = bert_lifting.lift_weights(model, weights, global_token_init)
    return model

  def build(self, input_shape=None):
    build_in_scope(self.embeddings, None)
    for block in self.blocks:
      build_in_scope(block, None)
    # Model.build would trace call() with float placeholders; the weights are all made above.
    self.built = True

  def side_inputs(self, features: Dict[str, tf.Tensor]) -> Dict[str, tf.Tensor]:
    """The eight side inputs: given in `features`, or derived from breakpoints/sentence_ids."""
    config = self.etc_config
    if "l2l_att_mask" in features:
      return {name: features[name] for name in ops.SIDE_INPUT_NAMES if name in features}
    if "long_breakpoints" in features:
      long_ids = ops.example_ids_from_breakpoints(features["long_breakpoints"])
    else:
      long_ids = ops.example_ids_from_token_ids(features["token_ids"])
    if "global_breakpoints" in features:
      global_ids = ops.example_ids_from_breakpoints(features["global_breakpoints"])
    else:
      global_ids = ops.example_ids_from_token_ids(features["global_token_ids"])
    try:
      return ops.make_side_inputs(
          long_ids, global_ids, features.get("sentence_ids"), config.local_radius,
          config.relative_pos_max_distance, use_hard_g2l_mask=config.use_hard_g2l_mask,
          use_hard_l2g_mask=config.use_hard_l2g_mask,
          use_relative_ids=bool(config.relative_vocab_size),
          long_paragraph_ids=features.get("long_paragraph_ids"),
          global_paragraph_ids=features.get("global_paragraph_ids"),
          ignore_hard_g2l_mask=features.get("ignore_hard_g2l_mask"),
          l2g_linked_ids=features.get("l2g_linked_ids"))
    except ValueError as e:
      raise ValueError(f"Feature {e}") from None

  @without_autograph
  def call(self, features, training=None, return_attention_scores=False,
           long_extra_embeddings=None, global_extra_embeddings=None):
    """features: dict of int features. The optional float `long_extra_embeddings`
    [B, L, hidden] and `global_extra_embeddings` [B, G, hidden] are added to the embeddings
    before the embedding LayerNorm (official ETC's `long_embedding_adder` /
    `global_embedding_adder`; OpenKP adds projected visual features this way)."""
    config = self.etc_config
    features = features_lib.check_features(features, config)
    side = self.side_inputs(features)
    if self.implementation == "blocked":
      # The blocked masks and relative ids are the same for every layer: build them once.
      side = ops.blocked_side_inputs(side, config.local_radius)
    # Official ETC's defaults: segment 1 for long tokens, 0 for global tokens.
    long_segments = features.get("segment_ids")
    if long_segments is None:
      long_segments = tf.ones_like(features["token_ids"])
    global_segments = features.get("global_segment_ids")
    if global_segments is None:
      global_segments = tf.zeros_like(features["global_token_ids"])
    # One dropout seed per forward pass; each layer folds in its index, each site its salt. The
    # checkpointed segments capture it, so their recomputation replays every mask.
    seed = None
    if training and (config.hidden_dropout_prob or config.attention_probs_dropout_prob):
      seed = dropout_ops.new_seed()  # [2] int32
    long_x, global_x = self.embeddings(
        features["token_ids"], long_segments, features["global_token_ids"], global_segments,
        training=training, long_extra=long_extra_embeddings, global_extra=global_extra_embeddings,
        position_ids=features.get("position_ids"),
        global_position_ids=features.get("global_position_ids"),
        dropout_seed=_layer_seed(seed, 0))
    scores = [None, None]  # long stream, global stream
    per_layer = []
    period = config.grad_checkpointing_period
    if period and training and not return_attention_scores:
      for start in range(0, len(self.blocks), period):
        long_x, global_x, scores = self._checkpointed(start, start + period, long_x, global_x,
                                                      side, scores, training, seed)
    else:
      for index, block in enumerate(self.blocks):
        out = block(long_x, global_x, side, long_scores=scores[0], global_scores=scores[1],
                    training=training, return_attention_probs=return_attention_scores,
                    dropout_seed=_layer_seed(seed, index + 1))
        long_x, global_x = out["long_output"], out["global_output"]
        scores = [out["long_scores"], out["global_scores"]]
        if return_attention_scores:
          maps = {k: out[k] for k in ("long_probs", "global_probs")}
          maps.update({k: joined(out[k]) for k in ("long_scores", "global_scores")})
          per_layer.append({k: v for k, v in maps.items() if v is not None})
    result = {"long_output": long_x, "global_output": global_x}
    if return_attention_scores:
      result["attention"] = per_layer
    return result

  def _checkpointed(self, start, stop, long_x, global_x, side, scores, training, seed):
    """Runs blocks[start:stop] under tf.recompute_grad: activations inside are recomputed on
    backward, with the same dropout masks (the seed is captured, not drawn inside)."""
    blocks = self.blocks[start:stop]
    # tf.recompute_grad takes tensors: the carried streams (tuples of parts, or None) go in
    # and out flattened. Which streams exist after the chunk, and in how many parts, the first
    # layer says (every layer of a model carries the same ones).
    parts_in = [None if s is None else len(s) for s in scores]

    def run(long_in, global_in, *carried):
      stream = _pack_streams(parts_in, carried)
      for index, block in enumerate(blocks, start):
        out = block(long_in, global_in, side, long_scores=stream[0], global_scores=stream[1],
                    training=training, dropout_seed=_layer_seed(seed, index + 1))
        long_in, global_in = out["long_output"], out["global_output"]
        stream = [out["long_scores"], out["global_scores"]]
      return (long_in, global_in) + tuple(_flatten_streams(stream))

    parts_out = [blocks[0].attention.carried_parts(path) for path in ("local", "global")]
    outs = tf.recompute_grad(run)(long_x, global_x, *_flatten_streams(scores))
    return outs[0], outs[1], _pack_streams(parts_out, list(outs[2:]))

  def get_config(self):
    return {"config": self.etc_config.to_dict(), "implementation": self.implementation,
            "name": self.name}

  @classmethod
  def from_config(cls, config, custom_objects=None):
    return cls(**config)


def _flatten_streams(streams):
  """[long stream, global stream] (tuples of parts or None) -> the parts in one list."""
  return [part for stream in streams if stream is not None for part in stream]


def _pack_streams(num_parts, flat):
  """The inverse of _flatten_streams: num_parts per stream (None: no stream)."""
  streams, start = [], 0
  for count in num_parts:
    streams.append(None if count is None else tuple(flat[start:start + count]))
    start += count or 0
  return streams


def _layer_seed(seed, index):
  """The dropout seed of the embeddings (index 0) or of layer index - 1; None stays None (no
  dropout, or inference)."""
  return None if seed is None else dropout_ops.fold_in(seed, index)
