"""The GPU model (apps/qwen3/model.hpp, through cutejit_qwen3_run) against transformers'
Qwen3ForCausalLM on the GPU machine, issue 37's bar: Qwen3-0.6B's configuration with random
weights (norms drawn around 1 so that q/k norms matter) saved as a BF16 checkpoint, a prompt of
512 random tokens and 128 teacher-forced decode steps. transformers in FP32 is the reference;
transformers in BF16 gives the error a BF16 model makes. For every layer's output and the logits
of the prompt, and for each decode step's logits, the mean and the 99.9th percentile of |x -
FP32| (relative to the FP32 values' RMS) of cutejit must be at most 1.5x BF16 transformers'.
Greedy agreement with BF16 transformers over the decode steps is printed as information.
Exit status 1 if the bar is missed.
  usage: python3 qwen3_gpu_vs_transformers.py PATH/TO/cutejit_qwen3_run"""
import os
import subprocess
import sys

import numpy as np
import torch
from transformers import Qwen3ForCausalLM

from qwen3_transformers import random_checkpoint, stats

PROMPT, STEPS, BAR = 512, 128, 1.5


def main():
    runner = sys.argv[1]
    cfg, directory = random_checkpoint(hidden_size=1024, num_hidden_layers=28, num_attention_heads=16, num_key_value_heads=8,
                                       head_dim=128, intermediate_size=3072, vocab_size=151936, tie_word_embeddings=True)
    layers, hidden, vocab = cfg.num_hidden_layers, cfg.hidden_size, cfg.vocab_size
    tokens = torch.randint(0, vocab, (PROMPT + STEPS,), generator=torch.Generator().manual_seed(1))
    out = os.path.join(directory, "cutejit.bin")
    subprocess.run([runner, directory, ",".join(map(str, tokens.tolist())), str(PROMPT), out], check=True)
    raw = np.fromfile(out, dtype=np.float32).astype(np.float64)
    n_layers = layers * PROMPT * hidden
    ours_layers = raw[:n_layers].reshape(layers, PROMPT, hidden)
    ours_logits = raw[n_layers:n_layers + PROMPT * vocab].reshape(PROMPT, vocab)
    ours_steps = raw[n_layers + PROMPT * vocab:].reshape(STEPS, vocab)

    runs = {}
    for dtype in (torch.float32, torch.bfloat16):
        m = Qwen3ForCausalLM.from_pretrained(directory, torch_dtype=dtype).cuda().eval()
        with torch.no_grad():
            o = m(tokens[None].cuda(), output_hidden_states=True)
        # hidden_states[l + 1] is layer l's output, but the last entry has the final norm applied.
        runs[dtype] = ([o.hidden_states[l + 1][0, :PROMPT].double().cpu().numpy() for l in range(layers - 1)],
                       o.logits[0].double().cpu().numpy())
        del m, o
        torch.cuda.empty_cache()
    ref_layers, ref_logits = runs[torch.float32]
    bf_layers, bf_logits = runs[torch.bfloat16]

    worst = 0.0
    def compare(what, ours, bf16, ref, show=True):
        nonlocal worst
        om, op = stats(ours, ref)
        bm, bp = stats(bf16, ref)
        ratio = max(om / bm, op / bp)
        worst = max(worst, ratio)
        if show:
            print(f"{what:<22} cutejit mean {om:.2e} p99.9 {op:.2e} | transformers BF16 mean {bm:.2e} p99.9 {bp:.2e} | ratio {ratio:.2f}")
        return ratio

    for l in range(layers - 1):
        compare(f"prompt, layer {l}", ours_layers[l], bf_layers[l], ref_layers[l])
    compare("prompt, logits", ours_logits, bf_logits[:PROMPT], ref_logits[:PROMPT])
    ratios = [compare(f"decode step {s}", ours_steps[s], bf_logits[PROMPT + s], ref_logits[PROMPT + s], show=s < 4 or s == STEPS - 1)
              for s in range(STEPS)]
    print(f"decode steps: ratio median {np.median(ratios):.2f}, worst {max(ratios):.2f} (step {int(np.argmax(ratios))})")
    ours_next, bf_next = ours_steps.argmax(-1), bf_logits[PROMPT:].argmax(-1)
    same = ours_next == bf_next
    if same.all():
        print(f"greedy: the same token as transformers BF16 at all {STEPS} steps")
    else:
        s = int(np.argmin(same))
        print(f"greedy: {int(same.sum())} of {STEPS} steps agree with transformers BF16; first divergence at step {s}: cutejit "
              f"{ours_next[s]} (logit {ours_steps[s, ours_next[s]]:.4f}, BF16's {bf_logits[PROMPT + s, ours_next[s]]:.4f}), BF16 "
              f"{bf_next[s]} (logit {bf_logits[PROMPT + s, bf_next[s]]:.4f}, cutejit's {ours_steps[s, bf_next[s]]:.4f})")
    ok = worst <= BAR
    print(f"qwen3 GPU model vs transformers: worst ratio {worst:.2f} " + ("within" if ok else "ABOVE") + f" the {BAR}x bar")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
