# Recall case 13: a CAM object whose constructor registers hooks, built anew for every image
# Thread: https://github.com/jacobgil/pytorch-grad-cam/issues/132
# Reported: re-creating the CAM object in a loop builds memory up cumulatively, even with
#   `del cam` at the end of each iteration.
# Confirmed cause: the maintainer: "the ActivationsAndGradients isn't deleted, and the hooks
#   aren't un-registered"; every new object adds hooks to the same layer for good. Later answer
#   (#483): use it as a context manager (`with GradCAM(...) as cam:`), which removes the hooks.
# Class: hooks registered by a constructor called per iteration
import psutil
import torch


class ActivationsAndGradients:
    def __init__(self, model, target_layer):
        self.model = model
        self.activations = []
        self.gradients = []
        target_layer.register_forward_hook(self.save_activation)
        target_layer.register_full_backward_hook(self.save_gradient)

    def save_activation(self, module, input, output):
        self.activations.append(output.cpu().detach())

    def save_gradient(self, module, grad_input, grad_output):
        self.gradients = [grad_output[0].cpu().detach()] + self.gradients

    def __call__(self, x):
        self.gradients = []
        self.activations = []
        return self.model(x)


class GradCAM:
    def __init__(self, model, target_layer, use_cuda=False):
        self.model = model.eval()
        self.cuda = use_cuda
        if self.cuda:
            self.model = model.cuda()
        self.activations_and_grads = ActivationsAndGradients(self.model, target_layer)

    def __call__(self, input_tensor, target_category):
        if self.cuda:
            input_tensor = input_tensor.cuda()
        output = self.activations_and_grads(input_tensor)
        self.model.zero_grad()
        loss = sum(output[i, int(c)] for i, c in enumerate(target_category))
        loss.backward()
        activations = self.activations_and_grads.activations[-1]
        weights = self.activations_and_grads.gradients[-1].mean(dim=(2, 3), keepdim=True)
        return torch.relu((weights * activations).sum(dim=1)).numpy()


def cams_for_batches(model, inputs, labels, n_repeats=100):
    for i in range(n_repeats):
        cam = GradCAM(model=model, target_layer=model.conv5, use_cuda=True)  # leak: ANY
        grad = cam(input_tensor=inputs, target_category=labels)
        print("memory % used:", psutil.virtual_memory()[2])
        del cam, grad
