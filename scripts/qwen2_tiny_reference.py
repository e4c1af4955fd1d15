#!/usr/bin/env python3
"""Reference fixture for a second decoder architecture: a tiny Qwen2 (QKV biases, NEOX RoPE,
separate output head) with random weights, as GGUF, and Hugging Face transformers' FP32 logits
for it.

coinfer's LlamaModel reads the architecture from GGUF metadata (models/llama.hpp, DecoderSpec);
tests/unit/llama_test.cpp loads tests/fixtures/qwen2_tiny/model.gguf and compares its FP32
logits with the ones written here, which come from transformers' own Qwen2ForCausalLM (not a
re-implementation): a wrong RoPE pairing, a missing bias or a wrong head shows.

Writes tests/fixtures/qwen2_tiny/:
  model.gguf       general.architecture "qwen2", qwen2.* metadata as llama.cpp's converter
                   writes it, F32 tensors named as llama.cpp names them (Q and K rows NOT
                   permuted: qwen2 rotates pairs (i, i + d/2), as the checkpoint)
  reference.json   tokens (16 ids), logits [16][vocab] (transformers, FP32, one forward of all
                   16), and the generator's versions and settings

The model: vocab 96, hidden 64, 4 heads sharing 2 KV heads (head size 16), SwiGLU 128, 2 layers,
RMSNorm eps 1e-6, RoPE theta 1e6, context 128. Weights from torch.manual_seed(0): matrices
N(0, 0.15^2), biases N(0, 0.1^2), norm weights 1 + N(0, 0.1^2) (transformers' own init, std
0.02, would make every logit nearly 0 and the comparison weak).

Stack: the one in scripts/smollm2_reference_transformers.py (Debian 12's python3-torch 1.13.1 and
numpy 1.24.2 in a venv made with --system-site-packages; transformers==4.46.3 tokenizers==0.20.3
gguf==0.10.0 sentencepiece==0.2.0 accelerate==1.1.1 from PyPI).
Run: VENV/bin/python scripts/qwen2_tiny_reference.py [--out-dir tests/fixtures/qwen2_tiny]
"""
import argparse
import json
import platform
from importlib import metadata
from pathlib import Path

import gguf
import numpy as np
import torch
import transformers

VOCAB, HIDDEN, HEADS, KV_HEADS, FFN, LAYERS, CONTEXT = 96, 64, 4, 2, 128, 2, 128
EPS, THETA = 1e-6, 1e6
TOKENS = [3, 17, 42, 5, 88, 61, 0, 29, 29, 74, 12, 95, 50, 8, 33, 66]


def build_model():
    config = transformers.Qwen2Config(
        vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=LAYERS,
        num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, max_position_embeddings=CONTEXT,
        rms_norm_eps=EPS, rope_theta=THETA, tie_word_embeddings=False, use_sliding_window=False,
        hidden_act="silu", attention_dropout=0.0, torch_dtype="float32")
    torch.manual_seed(0)
    model = transformers.Qwen2ForCausalLM(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            elif name.endswith(".bias"):
                p.copy_(0.1 * torch.randn_like(p))
            else:
                p.copy_(0.15 * torch.randn_like(p))
    return model


def write_gguf(model, path):
    w = gguf.GGUFWriter(str(path), "qwen2")
    w.add_name("qwen2-tiny-random")
    w.add_block_count(LAYERS)
    w.add_context_length(CONTEXT)
    w.add_embedding_length(HIDDEN)
    w.add_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_layer_norm_rms_eps(EPS)
    w.add_rope_freq_base(THETA)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    sd = {k: v.detach().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    w.add_tensor("token_embd.weight", sd["model.embed_tokens.weight"])
    for layer in range(LAYERS):
        hf, ours = f"model.layers.{layer}.", f"blk.{layer}."
        for hf_name, name in [("input_layernorm.weight", "attn_norm.weight"),
                              ("self_attn.q_proj.weight", "attn_q.weight"),
                              ("self_attn.q_proj.bias", "attn_q.bias"),
                              ("self_attn.k_proj.weight", "attn_k.weight"),
                              ("self_attn.k_proj.bias", "attn_k.bias"),
                              ("self_attn.v_proj.weight", "attn_v.weight"),
                              ("self_attn.v_proj.bias", "attn_v.bias"),
                              ("self_attn.o_proj.weight", "attn_output.weight"),
                              ("post_attention_layernorm.weight", "ffn_norm.weight"),
                              ("mlp.gate_proj.weight", "ffn_gate.weight"),
                              ("mlp.up_proj.weight", "ffn_up.weight"),
                              ("mlp.down_proj.weight", "ffn_down.weight")]:
            w.add_tensor(ours + name, sd[hf + hf_name])
    w.add_tensor("output_norm.weight", sd["model.norm.weight"])
    w.add_tensor("output.weight", sd["lm_head.weight"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out-dir", default=str(Path(__file__).resolve().parent.parent /
                                                 "tests" / "fixtures" / "qwen2_tiny"))
    args = parser.parse_args()
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    model = build_model()
    write_gguf(model, out / "model.gguf")
    with torch.no_grad():
        logits = model(torch.tensor([TOKENS])).logits[0].double().numpy()
    reference = {
        "tokens": TOKENS,
        "logits": [[round(float(x), 6) for x in row] for row in logits],
        "generator": {
            "script": "scripts/qwen2_tiny_reference.py",
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "gguf": metadata.version("gguf"),
            "numpy": np.__version__,
            "python": platform.python_version(),
            "dtype": "float32",
            "model": {"vocab": VOCAB, "hidden": HIDDEN, "heads": HEADS, "kv_heads": KV_HEADS,
                      "ffn": FFN, "layers": LAYERS, "context": CONTEXT, "rms_eps": EPS,
                      "rope_theta": THETA, "seed": 0},
        },
    }
    with open(out / "reference.json", "w") as f:
        json.dump(reference, f, indent=1)
        f.write("\n")
    print(f"wrote {out / 'model.gguf'} and {out / 'reference.json'}; "
          f"logits range {logits.min():.3f} .. {logits.max():.3f}")


if __name__ == "__main__":
    main()
