# Recall case 16 (sealed12): ImageNet validate() still relies on Variable(volatile=True), which no longer disables autograd, so validation records graphs
# Thread: https://github.com/pytorch/pytorch/issues/4668
# Reported: memory cost increases after the first inference (validation) while training ImageNet
# Confirmed cause: on the master branch volatile was replaced by torch.no_grad(), so volatile=True had no effect; reporter: 'Problem solved, since the API has been changed from volatile to torch.no_grad', soumith agreed
# Class: validation loop using legacy volatile flag (no-op) instead of no_grad
import time

import torch
import torch.nn as nn
from torch.autograd import Variable


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    _, pred = output.topk(maxk, 1, True, True)
    correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
    return [correct[:k].reshape(-1).float().sum(0) * 100.0 / target.size(0) for k in topk]


def validate(val_loader, model, criterion):
    model.eval()
    top1_sum, n = 0.0, 0
    end = time.time()
    for i, (input, target) in enumerate(val_loader):
        target = target.cuda(non_blocking=True)
        input_var = Variable(input.cuda(), volatile=True)  # leak: ANY
        target_var = Variable(target, volatile=True)
        output = model(input_var)
        loss = criterion(output, target_var)
        prec1 = accuracy(output.data, target, topk=(1,))[0]
        top1_sum += prec1.item() * input.size(0)
        n += input.size(0)
        if i % 10 == 0:
            print(f"Test: [{i}/{len(val_loader)}] loss {loss.item():.4f} time {time.time() - end:.3f}")
    return top1_sum / n


def main(model, train_loader, val_loader, epochs=90):
    model = nn.DataParallel(model).cuda()
    criterion = nn.CrossEntropyLoss().cuda()
    optimizer = torch.optim.SGD(model.parameters(), 0.1, momentum=0.9, weight_decay=1e-4)
    for epoch in range(epochs):
        model.train()
        for input, target in train_loader:
            output = model(input.cuda())
            loss = criterion(output, target.cuda(non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(epoch, validate(val_loader, model, criterion))
