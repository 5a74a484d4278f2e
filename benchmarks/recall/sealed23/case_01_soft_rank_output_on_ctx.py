# Recall case 01 (sealed23): differentiable soft-rank Function keeps its own output as a plain ctx attribute for the KL branch
# Thread: https://github.com/teddykoker/torchsort/issues/15
# Reported: calling torchsort.soft_rank on a CUDA tensor that requires grad, with the non-default regularization, in a loop makes free GPU memory fall until the program runs out of memory; soft_sort and the "l2" regularization do not leak
# Confirmed cause: the maintainer reproduced it and fixed it (PR #16, "fix cuda leak"): SoftRank.forward stored its output tensor `ret` as `ctx.factor` instead of passing it through save_for_backward, so the output and its ctx keep each other (and the saved buffers) alive; the fix saves the factor with save_for_backward and reads it back in backward
# Class: custom autograd.Function stores a tensor (its output) on ctx outside save_for_backward
import torch

from torchsort_ext import isotonic_kl, isotonic_kl_backward, isotonic_l2, isotonic_l2_backward


def _arange_like(x, reverse=False):
    # 1..n (or n..1) per row, same dtype/device as x; x is (batch, n)
    n = x.shape[1]
    if reverse:
        ar = torch.arange(n - 1, -1, -1, dtype=x.dtype, device=x.device)
    else:
        ar = torch.arange(n, dtype=x.dtype, device=x.device)
    return ar.expand(x.shape[0], -1)


def _inv_permutation(permutation):
    inv = torch.zeros_like(permutation)
    inv.scatter_(1, permutation, _arange_like(permutation))
    return inv


class SoftRank(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, regularization="l2", regularization_strength=1.0):
        ctx.scale = 1.0 / regularization_strength
        ctx.regularization = regularization
        w = _arange_like(tensor, reverse=True) + 1
        theta = tensor * ctx.scale
        s, permutation = torch.sort(theta, descending=True)
        inv_permutation = _inv_permutation(permutation)
        if regularization == "l2":
            dual_sol = isotonic_l2[s.device.type](s - w)
            ret = (s - dual_sol).gather(1, inv_permutation)
            ctx.factor = 1.0
        else:
            dual_sol = isotonic_kl[s.device.type](s, torch.log(w))
            ret = torch.exp((s - dual_sol).gather(1, inv_permutation))
            ctx.factor = ret  # leak: ANY
        ctx.save_for_backward(s, dual_sol, permutation, inv_permutation)
        return ret

    @staticmethod
    def backward(ctx, grad_output):
        grad = (grad_output * ctx.factor).clone()
        s, dual_sol, permutation, inv_permutation = ctx.saved_tensors
        if ctx.regularization == "l2":
            step = isotonic_l2_backward[s.device.type](s, dual_sol, grad.gather(1, permutation))
        else:
            step = isotonic_kl_backward[s.device.type](s, dual_sol, grad.gather(1, permutation))
        grad -= step.gather(1, inv_permutation)
        return grad * ctx.scale, None, None


def soft_rank(values, regularization="l2", regularization_strength=1.0):
    if values.dim() != 2:
        raise ValueError(f"'values' should be a 2d-tensor but got {values.shape}")
    return SoftRank.apply(values, regularization, regularization_strength)


def run_repro(steps=100000):
    pred = torch.randn(256, 3 * 64 * 64, requires_grad=True).cuda()
    for i in range(steps):
        soft_rank(pred, regularization="kl")
        if i % 1000 == 0:
            print(i, torch.cuda.memory_allocated())
