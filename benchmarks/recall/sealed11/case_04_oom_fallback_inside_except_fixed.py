# Fixed twin of case 04: only sets a flag inside `except` and runs the sliced-attention fallback after the except block
# Thread: https://github.com/Comfy-Org/ComfyUI/pull/11038
# Reported: the OOM fallback path (SDPA OOM -> slice attention) still runs out of VRAM, because the memory of the failed attempt is not available to the fallback
# Confirmed cause: a live exception references the frames and all local tensors of the failed call for the lifetime of the except block, so running the fallback inside `except` keeps that memory pinned; the merged PR sets a flag and runs the fallback after leaving the except block
# Class: retrying / falling back inside `except torch.cuda.OutOfMemoryError` while the exception still holds the failed attempt's tensors
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F


def slice_attention(q, k, v):
    """q: (B, N, C), k: (B, C, N), v: (B, C, N) -> (B, C, N), computed in query slices."""
    r1 = torch.zeros_like(k, device=q.device)
    scale = int(q.shape[-1]) ** (-0.5)
    steps = 1
    while True:
        slice_size = q.shape[1] // steps if (q.shape[1] % steps) == 0 else q.shape[1]
        for i in range(0, q.shape[1], slice_size):
            end = i + slice_size
            s1 = torch.bmm(q[:, i:end], k) * scale
            s2 = torch.softmax(s1, dim=2).permute(0, 2, 1)
            del s1
            r1[:, :, i:end] = torch.bmm(v, s2)
            del s2
        return r1


def pytorch_attention(q, k, v):
    B, C, H, W = q.shape
    orig_shape = q.shape
    q, k, v = (t.view(B, 1, C, -1).transpose(2, 3).contiguous() for t in (q, k, v))
    oom_fallback = False
    try:
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False)
        out = out.transpose(2, 3).reshape(orig_shape)
    except torch.cuda.OutOfMemoryError:
        logging.warning("scaled_dot_product_attention OOMed: switched to slice attention")
        oom_fallback = True
    if oom_fallback:
        out = slice_attention(q.view(B, -1, C), k.view(B, -1, C).transpose(1, 2), v.view(B, -1, C).transpose(1, 2)).reshape(orig_shape)
    return out


class AttnBlock(nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.norm = nn.GroupNorm(32, in_channels, eps=1e-6, affine=True)
        self.q = nn.Conv2d(in_channels, in_channels, 1)
        self.k = nn.Conv2d(in_channels, in_channels, 1)
        self.v = nn.Conv2d(in_channels, in_channels, 1)
        self.proj_out = nn.Conv2d(in_channels, in_channels, 1)

    def forward(self, x):
        h_ = self.norm(x)
        h_ = pytorch_attention(self.q(h_), self.k(h_), self.v(h_))
        return x + self.proj_out(h_)


class TinyDecoder(nn.Module):
    def __init__(self, ch=512, up=3):
        super().__init__()
        self.conv_in = nn.Conv2d(4, ch, 3, padding=1)
        self.mid_attn = AttnBlock(ch)
        self.ups = nn.ModuleList([nn.ConvTranspose2d(ch, ch, 4, 2, 1) for _ in range(up)])
        self.conv_out = nn.Conv2d(ch, 3, 3, padding=1)

    def forward(self, z):
        h = self.mid_attn(self.conv_in(z))
        for up in self.ups:
            h = F.silu(up(h))
        return self.conv_out(h)


@torch.inference_mode()
def decode_tiles(decoder, latents):
    images = []
    for z in latents:
        images.append(decoder(z.unsqueeze(0)).float().clamp(-1, 1).cpu())
    return images


if __name__ == "__main__":
    dec = TinyDecoder().cuda().half().eval()
    lat = torch.randn(8, 4, 256, 256, device="cuda", dtype=torch.half)
    out = decode_tiles(dec, lat)
    print(len(out), out[0].shape)
