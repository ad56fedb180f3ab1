"""What the scripts comparing cutejit's Qwen3 with transformers share: a random Qwen3ForCausalLM
saved as a BF16 checkpoint, and the error measure."""
import tempfile

import numpy as np
import torch
from transformers import Qwen3Config, Qwen3ForCausalLM


def stats(got, want):
    """The mean and 99.9th percentile of |got - want|, relative to want's RMS."""
    d = np.abs(got - want) / np.sqrt(np.mean(want ** 2))
    return d.mean(), np.quantile(d, 0.999)


def random_checkpoint(**config):
    """A Qwen3ForCausalLM of `config` with random weights (seed 0; norms drawn around 1 so that
    the q/k norms matter) saved in BF16 to a new directory: (the configuration, the directory)."""
    torch.manual_seed(0)
    cfg = Qwen3Config(rope_theta=1e6, rms_norm_eps=1e-6, max_position_embeddings=4096, **config)
    model = Qwen3ForCausalLM(cfg)
    with torch.no_grad():
        for _, p in model.named_parameters():
            if p.dim() == 1:
                p.normal_(1.0, 0.1)
    directory = tempfile.mkdtemp()
    model.to(torch.bfloat16).save_pretrained(directory, safe_serialization=True)
    return cfg, directory
