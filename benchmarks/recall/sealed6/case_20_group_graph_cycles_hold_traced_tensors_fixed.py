# Fixed twin of case 20: build_groups() drops its cyclic helper objects and runs gc.collect() before returning, so the traced tensors they reference are freed
# Thread: https://github.com/TheStageAI/TorchIntegral/issues/34
# Reported: wrapping large models used a lot of memory (or failed); calling gc.collect() at the end of build_groups() "significantly reduces memory usage" and made wrapping large models possible
# Confirmed cause: the grouping data structure has reference cycles (groups <-> parents/children) that also reference the tensors seen during tracing; they are only freed by the cyclic collector; maintainer added gc.collect() as suggested
# Class: reference cycles among helper objects holding device tensors, freed only by cyclic GC
import gc

import torch
from torch import nn


class RelatedGroup:
    def __init__(self, size):
        self.size = size
        self.params = []
        self.tensors = []          # activations seen while tracing
        self.parents = []
        self.subgroups = []

    def append_param(self, name, value, dim):
        self.params.append({"name": name, "value": value, "dim": dim})

    def set_subgroups(self, groups):
        self.subgroups = groups
        for g in groups:
            g.parents.append(self)


class IntegralWrapper:
    def __init__(self, init_from_discrete=True):
        self.init_from_discrete = init_from_discrete

    def _trace(self, model, example_input):
        seen = []

        def hook(mod, inp, out):
            seen.append((mod, inp[0], out))

        handles = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
        model(example_input)
        for h in handles:
            h.remove()
        return seen

    def build_groups(self, model, example_input):
        traced = self._trace(model, example_input)
        groups = []
        prev = None
        for mod, inp, out in traced:
            g = RelatedGroup(mod.weight.shape[0])
            g.append_param("weight", mod.weight, 0)
            g.tensors.extend([inp, out])
            if prev is not None:
                prev.set_subgroups([g])
            groups.append(g)
            prev = g
        sizes = [g.size for g in groups]
        del groups, traced, prev, g
        gc.collect()
        return sizes

    def __call__(self, model, example_input):
        sizes = self.build_groups(model, example_input)
        return model, sizes


if __name__ == "__main__":
    model = nn.Sequential(*[nn.Sequential(nn.Conv2d(256, 256, 3, padding=1), nn.ReLU()) for _ in range(30)]).cuda()
    wrapper = IntegralWrapper()
    for _ in range(5):
        model, sizes = wrapper(model, torch.randn(16, 256, 128, 128, device="cuda"))
