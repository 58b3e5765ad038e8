"""An OPT decoder (OPTForCausalLM semantics and tensor names) in plain PyTorch, for fixtures.

Pre-LayerNorm variant (do_layer_norm_before true, as every OPT size except 350M): per layer
x += out_proj(MHA(self_attn_layer_norm(x))); x += fc2(relu(fc1(final_layer_norm(x)))); then the
decoder's final_layer_norm and the LM head tied to embed_tokens. Learned absolute positions: the
token at position p reads row p + 2 of embed_positions (HF's OPTLearnedPositionalEmbedding offset,
kept for compatibility with fairseq checkpoints). Queries are scaled by head_dim^-0.5 after
q_proj (bias included). word_embed_proj_dim == hidden_size (no project_in/out).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

POSITION_OFFSET = 2


class Config:
    def __init__(self, vocab_size, hidden_size, ffn_dim, num_hidden_layers, num_attention_heads,
                 max_position_embeddings, layer_norm_eps=1e-5):
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.ffn_dim = ffn_dim
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.head_dim = hidden_size // num_attention_heads
        self.max_position_embeddings = max_position_embeddings
        self.layer_norm_eps = layer_norm_eps  # hard-coded in HF's OPT (nn.LayerNorm default)

    def to_hf(self, torch_dtype):
        return {
            "architectures": ["OPTForCausalLM"],
            "model_type": "opt",
            "vocab_size": self.vocab_size,
            "hidden_size": self.hidden_size,
            "word_embed_proj_dim": self.hidden_size,
            "ffn_dim": self.ffn_dim,
            "num_hidden_layers": self.num_hidden_layers,
            "num_attention_heads": self.num_attention_heads,
            "max_position_embeddings": self.max_position_embeddings,
            "activation_function": "relu",
            "do_layer_norm_before": True,
            "enable_bias": True,
            "layer_norm_elementwise_affine": True,
            "dropout": 0.0,
            "attention_dropout": 0.0,
            "activation_dropout": 0.0,
            "layerdrop": 0.0,
            "init_std": 0.02,
            "pad_token_id": 1,
            "bos_token_id": 2,
            "eos_token_id": 2,
            "tie_word_embeddings": True,
            "use_cache": True,
            "torch_dtype": torch_dtype,
            "transformers_version": "4.40.0",
        }


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.q_proj = nn.Linear(c.hidden_size, c.hidden_size)
        self.k_proj = nn.Linear(c.hidden_size, c.hidden_size)
        self.v_proj = nn.Linear(c.hidden_size, c.hidden_size)
        self.out_proj = nn.Linear(c.hidden_size, c.hidden_size)

    def forward(self, x):
        B, T, _ = x.shape
        H, D = self.c.num_attention_heads, self.c.head_dim
        q = (self.q_proj(x) / math.sqrt(D)).view(B, T, H, D).transpose(1, 2)
        k = self.k_proj(x).view(B, T, H, D).transpose(1, 2)
        v = self.v_proj(x).view(B, T, H, D).transpose(1, 2)
        scores = q @ k.transpose(-1, -2)
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        probs = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        return self.out_proj((probs @ v).transpose(1, 2).reshape(B, T, -1))


class DecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self_attn = Attention(c)
        self.self_attn_layer_norm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.fc1 = nn.Linear(c.hidden_size, c.ffn_dim)
        self.fc2 = nn.Linear(c.ffn_dim, c.hidden_size)
        self.final_layer_norm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)

    def forward(self, x):
        x = x + self.self_attn(self.self_attn_layer_norm(x))
        return x + self.fc2(F.relu(self.fc1(self.final_layer_norm(x))))


class Decoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c.vocab_size, c.hidden_size)
        self.embed_positions = nn.Embedding(c.max_position_embeddings + POSITION_OFFSET,
                                            c.hidden_size)
        self.layers = nn.ModuleList([DecoderLayer(c) for _ in range(c.num_hidden_layers)])
        self.final_layer_norm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)


class Backbone(nn.Module):
    """HF's `model.` prefix (OPTModel), which holds `decoder.`."""

    def __init__(self, c):
        super().__init__()
        self.decoder = Decoder(c)


class OPTForCausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.model = Backbone(c)

    def forward(self, input_ids):
        """input_ids [B, T] (no padding, positions 0..T-1) -> logits [B, T, vocab]."""
        d = self.model.decoder
        T = input_ids.shape[1]
        positions = torch.arange(T, device=input_ids.device) + POSITION_OFFSET
        x = d.embed_tokens(input_ids) + d.embed_positions(positions)
        for layer in d.layers:
            x = layer(x)
        x = d.final_layer_norm(x)
        return x @ d.embed_tokens.weight.t()  # lm_head tied to the token embeddings

    def hf_state_dict(self):
        """HF names; lm_head.weight is tied and therefore not stored (as HF saves OPT)."""
        return dict(self.state_dict())
