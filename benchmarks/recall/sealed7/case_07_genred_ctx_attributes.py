# Recall case 07 (sealed7): a custom autograd Function keeps its inputs and its own output as attributes on ctx
# Thread: https://github.com/getkeops/keops/issues/353
# Reported: GPU memory grows by the size of each reduction result on every call with pykeops 2.2, not with 2.1.2
# Confirmed cause: maintainer bisected the leak to the commit that changed GenredAutograd; it was traced to args/result being stored directly on ctx (the documented leak pattern for Function.forward) instead of via save_for_backward; issue closed
# Class: autograd.Function.forward storing tensors (incl. its output) on ctx attributes beyond save_for_backward
import torch


def get_keops_routine(formula):
    def routine(x, y, b):
        d2 = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
        return torch.exp(-d2) @ b
    return routine


class GenredAutograd(torch.autograd.Function):
    @staticmethod
    def forward(ctx, formula, aliases, backend, dtype, x, y, b):
        myconv = get_keops_routine(formula)
        result = myconv(x, y, b)
        ctx.formula = formula
        ctx.aliases = aliases
        ctx.args = (x, y, b)  # leak: ANY
        ctx.result = result  # leak: ANY
        return result

    @staticmethod
    def backward(ctx, G):
        x, y, b = ctx.args
        d2 = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
        K = torch.exp(-d2)
        grad_b = K.t() @ G
        return None, None, None, None, None, None, grad_b


class Genred:
    def __init__(self, formula, aliases, reduction_op="Sum", axis=1):
        self.formula, self.aliases = formula, aliases

    def __call__(self, x, y, b, backend="auto"):
        return GenredAutograd.apply(self.formula, self.aliases, backend, "float32", x, y, b)


if __name__ == "__main__":
    kernel = Genred("Exp(-SqDist(x,y))*b", ["x = Vi(3)", "y = Vj(3)", "b = Vj(1)"])
    x = torch.randn(20000, 3, device="cuda")
    y = torch.randn(2000, 3, device="cuda")
    b = torch.randn(2000, 1, device="cuda", requires_grad=True)
    for it in range(1000):
        out = kernel(x, y, b)
        out.sum().backward()
        b.grad = None
        print(it, torch.cuda.memory_allocated() // 2**20, "MiB")
