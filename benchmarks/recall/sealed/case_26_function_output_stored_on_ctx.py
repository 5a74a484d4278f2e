# Recall case 26 (sealed): a custom autograd.Function keeps its own output as a ctx attribute
# Thread: https://github.com/pytorch/pytorch/issues/5569
# Reported: a custom Function (with a learnable weight among its inputs) leaks memory when it is
#   applied in a loop; each call's output is never freed.
# Confirmed cause: the maintainer (apaszke): tensors that are inputs or outputs must be stored
#   with `ctx.save_for_backward`, "or you will face leaks like in this issue. It's expected."
#   Assigning the output to `ctx.output_features` makes output -> grad_fn (ctx) -> output, a
#   cycle through the autograd graph that the collector cannot free.
# Class: custom autograd.Function storing tensors as ctx attributes (its own output)
import torch
from torch.autograd import Function


class ValidConvolutionFunction(Function):
    @staticmethod
    def forward(ctx, input_features, weight, rules):
        output_features = torch.zeros(input_features.size(0), weight.size(-1),
                                      device=input_features.device, dtype=input_features.dtype)
        for offset, (in_idx, out_idx) in enumerate(rules):
            output_features.index_add_(0, out_idx, input_features[in_idx] @ weight[offset])
        ctx.rules = rules
        ctx.save_for_backward(input_features, weight)
        ctx.output_features = output_features  # leak: ANY
        return output_features

    @staticmethod
    def backward(ctx, grad_output):
        input_features, weight = ctx.saved_tensors
        grad_input = torch.zeros_like(input_features)
        grad_weight = torch.zeros_like(weight)
        for offset, (in_idx, out_idx) in enumerate(ctx.rules):
            grad_input.index_add_(0, in_idx, grad_output[out_idx] @ weight[offset].t())
            grad_weight[offset] += input_features[in_idx].t() @ grad_output[out_idx]
        return grad_input, grad_weight, None


class SubmanifoldConvolution(torch.nn.Module):
    def __init__(self, n_in, n_out, filter_volume):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(filter_volume, n_in, n_out) * (2.0 / n_in) ** 0.5)

    def forward(self, features, rules):
        return ValidConvolutionFunction.apply(features, self.weight, rules)


def extract_features(layer, scans, device="cuda"):
    feats = []
    for features, rules in scans:
        out = layer(features.to(device), [(i.to(device), o.to(device)) for i, o in rules])
        feats.append(out.sum(0).detach().cpu())
    return torch.stack(feats)
