"""The host reference of Qwen3 (apps/qwen3/reference.cpp) against transformers' Qwen3ForCausalLM,
on the GPU machine (which has transformers): a small random model (hidden 256, 2 layers, 4 query
and 2 KV heads of 64, norms drawn around 1 so that q/k norms matter) saved as a BF16 checkpoint,
read by both; 64 random tokens. Prints, for each layer's output and the logits, the mean and
99.9th percentile of |transformers - reference| relative to the reference's RMS, for
transformers in FP32 (which should agree to float32 rounding) and in BF16 (its own error, the
bar the GPU model is held to). Exit status 1 if FP32 transformers disagrees beyond 1e-4.
  usage: python3 qwen3_reference_vs_transformers.py PATH/TO/cutejit_qwen3_reference"""
import os
import subprocess
import sys

import numpy as np
import torch
from transformers import Qwen3ForCausalLM

from qwen3_transformers import random_checkpoint, stats


def main():
    reference = sys.argv[1]
    layers, tokens_n, hidden, vocab = 2, 64, 256, 1000
    _, directory = random_checkpoint(hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                                     head_dim=64, intermediate_size=512, vocab_size=vocab, tie_word_embeddings=False)
    tokens = torch.randint(0, vocab, (tokens_n,), generator=torch.Generator().manual_seed(1))
    out = os.path.join(directory, "reference.bin")
    subprocess.run([reference, directory, ",".join(map(str, tokens.tolist())), out], check=True)
    raw = np.fromfile(out, dtype=np.float64)
    ref_layers = raw[: layers * tokens_n * hidden].reshape(layers, tokens_n, hidden)
    ref_logits = raw[layers * tokens_n * hidden:].reshape(tokens_n, vocab)
    worst_fp32 = 0.0
    for dtype in (torch.float32, torch.bfloat16):
        m = Qwen3ForCausalLM.from_pretrained(directory, torch_dtype=dtype).cuda().eval()
        with torch.no_grad():
            o = m(tokens[None].cuda(), output_hidden_states=True)
        # hidden_states[l + 1] is layer l's output, but the last entry has the final norm applied.
        rows = [(f"layer {l}", o.hidden_states[l + 1][0], ref_layers[l]) for l in range(layers - 1)]
        rows.append(("logits", o.logits[0], ref_logits))
        for what, got, want in rows:
            mean, p999 = stats(got.double().cpu().numpy(), want)
            print(f"transformers {str(dtype).split('.')[-1]:>8} vs reference, {what:<8}: mean {mean:.2e}, p99.9 {p999:.2e} (relative to RMS)")
            if dtype == torch.float32:
                worst_fp32 = max(worst_fp32, p999)
    ok = worst_fp32 < 1e-4
    print("qwen3 reference vs transformers FP32: " + ("agree" if ok else "DISAGREE") + f" (worst p99.9 {worst_fp32:.2e})")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
