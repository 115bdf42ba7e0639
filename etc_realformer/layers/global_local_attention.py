"""ETC global-local attention with RealFormer residual scores and persistent memory.

Per head of size d, with relative tables a [R, heads, d] and b [R, heads]:

  logit(q, k) = (q.k + q.a[rel(q, k)] + b[rel(q, k)]) / sqrt(d)

Long query i attends, in ONE softmax, to the long tokens j with |i - j| <= r (l2l), all G
global tokens (l2g) and the M persistent-memory keys; global query g attends to all global
tokens (g2g), all long tokens (g2l) and the memory keys. Memory keys carry no relative term and
are never masked. The long path and the global path own separate relative tables.

RealFormer residual attention ("sum" | "mean"): the layer softmaxes the running sum
R_l = S_l + R_{l-1} of its raw scores S_l (divided by layer_index + 1 for "mean") with the
mask added after the sum, and returns the UNMASKED R_l for the next layer. A stream is carried
as the parts the softmax reads, a tuple: the long stream in the blocked layout (l2l
[B, heads, nb, b, 3b], l2g [B, heads, nb, b, G](, memory [B, heads, nb, b, M])), the global
stream as (g2g [B, heads, G, G], g2l [B, heads, G, L](, memory [B, heads, G, M])). In the
dense reference implementation the long stream's l2l part is [B, heads, L, L]. `joined` puts a
stream's parts side by side ([..., 3b + G + M] and so on), as `return_attention_probs` and the
encoder's attention maps give them; a layer also takes a previous stream in that joined form.

Reduction: with local_radius >= L - 1, shared projections and no relative ids, this is
standard multi-head attention over concat(long, global) (plus memory keys when M > 0).
"""

import math
from typing import Dict

import tensorflow as tf
import tf_keras

from etc_realformer.config import RESIDUAL_MODES, EtcConfig, layer_options, options_config
from etc_realformer.autograph import without_autograph
from etc_realformer.layers.dropout import SeededDropout
from etc_realformer.ops import blocking
from etc_realformer.ops import dropout as dropout_ops
from etc_realformer.ops import lookup
from etc_realformer.ops import profiling
from etc_realformer.ops import softmax as softmax_ops

_COMPONENTS = ("l2l", "l2g", "g2g", "g2l")
# Which input stream each projection of each component reads.
_QUERY_STREAM = {"l2l": "long", "l2g": "long", "g2g": "global", "g2l": "global"}
_KEY_STREAM = {"l2l": "long", "l2g": "global", "g2g": "global", "g2l": "long"}
# Dropout salts of the attention probabilities per path (a block uses others for its outputs);
# each part of a path's probabilities then folds in its index.
_DROPOUT_SALTS = {"local": 0, "global": 1}


def input_stream(key: str) -> str:
  """The stream ('long' | 'global') that projection '<component>_<q|k|v>' is applied to."""
  component, p = key.split("_")
  return _QUERY_STREAM[component] if p == "q" else _KEY_STREAM[component]


def projection_names(share_qkv_projections: bool, share_kv_projections: bool) -> Dict[str, str]:
  """Maps '<component>_<q|k|v>' to the name of the weight that implements it (official ETC).

  Queries: one projection per query stream ('long_q' for l2l+l2g, 'global_q' for g2g+g2l).
  share_qkv: one Q, one K and one V for all four components (the long ones).
  share_kv: keys/values shared by l2l+l2g ('l2l_k') and by g2g+g2l ('g2g_k').
  neither: separate l2l/l2g/g2g/g2l keys and values (2 queries, 4 keys, 4 values).
  """
  names = {}
  for c in _COMPONENTS:
    stream = _QUERY_STREAM[c]
    first = "l2l" if stream == "long" else "g2g"  # the component that owns a shared k/v
    for p in "qkv":
      if share_qkv_projections:
        names[f"{c}_{p}"] = f"l2l_{p}" if p != "q" else "long_q"
      elif p == "q":
        names[f"{c}_{p}"] = f"{stream}_q"
      elif share_kv_projections:
        names[f"{c}_{p}"] = f"{first}_{p}"
      else:
        names[f"{c}_{p}"] = f"{c}_{p}"
  return names


def joined(parts):
  """A stream's parts (scores or probabilities) side by side along the keys; None stays None."""
  return None if parts is None else tf.concat(list(parts), axis=-1)


def _flatten_queries(x: tf.Tensor) -> tf.Tensor:
  """[B, heads, <query axes...>, d] -> [B, heads, Q, d] (Q = product of the query axes)."""
  if x.shape.rank == 4:
    return x
  shape = tf.shape(x)
  return tf.reshape(x, tf.stack([shape[0], shape[1], -1, shape[-1]]))


class GlobalLocalAttention(tf_keras.layers.Layer):
  """Fused l2l+l2g and g2g+g2l attention (see the module docstring for the formula).

  Call arguments:
    long_input: [B, L, hidden]; global_input: [B, G, hidden].
    side_inputs: dict with l2l/g2g/l2g/g2l `_att_mask` and (when relative_vocab_size is set)
      `_relative_att_ids`, in the ETC layouts ([B, L, 2r+1] for l2l).
    long_scores / global_scores: the previous layer's residual streams (tuples of parts, or
      each joined into one tensor), or None.
    training: dropout switch.
    return_attention_probs: also return the post-softmax probabilities.
    dropout_seed: [2] int32 seed of the probability dropout masks (ops/dropout.py), so that a
      recomputed forward pass draws the same ones; None: a fresh seed per call.
  Returns a dict: long_output [B, L, hidden], global_output [B, G, hidden], long_scores,
    global_scores (tuples of parts; None for a stream that carries no residual), and optionally
    long_probs, global_probs joined, in the stream layouts.
  """

  # The EtcConfig fields this layer takes, positionally in this order or by name; an omitted
  # one takes EtcConfig's default. `layer_index` (for residual_attention="mean") and
  # `implementation` ("blocked" | "dense") are keyword-only.
  CONFIG_KEYS = ("hidden_size", "num_attention_heads", "local_radius", "att_size_per_head",
                 "relative_vocab_size", "share_qkv_projections", "share_kv_projections",
                 "share_att_output_projection", "num_persistent_memory", "residual_attention",
                 "residual_paths", "attention_probs_dropout_prob", "initializer_range")

  def __init__(self, *args, layer_index: int = 0, implementation: str = "blocked", **kwargs):
    options, kwargs = layer_options(self.CONFIG_KEYS, args, kwargs, type(self).__name__)
    super().__init__(**kwargs)
    mode = options["residual_attention"]
    if mode not in RESIDUAL_MODES:
      raise ValueError(f"residual_attention must be one of {RESIDUAL_MODES}, got {mode!r}")
    if implementation not in ("blocked", "dense"):
      raise ValueError(f"implementation must be 'blocked' or 'dense', got {implementation!r}")
    hidden_size, num_attention_heads = options["hidden_size"], options["num_attention_heads"]
    if options["att_size_per_head"] is None and hidden_size % num_attention_heads:
      raise ValueError(f"hidden_size {hidden_size} is not divisible by num_attention_heads "
                       f"{num_attention_heads}")
    # Each option becomes an attribute (self.hidden_size, self.local_radius, ...);
    # get_config reads them back.
    for key, value in options.items():
      setattr(self, key, value)
    self.layer_index = layer_index
    self.implementation = implementation
    self.head_size = self.att_size_per_head or hidden_size // num_attention_heads
    self._names = projection_names(self.share_qkv_projections, self.share_kv_projections)
    self._dropout = SeededDropout(self.attention_probs_dropout_prob)

  @classmethod
  def from_etc_config(cls, config: EtcConfig, **kwargs) -> "GlobalLocalAttention":
    """The layer with `config`'s values of CONFIG_KEYS; kwargs: layer_index, implementation,
    name and the other Keras Layer arguments. (`from_config` is Keras's: it reads a
    get_config() dict.)"""
    return cls(**config.subset(cls.CONFIG_KEYS), **kwargs)

  # ------------------------------------------------------------------ weights
  def _init(self):
    return tf_keras.initializers.TruncatedNormal(stddev=self.initializer_range)

  def build(self, input_shape=None):
    h, d, hidden = self.num_attention_heads, self.head_size, self.hidden_size
    self.projection_kernels, self.projection_biases = {}, {}
    # Created keys first, then queries, then values (ordered by the role letter): the random
    # initial values each weight draws do not depend on how the projections are shared or
    # named. (The tiny WikiHop demo trained from scratch is sensitive to them: drawing them
    # in the order keys, values, queries took its dev accuracy from 0.78 to 0.26.)
    for name in sorted(set(self._names.values()), key=lambda n: (n[-1], n)):
      self.projection_kernels[name] = self.add_weight(
          f"{name}_kernel", [hidden, h, d], initializer=self._init())
      self.projection_biases[name] = self.add_weight(f"{name}_bias", [h, d], initializer="zeros")
    out_names = ["long_out"] if self.share_att_output_projection else ["long_out", "global_out"]
    self.output_kernels, self.output_biases = {}, {}
    for name in out_names:
      self.output_kernels[name] = self.add_weight(
          f"{name}_kernel", [h, d, hidden], initializer=self._init())
      self.output_biases[name] = self.add_weight(f"{name}_bias", [hidden], initializer="zeros")
    self.relative_tables = {}
    if self.relative_vocab_size:
      for path in ("long", "global"):
        self.relative_tables[path] = (
            self.add_weight(f"{path}_rel_emb", [self.relative_vocab_size, h, d],
                            initializer=self._init()),
            self.add_weight(f"{path}_rel_bias", [self.relative_vocab_size, h],
                            initializer="zeros"))
    if self.num_persistent_memory:
      m = self.num_persistent_memory
      self.memory_keys = self.add_weight("mem_k", [m, h, d], initializer=self._init())
      self.memory_values = self.add_weight("mem_v", [m, h, d], initializer=self._init())
    super().build(input_shape)

  def reference_weights(self):
    """All weights as NumPy arrays under per-component names (the NumPy reference's layout)."""
    out = {}
    for key, name in self._names.items():
      out[f"{key}_kernel"] = self.projection_kernels[name].numpy()
      out[f"{key}_bias"] = self.projection_biases[name].numpy()
    for stream in ("long", "global"):
      name = "long_out" if self.share_att_output_projection else f"{stream}_out"
      out[f"{stream}_out_kernel"] = self.output_kernels[name].numpy()
      out[f"{stream}_out_bias"] = self.output_biases[name].numpy()
    for path, (emb, bias) in self.relative_tables.items():
      out[f"{path}_rel_emb"] = emb.numpy()
      out[f"{path}_rel_bias"] = bias.numpy()
    if self.num_persistent_memory:
      out["mem_k"] = self.memory_keys.numpy()
      out["mem_v"] = self.memory_values.numpy()
    return out

  # --------------------------------------------------------------- projections
  def _project(self, long_input, global_input):
    """Returns {'<component>_<q|k|v>': [B, heads, N, d]}; one matmul per input stream.

    Head-major outputs make every attention product below a plain batched matmul over
    (batch, heads[, blocks]) with no transposes of score-sized tensors. Query weights are scaled
    by 1/sqrt(d) here (a [hidden, heads, d] multiply instead of one per query tensor).
    """
    inputs = {"long": long_input, "global": global_input}
    wanted = {"long": [], "global": []}  # weight names applied to each stream, de-duplicated
    query_names = set()
    for key, name in self._names.items():
      stream = input_stream(key)
      if name not in wanted[stream]:
        wanted[stream].append(name)
      if key.endswith("_q"):
        query_names.add(name)
    scale = 1.0 / math.sqrt(self.head_size)
    projected = {}
    for stream, names in wanted.items():
      x = inputs[stream]
      kernels, biases = [], []
      for n in names:
        kernel = tf.cast(self.projection_kernels[n], x.dtype)
        bias = tf.cast(self.projection_biases[n], x.dtype)
        if n in query_names:
          kernel, bias = kernel * scale, bias * scale
        kernels.append(kernel)
        biases.append(bias)
      kernel = tf.concat(kernels, axis=1)  # [hidden, n*h, d]
      bias = tf.concat(biases, axis=0)  # [n*h, d]
      both = tf.einsum("bnx,xhd->bhnd", x, kernel) + bias[None, :, None, :]  # [B, n*h, N, d]
      for name, part in zip(names, tf.split(both, len(names), axis=1)):
        projected[(stream, name)] = part  # [B, h, N, d]
    return {key: projected[(input_stream(key), name)] for key, name in self._names.items()}

  def _output(self, context, stream):
    """context [B, heads, N, d] -> [B, N, hidden]."""
    name = "long_out" if self.share_att_output_projection else f"{stream}_out"
    return tf.einsum("bhnd,hdx->bnx", context, self.output_kernels[name]) + self.output_biases[name]

  # ------------------------------------------------------------- shared pieces
  def _relative_logits(self, queries, ids_by_component, path, window=None):
    """q.a[rel] + b[rel] for scaled queries, for the two components of one path.

    queries: (first, second), each [B, heads, <query axes...>, d]; ids_by_component: (first,
    second), each [B, <query axes...>, keys]. Returns [B, heads, <query axes...>, keys] each.
    The two components of a path share the path's table, so with shared query projections the
    per-id table q.a + b is computed once. window: for blocked l2l ids (first component), their
    window ids [2r+1] and whether every query has them (then select_by_window_id applies).
    """
    emb, bias = self.relative_tables[path]
    emb = tf.cast(emb, queries[0].dtype)
    bias = tf.cast(bias, queries[0].dtype) / math.sqrt(self.head_size)

    def per_id(q):
      # Explicit axes (no ellipsis): the gradient w.r.t. `emb` is then one batched matmul
      # instead of an outer product over every query followed by a sum.
      return (tf.einsum("bhqd,rhd->bhqr", _flatten_queries(q), emb) +
              tf.transpose(bias)[None, :, None, :])  # [B, heads, Q, R]

    first = per_id(queries[0])
    tables = (first, first if queries[1] is queries[0] else per_id(queries[1]))

    def by_id(table, ids):
      flat_ids = tf.reshape(ids, tf.stack([tf.shape(ids)[0], -1, tf.shape(ids)[-1]]))  # [B,Q,K]
      selected = lookup.select_by_id(table, flat_ids)  # [B, heads, Q, K]
      return tf.reshape(selected, tf.concat([tf.shape(selected)[:2], tf.shape(ids)[1:]], axis=0))

    if window is None:
      looked_up = by_id(tables[0], ids_by_component[0])
    else:  # blocked l2l: queries[0] [B, heads, nb, b, d], ids [B, nb, b, 3b]
      dims = [blocking.static_or_dynamic(queries[0], axis) for axis in range(4)]
      looked_up = lookup.select_by_window_id(
          tf.reshape(tables[0], dims + [tables[0].shape[-1]]), ids_by_component[0], *window)
    return [looked_up, by_id(tables[1], ids_by_component[1])]

  def _memory_logits(self, queries):
    """queries [B, heads, .., d] -> [B, heads, .., M]."""
    flat = _flatten_queries(queries)  # [B, heads, Q, d]
    logits = tf.einsum("bhqd,mhd->bhqm", flat, tf.cast(self.memory_keys, queries.dtype))
    return tf.reshape(logits, tf.concat([tf.shape(queries)[:-1], [-1]], axis=0))

  def carried_parts(self, path):
    """How many parts the residual stream of `path` ("local" | "global") has: 2, 3 with
    persistent memory; None when the path carries none."""
    if self.residual_attention == "none" or path not in self.residual_paths:
      return None
    return 3 if self.num_persistent_memory else 2

  def _residual(self, scores, prev, path):
    """scores: the parts of a path's raw scores. Returns (softmax input parts without the
    masks, carried parts or None)."""
    if self.carried_parts(path) is None:
      return scores, None
    running = tuple(scores)
    if prev is not None:
      if not isinstance(prev, (list, tuple)):  # joined: split as the parts are
        prev = tf.split(prev, [blocking.static_or_dynamic(x, -1) for x in scores], axis=-1)
      if len(prev) != len(scores):
        raise ValueError(f"{self.name}: the previous layer's {path} scores come in {len(prev)} "
                         f"parts, this layer's in {len(scores)}")
      running = tuple(x + tf.cast(p, x.dtype) for x, p in zip(scores, prev))
    if self.residual_attention == "mean":
      return [x / float(self.layer_index + 1) for x in running], running
    return running, running

  def _softmax(self, logits, biases, training, seed, path):
    """One softmax over the keys of all parts. logits: parts [B, heads, <query axes>, K_i];
    biases: per part the additive mask [B, <query axes>, K_i], or None (memory keys); seed:
    the call's dropout seed; path: "local" | "global" (each part of each draws its own mask).
    Returns (probabilities, probabilities after dropout), each a list of parts."""
    probs = softmax_ops.joint_softmax(
        [x if bias is None else x + tf.expand_dims(tf.cast(bias, x.dtype), 1)
         for x, bias in zip(logits, biases)])
    if seed is not None:
      seed = dropout_ops.fold_in(seed, _DROPOUT_SALTS[path])
    return probs, [self._dropout(p, seed=seed, salt=i, training=training)
                   for i, p in enumerate(probs)]

  # --------------------------------------------------------------------- call
  @without_autograph
  def call(self, long_input, global_input, side_inputs, long_scores=None, global_scores=None,
           training=None, return_attention_probs=False, dropout_seed=None):
    # Keras autocasts only the first input under mixed precision.
    global_input = tf.cast(global_input, self.compute_dtype)
    seed = dropout_seed  # None: SeededDropout draws a fresh one per call
    side_inputs = {k: v if v.dtype == tf.bool else tf.cast(v, tf.int32)
                   for k, v in side_inputs.items() if v is not None}
    # profiling.part: name scopes for op profiles, off by default (ops/profiling.py).
    with profiling.part("projections"):
      p = self._project(long_input, global_input)  # scaled queries
    use_rel = bool(self.relative_vocab_size)
    with profiling.part("long_path"):
      long_path = self._long_blocked if self.implementation == "blocked" else self._long_dense
      long_out, long_carry, long_probs = long_path(p, side_inputs, long_scores, training, use_rel,
                                                   seed)
    with profiling.part("global_path"):
      global_out, global_carry, global_probs = self._global(p, side_inputs, global_scores,
                                                            training, use_rel, seed)
    with profiling.part("output_projections"):
      result = {
          "long_output": self._output(long_out, "long"),
          "global_output": self._output(global_out, "global"),
          "long_scores": long_carry,
          "global_scores": global_carry,
      }
    if return_attention_probs:
      result["long_probs"] = joined(long_probs)
      result["global_probs"] = joined(global_probs)
    return result

  def _long_blocked(self, p, side, prev, training, use_rel, seed):
    r = self.local_radius
    b = r + 1
    long_len = blocking.static_or_dynamic(p["l2l_q"], 2)
    with profiling.part("blocking"):
      blocked = (side if blocking.BLOCKED_L2L_BIAS in side else
                 blocking.blocked_side_inputs(side, r))
      q_local = blocking.split_into_blocks(p["l2l_q"], b, axis=2)  # [B, h, nb, b, d]
      q_global = (q_local if p["l2g_q"] is p["l2l_q"] else
                  blocking.split_into_blocks(p["l2g_q"], b, axis=2))  # [B, h, nb, b, d]
      k_local = blocking.concat_neighbor_blocks(
          blocking.split_into_blocks(p["l2l_k"], b, axis=2), block_axis=2)  # [B, h, nb, 3b, d]
      v_local = blocking.concat_neighbor_blocks(
          blocking.split_into_blocks(p["l2l_v"], b, axis=2), block_axis=2)  # [B, h, nb, 3b, d]
    with profiling.part("l2l_scores"):
      l2l = tf.einsum("bhnqd,bhnkd->bhnqk", q_local, k_local)  # [B, h, nb, b, 3b]
    with profiling.part("l2g_scores"):
      l2g = tf.einsum("bhnqd,bhgd->bhnqg", q_global, p["l2g_k"])  # [B, h, nb, b, G]
    logits = [l2l, l2g]
    if use_rel:
      with profiling.part("relative"):
        rel = self._relative_logits(
            (q_local, q_global),
            (blocked[blocking.BLOCKED_L2L_IDS], blocked[blocking.BLOCKED_L2G_IDS]), "long",
            window=(blocked[blocking.L2L_WINDOW_IDS], blocked[blocking.L2L_WINDOW_IDS_UNIFORM]))
        logits = [logits[0] + rel[0], logits[1] + rel[1]]
    biases = [blocked[blocking.BLOCKED_L2L_BIAS], blocked[blocking.BLOCKED_L2G_BIAS]]
    if self.num_persistent_memory:
      with profiling.part("memory"):
        logits.append(self._memory_logits(q_local))  # [B, h, nb, b, M]
        biases.append(None)  # memory keys are never masked
    with profiling.part("softmax"):
      att, carry = self._residual(logits, prev, "local")
      probs, parts = self._softmax(att, biases, training, seed, "local")
    with profiling.part("l2l_context"):
      context = tf.einsum("bhnqk,bhnkd->bhnqd", parts[0], v_local)  # [B, h, nb, b, d]
    with profiling.part("l2g_context"):
      context += tf.einsum("bhnqg,bhgd->bhnqd", parts[1], p["l2g_v"])
    if self.num_persistent_memory:
      with profiling.part("memory"):
        context += tf.einsum("bhnqm,mhd->bhnqd", parts[2],
                             tf.cast(self.memory_values, context.dtype))
    with profiling.part("blocking"):
      context = blocking.merge_blocks(context, long_len, axis=2)  # [B, h, L, d]
    return context, carry, probs

  def _long_dense(self, p, side, prev, training, use_rel, seed):
    logits = [tf.einsum("bhqd,bhkd->bhqk", p["l2l_q"], p["l2l_k"]),  # [B, h, L, L]
              tf.einsum("bhqd,bhgd->bhqg", p["l2g_q"], p["l2g_k"])]  # [B, h, L, G]
    biases = [softmax_ops.additive_bias(blocking.window_to_dense(side["l2l_att_mask"])),
              softmax_ops.additive_bias(side["l2g_att_mask"])]
    if use_rel:
      ids = blocking.window_to_dense(side["l2l_relative_att_ids"])  # [B, L, L]
      rel = self._relative_logits((p["l2l_q"], p["l2g_q"]),
                                  (ids, side["l2g_relative_att_ids"]), "long")
      logits = [logits[0] + rel[0], logits[1] + rel[1]]
    return self._finish_dense(p, logits, biases, prev, training, seed, "local", ("l2l", "l2g"))

  def _global(self, p, side, prev, training, use_rel, seed):
    with profiling.part("g2g_scores"):
      g2g = tf.einsum("bhqd,bhkd->bhqk", p["g2g_q"], p["g2g_k"])  # [B, h, G, G]
    with profiling.part("g2l_scores"):
      g2l = tf.einsum("bhqd,bhkd->bhqk", p["g2l_q"], p["g2l_k"])  # [B, h, G, L]
    logits = [g2g, g2l]
    biases = ([side[blocking.G2G_BIAS], side[blocking.G2L_BIAS]] if blocking.G2G_BIAS in side else
              [softmax_ops.additive_bias(side["g2g_att_mask"]),
               softmax_ops.additive_bias(side["g2l_att_mask"])])
    if use_rel:
      with profiling.part("relative"):
        rel = self._relative_logits((p["g2g_q"], p["g2l_q"]),
                                    (side["g2g_relative_att_ids"], side["g2l_relative_att_ids"]),
                                    "global")
        logits = [logits[0] + rel[0], logits[1] + rel[1]]
    return self._finish_dense(p, logits, biases, prev, training, seed, "global",
                              ("g2g", "g2l"))

  def _finish_dense(self, p, logits, biases, prev, training, seed, path, components):
    """Softmax over [first component keys | second component keys | memory] per query."""
    if self.num_persistent_memory:
      with profiling.part("memory"):
        logits.append(self._memory_logits(p[f"{components[0]}_q"]))  # [B, h, Q, M]
        biases.append(None)  # memory keys are never masked
    with profiling.part("softmax"):
      att, carry = self._residual(logits, prev, path)
      probs, parts = self._softmax(att, biases, training, seed, path)
    with profiling.part(f"{components[0]}_context"):
      context = tf.einsum("bhqk,bhkd->bhqd", parts[0], p[f"{components[0]}_v"])  # [B,h,Q,d]
    with profiling.part(f"{components[1]}_context"):
      context += tf.einsum("bhqk,bhkd->bhqd", parts[1], p[f"{components[1]}_v"])
    if self.num_persistent_memory:
      with profiling.part("memory"):
        context += tf.einsum("bhqm,mhd->bhqd", parts[2],
                             tf.cast(self.memory_values, context.dtype))
    return context, carry, probs

  def get_config(self):
    config = super().get_config()
    config.update(options_config({key: getattr(self, key) for key in self.CONFIG_KEYS}))
    config.update(layer_index=self.layer_index, implementation=self.implementation)
    return config
