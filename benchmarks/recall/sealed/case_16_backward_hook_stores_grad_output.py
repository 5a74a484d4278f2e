# Recall case 16 (sealed): a backward hook stores the gradient tensor it receives on its owner
# Thread: https://github.com/jacobgil/pytorch-grad-cam/issues/88
# Reported: memory leaks due to circular references: every CAM object built to explain an image
#   stays alive (with the activations and gradients it saw) after it goes out of scope.
# Confirmed cause: the maintainer: the tensors handed to the module backward hook keep a
#   reference path back to the hook (pytorch/pytorch#12863, python_variable.cpp), so storing
#   `grad_output[0]` as `self.target_grad` closes a cycle the garbage collector cannot break;
#   "a simple solution to this seems to be adding .detach()" (`grad_output[0].detach()`),
#   pushed to the library and confirmed by the reporter.
# Class: hook stores the tensor it is handed (reference cycle through autograd)
import numpy as np
import torch


class GradCAM:
    def __init__(self, model, target_layer, use_cuda=True):
        self.model = model.eval()
        self.cuda = use_cuda
        if use_cuda:
            self.model = self.model.cuda()
        self.handles = [
            target_layer.register_forward_hook(self.save_activation),
            target_layer.register_full_backward_hook(self.save_gradient),
        ]

    def save_activation(self, module, input, output):
        self.target_activation = output  # leak: ANY

    def save_gradient(self, module, grad_input, grad_output):
        self.target_grad = grad_output[0]  # leak: ANY

    def release(self):
        for handle in self.handles:
            handle.remove()

    def __call__(self, input_tensor, target_category):
        if self.cuda:
            input_tensor = input_tensor.cuda()
        output = self.model(input_tensor)
        self.model.zero_grad()
        output[:, target_category].sum().backward()
        weights = self.target_grad.mean(dim=(2, 3), keepdim=True)
        cam = torch.relu((weights * self.target_activation).sum(dim=1))
        cam = cam - cam.amin(dim=(1, 2), keepdim=True)
        cam = cam / (cam.amax(dim=(1, 2), keepdim=True) + 1e-7)
        return cam.detach().cpu().numpy()


def explain_dataset(model, target_layer, loader, category):
    maps = []
    for images, _ in loader:
        cam = GradCAM(model, target_layer)
        maps.append(cam(images, category))
        cam.release()
        del cam
    return np.concatenate(maps)
