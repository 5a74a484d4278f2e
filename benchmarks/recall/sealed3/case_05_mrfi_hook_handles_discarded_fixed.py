# Fixed twin of case 05: a fault-injection wrapper registers forward hooks per instance and drops the handles
# Thread: https://github.com/fffasttime/MRFI/pull/5
# Reported: progressive GPU/CPU memory exhaustion over a long fault-injection campaign that builds MRFI many times
# Confirmed cause: __add_hooks discarded the RemovableHandle of every register_forward_pre_hook/register_forward_hook,
#   so each MRFI instantiation left closures (holding FI_config and state) on the shared model forever;
#   merged PR keeps the handles and adds remove_hooks()/close()
# Class: hooks registered repeatedly on a long-lived model, never removed
import torch
import torch.nn as nn
import torchvision


class MRFI:
    def __init__(self, model: nn.Module, config: dict):
        self.model = model
        self.config = config
        self.observed = {}
        self._hook_handles = []
        self.__add_hooks()

    def __add_hooks(self):
        for name, module in self.model.named_modules():
            if not isinstance(module, (nn.Conv2d, nn.Linear)):
                continue
            module.FI_config = self.config
            self._hook_handles.append(module.register_forward_pre_hook(self._make_pre_hook(name)))
            self._hook_handles.append(module.register_forward_hook(self._make_hook(name)))

    def remove_hooks(self):
        for handle in self._hook_handles:
            handle.remove()
        self._hook_handles.clear()

    def close(self):
        self.remove_hooks()
        for module in self.model.modules():
            if hasattr(module, "FI_config"):
                del module.FI_config

    def _make_pre_hook(self, name):
        def pre_hook(module, inputs):
            if self.config.get("inject_input"):
                x = inputs[0]
                mask = torch.rand_like(x) < self.config["rate"]
                return (torch.where(mask, torch.zeros_like(x), x),)
        return pre_hook

    def _make_hook(self, name):
        def hook(module, inputs, output):
            mask = torch.rand_like(output) < self.config["rate"]
            output = torch.where(mask, output * self.config["scale"], output)
            self.observed[name] = output.detach().abs().max()
            return output
        return hook

    def __call__(self, x):
        with torch.no_grad():
            return self.model(x)


def campaign(model, images, rates):
    results = []
    for rate in rates:
        fi = MRFI(model, {"rate": rate, "scale": 8.0, "inject_input": False})
        logits = fi(images)
        results.append((rate, logits.argmax(1).cpu()))
        fi.close()
    return results


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = torchvision.models.resnet18(weights=None).to(device).eval()
    images = torch.rand(64, 3, 224, 224, device=device)
    out = campaign(model, images, [1e-6 * i for i in range(1, 5000)])
    print(len(out))
