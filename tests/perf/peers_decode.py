"""PyTorch on the shapes bench_decode measures, in the same device call and with the same method
(median of 30 after warm-up, rotating through copies of the cache): one query per sequence, BF16,
head dim 128, GQA 32:8 and 64:8, batch x cached length from 1 x 32k to 128 x 1k. Two ways:
  - sdpa: scaled_dot_product_attention on K and V already contiguous per sequence (B, H_kv, S, D),
    as if no page table existed: what the attention itself costs;
  - gather + sdpa: K and V gathered out of a shuffled cache of 16-token pages through the block
    table, then the same: what a PyTorch program with a paged cache pays.
The bandwidth counts K and V once, as bench_decode's. Whether FlashInfer and flash_attn are
importable is printed; neither is timed yet (neither is installed on the GPU machine)."""
import torch
import torch.nn.functional as F

from gpu_timing import median_ms_rotated, rotation_sets

SHAPES = ((1, 32768), (8, 8192), (32, 4096), (64, 2048), (128, 1024))


def main():
    d, page = 128, 16
    for lib in ("flashinfer", "flash_attn"):
        try:
            __import__(lib)
            print(f"{lib}: importable (not yet timed here)")
        except ImportError:
            print(f"{lib}: not importable on this machine")
    for heads, kv_heads in ((32, 8), (64, 8)):
        for batch, s in SHAPES:
            pages = batch * s // page
            kv_bytes = 2 * pages * page * kv_heads * d * 2
            sets = rotation_sets(kv_bytes)
            make = lambda *shape: torch.rand(*shape, device="cuda", dtype=torch.bfloat16) * 2 - 1
            q = [make(batch, heads, 1, d) for _ in range(sets)]
            caches = [(make(pages, page, kv_heads, d), make(pages, page, kv_heads, d)) for _ in range(sets)]
            table = torch.randperm(pages, device="cuda", dtype=torch.int32).view(batch, s // page)

            def gathered(cache):
                # (B, pages, page, H_kv, D) -> (B, H_kv, S, D)
                return cache[table.long()].view(batch, s, kv_heads, d).transpose(1, 2)

            contiguous = [(gathered(k).contiguous(), gathered(v).contiguous()) for k, v in caches]
            name = f"b{batch} s{s} h{heads}/{kv_heads} d{d} page{page}"
            for how, run in (
                ("sdpa", lambda i: F.scaled_dot_product_attention(q[i], *contiguous[i], enable_gqa=True)),
                ("gather + sdpa", lambda i: F.scaled_dot_product_attention(q[i], gathered(caches[i][0]), gathered(caches[i][1]),
                                                                            enable_gqa=True)),
            ):
                try:
                    t = median_ms_rotated(run, sets)
                    print(f"torch {how} {name}: {t:.4f} ms, {kv_bytes / (t * 1e-3) / 1e9:.0f} GB/s, "
                          f"{kv_bytes / (t * 1e-3) / 4.2e12:.2f} of 4.2 TB/s")
                except RuntimeError as e:
                    print(f"torch {how} {name}: not available ({str(e).splitlines()[0]})")
            del q, caches, contiguous
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
