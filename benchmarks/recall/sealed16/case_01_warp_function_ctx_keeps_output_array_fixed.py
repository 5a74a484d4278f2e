# Fixed twin of case 01: keep only the input via ctx.save_for_backward and rebuild the Warp arrays in backward (nothing Warp-owned on ctx)
# Thread: https://github.com/NVIDIA/warp/issues/675
# Reported: with several chained calls of the checkpointing torch.Function wrapper, GPU memory leaks step after step (and graph capture fails)
# Confirmed cause: Warp maintainer (mmacklin): storing the Warp output array on the Torch ctx and returning a tensor that views it creates a reference cycle (the returned tensor's grad_fn holds ctx, ctx holds the array the tensor lives in), so nothing is garbage collected; do not store it on ctx (or keep only a weak reference)
# Class: custom autograd.Function storing a tensor-backing object on ctx outside save_for_backward (reference cycle through grad_fn)
import torch
import warp as wp

N_INTERMEDIATE = 25


@wp.kernel
def fwd_kernel(arr: wp.array(dtype=wp.float32), ret: wp.array(dtype=wp.float32)):
    tid = wp.tid()
    ret[tid] = arr[tid] * 1.02


class CheckpointedWarpStep(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        wp_in = wp.from_torch(x.detach().contiguous())
        wp_out = wp.zeros_like(wp_in)
        wp.launch(fwd_kernel, dim=x.shape[0], inputs=[wp_in], outputs=[wp_out])
        ctx.save_for_backward(x)
        return wp.to_torch(wp_out).clone()

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        wp_in = wp.from_torch(x.detach().contiguous(), requires_grad=True)
        wp_out = wp.zeros_like(wp_in, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(fwd_kernel, dim=x.shape[0], inputs=[wp_in], outputs=[wp_out])
        tape.backward(grads={wp_out: wp.from_torch(grad_out.contiguous())})
        grad_in = wp.to_torch(wp_in.grad).clone()
        tape.zero()
        return grad_in


def train(steps=1000, n=1_000_000):
    wp.init()
    param = torch.ones(n, device="cuda", requires_grad=True)
    opt = torch.optim.SGD([param], lr=1e-3)
    for _ in range(steps):
        x = param
        for _ in range(N_INTERMEDIATE):
            x = CheckpointedWarpStep.apply(x)
        loss = x.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(torch.cuda.memory_allocated())


if __name__ == "__main__":
    train()
