# Recall case 11 (sealed9): a custom autograd.Function keeps call data, args and kwargs on ctx, and backward never releases them
# Thread: https://github.com/shader-slang/slangpy/issues/896
# Reported: in a simple optimization loop with differentiable kernels called through the PyTorch interop, VRAM grew linearly until OOM
# Confirmed cause: the fix PR (#915, "Fixes #896") explains TorchAutoGradHook.backward() kept function, call data, args, kwargs on ctx after backward (~0.5 MB/iter) and clears them; PR closed, issue still open in the store, so weaker
# Class: custom autograd.Function storing tensors/objects on ctx beyond save_for_backward
import torch


class CallData:
    def __init__(self, kernel_name, scratch):
        self.kernel_name = kernel_name
        self.scratch = scratch


def run_kernel(call_data, params, y):
    call_data.scratch.copy_(params * params)
    y.copy_(call_data.scratch)
    return y


class TorchAutoGradHook(torch.autograd.Function):
    @staticmethod
    def forward(ctx, function, call_data, args, kwargs, *tensors):
        params, y = tensors
        out = run_kernel(call_data, params, y.clone())
        ctx.function = function
        ctx.call_data = call_data  # leak: ANY
        ctx.args = args  # leak: ANY
        ctx.kwargs = kwargs  # leak: ANY
        return out

    @staticmethod
    def backward(ctx, grad_out):
        params = ctx.args[0]
        grad_params = 2.0 * params * grad_out * ctx.kwargs.get("scale", 1.0)
        return None, None, None, None, grad_params, None


def call_function(name, params, y, scale=1.0):
    call_data = CallData(name, torch.empty_like(params))
    args = (params, y)
    kwargs = {"scale": scale, "scratch_copy": call_data.scratch.clone()}
    return TorchAutoGradHook.apply(name, call_data, args, kwargs, params, y)


if __name__ == "__main__":
    size = 256 * 256
    y_true = torch.rand(size, device="cuda")
    params = torch.rand(size, device="cuda", requires_grad=True)
    y_pred = torch.zeros(size, device="cuda", requires_grad=True)
    optimizer = torch.optim.Adam([params], lr=1e-3)
    for _ in range(100000):
        optimizer.zero_grad()
        result = call_function("forward", params, y_pred)
        loss = ((result - y_true) ** 2).mean()
        loss.backward()
        optimizer.step()
