# Fixed twin of case 15: register a hook that does not capture self (a module-level function), breaking the cycle
# Thread: https://github.com/pytorch/pytorch/issues/46386
# Reported: GPU memory keeps growing when the module is instantiated and moved to cuda repeatedly, even without calling forward
# Confirmed cause: the hook closure references self, so the module is only reclaimable by the cyclic GC and GPU parameters pile up between collections; the reporter shows the growth disappears without the self-referencing hook (open issue: weaker, cause as diagnosed in the thread)
# Class: forward hook that captures the module itself (reference cycle) on a model rebuilt per trial
import torch
import torch.nn as nn
import torchvision.models as models


def _make_hook(store):
    def fw_hook(m, m_in, m_out):
        store["layer4"] = m_out.detach().mean()
    return fw_hook


class LeakyModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.resnet = models.resnet152()
        self.features = {}
        self.resnet.layer4.register_forward_hook(_make_hook(self.features))

    def forward(self, x):
        return self.resnet(x)


def run_trials(n_trials=1000):
    for i in range(n_trials):
        net = LeakyModule()
        net.to("cuda:0")
        print(f"trial {i}: {torch.cuda.memory_allocated() / 2 ** 20:.0f} MiB")


if __name__ == "__main__":
    run_trials()
