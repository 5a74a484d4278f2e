# Recall case 15 (sealed5): ImageNet example validation loop relies on volatile=True, which no longer disables autograd, so eval batches build graphs
# Thread: https://github.com/pytorch/pytorch/issues/4932
# Reported: model.eval() phase used more and more GPU memory in the imagenet example
# Confirmed cause: PyTorch maintainer (SsnL): volatile=True has no effect on master and is replaced by torch.no_grad(); the example script was to be updated
# Class: evaluation loop with autograd enabled
import torch
import torch.nn as nn
from torch.autograd import Variable


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    _, pred = output.topk(maxk, 1, True, True)
    correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
    return [correct[:k].reshape(-1).float().sum().item() * 100.0 / target.size(0) for k in topk]


def validate(val_loader, model, criterion):
    model.eval()
    top1 = 0.0
    losses = 0.0
    for i, (input, target) in enumerate(val_loader):  # leak: ANY
        target = target.cuda(non_blocking=True)
        input_var = Variable(input.cuda(), volatile=True)
        target_var = Variable(target, volatile=True)
        output = model(input_var)
        loss = criterion(output, target_var)
        losses += loss.item()
        top1 += accuracy(output, target)[0]
    return top1 / len(val_loader)
