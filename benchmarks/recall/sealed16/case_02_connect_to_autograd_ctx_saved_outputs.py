# Recall case 02 (sealed16): helper that connects a precomputed forward to autograd keeps the saved tensors (one of them an output) as a ctx attribute
# Thread: https://github.com/Lightning-AI/lightning-thunder/issues/1687
# Reported: max_memory_allocated grows by one activation per call of a function that uses connect_to_autograd (8 MB, 16 MB, 24 MB, ...), first seen with HF Qwen2Attention
# Confirmed cause: the merged fix (lightning-thunder PR #1688, 'Fix memory leak in saved tensors') moves the saved tensors into the autograd Function that produces the outputs: keeping an output tensor as a plain ctx attribute makes output -> grad_fn -> ctx -> output a cycle that is never freed
# Class: custom autograd.Function storing tensors (including its own outputs) on ctx instead of save_for_backward
import torch


class ConnectedFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, backward_fn, saved_tensors, saved_other, flat_output, *flat_args):
        ctx.backward_fn = backward_fn
        ctx.saved_other = saved_other
        ctx.stashed_tensors = tuple(saved_tensors)  # leak: ANY
        return tuple(flat_output)

    @staticmethod
    def backward(ctx, *grad_outputs):
        grads = ctx.backward_fn(ctx.stashed_tensors, ctx.saved_other, *grad_outputs)
        return (None, None, None, None, *grads)


def connect_to_autograd(*, backward_fn, flat_args, flat_output, saved_tensors, saved_other):
    outs = ConnectedFunction.apply(backward_fn, saved_tensors, saved_other, flat_output, *flat_args)
    return outs


def sin_backward(saved, saved_other, grad_out):
    (x_cos,) = saved
    return (grad_out * x_cos,)


def compiled_sin(x):
    with torch.no_grad():
        o = x.sin()
    (out,) = connect_to_autograd(
        backward_fn=sin_backward,
        flat_args=(x,),
        flat_output=(o,),
        saved_tensors=(o,),
        saved_other=(),
    )
    return out


def main():
    for i in range(100):
        x = torch.randn(1024, 1024, requires_grad=True, device="cuda")
        y = compiled_sin(x)
        del y
        print(i, torch.cuda.max_memory_allocated())


if __name__ == "__main__":
    main()
