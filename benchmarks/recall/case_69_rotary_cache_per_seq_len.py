# Recall case 69: rotary frequencies cached under a new key for every sequence length
# Thread: https://github.com/lucidrains/rotary-embedding-torch/issues/15
# Reported: an encoder-decoder transformer with rotary embeddings slows down and hangs in the
#   eval stage (autoregressive decoding) after a few epochs; with learned or relative position
#   encodings it does not.
# Confirmed cause: the maintainer: "i'm incorrectly caching by the sequence length, but it
#   should cache the longest sequence length and slice out any subsequent calls with shorter
#   ones". Each decoding step has a new length, so the dict cache gains a device tensor per
#   distinct length forever. Fixed by keeping one buffer for the longest length seen and
#   slicing it; the reporter confirmed it largely fixed the problem.
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
        self.cache = dict()

    def forward(self, t, cache_key=None):
        if cache_key is not None and cache_key in self.cache:
            return self.cache[cache_key]
        freqs = einsum("..., f -> ... f", t.type(self.freqs.dtype), self.freqs)
        freqs = repeat(freqs, "... n -> ... (n r)", r=2)
        if cache_key is not None:
            self.cache[cache_key] = freqs.detach()  # leak: ANY
        return freqs

    def rotate_queries_or_keys(self, t, seq_dim=-2, offset=0):
        device, dtype, seq_len = t.device, t.dtype, t.shape[seq_dim]
        seq = torch.arange(seq_len, device=device, dtype=dtype) + offset
        freqs = self.forward(seq, cache_key=f"freqs:{seq_len}|offset:{offset}")
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
