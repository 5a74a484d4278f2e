# Recall case 06 (sealed11): a functional autograd.Function stores the module's bound method on ctx while the module keeps the Function's output
# Thread: https://github.com/pytorch/pytorch/issues/52140
# Reported: GPU memory grows every time a new solver object is created, even after the previous one goes out of scope
# Confirmed cause: ctx.fcn = self.forward (bound method -> module) plus self.xsol = output (output -> grad_fn -> ctx) forms a reference cycle through the autograd graph that is never collected; explained by the maintainer (albanD), the reporter confirmed the leak disappears when the stored output is detached (or the output is not kept on the object)
# Class: reference cycle between a custom Function's ctx (holding a callable bound to the module) and an output tensor stored on that module
import torch


class Functional(torch.autograd.Function):
    """y = fcn(y0) where fcn depends on params; gradient w.r.t. params via recomputation."""

    @staticmethod
    def forward(ctx, fcn, y0, *params):
        y = fcn(y0)
        ctx.fcn = fcn  # leak: ANY
        ctx.save_for_backward(y0, *params)
        return y

    @staticmethod
    def backward(ctx, grad_y):
        y0, *params = ctx.saved_tensors
        with torch.enable_grad():
            y = ctx.fcn(y0)
        grads = torch.autograd.grad(y, params, grad_outputs=grad_y, allow_unused=True)
        return (None, None, *grads)


def functional(fcn, y0):
    params = list(fcn.__self__.parameters())  # assuming fcn is a method of a torch.nn.Module
    return Functional.apply(fcn, y0, *params)


class ImplicitLayer(torch.nn.Module):
    def __init__(self, a):
        super().__init__()
        self.a = torch.nn.Parameter(a)
        x0 = torch.ones_like(a)
        xsol = functional(self.forward, x0)
        self.xsol = xsol  # leak: ANY

    def forward(self, x):
        return self.a * x


def run_case(n):
    a = torch.ones((2000, 2000), dtype=torch.double, device="cuda")
    layer = ImplicitLayer(a)
    return float(layer.xsol.sum())


if __name__ == "__main__":
    for i in range(100):
        run_case(i)
        torch.cuda.empty_cache()
        print("memory allocated: %f MiB" % (torch.cuda.memory_allocated() / 1024 ** 2))
