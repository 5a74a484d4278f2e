# Fixed twin of case 07: the recursive launcher is a module-level function with explicit parameters, so no per-call closure cycle holds the kernel kwargs
# Thread: https://github.com/fla-org/flash-linear-attention/pull/1235
# Reported: benchmark loops of chunk_gla on large shapes OOMed with ~53 GiB allocated; memory followed a 6.75 -> 19 GiB sawtooth over 50 calls
# Confirmed cause: launch_grid_chunked defined a nested _recurse closure that referenced itself, creating a reference cycle per call that held kernel_kwargs (intermediate device tensors) until the generational GC ran; merged PR hoists it to a module-level function with explicit parameters (memory then constant at 1.50 GiB)
# Class: reference cycle created on every call (recursive inner function) pinning device tensors
import torch


def _gla_chunk_kernel(grid_offsets, q, k, v, g, h, o, chunk_size):
    # stand-in for a Triton kernel: one program per (batch*head block, chunk)
    bh0, c0 = grid_offsets
    bh = slice(bh0, bh0 + 1)
    t = slice(c0 * chunk_size, (c0 + 1) * chunk_size)
    decay = g[bh, t].exp()
    o[bh, t] = (q[bh, t] * decay) @ h[bh, c0] + torch.tril(q[bh, t] @ k[bh, t].transpose(-1, -2)) @ v[bh, t]


def _launch_grid_chunked_recursive(kernel, grid, max_grid, dim, offsets, kernel_kwargs):
    if dim == len(grid):
        for idx in range(offsets[-1], min(offsets[-1] + max_grid, grid[-1])):
            kernel(grid_offsets=offsets[:-1] + (idx,), **kernel_kwargs)
        return
    step = 1 if dim < len(grid) - 1 else max_grid
    for start in range(0, grid[dim], step):
        _launch_grid_chunked_recursive(kernel, grid, max_grid, dim + 1, offsets + (start,), kernel_kwargs)


def launch_grid_chunked(kernel, grid, max_grid=65535, **kernel_kwargs):
    """Launch `kernel` over `grid`, splitting dimensions that exceed the hardware limit."""
    grid = tuple(grid)
    _launch_grid_chunked_recursive(kernel, grid, max_grid, 0, (), kernel_kwargs)


def chunk_gla_fwd(q, k, v, g, chunk_size=64):
    BH, T, D = q.shape
    n_chunks = T // chunk_size
    # large intermediates that should die when this function returns
    h = torch.zeros(BH, n_chunks, D, v.shape[-1], device=q.device, dtype=q.dtype)
    g_cum = g.cumsum(dim=1)
    o = torch.empty_like(v)
    launch_grid_chunked(_gla_chunk_kernel, grid=(BH, n_chunks), q=q, k=k, v=v, g=g_cum, h=h, o=o,
                        chunk_size=chunk_size)
    return o


def do_bench(fn, rep=50):
    for _ in range(rep):
        fn()
    torch.cuda.synchronize()


if __name__ == "__main__":
    B, H, T, D = 4, 64, 4096, 128
    q, k, v = (torch.randn(B * H, T, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    g = -torch.rand(B * H, T, D, device="cuda", dtype=torch.bfloat16)
    do_bench(lambda: chunk_gla_fwd(q, k, v, g))
    print(torch.cuda.max_memory_allocated() / 2**30, "GiB")
