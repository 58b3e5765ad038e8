#!/usr/bin/python3
"""Golden fixtures for the C++ engine, from this independent PyTorch implementation.

    /usr/bin/python3 tools/train/make_fixtures.py --what random     # Qwen2 + OPT random models
    /usr/bin/python3 tools/train/make_fixtures.py --what tokenizer  # needs assets/brown-llama
    /usr/bin/python3 tools/train/make_fixtures.py --what trained    # needs the trained model
    /usr/bin/python3 tools/train/make_fixtures.py                   # all three

Every model fixture is a directory tests/fixtures/engine/<name>/ with config.json,
model.safetensors and golden.safetensors (input_ids I64 [T], logits F32 [T, vocab]). The logits are
computed in float64 from the weights exactly as stored (read back from model.safetensors, F16/BF16
upcast), then rounded to F32. See tests/fixtures/engine/README.md.
"""
import argparse
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe  # noqa: E402
import llama  # noqa: E402
import opt  # noqa: E402
import safetensors_io  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

TRAINED_PROMPT = ("The jury said it did find that many of the city's election laws were "
                  "outmoded, and it recommended that")

# Strings for the tokenizer golden: ASCII, punctuation, digits, whitespace runs, newlines,
# contractions (GPT-2 splits only lowercase 's 't 're 've 'm 'll 'd), non-ASCII UTF-8, the special
# token written in the text, and edge cases (empty, lone space, trailing whitespace).
TOKENIZER_CASES = [
    "Hello, world!",
    "The Fulton County Grand Jury said Friday an investigation of Atlanta's recent primary "
    "election produced \"no evidence\" that any irregularities took place.",
    "I don't think they'll've gone; it's OK, we're fine: she'd say I'm right. DON'T 'S",
    "Numbers: 3.14159, 1,000,000 and 2026-11-30 at 05:35 (call 555-0199) -- 42%!",
    "  leading spaces,   runs   of spaces\tand\ttabs  ",
    "line one\nline two\n\n\nafter blank lines\r\nwindows line\n",
    "UPPER lower MiXeD 123abc abc123 _under_score__ a+b=c <html> [x] {y} $5 #tag @user",
    "Caf\u00e9 na\u00efve fa\u00e7ade r\u00e9sum\u00e9 \u2014 \u201cquotes\u201d \u2018single\u2019 \u2026",
    "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8, \u4e2d\u6587, \ud55c\uad6d\uc5b4, "
    "\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac, \u0440\u0443\u0441\u0441\u043a\u0438\u0439",
    "emoji \U0001F600\U0001F44D\U0001F3FD and symbols \u2211\u221e\u2260 x\u00b2 \u00bd",
    "first document<|endoftext|>second document",
    "",
    " ",
    "trailing whitespace \n\n",
]


def write_json(path, data):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, ensure_ascii=False)
        f.write("\n")


def randomize(model, seed):
    """Weights that make every part of the network matter: N(0, 1/fan_in) matrices (activations
    stay O(1)), N(0, 1) embeddings, norm weights 1 + N(0, 0.1), biases N(0, 0.1)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("embed_tokens.weight") or name.endswith("embed_positions.weight"):
                p.copy_(torch.randn(p.shape, generator=g))
            elif p.dim() == 2:
                p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(p.shape[1]))
            elif "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.1 * torch.randn(p.shape, generator=g))


def golden_logits(model, stored, input_ids):
    """Load the stored tensors (upcast) into `model` and run it in float64 and float32.
    Returns (float64 logits rounded to F32, max |float32 - float64|)."""
    state = {k: v.to(torch.float64) for k, v in stored.items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    tied = {"lm_head.weight"}
    if unexpected or set(missing) - tied:
        raise SystemExit(f"stored tensors do not match the model: missing {missing}, "
                         f"unexpected {unexpected}")
    if "lm_head.weight" in missing:
        model.lm_head.weight = model.model.embed_tokens.weight
    model.eval()
    with torch.no_grad():
        ids = input_ids.unsqueeze(0)
        ref = model.double()(ids)[0]
        f32 = model.float()(ids)[0].double()
    return ref.float(), (f32 - ref).abs().max().item()


def write_model_fixture(out_dir, hf_config, model, dtype_name, input_ids, note):
    os.makedirs(out_dir, exist_ok=True)
    write_json(os.path.join(out_dir, "config.json"), hf_config)
    safetensors_io.save(os.path.join(out_dir, "model.safetensors"), model.hf_state_dict(),
                        dtype_of=lambda _n, _t: dtype_name, metadata={"format": "pt"})
    stored, _ = safetensors_io.load(os.path.join(out_dir, "model.safetensors"))
    logits, f32_err = golden_logits(model, stored, input_ids)
    safetensors_io.save(os.path.join(out_dir, "golden.safetensors"),
                        {"input_ids": input_ids, "logits": logits},
                        dtype_of=lambda n, _t: "I64" if n == "input_ids" else "F32",
                        metadata={"note": note,
                                  "pytorch_fp32_max_abs_diff": f"{f32_err:.3e}"})
    print(f"{out_dir}: T={len(input_ids)} vocab={logits.shape[1]} "
          f"logits in [{logits.min():.3f}, {logits.max():.3f}], "
          f"PyTorch FP32 vs golden max |diff| {f32_err:.2e}")


def make_qwen2(out_root):
    c = llama.Config(vocab_size=512, hidden_size=64, intermediate_size=176, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                     rope_theta=1e6, rms_norm_eps=1e-6, tie_word_embeddings=False,
                     bos_token_id=0, eos_token_id=1, attention_bias=True)
    torch.manual_seed(0)
    model = llama.LlamaForCausalLM(c)
    randomize(model, seed=2)
    hf = {
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "vocab_size": c.vocab_size,
        "hidden_size": c.hidden_size,
        "intermediate_size": c.intermediate_size,
        "num_hidden_layers": c.num_hidden_layers,
        "num_attention_heads": c.num_attention_heads,
        "num_key_value_heads": c.num_key_value_heads,
        "hidden_act": "silu",
        "max_position_embeddings": c.max_position_embeddings,
        "initializer_range": 0.02,
        "rms_norm_eps": c.rms_norm_eps,
        "rope_theta": c.rope_theta,
        "rope_scaling": None,
        "use_sliding_window": False,
        "sliding_window": c.max_position_embeddings,
        "max_window_layers": c.num_hidden_layers,
        "attention_dropout": 0.0,
        "tie_word_embeddings": c.tie_word_embeddings,
        "bos_token_id": c.bos_token_id,
        "eos_token_id": c.eos_token_id,
        "use_cache": True,
        "torch_dtype": "float32",
        "transformers_version": "4.40.0",
    }
    ids = torch.randint(0, c.vocab_size, (20,), generator=torch.Generator().manual_seed(3))
    write_model_fixture(os.path.join(out_root, "qwen2-tiny-random"), hf, model, "F32", ids,
                        "random Qwen2 (q/k/v bias, GQA 4/2, untied lm_head, rope_theta 1e6)")


def make_opt(out_root):
    c = opt.Config(vocab_size=512, hidden_size=64, ffn_dim=256, num_hidden_layers=2,
                   num_attention_heads=4, max_position_embeddings=64)
    model = opt.OPTForCausalLM(c)
    randomize(model, seed=4)
    ids = torch.randint(0, c.vocab_size, (20,), generator=torch.Generator().manual_seed(5))
    write_model_fixture(os.path.join(out_root, "opt-tiny-random"), c.to_hf("float16"), model,
                        "F16", ids, "random OPT (pre-LN, ReLU, learned positions offset 2, MHA, "
                        "tied lm_head), F16 weights")


def make_tokenizer_golden(out_root, tokenizer_path):
    tok = bpe.Tokenizer.load(tokenizer_path)
    cases = []
    for text in TOKENIZER_CASES:
        ids = tok.encode(text)
        if tok.decode(ids) != text:
            raise SystemExit(f"tokenizer does not round-trip {text!r}")
        cases.append({"text": text, "ids": ids,
                      "tokens": [tok.id_to_token[i] for i in ids]})
    write_json(os.path.join(out_root, "tokenizer_golden.json"), {
        "tokenizer": os.path.relpath(tokenizer_path, REPO),
        "note": "ids from tools/train/bpe.py (GPT-2 byte-level BPE, HF semantics, special tokens "
                "in the text are recognised); 'tokens' are the byte-level token strings",
        "cases": cases,
    })
    print(f"tokenizer golden: {len(cases)} cases, "
          f"{sum(len(c['ids']) for c in cases)} tokens")


def make_trained(out_root, model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        hf = json.load(f)
    tok = bpe.Tokenizer.load(os.path.join(model_dir, "tokenizer.json"))
    c = llama.Config(vocab_size=hf["vocab_size"], hidden_size=hf["hidden_size"],
                     intermediate_size=hf["intermediate_size"],
                     num_hidden_layers=hf["num_hidden_layers"],
                     num_attention_heads=hf["num_attention_heads"],
                     num_key_value_heads=hf["num_key_value_heads"],
                     max_position_embeddings=hf["max_position_embeddings"],
                     rope_theta=hf["rope_theta"], rms_norm_eps=hf["rms_norm_eps"],
                     tie_word_embeddings=hf["tie_word_embeddings"])
    model = llama.LlamaForCausalLM(c)
    stored, _ = safetensors_io.load(os.path.join(model_dir, "model.safetensors"))
    ids = torch.tensor([tok.eos_id] + tok.encode(TRAINED_PROMPT), dtype=torch.long)
    logits, f32_err = golden_logits(model, stored, ids)
    out_dir = os.path.join(out_root, "brown-llama")
    os.makedirs(out_dir, exist_ok=True)
    safetensors_io.save(os.path.join(out_dir, "golden.safetensors"),
                        {"input_ids": ids, "logits": logits},
                        dtype_of=lambda n, _t: "I64" if n == "input_ids" else "F32",
                        metadata={"note": "assets/brown-llama (BF16 weights upcast); input_ids = "
                                          "<|endoftext|> + encode(prompt)",
                                  "prompt": TRAINED_PROMPT,
                                  "pytorch_fp32_max_abs_diff": f"{f32_err:.3e}"})
    top = logits.argmax(-1).tolist()
    print(f"{out_dir}: T={len(ids)} prompt {TRAINED_PROMPT!r}; greedy next tokens "
          f"{tok.decode(top)!r}; PyTorch FP32 vs golden max |diff| {f32_err:.2e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--what", choices=["random", "tokenizer", "trained", "all"], default="all")
    ap.add_argument("--model", default=os.path.join(REPO, "assets", "brown-llama"))
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "fixtures", "engine"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    if args.what in ("random", "all"):
        make_qwen2(args.out)
        make_opt(args.out)
    if args.what in ("tokenizer", "all"):
        make_tokenizer_golden(args.out, os.path.join(args.model, "tokenizer.json"))
    if args.what in ("trained", "all"):
        make_trained(args.out, args.model)


if __name__ == "__main__":
    main()
