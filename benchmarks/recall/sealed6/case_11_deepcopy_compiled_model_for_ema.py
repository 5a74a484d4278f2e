# Recall case 11 (sealed6): EMA / weight-averaging helper deep-copies the torch.compile'd model, leaking CUDA memory
# Thread: https://github.com/epfml/schedules-and-scaling/pull/2
# Reported: CUDA memory leak when EMA / weight averaging was enabled together with torch.compile
# Confirmed cause: PR author (merged): "Deepcloning compiled model caused cuda leaks"; the averaging code now copies the underlying (uncompiled) module instead of the compiled wrapper
# Class: copy.deepcopy of a compiled model (wrapper + compiled state) kept alongside training
import copy

import torch
import torch.nn.functional as F
from torch import nn


class GPTBlock(nn.Module):
    def __init__(self, d=1024, h=16):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, h, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        a = self.ln1(x)
        x = x + self.attn(a, a, a, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab=50304, d=1024, n_layer=12):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(GPTBlock(d) for _ in range(n_layer))
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx, targets=None):
        x = self.wte(idx)
        for b in self.blocks:
            x = b(x)
        logits = self.head(x)
        loss = None if targets is None else F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        return logits, loss


class WeightAverager:
    """Keeps an EMA copy of the model for evaluation."""

    def __init__(self, model, beta=0.999):
        self.beta = beta
        self.ema_model = copy.deepcopy(model)  # leak: ANY
        self.ema_model.requires_grad_(False)

    @torch.no_grad()
    def step(self, model):
        for p_ema, p in zip(self.ema_model.parameters(), model.parameters()):
            p_ema.lerp_(p, 1 - self.beta)


def get_batch(bs=8, seq=1024, device="cuda"):
    x = torch.randint(0, 50304, (bs, seq + 1), device=device)
    return x[:, :-1], x[:, 1:]


if __name__ == "__main__":
    model = torch.compile(GPT().cuda())
    opt = torch.optim.AdamW(model.parameters(), lr=6e-4)
    averager = None
    for it in range(20000):
        x, y = get_batch()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            _, loss = model(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if it % 2000 == 0:
            # restart averaging window at each schedule cooldown
            averager = WeightAverager(model)
        elif averager is not None:
            averager.step(model)
