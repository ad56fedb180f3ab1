"""The peer of cutejit_qwen3_bench: transformers' Qwen3ForCausalLM on the same configuration and
shapes, random BF16 weights, on the same GPU in the same call.

Decode: `generate` after a prompt of CONTEXT tokens per sequence, greedy, a fixed number of new
tokens. A logits processor notes the time after each step (it synchronizes, as generate's own
stopping check does), so a step's time is what the caller of generate waits for one token,
prefill excluded: the median over the steps after the first few. Two ways:
  eager     generate with its default dynamic cache, no compilation;
  compiled  generate with a static cache, which transformers compiles with torch.compile
            (its default CompileConfig: fullgraph, mode "reduce-overhead", CUDA graphs).
The compile of each batch size is timed and reported apart. "max-autotune" is not tried: its
autotuning of every GEMM shape takes far longer than one device call.
Prefill: one forward of BATCH x CONTEXT tokens with no cache, eager and under torch.compile,
median of five after warm-up, timed with CUDA events.
Each decode figure also goes on a line "csv,STACK,MODEL,BATCH,CONTEXT,STEP_MS,TOKENS_PER_S", as
cutejit_qwen3_bench prints its own, for scripts/plot_qwen3.py.

usage: qwen3_peers_transformers.py MODEL DEADLINE_S SECTION...
  SECTION: decode:eager:B:CONTEXT, decode:compiled:B:CONTEXT, prefill:eager:B:CONTEXT,
           prefill:compiled:B:CONTEXT. Sections start only while DEADLINE_S seconds have not
  passed since the script began; the rest are reported as not run.
"""
import statistics
import sys
import time

import torch
from transformers import LogitsProcessor, LogitsProcessorList, Qwen3Config, Qwen3ForCausalLM

CONFIGS = {
    "8b": dict(hidden_size=4096, num_hidden_layers=36, num_attention_heads=32, num_key_value_heads=8, head_dim=128,
               intermediate_size=12288, vocab_size=151936, tie_word_embeddings=False),
    "1.7b": dict(hidden_size=2048, num_hidden_layers=28, num_attention_heads=16, num_key_value_heads=8, head_dim=128,
                 intermediate_size=6144, vocab_size=151936, tie_word_embeddings=True),
    "0.6b": dict(hidden_size=1024, num_hidden_layers=28, num_attention_heads=16, num_key_value_heads=8, head_dim=128,
                 intermediate_size=3072, vocab_size=151936, tie_word_embeddings=True),
}
NEW_TOKENS = 40
MODEL = ""  # the configuration's name, for the CSV lines
SKIPPED_STEPS = 4  # the first steps after a prefill (allocations, CUDA-graph recording)


class StepClock(LogitsProcessor):
    """Notes the time each time generate has a step's logits."""

    def __init__(self):
        self.times = []

    def __call__(self, input_ids, scores):
        torch.cuda.synchronize()
        self.times.append(time.perf_counter())
        return scores


def prompt(batch, context, vocab):
    """The same tokens as cutejit_qwen3_bench's prompts."""
    t = torch.arange(context, dtype=torch.int64)
    return torch.stack([(t * 7919 + b * 104729) % vocab for b in range(batch)]).cuda()


def decode(model, mode, batch, context):
    ids = prompt(batch, context, model.config.vocab_size)
    kwargs = dict(attention_mask=torch.ones_like(ids), max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, do_sample=False,
                  pad_token_id=0)
    if mode == "compiled":
        kwargs["cache_implementation"] = "static"
    frames_before = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    first = time.perf_counter()
    model.generate(ids, **kwargs)  # warm-up: the compile, for a static cache
    first = time.perf_counter() - first
    compiled_graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"] - frames_before
    clock = StepClock()
    model.generate(ids, logits_processor=LogitsProcessorList([clock]), **kwargs)
    steps = [b - a for a, b in zip(clock.times, clock.times[1:])][SKIPPED_STEPS:]
    step = statistics.median(steps)
    print(f"transformers {mode:8s} decode, batch {batch}, context {context}: {step * 1e3:.3f} ms a step, {batch / step:.1f} tokens/s "
          f"(median of {len(steps)}; the first generate, with any compile: {first:.1f} s, {compiled_graphs} graphs compiled)", flush=True)
    print(f"csv,transformers {mode},{MODEL},{batch},{context},{step * 1e3:.3f},{batch / step:.1f}", flush=True)


def prefill(model, mode, batch, context):
    ids = prompt(batch, context, model.config.vocab_size)
    forward = model if mode == "eager" else torch.compile(model)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    first = time.perf_counter()
    with torch.no_grad():
        forward(ids, use_cache=False, logits_to_keep=1)
        torch.cuda.synchronize()
        first = time.perf_counter() - first
        ms = []
        for _ in range(6):
            start.record()
            forward(ids, use_cache=False, logits_to_keep=1)
            stop.record()
            stop.synchronize()
            ms.append(start.elapsed_time(stop))
    t = statistics.median(ms[1:]) * 1e-3
    print(f"transformers {mode:8s} prefill of {batch} x {context} tokens: {t * 1e3:.2f} ms, {batch * context / t:.0f} tokens/s "
          f"(median of 5; the first, with any compile: {first:.1f} s)", flush=True)


def main():
    global MODEL
    name, deadline, sections = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    MODEL = name
    began = time.perf_counter()
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model = Qwen3ForCausalLM(Qwen3Config(rope_theta=1e6, rms_norm_eps=1e-6, max_position_embeddings=40960, **CONFIGS[name]))
    model.eval()
    model.generation_config.eos_token_id = None  # every step runs
    print(f"transformers Qwen3-{name} ({sum(p.numel() for p in model.parameters()) / 1e9:.2f}B parameters, random BF16) on "
          f"{torch.cuda.get_device_name()}, made in {time.perf_counter() - began:.1f} s; torch {torch.__version__}, "
          f"transformers {__import__('transformers').__version__}", flush=True)
    for section in sections:
        kind, mode, batch, context = section.split(":")
        if time.perf_counter() - began > deadline:
            print(f"transformers {mode} {kind}, batch {batch}, context {context}: not run (past the script's {deadline:.0f} s)", flush=True)
            continue
        try:
            (decode if kind == "decode" else prefill)(model, mode, int(batch), int(context))
        except Exception as e:  # one section's failure must not lose the others' figures
            print(f"transformers {mode} {kind}, batch {batch}, context {context}: failed: {type(e).__name__}: {e}"[:600], flush=True)
        torch._dynamo.reset()
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
