"""The optional torch.profiler window, for ``--trace-dir`` (TensorBoard's profiler plugin).

Started lazily from the step hook at the end of warmup, never at import time:
starting a profiler in every process at start-up crashed torchrun's agent.
"""

from __future__ import annotations

from torch.profiler import ProfilerActivity, profile, tensorboard_trace_handler


def start_window_profiler(trace_dir: str, rank: int, device: str):
    """Start a memory + stack profiler whose ``stop()`` writes a tensorboard trace."""
    activities = [ProfilerActivity.CPU]
    if device == "cuda":
        activities.append(ProfilerActivity.CUDA)
    profiler = profile(
        activities=activities,
        profile_memory=True,
        with_stack=True,
        record_shapes=True,
        on_trace_ready=tensorboard_trace_handler(trace_dir, worker_name=f"rank{rank}"),
    )
    profiler.start()
    return profiler
