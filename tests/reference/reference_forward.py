#!/usr/bin/env python3
"""An independent float64 forward pass of decoder-only transformers, for checking shardwise.

Written from the architectures' published descriptions, not from shardwise's C++:
  - Llama ("LLaMA: Open and Efficient Foundation Language Models", Touvron et al. 2023, and the
    Hugging Face Llama model card): pre-norm RMSNorm, rotary embeddings rotating the two halves
    of each head, grouped-query attention, SwiGLU feed-forward.
  - Qwen2/Qwen3 (Qwen technical reports): Q/K/V biases (Qwen2), RMSNorm of each Q and K head
    before the rotation (Qwen3).
  - Mixtral ("Mixtral of Experts", Jiang et al. 2024): softmax over the router logits, top-k,
    the chosen weights renormalised; Qwen-MoE adds a sigmoid-gated shared expert.
  - DeepSeek-V3 ("DeepSeek-V3 Technical Report" §2.1, with multi-head latent attention from
    the DeepSeek-V2 paper §2.1): low-rank Q and a compressed KV latent expanded per head, a
    decoupled rotary key shared by all heads (rotating adjacent pairs, as complex numbers),
    softmax scaled by YaRN's mscale^2; sigmoid router scores with a correction bias used only
    for choosing, group-limited top-k, renormalised weights times routed_scaling_factor,
    shared experts, dense first layers.
  - gpt-oss (the gpt-oss model card, "gpt-oss-120b & gpt-oss-20b Model Card", OpenAI 2025):
    attention with biases, every other layer banded to a sliding window, one learned sink
    logit per head joining each softmax; a biased router whose top-k logits are softmaxed;
    experts with biases and a clamped SwiGLU, (up + 1) * gate * sigmoid(1.702 gate); YaRN.
  - rope_scaling: linear (Chen et al. 2023), dynamic NTK, YaRN (Peng et al. 2023), Llama 3.1's
    llama3 scaling.
It recomputes the whole sequence for every generated token (no KV cache), in float64, from the
safetensors checkpoint that shardwise loads.

Usage: reference_forward.py CHECKPOINT_DIR REQUEST.json OUTPUT.json
  REQUEST.json: {"prompts": [[token ids], ...], "gen": G}
  OUTPUT.json:  {"tokens": [[G greedy ids], ...], "logits": [[vocab floats of the last step], ...]}
"""
import json
import math
import os
import struct
import sys

import numpy as np


# ---------------------------------------------------------------------------------------------
# safetensors: 8-byte little-endian header length, a JSON header, then the raw tensors.


def read_safetensors(path):
    with open(path, "rb") as f:
        (header_len,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_len))
        data = f.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = data[begin:end]
        if info["dtype"] == "F32":
            a = np.frombuffer(raw, dtype="<f4")
        elif info["dtype"] == "F16":
            a = np.frombuffer(raw, dtype="<f2")
        elif info["dtype"] == "BF16":
            a = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise SystemExit(f"{path}: tensor {name} has dtype {info['dtype']}")
        tensors[name] = a.astype(np.float64).reshape(info["shape"])
    return tensors


def load_checkpoint(directory):
    single = os.path.join(directory, "model.safetensors")
    if os.path.exists(single):
        return read_safetensors(single)
    with open(os.path.join(directory, "model.safetensors.index.json")) as f:
        files = sorted(set(json.load(f)["weight_map"].values()))
    tensors = {}
    for name in files:
        tensors.update(read_safetensors(os.path.join(directory, name)))
    return tensors


# ---------------------------------------------------------------------------------------------
# Building blocks.


def rms_norm(x, weight, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def silu(x):
    return x / (1.0 + np.exp(-x))


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def yarn_mscale(factor, mscale):
    return 1.0 if factor <= 1 else 0.1 * mscale * math.log(factor) + 1.0


def rope_frequencies(cfg, dim, seq_len):
    """(inverse frequencies [dim/2], cos/sin magnitude) for a pass over seq_len tokens."""
    base = float(cfg.get("rope_theta", 10000.0))
    scaling = cfg.get("rope_scaling") or {}
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    trained = scaling.get("original_max_position_embeddings") or cfg["max_position_embeddings"]
    factor = float(scaling.get("factor", 1.0))
    if kind == "dynamic" and seq_len > trained:
        # NTK-aware: grow the base so the lowest frequency stretches to the longer context.
        base = base * ((factor * seq_len / trained) - (factor - 1)) ** (dim / (dim - 2))
    exponents = np.arange(0, dim, 2, dtype=np.float64) / dim
    inv = base ** -exponents
    magnitude = 1.0
    if kind == "linear":
        inv = inv / factor
    elif kind == "llama3":
        low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
        wavelength = 2 * math.pi / inv
        blend = (trained / wavelength - low) / (high - low)
        scaled = np.where(wavelength > trained / low, inv / factor, inv)
        middle = (wavelength >= trained / high) & (wavelength <= trained / low)
        inv = np.where(middle, (1 - blend) * inv / factor + blend * inv, scaled)
    elif kind == "yarn":
        fast, slow = scaling.get("beta_fast", 32), scaling.get("beta_slow", 1)

        def dim_of(rotations):  # the dim whose wavelength fits `rotations` times in `trained`
            return dim * math.log(trained / (rotations * 2 * math.pi)) / (2 * math.log(base))

        lo, hi = dim_of(fast), dim_of(slow)
        if scaling.get("truncate", True):
            lo, hi = math.floor(lo), math.ceil(hi)
        lo, hi = max(lo, 0), min(hi, dim - 1)
        if lo == hi:
            hi += 0.001
        interpolate = np.clip((np.arange(dim // 2) - lo) / (hi - lo), 0, 1)
        inv = inv / factor * interpolate + inv * (1 - interpolate)
        if scaling.get("attention_factor"):
            magnitude = scaling["attention_factor"]
        elif scaling.get("mscale") and scaling.get("mscale_all_dim"):
            magnitude = yarn_mscale(factor, scaling["mscale"]) / yarn_mscale(
                factor, scaling["mscale_all_dim"])
        else:
            magnitude = yarn_mscale(factor, 1.0)
    elif kind not in ("default", "dynamic"):
        raise SystemExit(f"rope_scaling type {kind} is not implemented by the reference")
    return inv, magnitude


def rotate(x, positions, inv, magnitude, interleaved=False):
    """Rotary embedding of x [tokens, heads, dim] at `positions`."""
    angles = positions[:, None] * inv[None, :]
    cos = (np.cos(angles) * magnitude)[:, None, :]
    sin = (np.sin(angles) * magnitude)[:, None, :]
    if interleaved:
        a, b = x[..., 0::2], x[..., 1::2]
    else:
        half = x.shape[-1] // 2
        a, b = x[..., :half], x[..., half:]
    ra, rb = a * cos - b * sin, b * cos + a * sin
    out = np.empty_like(x)
    if interleaved:
        out[..., 0::2], out[..., 1::2] = ra, rb
    else:
        out[..., :half], out[..., half:] = ra, rb
    return out


def causal_attention(q, k, v, scale, window=0, sinks=None):
    """q [T, H, d], k and v [T, H, d'] (already one KV head per query head). A window keeps
    the last `window` keys of each query; sinks [H] add one logit per head to the softmax."""
    t = q.shape[0]
    scores = np.einsum("qhd,khd->hqk", q, k) * scale
    query, key = np.arange(t)[:, None], np.arange(t)[None, :]
    visible = (key <= query) & ((key > query - window) if window else True)
    scores = np.where(visible[None], scores, -np.inf)
    if sinks is None:
        return np.einsum("hqk,khd->qhd", softmax(scores), v)
    sink = np.broadcast_to(sinks[:, None, None], (scores.shape[0], t, 1))
    probs = softmax(np.concatenate([scores, sink], axis=-1))[..., :-1]
    return np.einsum("hqk,khd->qhd", probs, v)


# ---------------------------------------------------------------------------------------------
# The model.


class Model:
    def __init__(self, directory):
        with open(os.path.join(directory, "config.json")) as f:
            self.cfg = json.load(f)
        self.w = load_checkpoint(directory)
        self.arch = self.cfg["architectures"][0]
        self.eps = float(self.cfg.get("rms_norm_eps", 1e-6))

    def p(self, layer, name):
        return self.w[f"model.layers.{layer}.{name}"]

    def linear(self, x, layer, name, bias=False):
        y = x @ self.p(layer, name + ".weight").T
        return y + self.p(layer, name + ".bias") if bias else y

    # Llama / Mistral / Qwen2 / Qwen3 attention.
    def attention(self, x, i, positions):
        cfg = self.cfg
        heads, kv_heads = cfg["num_attention_heads"], cfg.get("num_key_value_heads",
                                                               cfg["num_attention_heads"])
        head_dim = cfg.get("head_dim") or cfg["hidden_size"] // heads
        qwen2 = self.arch.startswith("Qwen2")
        gpt_oss = self.arch == "GptOssForCausalLM"
        bias = qwen2 or cfg.get("attention_bias", False)
        t = x.shape[0]
        q = self.linear(x, i, "self_attn.q_proj", bias).reshape(t, heads, head_dim)
        k = self.linear(x, i, "self_attn.k_proj", bias).reshape(t, kv_heads, head_dim)
        v = self.linear(x, i, "self_attn.v_proj", bias).reshape(t, kv_heads, head_dim)
        if self.arch.startswith("Qwen3"):
            q = rms_norm(q, self.p(i, "self_attn.q_norm.weight"), self.eps)
            k = rms_norm(k, self.p(i, "self_attn.k_norm.weight"), self.eps)
        inv, magnitude = rope_frequencies(cfg, head_dim, t)
        q, k = rotate(q, positions, inv, magnitude), rotate(k, positions, inv, magnitude)
        group = heads // kv_heads
        k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
        window, sinks = 0, None
        if gpt_oss:
            if cfg["layer_types"][i] == "sliding_attention":
                window = cfg["sliding_window"]
            sinks = self.p(i, "self_attn.sinks")
        o = causal_attention(q, k, v, 1.0 / math.sqrt(head_dim), window, sinks)
        o = o.reshape(t, heads * head_dim)
        o_bias = cfg.get("attention_bias", False) and not qwen2
        return self.linear(o, i, "self_attn.o_proj", o_bias)

    # DeepSeek-V3 multi-head latent attention, the plain (non-absorbed) form.
    def mla(self, x, i, positions):
        cfg = self.cfg
        heads, nope, rope = cfg["num_attention_heads"], cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"]
        v_dim, rank = cfg["v_head_dim"], cfg["kv_lora_rank"]
        t = x.shape[0]
        if cfg.get("q_lora_rank"):
            cq = rms_norm(self.linear(x, i, "self_attn.q_a_proj"),
                          self.p(i, "self_attn.q_a_layernorm.weight"), self.eps)
            q = self.linear(cq, i, "self_attn.q_b_proj")
        else:
            q = self.linear(x, i, "self_attn.q_proj")
        q = q.reshape(t, heads, nope + rope)
        compressed = self.linear(x, i, "self_attn.kv_a_proj_with_mqa")
        c_kv = rms_norm(compressed[:, :rank], self.p(i, "self_attn.kv_a_layernorm.weight"), self.eps)
        k_rope = compressed[:, None, rank:]
        kv = (c_kv @ self.p(i, "self_attn.kv_b_proj.weight").T).reshape(t, heads, nope + v_dim)
        inv, magnitude = rope_frequencies(cfg, rope, t)
        # Pairs (2j, 2j+1) as complex numbers z, rotated by z * exp(i pos inv_j).
        def rotate_complex(a):
            z = (a[..., 0::2] + 1j * a[..., 1::2]) * magnitude * np.exp(
                1j * positions[:, None, None] * inv[None, None, :])
            out = np.empty_like(a)
            out[..., 0::2], out[..., 1::2] = z.real, z.imag
            return out
        q_rope, k_rope = rotate_complex(q[..., nope:]), rotate_complex(k_rope)
        query = np.concatenate([q[..., :nope], q_rope], axis=-1)
        key = np.concatenate([kv[..., :nope], np.repeat(k_rope, heads, axis=1)], axis=-1)
        scale = 1.0 / math.sqrt(nope + rope)
        scaling = cfg.get("rope_scaling") or {}
        if scaling.get("mscale_all_dim"):
            scale *= yarn_mscale(scaling["factor"], scaling["mscale_all_dim"]) ** 2
        o = causal_attention(query, key, kv[..., nope:], scale).reshape(t, heads * v_dim)
        return self.linear(o, i, "self_attn.o_proj")

    def deepseek_moe(self, x, i):
        cfg = self.cfg
        experts, top_k = cfg["n_routed_experts"], cfg["num_experts_per_tok"]
        groups, top_groups = cfg.get("n_group", 1), cfg.get("topk_group", 1)
        logits = x @ self.p(i, "mlp.gate.weight").T
        scores = 1.0 / (1.0 + np.exp(-logits)) if cfg.get("scoring_func") == "sigmoid" else softmax(logits)
        biased = scores + (self.p(i, "mlp.gate.e_score_correction_bias")
                           if cfg.get("topk_method") == "noaux_tc" else 0.0)
        size = experts // groups
        out = np.zeros_like(x)
        for t in range(x.shape[0]):
            def group_score(g):
                members = sorted(biased[t, g * size:(g + 1) * size], reverse=True)
                return sum(members[:2]) if cfg.get("topk_method") == "noaux_tc" else members[0]
            kept = sorted(range(groups), key=lambda g: (-group_score(g), g))[:top_groups]
            allowed = [e for g in kept for e in range(g * size, (g + 1) * size)]
            chosen = sorted(allowed, key=lambda e: (-biased[t, e], e))[:top_k]
            weights = scores[t, chosen]
            if cfg.get("norm_topk_prob", False):
                weights = weights / weights.sum()
            weights = weights * cfg.get("routed_scaling_factor", 1.0)
            for e, weight in zip(chosen, weights):
                out[t] += weight * self.swiglu(x[t:t + 1], i, f"mlp.experts.{e}.")[0]
        if cfg.get("n_shared_experts"):
            out += self.swiglu(x, i, "mlp.shared_experts.")
        return out

    def gpt_oss_moe(self, x, i):
        cfg = self.cfg
        top_k, limit, alpha = cfg["num_experts_per_tok"], cfg["swiglu_limit"], 1.702
        logits = self.linear(x, i, "mlp.router", bias=True)
        gate_up, gate_up_bias = self.p(i, "mlp.experts.gate_up_proj"), self.p(i, "mlp.experts.gate_up_proj_bias")
        down, down_bias = self.p(i, "mlp.experts.down_proj"), self.p(i, "mlp.experts.down_proj_bias")
        out = np.zeros_like(x)
        for t in range(x.shape[0]):
            chosen = sorted(range(logits.shape[1]), key=lambda e: (-logits[t, e], e))[:top_k]
            weights = softmax(logits[t, chosen])
            for e, weight in zip(chosen, weights):
                h = x[t] @ gate_up[e] + gate_up_bias[e]  # stored [hidden, 2 x inter]
                gate, up = np.minimum(h[0::2], limit), np.clip(h[1::2], -limit, limit)
                glu = gate / (1.0 + np.exp(-alpha * gate))
                out[t] += weight * (((up + 1) * glu) @ down[e] + down_bias[e])
        return out

    def swiglu(self, x, i, prefix, gate="gate_proj", up="up_proj", down="down_proj"):
        h = silu(self.linear(x, i, prefix + gate)) * self.linear(x, i, prefix + up)
        return self.linear(h, i, prefix + down)

    def is_moe_layer(self, i):
        cfg = self.cfg
        if self.arch in ("MixtralForCausalLM", "GptOssForCausalLM"):
            return True
        if self.arch == "DeepseekV3ForCausalLM":
            return i >= cfg.get("first_k_dense_replace", 0) and i % cfg.get("moe_layer_freq", 1) == 0
        if self.arch in ("Qwen2MoeForCausalLM", "Qwen3MoeForCausalLM"):
            return (i not in cfg.get("mlp_only_layers", []) and cfg["num_experts"] > 0 and
                    (i + 1) % cfg.get("decoder_sparse_step", 1) == 0)
        return False

    def moe(self, x, i):
        cfg = self.cfg
        if self.arch == "DeepseekV3ForCausalLM":
            return self.deepseek_moe(x, i)
        if self.arch == "GptOssForCausalLM":
            return self.gpt_oss_moe(x, i)
        mixtral = self.arch == "MixtralForCausalLM"
        block = "block_sparse_moe." if mixtral else "mlp."
        names = ("w1", "w3", "w2") if mixtral else ("gate_proj", "up_proj", "down_proj")
        top_k = cfg["num_experts_per_tok"]
        renormalise = mixtral or cfg.get("norm_topk_prob", False)
        probs = softmax(x @ self.p(i, block + "gate.weight").T)
        out = np.zeros_like(x)
        for t in range(x.shape[0]):
            chosen = sorted(range(probs.shape[1]), key=lambda e: (-probs[t, e], e))[:top_k]
            weights = probs[t, chosen]
            if renormalise:
                weights = weights / weights.sum()
            for e, weight in zip(chosen, weights):
                out[t] += weight * self.swiglu(x[t:t + 1], i, f"{block}experts.{e}.", *names)[0]
        if cfg.get("shared_expert_intermediate_size", 0) > 0:
            shared = self.swiglu(x, i, "mlp.shared_expert.")
            gate = 1.0 / (1.0 + np.exp(-(x @ self.p(i, "mlp.shared_expert_gate.weight").T)))
            out += gate * shared
        return out

    def logits(self, tokens):
        """Logits of every position of `tokens`."""
        x = self.w["model.embed_tokens.weight"][tokens]
        positions = np.arange(len(tokens), dtype=np.float64)
        for i in range(self.cfg["num_hidden_layers"]):
            h = rms_norm(x, self.p(i, "input_layernorm.weight"), self.eps)
            attention = self.mla if self.arch == "DeepseekV3ForCausalLM" else self.attention
            x = x + attention(h, i, positions)
            h = rms_norm(x, self.p(i, "post_attention_layernorm.weight"), self.eps)
            x = x + (self.moe(h, i) if self.is_moe_layer(i) else self.swiglu(h, i, "mlp."))
        x = rms_norm(x, self.w["model.norm.weight"], self.eps)
        head = self.w.get("lm_head.weight", self.w["model.embed_tokens.weight"])
        return x @ head.T


def main():
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    model = Model(sys.argv[1])
    with open(sys.argv[2]) as f:
        request = json.load(f)
    out = {"tokens": [], "logits": []}
    for prompt in request["prompts"]:
        tokens, generated, last = list(prompt), [], None
        for _ in range(request["gen"]):
            last = model.logits(np.array(tokens))[-1]
            token = int(np.argmax(last))
            generated.append(token)
            tokens.append(token)
        out["tokens"].append(generated)
        out["logits"].append([float(v) for v in last])
    with open(sys.argv[3], "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
