# Recall case 04 (sealed18): custom autograd.Function keeps its own output as a ctx attribute
# Thread: https://github.com/pytorch/pytorch/issues/25340
# Reported: ctx objects of a custom autograd.Function are never garbage collected when the output is stored on ctx, and memory usage quickly spirals out of control
# Confirmed cause: storing the output tensor as a ctx attribute creates a reference cycle (output -> grad_fn/ctx -> output) that keeps ctx and everything on it alive; the autograd docs, updated by the maintainers, state that the output keeps a reference to ctx and that tensors must be saved with save_for_backward, which is the fix other projects applied citing this issue
# Class: custom autograd.Function storing on ctx beyond save_for_backward
import torch


class ScaledClone(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        y = x.clone() * scale
        ctx.scale = scale
        ctx.y = y  # leak: ANY
        return y

    @staticmethod
    def backward(ctx, grad_out):
        y = ctx.y  # leak: ANY
        return grad_out * ctx.scale + 0 * y, None


def run(steps=10000):
    x = torch.rand(1024, 1024, device="cuda", requires_grad=True)
    for _ in range(steps):
        y = ScaledClone.apply(x, 2.0)
        del y
