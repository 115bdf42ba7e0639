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
