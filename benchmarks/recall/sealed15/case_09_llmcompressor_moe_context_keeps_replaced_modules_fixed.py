# Fixed twin of case 09: collect only module names, look each module up just before replacing it and drop the reference right after
# Thread: https://github.com/vllm-project/llm-compressor/pull/2674
# Reported: OOM during the MoE module replacement step when quantizing GLM-5.1 with AWQ, even with about 2 TB of host RAM (issue #2669)
# Confirmed cause: the merged PR: moe_calibration_context retained its list of all modules to replace even after each replacement was installed; the original module was removed from the model but stayed referenced from that list, so it was never garbage collected and memory inside the context doubled
# Class: list of replaced (original) modules kept alive for the duration of a context manager
import contextlib

import torch
import torch.nn as nn


class FusedMoE(nn.Module):
    def __init__(self, num_experts=64, dim=1024, hidden=2048):
        super().__init__()
        self.gate = nn.Linear(dim, num_experts)
        self.gate_up = nn.Parameter(torch.randn(num_experts, dim, 2 * hidden) * 0.01)
        self.down = nn.Parameter(torch.randn(num_experts, hidden, dim) * 0.01)


class CalibrationMoE(nn.Module):
    """Unfused copy of the experts so each one can be calibrated and offloaded separately."""

    def __init__(self, original, calibrate_all_experts=True):
        super().__init__()
        self.gate = original.gate
        self.calibrate_all_experts = calibrate_all_experts
        self.experts = nn.ModuleList()
        for e in range(original.gate_up.shape[0]):
            expert = nn.Module()
            expert.gate_up = nn.Parameter(original.gate_up[e].detach().clone())
            expert.down = nn.Parameter(original.down[e].detach().clone())
            self.experts.append(expert)


MOE_REGISTRY = {"FusedMoE": CalibrationMoE}


@contextlib.contextmanager
def moe_calibration_context(model, calibrate_all_experts=True):
    modules_to_replace = []
    for name, module in model.named_modules():
        if module.__class__.__name__ in MOE_REGISTRY:
            modules_to_replace.append((name, module.__class__.__name__))

    for name, class_name in modules_to_replace:
        module = model.get_submodule(name)
        replacement = MOE_REGISTRY[class_name](module, calibrate_all_experts=calibrate_all_experts)
        model.set_submodule(name, replacement)
        del module, replacement
    yield model


class Decoder(nn.Module):
    def __init__(self, layers=8):
        super().__init__()
        self.layers = nn.ModuleList(nn.ModuleDict({"mlp": FusedMoE()}) for _ in range(layers))


if __name__ == "__main__":
    model = Decoder()
    with moe_calibration_context(model):
        for _ in range(10):
            pass
