#!/usr/bin/env python3
"""Writes an F32 GGUF file of a Llama-family shape with random weights, for
llama.cpp's llama-bench (speed only: the weights mean nothing, as in ispsim's
own random-weight benchmark model). Quantize it to Q8_0 with llama.cpp's
llama-quantize. Needs numpy (Debian: python3-numpy, /usr/bin/python3) and the gguf-py package of the llama.cpp source
tree the user builds (pass its directory with --gguf-py); nothing of llama.cpp
ships with ispsim.

  python3 bench/llama_cpp/make_random_gguf.py --gguf-py LLAMA_SRC/gguf-py --out smollm2-135m-f32.gguf

The default shape is SmolLM2-135M's (kernels/int/random_model.cc,
smollm2_135m_config): 30 layers, hidden 576, 9 heads / 3 KV heads, head 64,
FFN 1536, vocab 49152, RoPE theta 100000, tied embeddings. The vocabulary is
llama.cpp's 'none' type (dummy tokens): llama-bench feeds random token ids.
"""
import argparse
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gguf-py", required=True, help="gguf-py directory of a llama.cpp source tree")
    p.add_argument("--out", required=True, help="output .gguf file (F32)")
    p.add_argument("--layers", type=int, default=30)
    p.add_argument("--hidden", type=int, default=576)
    p.add_argument("--heads", type=int, default=9)
    p.add_argument("--kv-heads", type=int, default=3)
    p.add_argument("--ffn", type=int, default=1536)
    p.add_argument("--vocab", type=int, default=49152)
    p.add_argument("--context", type=int, default=8192)
    p.add_argument("--rope-theta", type=float, default=100000.0)
    p.add_argument("--seed", type=int, default=7)
    a = p.parse_args()
    sys.path.insert(0, a.gguf_py)
    # gguf-py imports sentencepiece for its tokenizer classes, which this
    # script does not use (no Debian package; PyPI may be unreachable).
    if "sentencepiece" not in sys.modules:
        try:
            import sentencepiece  # noqa: F401
        except ImportError:
            import types
            stub = types.ModuleType("sentencepiece")
            stub.SentencePieceProcessor = None
            sys.modules["sentencepiece"] = stub
    try:
        import numpy as np
        import gguf
    except ImportError as e:
        sys.exit(f"make_random_gguf.py: {e} (needs numpy and --gguf-py pointing at llama.cpp's gguf-py)")
    if a.hidden % a.heads or a.heads % a.kv_heads:
        sys.exit("make_random_gguf.py: --heads must divide --hidden and --kv-heads must divide --heads")
    head_dim = a.hidden // a.heads
    rng = np.random.default_rng(a.seed)

    def matrix(rows, cols):  # U(-1, 1) / sqrt(fan_in), as ispsim's random model
        return (rng.uniform(-1.0, 1.0, size=(rows, cols)) / np.sqrt(cols)).astype(np.float32)

    w = gguf.GGUFWriter(a.out, "llama")
    w.add_name("random-llama")
    w.add_context_length(a.context)
    w.add_embedding_length(a.hidden)
    w.add_block_count(a.layers)
    w.add_feed_forward_length(a.ffn)
    w.add_head_count(a.heads)
    w.add_head_count_kv(a.kv_heads)
    w.add_rope_dimension_count(head_dim)
    w.add_rope_freq_base(a.rope_theta)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(a.vocab)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_tokenizer_model("none")
    ones = np.ones(a.hidden, dtype=np.float32)
    w.add_tensor("token_embd.weight", matrix(a.vocab, a.hidden))
    for i in range(a.layers):
        b = f"blk.{i}."
        w.add_tensor(b + "attn_norm.weight", ones)
        w.add_tensor(b + "attn_q.weight", matrix(a.heads * head_dim, a.hidden))
        w.add_tensor(b + "attn_k.weight", matrix(a.kv_heads * head_dim, a.hidden))
        w.add_tensor(b + "attn_v.weight", matrix(a.kv_heads * head_dim, a.hidden))
        w.add_tensor(b + "attn_output.weight", matrix(a.hidden, a.heads * head_dim))
        w.add_tensor(b + "ffn_norm.weight", ones)
        w.add_tensor(b + "ffn_gate.weight", matrix(a.ffn, a.hidden))
        w.add_tensor(b + "ffn_up.weight", matrix(a.ffn, a.hidden))
        w.add_tensor(b + "ffn_down.weight", matrix(a.hidden, a.ffn))
    w.add_tensor("output_norm.weight", ones)  # no output.weight: tied to token_embd, as SmolLM2
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
