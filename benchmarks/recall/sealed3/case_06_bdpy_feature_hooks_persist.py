# Recall case 06 (sealed3): FeatureExtractor leaves its forward hooks on the encoder after it is destroyed
# Thread: https://github.com/KamitaniLab/bdpy/pull/91
# Reported: (issue #72) when the same encoder is reused for another reconstruction, unnecessary features are stored
#   incrementally and RAM keeps growing
# Confirmed cause: hooks added by FeatureExtractor persisted after the extractor was deleted, and every later forward
#   still pushed features into them; merged PR adds a destructor that removes only the hooks it added
# Class: hook that stores what it sees, registered per extractor and never removed
import torch
import torch.nn as nn
import torchvision


class FeatureHook:
    def __init__(self):
        self.outputs = []

    def __call__(self, module, inputs, output):
        self.outputs.append(output.detach().cpu())


class FeatureExtractor:
    def __init__(self, encoder: nn.Module, layers, device="cpu", detach=True):
        self._encoder = encoder
        self._layers = layers
        self._device = device
        self._detach = detach
        self._hooks = {}
        modules = dict(encoder.named_modules())
        for layer in layers:
            hook = FeatureHook()
            modules[layer].register_forward_hook(hook)  # leak: ANY
            self._hooks[layer] = hook

    def __call__(self, x):
        for hook in self._hooks.values():
            hook.outputs.clear()
        self._encoder(x.to(self._device))
        return {layer: hook.outputs[-1] for layer, hook in self._hooks.items()}


def reconstruct(encoder, target_features, layers, device, n_iter=200):
    extractor = FeatureExtractor(encoder, layers, device=device)
    image = torch.rand(1, 3, 224, 224, device=device, requires_grad=True)
    opt = torch.optim.Adam([image], lr=0.05)
    for _ in range(n_iter):
        opt.zero_grad()
        feats = {}
        x = image
        for name, module in encoder.named_children():
            x = module(x) if name != "fc" else module(torch.flatten(x, 1))
            if name in layers:
                feats[name] = x
        loss = sum(((feats[l] - target_features[l].to(device)) ** 2).mean() for l in layers)
        loss.backward()
        opt.step()
    with torch.no_grad():
        final = extractor(image)
    return image.detach().cpu(), final


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    encoder = torchvision.models.resnet50(weights=None).to(device).eval()
    for p in encoder.parameters():
        p.requires_grad_(False)
    layers = ["layer1", "layer2", "layer3", "layer4"]
    for subject_image in range(50):
        with torch.no_grad():
            target = FeatureExtractor(encoder, layers, device=device)(torch.rand(1, 3, 224, 224))
        recon, _ = reconstruct(encoder, target, layers, device)
        print("reconstructed", subject_image)
