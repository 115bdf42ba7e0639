"""Independent plain-NumPy (float64) reference for ETC global-local attention.

This module is the independent reference implementation used by the
equivalence tests. It implements, with simple and explicit NumPy code:

* ETC global-local attention (long/global streams, four components
  l2l, l2g, g2g, g2l) with optional relative position embeddings,
* RealFormer-style residual attention scores ("none" | "sum" | "mean"),
* persistent memory key/value slots shared by both streams,
* a plain dense multi-head attention for convenience.

All math is performed in float64. Only NumPy is used (no TensorFlow).
"""
import numpy as np

MASK_VALUE = -10000.0
COMPONENTS = ("l2l", "l2g", "g2g", "g2l")


def window_to_dense(window, fill=0):
    """Convert a local window array [B, L, 2r+1] to a dense [B, L, L] array.

    Slot r+j of row i refers to key i+j, so out[b, i, i+j] = window[b, i, r+j]
    for 0 <= i+j < L; all other entries are set to `fill`.
    """
    window = np.asarray(window)
    batch, length, width = window.shape
    radius = (width - 1) // 2
    out = np.full((batch, length, length), fill, dtype=window.dtype)
    for i in range(length):
        for j in range(-radius, radius + 1):
            if 0 <= i + j < length:
                out[:, i, i + j] = window[:, i, radius + j]
    return out


def _project(x, kernel, bias):
    """Project x [..., H] with kernel [H, h, d] and bias [h, d] -> [..., h, d]."""
    return np.einsum("...H,Hhd->...hd", x, kernel) + bias


def _scores(q, k, rel_ids=None, rel_emb=None, rel_bias=None):
    """Attention scores [h, Nq, Nk] for q [Nq, h, d] and k [Nk, h, d].

    S = (q.k + q.a[rel] + b[rel]) / sqrt(d); the relative terms are skipped
    when rel_ids is None.
    """
    d = q.shape[-1]
    s = np.einsum("qhd,khd->hqk", q, k)
    if rel_ids is not None:
        q_dot_a = np.einsum("qhd,rhd->hqr", q, rel_emb)          # [h, Nq, R]
        ids = np.broadcast_to(rel_ids[None], (q.shape[1],) + rel_ids.shape)
        s = s + np.take_along_axis(q_dot_a, ids, axis=2)
        s = s + np.transpose(rel_bias[rel_ids], (2, 0, 1))       # [h, Nq, Nk]
    return s / np.sqrt(d)


def _softmax(x):
    """Numerically stable softmax over the last axis."""
    x = x - np.max(x, axis=-1, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=-1, keepdims=True)


def _attend(logits, mask, values, out_kernel, out_bias):
    """Masked softmax attention for one batch element.

    logits [h, Nq, Nk], mask [Nq, Nk] (1 = attend), values [Nk, h, d].
    Returns the projected output [Nq, H].
    """
    logits = logits + (1.0 - mask[None]) * MASK_VALUE
    probs = _softmax(logits)
    context = np.einsum("hqk,khd->qhd", probs, values)
    return np.einsum("qhd,hdH->qH", context, out_kernel) + out_bias


def etc_attention_reference(long_x, global_x, side, weights, *, local_radius,
                            prev_long=None, prev_global=None, residual="none",
                            layer_index=0, use_relative=True):
    """ETC global-local attention with residual scores and persistent memory.

    Returns (long_out [B,L,H], global_out [B,G,H], new_long_scores,
    new_global_scores). Score arrays are [B,h,L,L+G+M] (long) and
    [B,h,G,G+L+M] (global); they are the unmasked running sums and are None
    when residual == "none".
    """
    if residual not in ("none", "sum", "mean"):
        raise ValueError(f"unknown residual mode: {residual!r}")
    f64 = lambda a: np.asarray(a, dtype=np.float64)
    long_x, global_x = f64(long_x), f64(global_x)
    w = {key: f64(val) for key, val in weights.items()}
    batch, length, _ = long_x.shape
    num_global = global_x.shape[1]
    if side["l2l_att_mask"].shape[-1] != 2 * local_radius + 1:
        raise ValueError("l2l window width does not match local_radius")

    masks = {c: f64(side[f"{c}_att_mask"]) for c in COMPONENTS}
    masks["l2l"] = f64(window_to_dense(side["l2l_att_mask"], fill=0))
    ids = {c: np.asarray(side[f"{c}_relative_att_ids"]).astype(np.int64)
           for c in COMPONENTS}
    ids["l2l"] = window_to_dense(ids["l2l"], fill=0)
    if not use_relative:
        ids = {c: [None] * batch for c in COMPONENTS}

    num_heads, head_size = w["l2l_q_bias"].shape
    empty = np.zeros((0, num_heads, head_size))
    mem_k, mem_v = w.get("mem_k", empty), w.get("mem_v", empty)
    num_mem = mem_k.shape[0]

    def proj(x, comp, part):
        return _project(x, w[f"{comp}_{part}_kernel"], w[f"{comp}_{part}_bias"])

    long_s, long_v, long_m = [], [], []
    glob_s, glob_v, glob_m = [], [], []
    lrel = (w.get("long_rel_emb"), w.get("long_rel_bias"))
    grel = (w.get("global_rel_emb"), w.get("global_rel_bias"))
    for b in range(batch):
        lx, gx = long_x[b], global_x[b]
        # Long stream: keys = long tokens, global tokens, memory slots.
        q_ll, q_lg = proj(lx, "l2l", "q"), proj(lx, "l2g", "q")
        long_s.append(np.concatenate([
            _scores(q_ll, proj(lx, "l2l", "k"), ids["l2l"][b], *lrel),
            _scores(q_lg, proj(gx, "l2g", "k"), ids["l2g"][b], *lrel),
            _scores(q_ll, mem_k)], axis=-1))
        long_v.append(np.concatenate(
            [proj(lx, "l2l", "v"), proj(gx, "l2g", "v"), mem_v], axis=0))
        long_m.append(np.concatenate(
            [masks["l2l"][b], masks["l2g"][b], np.ones((length, num_mem))],
            axis=-1))
        # Global stream: keys = global tokens, long tokens, memory slots.
        q_gg, q_gl = proj(gx, "g2g", "q"), proj(gx, "g2l", "q")
        glob_s.append(np.concatenate([
            _scores(q_gg, proj(gx, "g2g", "k"), ids["g2g"][b], *grel),
            _scores(q_gl, proj(lx, "g2l", "k"), ids["g2l"][b], *grel),
            _scores(q_gg, mem_k)], axis=-1))
        glob_v.append(np.concatenate(
            [proj(gx, "g2g", "v"), proj(lx, "g2l", "v"), mem_v], axis=0))
        glob_m.append(np.concatenate(
            [masks["g2g"][b], masks["g2l"][b], np.ones((num_global, num_mem))],
            axis=-1))
    long_s, glob_s = np.stack(long_s), np.stack(glob_s)

    def residual_scores(scores, prev):
        """Return (running sum Rn or None, logits) for one stream."""
        if residual == "none":
            return None, scores
        running = scores + (0.0 if prev is None else f64(prev))
        if residual == "sum":
            return running, running
        return running, running / (layer_index + 1)

    new_long, long_logits = residual_scores(long_s, prev_long)
    new_global, glob_logits = residual_scores(glob_s, prev_global)

    long_out = np.stack([
        _attend(long_logits[b], long_m[b], long_v[b],
                w["long_out_kernel"], w["long_out_bias"]) for b in range(batch)])
    global_out = np.stack([
        _attend(glob_logits[b], glob_m[b], glob_v[b],
                w["global_out_kernel"], w["global_out_bias"])
        for b in range(batch)])
    return long_out, global_out, new_long, new_global


def dense_multihead_attention_reference(x, q_kernel, q_bias, k_kernel, k_bias,
                                        v_kernel, v_bias, out_kernel, out_bias,
                                        mask=None):
    """Standard multi-head attention over x [B, N, H] -> [B, N, H].

    Kernels are [H, h, d], biases [h, d], out_kernel [h, d, H], out_bias [H];
    mask [B, N, N] (1 = attend) adds -10000 to masked logits.
    """
    x = np.asarray(x, dtype=np.float64)
    f64 = lambda a: np.asarray(a, dtype=np.float64)
    batch, n, _ = x.shape
    mask = np.ones((batch, n, n)) if mask is None else f64(mask)
    outs = []
    for b in range(batch):
        q = _project(x[b], f64(q_kernel), f64(q_bias))
        k = _project(x[b], f64(k_kernel), f64(k_bias))
        v = _project(x[b], f64(v_kernel), f64(v_bias))
        outs.append(_attend(_scores(q, k), mask[b], v,
                            f64(out_kernel), f64(out_bias)))
    return np.stack(outs)


# --------------------------------------------------------------------------------------------
# The whole encoder, read straight from official ETC variable names (float64).

_OFFICIAL_PROJECTIONS = {
    "long_query_projection": ("l2l_q", "l2g_q"), "global_query_projection": ("g2g_q", "g2l_q"),
    "l2l_key_projection": ("l2l_k",), "l2g_key_projection": ("l2g_k",),
    "g2g_key_projection": ("g2g_k",), "g2l_key_projection": ("g2l_k",),
    "l2l_value_projection": ("l2l_v",), "l2g_value_projection": ("l2g_v",),
    "g2g_value_projection": ("g2g_v",), "g2l_value_projection": ("g2l_v",),
}


def _layer_norm(x, gamma, beta, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def gelu_tanh(x):
    """The tanh approximation of gelu (BERT's and official ETC's `gelu`)."""
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def _attention_weights(w, scope, config):
    """Official weights of one fused attention layer -> the per-component layout above."""
    heads = config["num_attention_heads"]
    hidden = config["hidden_size"]
    d = config.get("att_size_per_head") or hidden // heads
    share_qkv, share_kv = config["share_qkv_projections"], config["share_kv_projections"]
    # Which official projection each component uses (official ETC's sharing rules).
    source = {"l2l_q": "long_query_projection", "l2g_q": "long_query_projection",
              "g2g_q": "global_query_projection", "g2l_q": "global_query_projection"}
    for part, word in (("k", "key"), ("v", "value")):
        for comp in ("l2l", "l2g", "g2g", "g2l"):
            if share_qkv:
                owner = "l2l"
            elif share_kv:
                owner = "l2l" if comp in ("l2l", "l2g") else "g2g"
            else:
                owner = comp
            source[f"{comp}_{part}"] = f"{owner}_{word}_projection"
    if share_qkv:
        source.update(g2g_q="long_query_projection", g2l_q="long_query_projection")
    out = {}
    for key, name in source.items():
        out[f"{key}_kernel"] = w[f"{scope}/{name}/linear/kernel"].reshape(hidden, heads, d)
        out[f"{key}_bias"] = w[f"{scope}/{name}/linear/bias"].reshape(heads, d)
    for stream in ("long", "global"):
        name = "long" if config["share_att_output_projection"] else stream
        out[f"{stream}_out_kernel"] = w[f"{scope}/{name}_output_projection/kernel"].reshape(
            heads, d, hidden)
        out[f"{stream}_out_bias"] = w[f"{scope}/{name}_output_projection/bias"]
    if config.get("relative_vocab_size"):
        for path, table in (("long", "long_qkv_attention/qkv_relative_attention"),
                            ("global", "global_qkv_attention")):
            out[f"{path}_rel_emb"] = w[f"{scope}/{table}/relative_emb_table"]
            out[f"{path}_rel_bias"] = w[f"{scope}/{table}/relative_bias_table"]
    return out


def official_encoder_reference(weights, config, features, side):
    """Official ETC's encoder (dropout off) from {official variable name: array}.

    features: token_ids, global_token_ids and optional segment ids (default 1 long / 0
    global); side: the eight side inputs. Returns (long_output, global_output), float64.
    """
    w = {k: np.asarray(v, np.float64) for k, v in weights.items()}
    p = "etc_document_bert"
    layers = f"{p}/global_local_transformer_layers"
    streams = {"long": np.asarray(features["token_ids"]),
               "global": np.asarray(features["global_token_ids"])}
    segments = {"long": features.get("segment_ids"), "global": features.get("global_segment_ids")}
    x = {}
    for stream, ids in streams.items():
        emb = w[f"{p}/token_emb_lookup/embedding_table"][ids]
        if f"{p}/token_emb_lookup/projection/kernel" in w:
            emb = emb @ w[f"{p}/token_emb_lookup/projection/kernel"] + w[
                f"{p}/token_emb_lookup/projection/bias"]
        seg = segments[stream]
        if seg is None:
            seg = np.full(ids.shape, 1 if stream == "long" else 0)
        emb = emb + w[f"{p}/segment_emb_lookup/embedding_table"][np.asarray(seg)]
        position = f"position_emb_lookup_{stream}/embedding_table"
        if position in w:
            emb = emb + w[position][None, :ids.shape[1]]
        x[stream] = _layer_norm(emb, w[f"{p}/{stream}_emb_layer_norm/gamma"],
                                w[f"{p}/{stream}_emb_layer_norm/beta"])
    pre = config["use_pre_activation_order"]
    act = gelu_tanh if config.get("hidden_act", "gelu") in ("gelu", "gelu_approximate") else None
    for i in range(config["num_hidden_layers"]):
        scope = f"{layers}/fused_att_layer_{i}"
        norms = {"long": f"{scope}/layer_norm_0", "global": f"{scope}/layer_norm_1"}

        def norm(stream, t, scope_name):
            return _layer_norm(t, w[f"{scope_name}/gamma"], w[f"{scope_name}/beta"])

        inputs = {s: norm(s, x[s], norms[s]) for s in x} if pre else x
        long_att, global_att, _, _ = etc_attention_reference(
            inputs["long"], inputs["global"], side,
            _attention_weights(w, f"{scope}/fused_global_local_att", config),
            local_radius=config["local_radius"], use_relative=bool(config.get("relative_vocab_size")))
        att = {"long": long_att, "global": global_att}
        x = {s: x[s] + att[s] if pre else norm(s, x[s] + att[s], norms[s]) for s in x}
        for s in x:
            ff = (f"{layers}/feed_forward_layer_{i}" if config["share_feed_forward_params"]
                  else f"{layers}/{s}_feed_forward_layer_{i}")
            h = norm(s, x[s], f"{ff}/layer_norm") if pre else x[s]
            h = act(h @ w[f"{ff}/dense_layers/layer_0/kernel"] + w[f"{ff}/dense_layers/layer_0/bias"])
            h = h @ w[f"{ff}/dense_layers/layer_1/kernel"] + w[f"{ff}/dense_layers/layer_1/bias"]
            x[s] = x[s] + h if pre else norm(s, x[s] + h, f"{ff}/layer_norm")
    return x["long"], x["global"]
