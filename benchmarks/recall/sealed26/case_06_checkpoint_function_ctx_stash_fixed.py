# Fixed twin of case 06: clear the tensors stashed on ctx once backward has used them
import torch
from torch import nn


def extract_tensors(all_objects):
    tensor_objects = [v for v in all_objects if torch.is_tensor(v)]
    non_tensor_objects = [v for v in all_objects if not torch.is_tensor(v)]
    tensor_flags = [torch.is_tensor(v) for v in all_objects]
    return tuple(tensor_objects), tuple(non_tensor_objects), tuple(tensor_flags)


def merge_tensors(tensor_objects, non_tensor_objects, tensor_flags):
    merged, t, n = [], iter(tensor_objects), iter(non_tensor_objects)
    for is_tensor in tensor_flags:
        merged.append(next(t) if is_tensor else next(n))
    return tuple(merged)


def detach_variable(inputs):
    out = []
    for x in inputs:
        y = x.detach()
        y.requires_grad = x.requires_grad
        out.append(y)
    return tuple(out)


class CheckpointFunction(torch.autograd.Function):
    """Re-runs `run_function` in backward instead of keeping its activations."""

    @staticmethod
    def forward(ctx, run_function, *args):
        def save_args_for_backward(*all_args):
            tensor_args, non_tensor_args, tensor_flags = extract_tensors(all_objects=all_args)
            ctx.deepspeed_saved_tensors = tensor_args
            ctx.non_tensor_args = non_tensor_args
            ctx.tensor_flags = tensor_flags

        ctx.run_function = run_function
        ctx.fwd_cpu_rng_state = torch.get_rng_state()
        ctx.fwd_cuda_rng_state = torch.cuda.get_rng_state()
        with torch.no_grad():
            outputs = run_function(*args)
        save_args_for_backward(*args)
        return outputs

    @staticmethod
    def backward(ctx, *grads):
        inputs = detach_variable(ctx.deepspeed_saved_tensors)
        inputs = merge_tensors(inputs, ctx.non_tensor_args, ctx.tensor_flags)
        bwd_cpu_rng_state = torch.get_rng_state()
        bwd_cuda_rng_state = torch.cuda.get_rng_state()
        torch.set_rng_state(ctx.fwd_cpu_rng_state)
        torch.cuda.set_rng_state(ctx.fwd_cuda_rng_state)
        with torch.enable_grad():
            outputs = ctx.run_function(*inputs)
        torch.set_rng_state(bwd_cpu_rng_state)
        torch.cuda.set_rng_state(bwd_cuda_rng_state)
        if torch.is_tensor(outputs):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if o.requires_grad]
        torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])

        # Force clear the stashed tensors so they do not outlive this backward
        ctx.deepspeed_saved_tensors = None
        ctx.non_tensor_args = None
        ctx.tensor_flags = None
        return (None,) + tuple(x.grad if torch.is_tensor(x) else None for x in inputs)


def checkpoint(function, *args):
    return CheckpointFunction.apply(function, *args)


class TransformerStack(nn.Module):
    def __init__(self, hidden=4096, layers=24):
        super().__init__()
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(hidden, nhead=32, batch_first=True) for _ in range(layers)
        )

    def forward(self, x, attention_mask=None):
        for layer in self.layers:
            x = checkpoint(layer, x, attention_mask)
        return x


def train(model, loader, optimizer):
    model.train()
    for hidden_states, labels in loader:
        optimizer.zero_grad()
        out = model(hidden_states.cuda().requires_grad_())
        loss = nn.functional.mse_loss(out, labels.cuda())
        loss.backward()
        optimizer.step()
