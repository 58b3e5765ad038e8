#!/usr/bin/python3
"""Re-derive the golden logits of every model fixture with a second, deliberately naive NumPy
implementation (explicit per-head, per-position loops written from the HF formulas, sharing no
code with llama.py / opt.py / safetensors_io.py) and compare.

    /usr/bin/python3 tools/train/check_fixtures.py [tests/fixtures/engine]

Exit code 0 when every fixture agrees within 1e-4 x max|logit|, 1 otherwise.
"""
import json
import os
import struct
import sys

import numpy as np

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    body = data[8 + n:]
    out = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        raw = body[begin:end]
        if info["dtype"] == "BF16":  # the high half of an IEEE float32
            bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            arr = bits.view(np.float32)
        else:
            arr = np.frombuffer(raw, dtype={"F32": "<f4", "F16": "<f2", "I64": "<i8",
                                            "I32": "<i4"}[info["dtype"]])
        out[name] = arr.reshape(info["shape"]).astype(
            np.float64 if info["dtype"] in ("F32", "F16", "BF16") else np.int64)
    return out


def softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def rms_norm(x, w, eps):
    return w * x / np.sqrt(np.mean(x * x) + eps)


def layer_norm(x, w, b, eps):
    mu = x.mean()
    return w * (x - mu) / np.sqrt(np.mean((x - mu) ** 2) + eps) + b


def rope(vec, pos, theta):
    d = len(vec)
    out = np.empty(d)
    for i in range(d // 2):
        # float32 tables, as HF computes them
        inv_freq = np.float32(1.0) / np.float32(theta) ** (np.float32(2 * i) / np.float32(d))
        angle = np.float64(np.float32(pos) * np.float32(inv_freq))
        c, s = np.cos(angle), np.sin(angle)
        a, b = vec[i], vec[i + d // 2]
        out[i] = a * c - b * s
        out[i + d // 2] = b * c + a * s
    return out


def llama_logits(cfg, w, ids):
    H, KVH = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hidden = cfg["hidden_size"]
    D = cfg.get("head_dim", hidden // H)
    eps, theta = cfg["rms_norm_eps"], cfg["rope_theta"]
    T = len(ids)
    x = [w["model.embed_tokens.weight"][t].copy() for t in ids]
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        ks, vs, qs = [], [], []
        for t in range(T):
            h = rms_norm(x[t], w[p + "input_layernorm.weight"], eps)
            q = w[p + "self_attn.q_proj.weight"] @ h
            k = w[p + "self_attn.k_proj.weight"] @ h
            v = w[p + "self_attn.v_proj.weight"] @ h
            if p + "self_attn.q_proj.bias" in w:
                q = q + w[p + "self_attn.q_proj.bias"]
                k = k + w[p + "self_attn.k_proj.bias"]
                v = v + w[p + "self_attn.v_proj.bias"]
            qs.append([rope(q[j * D:(j + 1) * D], t, theta) for j in range(H)])
            ks.append([rope(k[j * D:(j + 1) * D], t, theta) for j in range(KVH)])
            vs.append([v[j * D:(j + 1) * D] for j in range(KVH)])
        for t in range(T):
            heads = []
            for j in range(H):
                kv = j // (H // KVH)
                scores = np.array([qs[t][j] @ ks[s][kv] for s in range(t + 1)]) / np.sqrt(D)
                probs = softmax(scores)
                heads.append(sum(probs[s] * vs[s][kv] for s in range(t + 1)))
            x[t] = x[t] + w[p + "self_attn.o_proj.weight"] @ np.concatenate(heads)
            h = rms_norm(x[t], w[p + "post_attention_layernorm.weight"], eps)
            gate = w[p + "mlp.gate_proj.weight"] @ h
            up = w[p + "mlp.up_proj.weight"] @ h
            x[t] = x[t] + w[p + "mlp.down_proj.weight"] @ (gate / (1 + np.exp(-gate)) * up)
    head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
    return np.stack([head @ rms_norm(x[t], w["model.norm.weight"], eps) for t in range(T)])


def opt_logits(cfg, w, ids):
    H, hidden = cfg["num_attention_heads"], cfg["hidden_size"]
    D = hidden // H
    eps = 1e-5
    T = len(ids)
    p0 = "model.decoder."
    x = [w[p0 + "embed_tokens.weight"][tok] + w[p0 + "embed_positions.weight"][t + 2]
         for t, tok in enumerate(ids)]
    for layer in range(cfg["num_hidden_layers"]):
        p = f"{p0}layers.{layer}."
        qs, ks, vs = [], [], []
        for t in range(T):
            h = layer_norm(x[t], w[p + "self_attn_layer_norm.weight"],
                           w[p + "self_attn_layer_norm.bias"], eps)
            qs.append(w[p + "self_attn.q_proj.weight"] @ h + w[p + "self_attn.q_proj.bias"])
            ks.append(w[p + "self_attn.k_proj.weight"] @ h + w[p + "self_attn.k_proj.bias"])
            vs.append(w[p + "self_attn.v_proj.weight"] @ h + w[p + "self_attn.v_proj.bias"])
        for t in range(T):
            heads = []
            for j in range(H):
                sl = slice(j * D, (j + 1) * D)
                scores = np.array([qs[t][sl] @ ks[s][sl] for s in range(t + 1)]) / np.sqrt(D)
                probs = softmax(scores)
                heads.append(sum(probs[s] * vs[s][sl] for s in range(t + 1)))
            x[t] = x[t] + w[p + "self_attn.out_proj.weight"] @ np.concatenate(heads) \
                + w[p + "self_attn.out_proj.bias"]
            h = layer_norm(x[t], w[p + "final_layer_norm.weight"], w[p + "final_layer_norm.bias"],
                           eps)
            f = np.maximum(w[p + "fc1.weight"] @ h + w[p + "fc1.bias"], 0.0)
            x[t] = x[t] + w[p + "fc2.weight"] @ f + w[p + "fc2.bias"]
    head = w.get("lm_head.weight", w[p0 + "embed_tokens.weight"])
    return np.stack([head @ layer_norm(x[t], w[p0 + "final_layer_norm.weight"],
                                       w[p0 + "final_layer_norm.bias"], eps) for t in range(T)])


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "tests", "fixtures", "engine")
    failures = 0
    for name in sorted(os.listdir(root)):
        golden_path = os.path.join(root, name, "golden.safetensors")
        if not os.path.exists(golden_path):
            continue
        model_dir = os.path.join(root, name)
        if not os.path.exists(os.path.join(model_dir, "model.safetensors")):
            model_dir = os.path.join(REPO, "assets", name)  # the trained model lives in assets/
        with open(os.path.join(model_dir, "config.json")) as f:
            cfg = json.load(f)
        weights = read_safetensors(os.path.join(model_dir, "model.safetensors"))
        golden = read_safetensors(golden_path)
        ids = golden["input_ids"].tolist()
        family = cfg["model_type"]
        logits = opt_logits(cfg, weights, ids) if family == "opt" else llama_logits(cfg, weights, ids)
        diff = np.abs(logits - golden["logits"]).max()
        scale = np.abs(golden["logits"]).max()
        same_argmax = (logits.argmax(-1) == golden["logits"].argmax(-1)).all()
        ok = diff <= 1e-4 * scale and same_argmax
        failures += not ok
        print(f"{name} ({family}): max |numpy - golden| {diff:.2e} (max |logit| {scale:.1f}), "
              f"argmax {'agrees' if same_argmax else 'DIFFERS'}: {'ok' if ok else 'FAIL'}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
