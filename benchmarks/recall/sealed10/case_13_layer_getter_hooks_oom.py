# Recall case 13 (sealed10): an intermediate-layer getter removes its forward hooks only on the happy path; an OOM back-off loop leaves them registered
# Thread: https://github.com/sebamenabar/Pytorch-IntermediateLayerGetter/issues/2
# Reported: in code that backs off the batch size after a CUDA OOM, GPU space keeps shrinking after each OOM
# Confirmed cause: when the forward raises, the `h.remove()` loop is skipped, so the hooks stay on the model and keep a reference to the `ret` dict of captured outputs (and more hooks stack up on each retry); fix is to remove the handles in a `finally` block (reporter's analysis and proposed PR; issue open)
# Class: hooks registered per call and not removed on the exception path
import functools

import torch
import torch.nn as nn
import torchvision


def rgetattr(obj, attr):
    return functools.reduce(getattr, [obj] + attr.split("."))


class IntermediateLayerGetter:
    def __init__(self, model, return_layers, keep_output=True):
        self._model = model
        self.return_layers = return_layers
        self.keep_output = keep_output

    def __call__(self, *args, **kwargs):
        ret = {}
        handles = []
        for name, new_name in self.return_layers.items():
            layer = rgetattr(self._model, name)

            def hook(module, inp, output, new_name=new_name):
                ret[new_name] = output

            h = layer.register_forward_hook(hook)  # leak: ANY
            handles.append(h)

        if self.keep_output:
            output = self._model(*args, **kwargs)
        else:
            self._model(*args, **kwargs)
            output = None

        for h in handles:  # leak: ANY
            h.remove()
        return ret, output


def extract_with_backoff(getter, images, batch_size):
    feats = []
    i = 0
    while i < len(images):
        try:
            mids, _ = getter(images[i:i + batch_size])
            feats.append({k: v.mean(dim=(2, 3)).cpu() for k, v in mids.items()})
            i += batch_size
        except torch.cuda.OutOfMemoryError:
            batch_size = max(1, batch_size // 2)
            torch.cuda.empty_cache()
    return feats


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = torchvision.models.resnet50().to(device).eval()
    getter = IntermediateLayerGetter(model, {"layer2": "feat2", "layer3": "feat3", "layer4": "feat4"})
    images = torch.randn(4096, 3, 224, 224)
    with torch.no_grad():
        features = extract_with_backoff(getter, images.to(device), batch_size=1024)
