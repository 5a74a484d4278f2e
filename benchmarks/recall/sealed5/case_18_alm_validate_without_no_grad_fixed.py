# Fixed twin of case 18: the test-time forward is wrapped in torch.no_grad()
# Thread: https://github.com/chufengt/ALM-pedestrian-attribute/issues/36
# Reported: GPU memory leakage at `output = model(input)` in main.py
# Confirmed cause: reporter fixed it by adding torch.no_grad() ahead of the forward and ran successfully; maintainer thanked for the notice
# Class: evaluation loop with grad on, outputs accumulated
import torch
import torch.nn as nn


def test(val_loader, model, attr_num):
    model.eval()
    pos_cnt = []
    pos_tol = []
    for i, (input, target) in enumerate(val_loader):
        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        with torch.no_grad(): output = model(input)
        if isinstance(output, (list, tuple)):
            output = torch.max(torch.max(torch.max(output[0], output[1]), output[2]), output[3])
        output = torch.sigmoid(output)
        pos_cnt.append((output > 0.5).float() * target)
        pos_tol.append(target)
    pos_cnt = torch.cat(pos_cnt).sum(0)
    pos_tol = torch.cat(pos_tol).sum(0)
    return (pos_cnt / pos_tol.clamp(min=1)).mean().item()
