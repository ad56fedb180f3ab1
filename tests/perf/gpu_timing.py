"""What the Python peers share: the median GPU time of a workload, with CUDA events."""
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
