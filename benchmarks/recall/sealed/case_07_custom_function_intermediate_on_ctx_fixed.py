# Fixed twin of case 07: the cell states go through ctx.save_for_backward like the rest.
# Thread: https://github.com/asappresearch/sru/pull/171
# Class: custom autograd.Function storing tensors as ctx attributes
import torch
from torch.autograd import Function

from sru import sru_cuda_lib


class SRU_Compute_GPU(Function):
    @staticmethod
    def forward(ctx, u, x, weight_c, bias, init, activation_type, d_out, scale_x=None):
        length = x.size(0) if x.dim() == 3 else 1
        batch = x.size(-2)
        k = u.size(-1) // d_out
        ctx.activation_type = activation_type
        ctx.d_out = d_out
        ctx.scale_x = scale_x
        size = (length, batch, d_out) if x.dim() == 3 else (batch, d_out)
        c = x.new_zeros(*size)
        h = x.new_zeros(*size)
        x_ = x.contiguous() * scale_x if scale_x is not None else x.contiguous()
        sru_cuda_lib.sru_forward(h, c, u.contiguous(), x_, weight_c.contiguous(), bias,
                                 init.contiguous(), length, batch, d_out, k, activation_type)
        ctx.save_for_backward(u, x, weight_c, bias, init, c)
        last_hidden = c if x.dim() == 2 else c[-1]
        return h, last_hidden

    @staticmethod
    def backward(ctx, grad_h, grad_last):
        u, x, weight_c, bias, init, c = ctx.saved_tensors
        length = x.size(0) if x.dim() == 3 else 1
        batch = x.size(-2)
        d = ctx.d_out
        k = u.size(-1) // d
        grad_u = torch.zeros_like(u)
        grad_wc = torch.zeros_like(weight_c)
        grad_bias = torch.zeros_like(bias)
        grad_init = torch.zeros_like(init)
        grad_x = torch.zeros_like(x) if k == 3 else None
        sru_cuda_lib.sru_backward(grad_u, grad_x, grad_wc, grad_bias, grad_init, u, x, weight_c,
                                  bias, init, c, grad_h.contiguous(), grad_last.contiguous(),
                                  length, batch, d, k, ctx.activation_type)
        return grad_u, grad_x, grad_wc, grad_bias, grad_init, None, None, None


def run_layers(layers, x, hidden):
    outputs = x
    for layer, h0 in zip(layers, hidden):
        u = layer.weight_proj(outputs)
        outputs, _ = SRU_Compute_GPU.apply(u, outputs, layer.weight_c, layer.bias, h0,
                                           layer.activation_type, layer.hidden_size)
    return outputs
