# Fixed twin of case 08: the Function stores a detached copy of its output on ctx (ctx.y = x.detach())
# Thread: https://github.com/RobinBruegger/RevTorch/issues/1
# Reported: subtle memory leak in _ReversibleModuleFunction when one network output is not consumed by the loss
# Confirmed cause: forward stored the returned output as `ctx.y = x` (output -> grad_fn -> ctx -> output cycle, only broken in backward, which never runs for an unused output); the maintainer fixed it in commit 2b6417d ("Fix memory leak when not consuming output of the reversible block") by storing `x.detach()`
# Class: custom autograd.Function stores its output tensor on ctx instead of save_for_backward / a detached copy
import torch
import torch.nn as nn


class ReversibleBlock(nn.Module):
    def __init__(self, f_block, g_block):
        super().__init__()
        self.f_block, self.g_block = f_block, g_block

    def forward(self, x):
        x1, x2 = torch.chunk(x, 2, dim=1)
        with torch.no_grad():
            y1 = x1 + self.f_block(x2)
            y2 = x2 + self.g_block(y1)
        return torch.cat([y1, y2], dim=1)

    def backward_pass(self, y, dy):
        y1, y2 = torch.chunk(y, 2, dim=1)
        dy1, dy2 = torch.chunk(dy, 2, dim=1)
        with torch.enable_grad():
            y1.requires_grad_(True)
            gy1 = self.g_block(y1)
            gy1.backward(dy2)
        with torch.no_grad():
            x2 = y2 - gy1
            dx1 = dy1 + y1.grad
            y1.grad = None
        with torch.enable_grad():
            x2.requires_grad_(True)
            fx2 = self.f_block(x2)
            fx2.backward(dx1)
        with torch.no_grad():
            x1 = y1 - fx2
            dx2 = dy2 + x2.grad
            x2.grad = None
        return torch.cat([x1, x2.detach()], dim=1), torch.cat([dx1, dx2], dim=1)


class _ReversibleModuleFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, reversible_blocks):
        for block in reversible_blocks:
            x = block(x)
        ctx.y = x.detach()
        ctx.reversible_blocks = reversible_blocks
        return x

    @staticmethod
    def backward(ctx, dy):
        y = ctx.y
        del ctx.y
        for block in reversed(ctx.reversible_blocks):
            y, dy = block.backward_pass(y, dy)
        return dy, None


class ReversibleSequence(nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.reversible_blocks = blocks

    def forward(self, x):
        return _ReversibleModuleFunction.apply(x, self.reversible_blocks)


def conv_pair(ch):
    return ReversibleBlock(nn.Conv2d(ch, ch, 3, padding=1), nn.Conv2d(ch, ch, 3, padding=1))


class Net(nn.Module):
    def __init__(self, ch=32):
        super().__init__()
        self.conv = nn.Conv2d(1, 2 * ch, 3, padding=1)
        self.rev1 = ReversibleSequence(nn.ModuleList([conv_pair(ch) for _ in range(4)]))
        self.rev2 = ReversibleSequence(nn.ModuleList([conv_pair(ch) for _ in range(4)]))

    def forward(self, x):
        x = torch.relu(self.conv(x))
        return self.rev1(x), self.rev2(x)


if __name__ == "__main__":
    device = "cuda"
    net = Net().to(device)
    opt = torch.optim.Adam(net.parameters())
    for it in range(10000):
        x = torch.randn(8, 1, 128, 128, device=device)
        seg, aux = net(x)  # aux head only used for monitoring, never in the loss
        loss = seg.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if it % 100 == 0:
            print(it, torch.cuda.memory_allocated() / 2**20)
