# Recall case 27 (sealed): a batch-norm recalibration pass runs the model with autograd on
# Thread: https://github.com/pytorch/pytorch/pull/52654
# Reported: (pytorch #52055) adding `torch.optim.swa_utils.update_bn` at the end of SWA training
#   makes the evaluation run out of GPU memory; it took the user a long time to find why.
# Confirmed cause: the issue and the merged PR (reviewed by albanD and the SWA author): the pass
#   that re-estimates BatchNorm statistics calls `model(input)` for every batch without
#   `torch.no_grad()`, so each forward records a graph (activations kept for a backward that
#   never comes). Fixed by decorating `update_bn` with `@torch.no_grad()`.
# Class: statistics-only forward passes run with grad enabled
import torch
from torch.optim.swa_utils import AveragedModel, SWALR


def update_bn(loader, model, device=None):
    momenta = {}
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta.keys():
        module.momentum = None
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)  # leak: ANY
    for bn_module in momenta.keys():
        bn_module.momentum = momenta[bn_module]
    model.train(was_training)


def train_swa(model, loader, test_loader, optimizer, loss_fn, epochs, swa_start, device="cuda"):
    swa_model = AveragedModel(model)
    swa_scheduler = SWALR(optimizer, swa_lr=0.05)
    for epoch in range(epochs):
        model.train()
        for input, target in loader:
            input, target = input.to(device), target.to(device)
            optimizer.zero_grad()
            loss_fn(model(input), target).backward()
            optimizer.step()
        if epoch > swa_start:
            swa_model.update_parameters(model)
            swa_scheduler.step()
    update_bn(loader, swa_model, device=device)
    swa_model.eval()
    correct = 0
    with torch.no_grad():
        for input, target in test_loader:
            correct += (swa_model(input.to(device)).argmax(1) == target.to(device)).sum().item()
    return correct / len(test_loader.dataset)
