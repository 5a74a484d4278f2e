# Recall case 14 (sealed5): statistics collection keeps tensors returned by get_const_data, which still carry autograd history, in a results list
# Thread: https://github.com/openvinotoolkit/nncf/pull/3199
# Reported: memory leak when collecting data from constant (weight) tensors during compression
# Confirmed cause: the returned tensor was attached to the graph (weights require grad), so stored results kept graphs alive; merged PR returns .detach() with a reproducer
# Class: helper returns graph-attached tensors that callers keep
import torch
import torch.nn as nn


def get_const_data(module: nn.Module) -> torch.Tensor:
    weight = module.weight
    if hasattr(module, "weight_scale"):
        weight = weight * module.weight_scale
    return weight  # leak: ANY


def collect_weight_statistics(model: nn.Module, n_rounds=100):
    results = []
    for _ in range(n_rounds):
        for module in model.modules():
            if isinstance(module, (nn.Conv2d, nn.Linear)):
                w = get_const_data(module)
                results.append(torch.sum(w.abs().amax(dim=0)))
    return results


class Scaled(nn.Linear):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.weight_scale = nn.Parameter(torch.ones(1))


if __name__ == "__main__":
    model = nn.Sequential(Scaled(1024, 1024), nn.ReLU(), Scaled(1024, 1024))
    stats = collect_weight_statistics(model)
    print(len(stats))
