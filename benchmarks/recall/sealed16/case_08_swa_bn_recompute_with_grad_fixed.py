# Fixed twin of case 08: run the statistics pass under torch.no_grad()
# Thread: https://github.com/pytorch/pytorch/issues/52055
# Reported: evaluating the SWA model runs out of GPU memory because the BatchNorm update pass allocates memory for a backward pass that never happens
# Confirmed cause: the SWA utilities' author (izmailovpavel) agreed the BN update should be under torch.no_grad(), since the averaged model is only evaluated; the forward passes of the BN update were building autograd graphs
# Class: evaluation-style helper (BN statistics pass) run with grad enabled
import torch
import torch.nn as nn
from torch.optim.swa_utils import AveragedModel


def recompute_bn_statistics(loader, model, device=None):
    bn_layers = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bn_layers:
        return
    saved_momenta = {}
    for bn in bn_layers:
        bn.reset_running_stats()
        saved_momenta[bn] = bn.momentum
        bn.momentum = None
    was_training = model.training
    model.train()
    with torch.no_grad():
        for batch in loader:
            images = batch[0] if isinstance(batch, (list, tuple)) else batch
            if device is not None:
                images = images.to(device)
            model(images)
    for bn, momentum in saved_momenta.items():
        bn.momentum = momentum
    model.train(was_training)


def finish_swa(model, train_loader, test_loader, device="cuda"):
    swa_model = AveragedModel(model)
    swa_model.update_parameters(model)
    recompute_bn_statistics(train_loader, swa_model, device=device)
    swa_model.eval()
    correct = 0
    with torch.no_grad():
        for images, labels in test_loader:
            correct += (swa_model(images.to(device)).argmax(1) == labels.to(device)).sum().item()
    return correct
