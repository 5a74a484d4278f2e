# Fixed twin of case 11: the CLS-token slice is cloned (`act = act[:, 0, :].clone()`), so collected features no longer share storage with the full activation
# Thread: https://github.com/ViCCo-Group/thingsvision/pull/150
# Reported: extracting CLS-token features from a transformer layer over a large image set keeps growing in memory (memory leak), most visibly on CPU
# Confirmed cause: `act[:, 0, :]` is a view whose storage is the full token activation, and `act.cpu()` is a no-op when the extractor already runs on the CPU, so every collected feature kept the entire [B, T, D] activation alive; the merged fix clones the slice
# Class: generation / predict (per-batch outputs collected while pinning large storages)
import numpy as np
import torch


class PyTorchExtractor:
    def __init__(self, model, device="cpu", token_extraction="cls_token"):
        self.model = model.eval().to(device)
        self.device = device
        self.token_extraction = token_extraction
        self.activations = {}

    def get_activation(self, name):
        def hook(module, inputs, output):
            self.activations[name] = output.clone().detach()

        return hook

    def register_hook(self, module_name):
        for name, module in self.model.named_modules():
            if name == module_name:
                return module.register_forward_hook(self.get_activation(name))
        raise ValueError(f"no module named {module_name}")

    @torch.no_grad()
    def extract_batch(self, batch, module_name, flatten_acts=False):
        self.activations = {}
        _ = self.model(batch.to(self.device))
        act = self.activations[module_name]
        if act.ndim == 3 and self.token_extraction == "cls_token":
            act = act[:, 0, :].clone()
        if flatten_acts:
            act = act.view(act.size(0), -1)
        act = act.cpu()
        return act

    def extract_features(self, batches, module_name, flatten_acts=False):
        handle = self.register_hook(module_name)
        features = []
        for batch in batches:
            features.append(self.extract_batch(batch, module_name, flatten_acts))
        handle.remove()
        return torch.cat(features).numpy()


def extract_dataset(extractor, loader, module_name="visual.transformer.resblocks.11", out_path="features.npy"):
    features = extractor.extract_features((images for images, _ in loader), module_name)
    np.save(out_path, features)
    return features
