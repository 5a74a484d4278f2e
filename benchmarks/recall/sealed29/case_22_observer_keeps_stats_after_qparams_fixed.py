# Thread: https://github.com/vllm-project/llm-compressor/pull/2865 (see also https://github.com/vllm-project/llm-compressor/pull/2943)
# Reported: high memory use when quantizing large models; the observers' statistics stayed
#   allocated for every calibrated module after its scales had been written.
# Confirmed cause: the observers held on to their accumulated statistics (past min/max per
#   channel or group) for the whole run; the merged change makes observers delete their
#   statistics once qparams have been computed ("obs clean up their stats to improve memory
#   footprint during quantization").
# Class: quantization observer keeps what it has seen after it is no longer needed
import torch
from torch import nn


class MinMaxObserver(nn.Module):
    def __init__(self, group_size=128):
        super().__init__()
        self.group_size = group_size

    @torch.no_grad()
    def forward(self, observed):
        g = observed.reshape(-1, self.group_size)
        min_vals, max_vals = g.amin(dim=1), g.amax(dim=1)
        if hasattr(self, "past_min_vals"):
            min_vals = torch.minimum(min_vals, self.past_min_vals)
            max_vals = torch.maximum(max_vals, self.past_max_vals)
        self.past_min_vals = min_vals
        self.past_max_vals = max_vals

    def get_qparams(self, num_bits=4):
        qmax = 2 ** (num_bits - 1) - 1
        absmax = torch.maximum(self.past_min_vals.abs(), self.past_max_vals.abs())
        scale = (absmax / qmax).clamp(min=1e-8)
        zero_point = torch.zeros_like(scale, dtype=torch.int8)
        del self.past_min_vals
        del self.past_max_vals
        return scale, zero_point


def calibrate_model(model, calibration_batches, device="cuda"):
    model.to(device)
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear):
            module.weight_observer = MinMaxObserver()
            module.weight_observer(module.weight)
            scale, zero_point = module.weight_observer.get_qparams()
            module.register_buffer("weight_scale", scale)
            module.register_buffer("weight_zero_point", zero_point)
    for batch in calibration_batches:
        with torch.no_grad():
            model(batch.to(device))
    return model
