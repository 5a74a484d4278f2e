# Thread: https://github.com/pytorch/ao/pull/3946
# Reported: SmoothQuant calibration on a large calibration set spikes host RAM and gets OOM-killed;
#   memory grows with the number of calibration batches.
# Confirmed cause: SmoothQuantObserver.forward appended every activation it saw to self.inputs and only
#   reduced them (torch.cat + per-channel abs max) in calculate_qparams, so memory was O(N x features);
#   the merged PR adds an observer that keeps a running per-channel abs max instead (O(features)).
# Class: module/observer that stores every input it sees
import torch
import torch.nn.functional as F


class RunningAbsMaxSmoothQuantObserver(torch.nn.Module):
    def __init__(self, weight: torch.Tensor, alpha: float = 0.5):
        super().__init__()
        assert weight.ndim == 2
        self.weight = weight
        self.alpha = alpha
        self.x_abs_max = None
        self.device = weight.device

    @torch.no_grad()
    def forward(self, input: torch.Tensor):
        batch_max = input.reshape(-1, input.shape[-1]).abs().amax(dim=0).to(self.device)
        if self.x_abs_max is None:
            self.x_abs_max = batch_max
        else:
            self.x_abs_max = torch.maximum(self.x_abs_max, batch_max)
        return input

    def calculate_qparams(self):
        assert self.x_abs_max is not None, "run calibration data through the model first"
        x_abs_max = self.x_abs_max
        w_abs_max = torch.max(torch.abs(self.weight), dim=0)[0]
        eps = torch.finfo(torch.float32).eps
        return torch.pow(x_abs_max + eps, self.alpha) / torch.pow(w_abs_max + eps, 1 - self.alpha)


class SmoothQuantObservedLinear(torch.nn.Linear):
    def __init__(self, in_features, out_features, obs, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.obs = obs

    def forward(self, input: torch.Tensor):
        input = self.obs(input)
        return F.linear(input, self.weight, self.bias)


def insert_smooth_quant_observer_(model: torch.nn.Module, alpha: float = 0.5):
    for name, child in list(model.named_children()):
        if isinstance(child, torch.nn.Linear):
            obs = RunningAbsMaxSmoothQuantObserver(child.weight, alpha)
            observed = SmoothQuantObservedLinear(
                child.in_features, child.out_features, obs,
                bias=child.bias is not None, device=child.weight.device, dtype=child.weight.dtype,
            )
            observed.weight = child.weight
            observed.bias = child.bias
            setattr(model, name, observed)
        else:
            insert_smooth_quant_observer_(child, alpha)


@torch.no_grad()
def calibrate(model, calibration_loader, device="cuda"):
    model.eval()
    insert_smooth_quant_observer_(model, alpha=0.5)
    for batch in calibration_loader:
        model(batch["input_ids"].to(device))
    factors = {}
    for name, module in model.named_modules():
        if isinstance(module, SmoothQuantObservedLinear):
            factors[name] = module.obs.calculate_qparams()
    return factors
