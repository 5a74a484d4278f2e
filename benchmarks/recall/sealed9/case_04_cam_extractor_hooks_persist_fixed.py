# Fixed twin of case 04: each temporary extractor removes its hooks once its CAM is computed
# Thread: https://github.com/frgfm/torch-cam/issues/197
# Reported: after `del extractor` or re-binding `extractor = LayerCAM(model)`, the old extractor's hooks stay on the model and keep running and storing
# Confirmed cause: maintainer (frgfm) states hooks are not removed when an extractor is dereferenced and a call to .remove_hooks() is required
# Class: hooks registered per call/instance on a long-lived model, never removed
import torch
import torch.nn as nn
import torchvision


class LayerCAM:
    def __init__(self, model: nn.Module, target_layer: str):
        self.model = model
        self.hook_a = None
        self.hook_g = None
        layer = dict(model.named_modules())[target_layer]
        self.hook_handles = [
            layer.register_forward_hook(self._hook_a),
            layer.register_full_backward_hook(self._hook_g),
        ]

    def _hook_a(self, module, inputs, output):
        self.hook_a = output

    def _hook_g(self, module, grad_in, grad_out):
        self.hook_g = grad_out[0]

    def remove_hooks(self):
        for handle in self.hook_handles:
            handle.remove()
        self.hook_handles.clear()

    def __call__(self, class_idx: int, scores: torch.Tensor) -> torch.Tensor:
        self.model.zero_grad()
        scores[:, class_idx].sum().backward(retain_graph=True)
        weights = self.hook_g.clamp(min=0)
        cam = (weights * self.hook_a).sum(1).clamp(min=0)
        return cam.detach().cpu()


def explain_folder(model, images):
    heatmaps = []
    for img in images:
        extractor = LayerCAM(model, "layer4")
        scores = model(img.unsqueeze(0).cuda())
        heatmaps.append(extractor(scores.argmax().item(), scores))
        extractor.remove_hooks()
    return heatmaps


if __name__ == "__main__":
    net = torchvision.models.resnet50().cuda().eval()
    batch = [torch.rand(3, 224, 224) for _ in range(2000)]
    maps = explain_folder(net, batch)
    print(len(maps))
