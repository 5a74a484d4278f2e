# Thread: https://github.com/triton-lang/triton/pull/8115
# Reported: after a kernel failed to load (out of shared memory) once, every later call re-raised
#   the stored error and the tensors passed to the kernel were never freed; PyTorch CI saw dangling
#   tensors after CUDA-graph capture.
# Confirmed cause: the CompiledKernel saved the load error in a functools.partial that replaced
#   `run`; raising that same exception object attached a __traceback__ whose frames hold the
#   kernel's tensor arguments, and the kernel lives in a global cache for the whole program
#   (fixed by cloning the saved exception before storing it and before raising it).
# Class: fallback handler keeps the failed call's exception (and its frames) alive
import copy
import functools

import torch


class OutOfResources(Exception):
    def __init__(self, required, limit, name):
        self.required = required
        self.limit = limit
        self.name = name
        super().__init__(f"out of resource: {name}, required {required}, limit {limit}")


_kernel_cache = {}


def _raise_error(err, *args, **kwargs):
    raise copy.copy(err)


class CompiledKernel:
    def __init__(self, name, shared, num_warps):
        self.name = name
        self.shared = shared
        self.num_warps = num_warps
        self.module = None
        self.function = None
        self._run = None

    def _init_handles(self):
        if self.module is not None:
            return
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        max_shared = getattr(props, "shared_memory_per_block_optin", 48 * 1024)
        if self.shared > max_shared:
            err = OutOfResources(self.shared, max_shared, "shared memory")
            self._run = functools.partial(_raise_error, copy.copy(err))
            raise err
        self.module = object()
        self.function = object()
        self._run = self._launch

    def _launch(self, grid, *args):
        return None

    @property
    def run(self):
        if self._run is None:
            self._init_handles()
        return self._run

    def __getitem__(self, grid):
        def runner(*args):
            return self.run(grid, *args)
        return runner


def get_kernel(name, shared, num_warps=4):
    key = (name, shared, num_warps)
    if key not in _kernel_cache:
        _kernel_cache[key] = CompiledKernel(name, shared, num_warps)
    return _kernel_cache[key]


def add_one(x):
    out = torch.empty_like(x)
    kernel = get_kernel("add_one", shared=256 * 1024)
    kernel[(x.numel() // 1024,)](x, out, x.numel())
    return out


if __name__ == "__main__":
    for _ in range(100):
        x = torch.randn(1 << 24, device="cuda")
        try:
            add_one(x)
        except OutOfResources:
            pass
