# Fixed twin of case 27: the recalibration pass runs under @torch.no_grad().
# Thread: https://github.com/pytorch/pytorch/pull/52654
# Class: statistics-only forward passes run with grad enabled
import torch
from torch.optim.swa_utils import AveragedModel, SWALR


@torch.no_grad()
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
        model(input)
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
