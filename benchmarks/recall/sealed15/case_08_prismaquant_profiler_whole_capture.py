# Recall case 08 (sealed15): Stage A cost capture wraps the entire capture in one torch.profiler CUDA session that is opened by default
# Thread: https://github.com/RobTand/prismaquant/issues/899
# Reported: host memory grows about 14 GB per hour while collecting, then jumps from 10.9 GB to 32.3 GB when the profiler stops and the process is OOM-killed; GPU memory stays flat
# Confirmed cause: the repository owner measured it: Kineto keeps every CUDA activity record in host memory until stop, and stop builds the whole trace plus key_averages() over it; the session was default-on around the whole capture (closed; the follow-up issue #1029 records that Stage A made the profiler opt-in)
# Class: profiler session left open over an unbounded run (no schedule/window), on by default
import contextlib

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile


class KernelTimeProfiler:
    def __init__(self):
        self.prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        self.kernel_ms = 0.0

    def __enter__(self):
        self.prof.__enter__()
        return self

    def __exit__(self, *exc):
        self.prof.__exit__(*exc)
        self.kernel_ms = sum(evt.device_time_total for evt in self.prof.key_averages()) / 1e3
        return False


def capture_window(model, inputs):
    with torch.no_grad():
        out = model(inputs)
    return out.float().pow(2).mean().item()


def run_stage_a(model, windows, profile_kernels=True):  # leak: ANY
    costs = []
    with (KernelTimeProfiler() if profile_kernels else contextlib.nullcontext()) as prof:  # leak: ANY
        for inputs in windows:
            costs.append(capture_window(model, inputs))
    kernel_ms = prof.kernel_ms if prof is not None else None
    return costs, kernel_ms


if __name__ == "__main__":
    dev = torch.device("cuda")
    m = nn.Sequential(*[nn.Linear(4096, 4096) for _ in range(16)]).to(dev).half()
    windows = (torch.randn(512, 4096, device=dev, dtype=torch.half) for _ in range(200000))
    run_stage_a(m, windows)
