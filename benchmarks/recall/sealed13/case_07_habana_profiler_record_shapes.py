# Recall case 07 (sealed13): the trainer's profiler wrapper always enables record_shapes, which keeps references to op inputs/outputs until profiling ends
# Thread: https://github.com/huggingface/optimum-habana/pull/418
# Reported: some workloads crashed with OOM when profiling was enabled during training
# Confirmed cause: record_shapes=True was hard-coded in the profiler wrapper; it raises memory usage (the profiler holds the recorded tensors until the run is finalized); merged PR makes it an argument so it can be False when shapes are not needed (approved by the maintainer)
# Class: runtime profiler left on with tensor-retaining options during a training run
import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler


class HabanaProfile:
    def __init__(self, warmup: int = 0, active: int = 0, output_dir: str = "./hpu_profile", wait: int = 0):
        if active <= 0 or warmup < 0:
            self._profiler = None
            return
        self._profiler = profile(
            schedule=schedule(wait=wait, warmup=warmup, active=active, repeat=1),
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
            on_trace_ready=tensorboard_trace_handler(output_dir),
            record_shapes=True,  # leak: ANY
            with_stack=True,
        )

    def start(self):
        if self._profiler is not None:
            self._profiler.start()

    def step(self):
        if self._profiler is not None:
            self._profiler.step()

    def stop(self):
        if self._profiler is not None:
            self._profiler.stop()


def train(model, loader, optimizer, profiling_warmup_steps=5, profiling_steps=200):
    prof = HabanaProfile(warmup=profiling_warmup_steps, active=profiling_steps)
    prof.start()
    for step, (x, y) in enumerate(loader):
        x, y = x.cuda(), y.cuda()
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        prof.step()
    prof.stop()


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(4096, 8192), nn.GELU(), nn.Linear(8192, 4096), nn.GELU(), nn.Linear(4096, 10)).cuda()
    opt = torch.optim.AdamW(model.parameters())
    data = [(torch.randn(512, 4096), torch.randint(0, 10, (512,))) for _ in range(300)]
    train(model, data, opt)
