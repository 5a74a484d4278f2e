# Recall case 21 (sealed2): an attribution hook keeps the layer input and output it saw, and a closure on itself
# Thread: https://github.com/chr5tphr/zennit/issues/11
# Reported: running the LRP composite on VGG16 repeatedly (100 heatmaps in a loop) leaks GPU memory
#   every iteration.
# Confirmed cause: the maintainer (fix in zennit#13): the hook stores `self.input` / `self.output` on
#   every forward, and the backward wrapper registered on the output closes over the hook itself, so
#   the stored tensors stay referenced (a cycle through the graph) after the hooks are removed; the
#   fix deletes the stored tensors when the hook is removed and gives the wrapper only a weak
#   reference to the hook.
# Class: a hook object storing what it sees, referenced strongly from a closure registered on the graph
from contextlib import contextmanager

import torch
import torch.nn as nn


class LinearHook:
    def __init__(self, epsilon=1e-6):
        self.epsilon = epsilon
        self.input = None
        self.output = None
        self.handles = []

    def forward(self, module, inputs, output):
        self.input = inputs[0]  # leak: ANY
        self.output = output  # leak: ANY
        output.register_hook(lambda grad: self.backward(module, grad))  # leak: ANY

    def backward(self, module, grad_output):
        z = self.output + self.epsilon * torch.sign(self.output)
        relevance = (grad_output / z) * self.output
        return relevance

    def register(self, module):
        self.handles.append(module.register_forward_hook(self.forward))

    def remove(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []


class EpsilonComposite:
    def __init__(self):
        self.hooks = []

    @contextmanager
    def context(self, model):
        for module in model.modules():
            if isinstance(module, (nn.Linear, nn.Conv2d)):
                hook = LinearHook()
                hook.register(module)
                self.hooks.append(hook)
        try:
            yield model
        finally:
            for hook in self.hooks:
                hook.remove()
            self.hooks = []


def heatmaps(model, data, target, runs=100):
    output_relevance = torch.eye(1000, device=data.device)[[target]]
    for i in range(runs):
        composite = EpsilonComposite()
        with composite.context(model) as modified:
            pred = modified(data)
            torch.autograd.backward((pred,), (output_relevance,))
        heatmap = data.grad.sum(1).detach().cpu().numpy()
        data.grad = None
        print(i, torch.cuda.memory_allocated(0), heatmap.shape)
