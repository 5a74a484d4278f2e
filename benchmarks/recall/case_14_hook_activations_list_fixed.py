# Fixed twin of case 14: the fix, hooks keep CPU numpy copies and the lists are reset per call.
# Thread: https://github.com/jacobgil/pytorch-grad-cam/issues/71
# Reported: running CAMs over a dataset runs out of GPU memory.
# Confirmed cause: `ActivationsAndGradients` hooks do `self.activations.append(output)` (and the
#   same for gradients), so "activations and gradients are getting accumulated in cuda device
#   memory"; fixed by storing `output.cpu().data.numpy()` and resetting the lists per call
#   ("Addressed in latest PR").
# Class: a hook stores its tensor arguments in a container that outlives the call
import cv2
import numpy as np
import torch


class ActivationsAndGradients:
    """Class for extracting activations and registering gradients from targeted layers."""

    def __init__(self, model, target_layer):
        self.model = model
        self.gradients = []
        self.activations = []
        target_layer.register_forward_hook(self.save_activation)
        target_layer.register_backward_hook(self.save_gradient)

    def save_activation(self, module, input, output):
        self.activations.append(output.cpu().data.numpy())

    def save_gradient(self, module, grad_input, grad_output):
        self.gradients = [grad_output[0].cpu().data.numpy()] + self.gradients

    def __call__(self, x):
        self.gradients = []
        self.activations = []
        return self.model(x)


def grad_cam_over_dataset(model, target_layer, loader, out_dir):
    model = model.cuda().eval()
    extractor = ActivationsAndGradients(model, target_layer)
    for i, (image, _) in enumerate(loader):
        output = extractor(image.cuda())
        category = int(output.argmax(dim=1)[0])
        model.zero_grad()
        output[0, category].backward()
        grads = extractor.gradients[-1][0]
        activations = extractor.activations[-1][0]
        weights = grads.mean(axis=(1, 2))
        cam = np.maximum((weights[:, None, None] * activations).sum(axis=0), 0)
        cv2.imwrite(f"{out_dir}/{i:06d}.png", np.uint8(255 * cam / (cam.max() + 1e-8)))
