"""NCCL's all-reduce through PyTorch, one process per GPU, as cutejit_bench_allreduce measures its
own: bf16 messages of 1 MiB to 1 GiB, median time of one all-reduce, algorithm and bus bandwidth.
NVLink multicast stays as the environment sets it (NCCL_NVLS_ENABLE)."""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def rank_main(rank, ranks, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=ranks, device_id=torch.device("cuda", rank))
    largest = 1 << 29
    x = torch.empty(largest, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)  # full-entropy random floats
    if rank == 0:
        print(f"NCCL all-reduce (torch.distributed), bf16, {ranks} ranks on {torch.cuda.get_device_name()}")
        print(f"{'bytes':>10} {'time_us':>12} {'algbw_GB/s':>12} {'busbw_GB/s':>12}")
    size = 1 << 20
    while size <= largest * 2:
        t = x[: size // 2]
        for _ in range(5):
            dist.all_reduce(t)
        times = []
        for _ in range(25):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            dist.all_reduce(t)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        ms = sorted(times)[len(times) // 2]
        if rank == 0:
            algbw = size / (ms * 1e-3) / 1e9
            print(f"{size:>10} {ms * 1e3:>12.1f} {algbw:>12.1f} {algbw * 2 * (ranks - 1) / ranks:>12.1f}")
        size *= 2
    dist.destroy_process_group()


if __name__ == "__main__":
    ranks = int(sys.argv[1]) if len(sys.argv) > 1 else torch.cuda.device_count()
    mp.spawn(rank_main, args=(ranks, 29500 + os.getpid() % 1000), nprocs=ranks)
