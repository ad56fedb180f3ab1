"""What the Python peers share: the median GPU time of a workload, with CUDA events, and the
host time of a launch."""
import time

import torch


def median_ms(fn, reps=30):
    for _ in range(3):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def rotation_sets(nbytes):
    """Copies of a working set of `nbytes` to rotate through so that no run finds its data in L2
    from the run before (the copies between two uses of one span >= 150 MB, 3x the H200's L2);
    the same rule as gpu_timing.hpp."""
    return max(2, min(16, int(150e6 / nbytes) + 2))


def median_ms_rotated(fn, sets, reps=30):
    """median_ms, with timed run r calling fn(r % sets) on its own copy of the data."""
    state = {"r": 0}

    def step():
        fn(state["r"] % sets)
        state["r"] += 1

    return median_ms(step, reps)


def launch_overhead_us(launch, rounds=200, per_round=100):
    """Host microseconds per `launch()`, queued `per_round` times back to back: the median of
    `rounds` rounds, the GPU drained between them (the method of cutejit_bench)."""
    per = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(per_round):
            launch()
        per.append((time.perf_counter() - t0) * 1e6 / per_round)
        torch.cuda.synchronize()
    per.sort()
    return per[len(per) // 2]
