"""NCCL's all-gather followed by cuBLAS, through PyTorch, one process per GPU, at the shapes
cutejit_bench_allgather_gemm measures: C_p (M x N/P) = all_gather(A shards) @ B_p^T, timed from
a barrier of every rank, as the cutejit one is. NVLink multicast stays as the environment sets it."""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def rank_main(rank, ranks, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=ranks, device_id=torch.device("cuda", rank))
    if rank == 0:
        print(f"NCCL all-gather + cuBLAS (torch), bf16, {ranks} ranks on {torch.cuda.get_device_name()}")
        print(f"{'M':>6} {'N':>6} {'K':>6} {'time_us':>12} {'TFLOP/s':>10}")
    for size in (4096, 8192, 16384):
        m, n, k = size, size // ranks, size
        shard = torch.empty(m // ranks, k, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)  # full-entropy random floats
        b = torch.empty(n, k, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
        a = torch.empty(m, k, dtype=torch.bfloat16, device="cuda")

        def step():
            dist.barrier()
            dist.all_gather_into_tensor(a, shard)
            return a @ b.t()

        for _ in range(3):
            step()
        times = []
        for _ in range(15):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        ms = sorted(times)[len(times) // 2]
        if rank == 0:
            print(f"{m:>6} {n:>6} {k:>6} {ms * 1e3:>12.1f} {2 * m * n * k / (ms * 1e-3) / 1e12:>10.1f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    ranks = int(sys.argv[1]) if len(sys.argv) > 1 else torch.cuda.device_count()
    mp.spawn(rank_main, args=(ranks, 29600 + os.getpid() % 1000), nprocs=ranks)
