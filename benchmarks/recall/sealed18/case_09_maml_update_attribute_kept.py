# Recall case 09 (sealed18): MAML fast adaptation hangs each step's update tensor on the parameter tensor as `.update` and never clears it
# Thread: https://github.com/learnables/learn2learn/issues/284
# Reported: GPU memory keeps growing while clones of the MAML/MetaSGD learner are adapted again and again, worst in the meta-validation/testing tasks where no backward is run, until CUDA runs out of memory
# Confirmed cause: `maml_update` stores `-lr * grad` on each parameter as a Python attribute (`p.update`) and `update_module` swaps in `p + p.update` without ever clearing the attribute, so every replaced parameter keeps its update (and the autograd graph behind it) alive through a tensor <-> graph cycle; the merged fix (PR #307, with GPU memory tests accepted by the maintainer) sets `p.update = None` right after it is applied
# Class: anything else (tensor stored as an attribute on a parameter tensor, forming a cycle through the autograd graph)
import numpy as np
import torch
from torch import nn
from torch.autograd import grad


def update_module(module, updates=None, memo=None):
    if memo is None:
        memo = {}
    if updates is not None:
        for p, u in zip(module.parameters(), updates):
            p.update = u

    for param_key in module._parameters:
        p = module._parameters[param_key]
        if p is not None and hasattr(p, "update") and p.update is not None:
            if p in memo:
                module._parameters[param_key] = memo[p]
            else:
                updated = p + p.update  # leak: ANY
                memo[p] = updated
                module._parameters[param_key] = updated

    for buffer_key in module._buffers:
        buff = module._buffers[buffer_key]
        if buff is not None and hasattr(buff, "update") and buff.update is not None:
            if buff in memo:
                module._buffers[buffer_key] = memo[buff]
            else:
                updated = buff + buff.update  # leak: ANY
                memo[buff] = updated
                module._buffers[buffer_key] = updated

    for module_key in module._modules:
        module._modules[module_key] = update_module(module._modules[module_key], updates=None, memo=memo)
    return module


def maml_update(model, lr, grads=None):
    if grads is not None:
        for p, g in zip(model.parameters(), grads):
            if g is not None:
                p.update = -lr * g  # leak: ANY
    return update_module(model)


def clone_module(module):
    clone = module.__new__(type(module))
    clone.__dict__ = module.__dict__.copy()
    clone._parameters = {k: (p.clone() if p is not None else None) for k, p in module._parameters.items()}
    clone._buffers = {k: (b.clone() if b is not None else None) for k, b in module._buffers.items()}
    clone._modules = {k: clone_module(m) for k, m in module._modules.items()}
    return clone


class MAML(nn.Module):
    def __init__(self, model, lr, first_order=False):
        super().__init__()
        self.module = model
        self.lr = lr
        self.first_order = first_order

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def adapt(self, loss, first_order=None):
        if first_order is None:
            first_order = self.first_order
        second_order = not first_order
        gradients = grad(loss, self.module.parameters(), retain_graph=second_order, create_graph=second_order)
        self.module = maml_update(self.module, self.lr, gradients)

    def clone(self, first_order=None):
        if first_order is None:
            first_order = self.first_order
        return MAML(clone_module(self.module), lr=self.lr, first_order=first_order)


def accuracy(predictions, targets):
    predictions = predictions.argmax(dim=1).view(targets.shape)
    return (predictions == targets).sum().float() / targets.size(0)


def fast_adapt(batch, learner, features, loss, adaptation_steps, shots, ways, device):
    data, labels = batch
    data, labels = data.to(device), labels.to(device)
    data = features(data)

    adaptation_indices = np.zeros(data.size(0), dtype=bool)
    adaptation_indices[np.arange(shots * ways) * 2] = True
    evaluation_indices = torch.from_numpy(~adaptation_indices)
    adaptation_indices = torch.from_numpy(adaptation_indices)
    adaptation_data, adaptation_labels = data[adaptation_indices], labels[adaptation_indices]
    evaluation_data, evaluation_labels = data[evaluation_indices], labels[evaluation_indices]

    for _ in range(adaptation_steps):
        train_error = loss(learner(adaptation_data), adaptation_labels)
        learner.adapt(train_error)

    predictions = learner(evaluation_data)
    return loss(predictions, evaluation_labels), accuracy(predictions, evaluation_labels)


def meta_train(features, head, train_tasks, valid_tasks, test_tasks, opt, iterations, meta_batch_size,
               adaptation_steps, shots, ways, device):
    loss = nn.CrossEntropyLoss(reduction="mean")
    for iteration in range(iterations):
        opt.zero_grad()
        meta_train_error = 0.0
        meta_valid_error = 0.0
        meta_test_error = 0.0
        for _ in range(meta_batch_size):
            learner = head.clone()
            evaluation_error, _ = fast_adapt(train_tasks.sample(), learner, features, loss,
                                             adaptation_steps, shots, ways, device)
            evaluation_error.backward()
            meta_train_error += evaluation_error.item()

            learner = head.clone()
            evaluation_error, _ = fast_adapt(valid_tasks.sample(), learner, features, loss,
                                             adaptation_steps, shots, ways, device)
            meta_valid_error += evaluation_error.item()

            learner = head.clone()
            evaluation_error, _ = fast_adapt(test_tasks.sample(), learner, features, loss,
                                             adaptation_steps, shots, ways, device)
            meta_test_error += evaluation_error.item()

        print("Iteration", iteration, meta_train_error / meta_batch_size,
              meta_valid_error / meta_batch_size, meta_test_error / meta_batch_size)
        for p in list(features.parameters()) + list(head.parameters()):
            if p.grad is not None:
                p.grad.data.mul_(1.0 / meta_batch_size)
        opt.step()
