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


def causal_attention(q, k, v, scale):
    """q [T, H, d], k and v [T, H, d'] (already one KV head per query head)."""
    t = q.shape[0]
    scores = np.einsum("qhd,khd->hqk", q, k) * scale
    scores = np.where(np.tril(np.ones((t, t), dtype=bool))[None], scores, -np.inf)
    return np.einsum("hqk,khd->qhd", softmax(scores), v)


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
        o = causal_attention(q, k, v, 1.0 / math.sqrt(head_dim)).reshape(t, heads * head_dim)
        o_bias = cfg.get("attention_bias", False) and not qwen2
        return self.linear(o, i, "self_attn.o_proj", o_bias)

    def swiglu(self, x, i, prefix, gate="gate_proj", up="up_proj", down="down_proj"):
        h = silu(self.linear(x, i, prefix + gate)) * self.linear(x, i, prefix + up)
        return self.linear(h, i, prefix + down)

    def is_moe_layer(self, i):
        cfg = self.cfg
        if self.arch == "MixtralForCausalLM":
            return True
        if self.arch in ("Qwen2MoeForCausalLM", "Qwen3MoeForCausalLM"):
            return (i not in cfg.get("mlp_only_layers", []) and cfg["num_experts"] > 0 and
                    (i + 1) % cfg.get("decoder_sparse_step", 1) == 0)
        return False

    def moe(self, x, i):
        cfg = self.cfg
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
            x = x + self.attention(h, i, positions)
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
