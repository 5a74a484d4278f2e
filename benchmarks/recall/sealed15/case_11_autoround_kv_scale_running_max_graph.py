# Recall case 11 (sealed15): auto-round attention / kv-cache quant wrappers keep a running max scale computed from activations without detaching it
# Thread: https://github.com/intel/auto-round/pull/1389
# Reported: regression: memory held across tuning iterations by the attention and kv_cache modules
# Confirmed cause: the merged PR: the scale tensor stored on the attention and kv_cache modules was computed from activations that carry autograd history, so the stored scale held references to the computation graph; the fix detaches the scale before storing it
# Class: tensor derived from activations stored on a module (running max) without detach
import torch
import torch.nn as nn
import torch.nn.functional as F

FP8_MAX = 448.0


class QuantKVCache(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("k_scale", torch.zeros(()))
        self.register_buffer("v_scale", torch.zeros(()))

    def update(self, key, value):
        k_scale = key.abs().amax() / FP8_MAX
        v_scale = value.abs().amax() / FP8_MAX
        self.k_scale = torch.maximum(self.k_scale, k_scale)  # leak: ANY
        self.v_scale = torch.maximum(self.v_scale, v_scale)  # leak: ANY
        return key, value


class QuantAttention(nn.Module):
    def __init__(self, dim=2048, heads=16):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.kv_cache = QuantKVCache()

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        k, v = self.kv_cache.update(k, v)
        out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        return self.proj(out.transpose(1, 2).reshape(b, t, d))


def tune_block(block, inputs, iters=200, lr=5e-3):
    rounding = nn.Parameter(torch.zeros_like(block.qkv.weight))
    optimizer = torch.optim.Adam([rounding], lr=lr)
    ref = block(inputs).detach()
    for _ in range(iters):
        w = block.qkv.weight + rounding
        x = inputs
        q_out = F.linear(x, w, block.qkv.bias)
        b, t, d = x.shape
        q, k, v = q_out.view(b, t, 3, block.heads, d // block.heads).unbind(2)
        k, v = block.kv_cache.update(k, v)
        out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        loss = F.mse_loss(block.proj(out.transpose(1, 2).reshape(b, t, d)), ref)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    dev = torch.device("cuda")
    blk = QuantAttention().to(dev)
    tune_block(blk, torch.randn(8, 2048, 2048, device=dev))
