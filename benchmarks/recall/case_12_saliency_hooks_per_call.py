# Recall case 12: a saliency function registers forward/backward hooks on every call
# Thread: https://github.com/microsoft/tensorwatch/issues/73
# Reported: after computing Grad-CAM once, 1000 plain `predict` calls under no_grad make GPU
#   memory and utilisation climb.
# Confirmed cause: every saliency computation registers `self.target_layer.register_forward_hook(...)`
#   (and the backward hook) in gradcam.py and never removes them, so every later forward runs
#   all the old hooks, which keep their activations (fix, PR #74: keep the handles and remove
#   the hooks). Reconstructed with the registration in the per-call method.
# Class: hooks registered per iteration/call without remove()
import torch
import torch.nn.functional as F


class GradCAM:
    def __init__(self, model, target_layer):
        self.model = model
        self.target_layer = target_layer
        self.activations = None
        self.gradients = None

    def _save_activation(self, module, inputs, output):
        self.activations = output

    def _save_gradient(self, module, grad_input, grad_output):
        self.gradients = grad_output[0]

    def attribute(self, image, label):
        self.target_layer.register_forward_hook(self._save_activation)  # leak: ANY
        self.target_layer.register_full_backward_hook(self._save_gradient)  # leak: ANY
        self.model.zero_grad()
        score = self.model(image)[0, label]
        score.backward()
        weights = self.gradients.mean(dim=(2, 3), keepdim=True)
        cam = F.relu((weights * self.activations).sum(dim=1, keepdim=True))
        return F.interpolate(cam, size=image.shape[-2:], mode="bilinear", align_corners=False).detach()


def explain_folder(model, layer, images, labels):
    model.eval()
    explainer = GradCAM(model, layer)
    maps = []
    for image, label in zip(images, labels):
        maps.append(explainer.attribute(image.unsqueeze(0).cuda(), int(label)).cpu())
    return maps
