# Fixed twin of case 07: forward stores `ctx.tensors = (None, B)`: the input activation is not kept since the frozen 4-bit weight needs no gradient
# Thread: https://github.com/bitsandbytes-foundation/bitsandbytes/pull/1270
# Reported: QLoRA fine-tuning uses far more GPU memory than expected; the savings of gradient checkpointing largely disappear
# Confirmed cause: MatMul4Bit.forward stored `ctx.tensors = (A, B)` whenever an input needed a gradient, so every 4-bit layer kept its input activation A alive until backward even though A is only needed for grad_B and the quantized weight B is frozen; the merged fix stores `(None, B)`, which the maintainer called the bug behind a lot of QLoRA memory issues
# Class: custom autograd.Function storing on ctx beyond save_for_backward
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class QuantState:
    absmax: torch.Tensor
    shape: torch.Size
    dtype: torch.dtype


def quantize_4bit(w):
    absmax = w.abs().amax(dim=1, keepdim=True).clamp(min=1e-8)
    q = torch.round(w / absmax * 7).clamp(-8, 7).to(torch.int8) + 8
    return q.to(torch.uint8), QuantState(absmax=absmax, shape=w.shape, dtype=w.dtype)


def dequantize_4bit(B, state):
    return ((B.to(torch.float32) - 8) / 7 * state.absmax).to(state.dtype)


class MatMul4Bit(torch.autograd.Function):
    @staticmethod
    def forward(ctx, A, B, out=None, bias=None, quant_state=None):
        output = torch.nn.functional.linear(A, dequantize_4bit(B, quant_state).to(A.dtype), bias)
        ctx.state = quant_state
        ctx.dtype_A, ctx.dtype_B = A.dtype, B.dtype
        ctx.dtype_bias = None if bias is None else bias.dtype
        if any(ctx.needs_input_grad[:2]):
            ctx.tensors = (None, B)
        else:
            ctx.tensors = (None, None)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        req_gradA, _, _, req_gradBias, _ = ctx.needs_input_grad
        _, B = ctx.tensors
        grad_A, grad_bias = None, None
        if req_gradBias:
            grad_bias = grad_output.sum(0, dtype=ctx.dtype_bias)
        if req_gradA:
            grad_A = torch.matmul(grad_output, dequantize_4bit(B, ctx.state).to(grad_output.dtype))
        return grad_A, None, None, grad_bias, None


class Linear4bit(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        w = torch.randn(out_features, in_features) / in_features ** 0.5
        q, state = quantize_4bit(w)
        self.register_buffer("weight", q)
        self.quant_state = state

    def forward(self, x):
        return MatMul4Bit.apply(x, self.weight, None, None, self.quant_state)


class LoraLinear(nn.Module):
    def __init__(self, base, r=16):
        super().__init__()
        self.base = base
        out_features, in_features = base.quant_state.shape
        self.lora_A = nn.Linear(in_features, r, bias=False)
        self.lora_B = nn.Linear(r, out_features, bias=False)
        nn.init.zeros_(self.lora_B.weight)

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x))


def finetune(batches, d_model=4096, n_layers=32, lr=2e-4, device="cuda"):
    layers = nn.Sequential(*[nn.Sequential(LoraLinear(Linear4bit(d_model, d_model)), nn.GELU()) for _ in range(n_layers)]).to(device)
    params = [p for p in layers.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=lr)
    for x, y in batches:
        x, y = x.to(device), y.to(device)
        loss = nn.functional.mse_loss(layers(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
