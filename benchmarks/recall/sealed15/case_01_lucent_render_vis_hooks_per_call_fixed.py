# Fixed twin of case 01: close every ModuleHook (handle.remove()) in a finally block before render_vis returns
# Thread: https://github.com/greentfrapp/lucent/issues/45
# Reported: calling render_vis repeatedly on the same model (one call per video frame) gets slower every call, on CPU and GPU; the model keeps hundreds of hooks, each holding its last feature map
# Confirmed cause: a commenter traced it to hook_model: the forward hooks it registers to grab hidden feature maps are never removed before render_vis returns, so every call adds one more hook per submodule (the handles are dropped); issue closed
# Class: forward hook registered per call, handle kept only inside a throwaway object, hook stores the module output
import torch
import torch.nn as nn
from collections import OrderedDict


class ModuleHook:
    def __init__(self, module):
        self.hook = module.register_forward_hook(self.hook_fn)
        self.module = None
        self.features = None

    def hook_fn(self, module, input, output):
        self.module = module
        self.features = output

    def close(self):
        self.hook.remove()


def hook_model(model):
    features = OrderedDict()

    def hook_layers(net, prefix=()):
        for name, layer in net._modules.items():
            if layer is None:
                continue
            features["_".join(prefix + (name,))] = ModuleHook(layer)
            hook_layers(layer, prefix=prefix + (name,))

    hook_layers(model)

    def hook(layer):
        return features[layer].features

    return hook, features


def channel_objective(layer, n_channel):
    def inner(hook):
        return -hook(layer)[:, n_channel].mean()
    return inner


def render_vis(model, objective_f, image_shape=(1, 3, 64, 64), thresholds=(64,), lr=5e-2, device="cuda"):
    image = torch.randn(image_shape, device=device, requires_grad=True)
    optimizer = torch.optim.Adam([image], lr=lr)
    hook, features = hook_model(model)
    images = []
    try:
        for i in range(1, max(thresholds) + 1):
            optimizer.zero_grad()
            model(torch.sigmoid(image))
            loss = objective_f(hook)
            loss.backward()
            optimizer.step()
            if i in thresholds:
                images.append(torch.sigmoid(image).detach().cpu())
    finally:
        for module_hook in features.values():
            module_hook.close()
    return images


if __name__ == "__main__":
    dev = torch.device("cuda")
    net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 128, 3, padding=1), nn.ReLU()).to(dev).eval()
    for frame in range(10000):
        render_vis(net, channel_objective("2", frame % 128), device=dev)
