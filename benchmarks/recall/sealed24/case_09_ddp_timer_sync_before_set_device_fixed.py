# Fixed twin of case 09: only synchronize when CUDA is already initialized (`torch.cuda.is_available() and torch.cuda.is_initialized()`), as merged in PR #519
# Thread: https://github.com/mlcommons/algorithmic-efficiency/issues/518
# Reported: after an update of the runner's profiler module, the PyTorch workloads (resnet, vit, deepspeech, criteo, ...) launched with torchrun on 8 GPUs run out of GPU memory right at the start; undoing the profiler change makes them run again
# Confirmed cause: the maintainers' fix (PR #519, "Profiler oom fix", commit "add guards for cuda context initializion", checked against the failing runs) only guards the synchronize: the profiler's clock helper called torch.cuda.synchronize() whenever CUDA was available, and the Profiler (or PassThroughProfiler) is built in main() before pytorch_init() calls torch.cuda.set_device(rank), so every rank created a CUDA context (and its allocator state) on cuda:0
# Class: CUDA context / memory on the default GPU created by every DDP rank (a device call before set_device)
import os
import time
from collections import defaultdict
from contextlib import contextmanager

import torch
import torch.distributed as dist


def _get_monotonic_time():
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()
    return time.monotonic()


class Profiler:
    def __init__(self, local_rank=None):
        self._local_rank = local_rank
        self.current_actions = {}
        self.recorded_durations = defaultdict(list)
        self.start_time = _get_monotonic_time()

    def set_local_rank(self, local_rank):
        self._local_rank = local_rank

    def start(self, action_name):
        if action_name in self.current_actions:
            raise ValueError(f"Attempted to start {action_name} which has already started.")
        self.current_actions[action_name] = _get_monotonic_time()

    def stop(self, action_name):
        end_time = _get_monotonic_time()
        start_time = self.current_actions.pop(action_name)
        self.recorded_durations[action_name].append(end_time - start_time)

    @contextmanager
    def profile(self, action_name):
        try:
            self.start(action_name)
            yield action_name
        finally:
            self.stop(action_name)


class PassThroughProfiler(Profiler):
    def start(self, action_name):
        pass

    def stop(self, action_name):
        pass


def pytorch_setup():
    use_pytorch_ddp = "LOCAL_RANK" in os.environ
    rank = int(os.environ["LOCAL_RANK"]) if use_pytorch_ddp else 0
    device = torch.device(f"cuda:{rank}" if torch.cuda.is_available() else "cpu")
    return use_pytorch_ddp, rank, device, torch.cuda.device_count()


def pytorch_init(use_pytorch_ddp, rank, profiler):
    torch.backends.cudnn.benchmark = True
    if use_pytorch_ddp:
        torch.cuda.set_device(rank)
        profiler.set_local_rank(rank)
        dist.init_process_group("nccl")


USE_PYTORCH_DDP, RANK, DEVICE, N_GPUS = pytorch_setup()


def main(profile, workload, score_submission_on_workload):
    if profile:
        profiler = Profiler()
    else:
        profiler = PassThroughProfiler()

    pytorch_init(USE_PYTORCH_DDP, RANK, profiler)

    with profiler.profile("Train"):
        score = score_submission_on_workload(workload=workload, profiler=profiler)
    print("final score", score)

    if USE_PYTORCH_DDP:
        dist.destroy_process_group()
