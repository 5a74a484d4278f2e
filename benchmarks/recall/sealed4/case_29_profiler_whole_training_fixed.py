# Fixed twin of case 29: the profiler gets a torch.profiler.schedule so only a few steps are recorded
# Thread: https://github.com/oumi-ai/oumi/pull/334
# Reported: profiling the full training process produces traces too large to load in the UI, or profiling fails with OOM
# Confirmed cause: without a schedule the profiler records every step of the run; the merged PR adds a torch.profiler.schedule (wait/warmup/active/repeat) so only a limited number of steps in the middle of training are recorded
# Class: runtime tool left on (profiler without schedule over the whole training loop)
import contextlib
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, record_function, tensorboard_trace_handler


@dataclass
class ProfilerParams:
    enable_cpu_profiling: bool = True
    enable_cuda_profiling: bool = True
    record_shapes: bool = True
    profile_memory: bool = True
    with_stack: bool = True
    save_dir: str = "./profiler_traces"
    wait: int = 10
    warmup: int = 2
    active: int = 3
    repeat: int = 1


@contextlib.contextmanager
def torch_profile(params: ProfilerParams, record_function_name: str = "oumi.train"):
    activities = []
    if params.enable_cpu_profiling:
        activities.append(ProfilerActivity.CPU)
    if params.enable_cuda_profiling and torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
    with profile(
        activities=activities,
        schedule=torch.profiler.schedule(wait=params.wait, warmup=params.warmup,
                                         active=params.active, repeat=params.repeat),
        record_shapes=params.record_shapes,
        profile_memory=params.profile_memory,
        with_stack=params.with_stack,
        on_trace_ready=tensorboard_trace_handler(params.save_dir),
    ) as prof:
        with record_function(record_function_name):
            yield prof


def train(model, batches, params: ProfilerParams, device="cuda"):
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    model.to(device).train()
    with torch_profile(params) as prof:
        for step, (x, y) in enumerate(batches):
            x, y = x.to(device), y.to(device)
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            prof.step()
            if step % 100 == 0:
                print(step, loss.item())


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(4096, 8192), nn.GELU(), nn.Linear(8192, 4096), nn.GELU(), nn.Linear(4096, 1000))
    batches = ((torch.randn(256, 4096), torch.randint(0, 1000, (256,))) for _ in range(50_000))
    train(model, batches, ProfilerParams())
