"""One ETC-RealFormer layer: global-local attention plus an optional feed-forward sublayer.

Post-LN (use_pre_activation_order=False, the default and RealFormer's choice), per stream:
  x = LN(x + Drop(Attention(x)));  x = LN(x + Drop(FeedForward(x)))
Pre-LN (use_pre_activation_order=True):
  x = x + Drop(Attention(LN(x)));  x = x + Drop(FeedForward(LN(x)))
  (no final LayerNorm after the last layer, as in official ETC)
The attention LayerNorms are per stream; the feed-forward LayerNorm is shared by both streams
when share_feed_forward_params is set (official ETC's layout).
With use_feed_forward=False the layer is attention only: with persistent memory this is the
all-attention layer of Sukhbaatar et al. (2019).
"""

import tensorflow as tf
import tf_keras

from etc_realformer.config import EtcConfig, layer_options, options_config
from etc_realformer.autograph import without_autograph
from etc_realformer.layers.dropout import SeededDropout
from etc_realformer.layers.global_local_attention import GlobalLocalAttention
from etc_realformer.layers.scopes import build_in_scope
from etc_realformer.ops.activations import activation

_STREAMS = ("long", "global")
# Dropout salts of the block's own sites (the attention layer uses 0 and 1 for its probabilities).
_OUTPUT_SALT = {"long": 2, "global": 3}        # after attention
_FEED_FORWARD_SALT = {"long": 4, "global": 5}  # after the feed-forward sublayer


class FeedForward(tf_keras.layers.Layer):
  """Dense(intermediate_size, act) -> Dense(hidden_size).

  Takes the EtcConfig fields in CONFIG_KEYS, positionally in that order or by name (an
  omitted one takes EtcConfig's default), and the Keras Layer arguments.
  """

  CONFIG_KEYS = ("hidden_size", "intermediate_size", "hidden_act", "initializer_range")

  def __init__(self, *args, **kwargs):
    options, kwargs = layer_options(self.CONFIG_KEYS, args, kwargs, type(self).__name__)
    super().__init__(**kwargs)
    for key, value in options.items():
      setattr(self, key, value)
    self.inner = tf_keras.layers.Dense(
        self.intermediate_size, name="inner",
        kernel_initializer=tf_keras.initializers.TruncatedNormal(stddev=self.initializer_range))
    self.outer = tf_keras.layers.Dense(
        self.hidden_size, name="outer",
        kernel_initializer=tf_keras.initializers.TruncatedNormal(stddev=self.initializer_range))
    self._act = activation(self.hidden_act)

  def build(self, input_shape=None):
    build_in_scope(self.inner, [None, self.hidden_size])
    build_in_scope(self.outer, [None, self.intermediate_size])
    super().build(input_shape)

  @without_autograph
  def call(self, x):
    return self.outer(self._act(self.inner(x)))

  def get_config(self):
    config = super().get_config()
    config.update({key: getattr(self, key) for key in self.CONFIG_KEYS})
    return config


class TransformerBlock(tf_keras.layers.Layer):
  """Attention (+ feed-forward) with residual connections and LayerNorm, per stream.

  Build it from a config with `TransformerBlock.from_etc_config(config, layer_index=...)`.
  Constructor arguments: the EtcConfig fields in CONFIG_KEYS, positionally in that order or by
  name (an omitted one takes EtcConfig's default); keyword-only `layer_index` (for
  residual_attention="mean") and `implementation` ("blocked" | "dense"); Keras Layer arguments.
  Call: (long, global, side_inputs, long_scores, global_scores, training,
  return_attention_probs, dropout_seed) -> dict with long_output, global_output, long_scores, global_scores
  (and long_probs, global_probs when asked).
  """

  # Positional order of the first 19: that of the earlier hand-written signature. The
  # sublayers' fields follow (any not listed yet), so that a new attention or feed-forward
  # option needs no edit here.
  CONFIG_KEYS = tuple(dict.fromkeys(
      ("hidden_size", "num_attention_heads", "local_radius", "intermediate_size", "hidden_act",
       "hidden_dropout_prob", "attention_probs_dropout_prob", "initializer_range",
       "att_size_per_head", "relative_vocab_size", "share_feed_forward_params",
       "share_kv_projections", "share_qkv_projections", "share_att_output_projection",
       "use_pre_activation_order", "residual_attention", "residual_paths",
       "num_persistent_memory", "use_feed_forward") +
      GlobalLocalAttention.CONFIG_KEYS + FeedForward.CONFIG_KEYS))

  def __init__(self, *args, layer_index=0, implementation="blocked", **kwargs):
    options, kwargs = layer_options(self.CONFIG_KEYS, args, kwargs, type(self).__name__)
    super().__init__(**kwargs)
    # get_config's values (residual_paths as a list).
    self._config = dict(options_config(options), layer_index=layer_index,
                        implementation=implementation)
    self.hidden_size = options["hidden_size"]
    self.use_pre_activation_order = options["use_pre_activation_order"]
    self.use_feed_forward = options["use_feed_forward"]
    self.attention = GlobalLocalAttention(
        **{key: options[key] for key in GlobalLocalAttention.CONFIG_KEYS},
        layer_index=layer_index, implementation=implementation, name="attention")
    self.dropout = SeededDropout(options["hidden_dropout_prob"])
    self.attention_norms = {
        s: tf_keras.layers.LayerNormalization(epsilon=1e-12, name=f"{s}_attention_norm")
        for s in _STREAMS}
    self.feed_forwards, self.feed_forward_norms = {}, {}
    if self.use_feed_forward:
      share = options["share_feed_forward_params"]
      # As in official ETC, sharing the feed-forward parameters shares its LayerNorm too.
      for s in _STREAMS:
        if share and s == "global":
          self.feed_forwards[s] = self.feed_forwards["long"]
          self.feed_forward_norms[s] = self.feed_forward_norms["long"]
          continue
        prefix = "" if share else f"{s}_"
        self.feed_forwards[s] = FeedForward(
            **{key: options[key] for key in FeedForward.CONFIG_KEYS}, name=f"{prefix}feed_forward")
        self.feed_forward_norms[s] = tf_keras.layers.LayerNormalization(
            epsilon=1e-12, name=f"{prefix}feed_forward_norm")

  @classmethod
  def from_etc_config(cls, config: EtcConfig, **kwargs) -> "TransformerBlock":
    """The block with `config`'s values of CONFIG_KEYS; kwargs: layer_index, implementation,
    name and the other Keras Layer arguments. (`from_config` is Keras's: it reads a
    get_config() dict.)"""
    return cls(**config.subset(cls.CONFIG_KEYS), **kwargs)

  def build(self, input_shape=None):
    shape = [None, None, self.hidden_size]
    sublayers = ([self.attention] + list(self.attention_norms.values()) +
                 list(self.feed_forward_norms.values()) + list(self.feed_forwards.values()))
    for layer in sublayers:
      build_in_scope(layer, shape)
    super().build(input_shape)

  def _sublayer(self, x, fn, norm, training, seed, salt):
    if self.use_pre_activation_order:
      return x + self.dropout(fn(norm(x)), seed=seed, salt=salt, training=training)
    return norm(x + self.dropout(fn(x), seed=seed, salt=salt, training=training))

  @without_autograph
  def call(self, long_input, global_input, side_inputs, long_scores=None, global_scores=None,
           training=None, return_attention_probs=False, dropout_seed=None):
    # Keras autocasts only the first input under mixed precision.
    x = {"long": long_input, "global": tf.cast(global_input, self.compute_dtype)}
    if self.use_pre_activation_order:
      att_in = {s: self.attention_norms[s](x[s]) for s in _STREAMS}
    else:
      att_in = x
    att = self.attention(att_in["long"], att_in["global"], side_inputs, long_scores=long_scores,
                         global_scores=global_scores, training=training,
                         return_attention_probs=return_attention_probs,
                         dropout_seed=dropout_seed)
    for s in _STREAMS:
      update = self.dropout(att[f"{s}_output"], seed=dropout_seed, salt=_OUTPUT_SALT[s],
                            training=training)
      x[s] = x[s] + update if self.use_pre_activation_order else self.attention_norms[s](
          x[s] + update)
    if self.use_feed_forward:
      for s in _STREAMS:
        x[s] = self._sublayer(x[s], self.feed_forwards[s], self.feed_forward_norms[s], training,
                              dropout_seed, _FEED_FORWARD_SALT[s])
    out = dict(att)
    out["long_output"], out["global_output"] = x["long"], x["global"]
    return out

  def get_config(self):
    config = super().get_config()
    config.update(self._config)
    return config
