# Fixed twin of case 69: one cached buffer for the longest sequence seen, sliced for shorter ones.
# Thread: https://github.com/lucidrains/rotary-embedding-torch/issues/15
# Class: unbounded cache keyed by a per-call value (sequence length)
from math import pi

import torch
from torch import nn, einsum
from einops import rearrange, repeat


def rotate_half(x):
    x = rearrange(x, "... (d r) -> ... d r", r=2)
    x1, x2 = x.unbind(dim=-1)
    x = torch.stack((-x2, x1), dim=-1)
    return rearrange(x, "... d r -> ... (d r)")


def apply_rotary_emb(freqs, t):
    rot_dim = freqs.shape[-1]
    t_rot, t_pass = t[..., :rot_dim], t[..., rot_dim:]
    t_rot = (t_rot * freqs.cos()) + (rotate_half(t_rot) * freqs.sin())
    return torch.cat((t_rot, t_pass), dim=-1)


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, theta=10000):
        super().__init__()
        self.freqs = nn.Parameter(1.0 / (theta ** (torch.arange(0, dim, 2)[: dim // 2].float() / dim)),
                                  requires_grad=False)
        self.register_buffer("cached_freqs", None, persistent=False)

    def forward(self, t):
        freqs = einsum("..., f -> ... f", t.type(self.freqs.dtype), self.freqs)
        return repeat(freqs, "... n -> ... (n r)", r=2)

    def get_freqs(self, seq_len, offset, device, dtype):
        needed = offset + seq_len
        if self.cached_freqs is None or self.cached_freqs.shape[0] < needed:
            seq = torch.arange(needed, device=device, dtype=dtype)
            self.cached_freqs = self.forward(seq).detach()
        return self.cached_freqs[offset:needed]

    def rotate_queries_or_keys(self, t, seq_dim=-2, offset=0):
        device, dtype, seq_len = t.device, t.dtype, t.shape[seq_dim]
        freqs = self.get_freqs(seq_len, offset, device, dtype)
        return apply_rotary_emb(freqs, t)


@torch.no_grad()
def greedy_decode(model, src, bos_id, eos_id, max_len=256):
    memory = model.encode(src)
    ys = torch.full((src.size(0), 1), bos_id, dtype=torch.long, device=src.device)
    for _ in range(max_len):
        logits = model.decode(ys, memory)
        next_token = logits[:, -1].argmax(dim=-1, keepdim=True)
        ys = torch.cat([ys, next_token], dim=1)
        if (next_token == eos_id).all():
            break
    return ys
