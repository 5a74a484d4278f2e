# Fixed twin of case 17: the reporter's fix, the forward runs under torch.no_grad().
# Thread: https://github.com/hszhao/semseg/issues/60
# Reported: "out of memory" during the validation run after each training epoch.
# Confirmed cause: `validate()` calls `model.eval()` then `output = model(input)` with autograd
#   enabled, so every activation is kept for a backward that never comes; the reporter's fix
#   wraps the forward in `with torch.no_grad():`.
# Class: eval-mode forward with grad enabled (inference without no_grad)
import time

import numpy as np
import torch
import torch.nn.functional as F


def intersection_and_union_gpu(output, target, k, ignore_index=255):
    output = output.view(-1)
    target = target.view(-1)
    output[target == ignore_index] = ignore_index
    intersection = output[output == target]
    area_intersection = torch.histc(intersection, bins=k, min=0, max=k - 1)
    area_output = torch.histc(output, bins=k, min=0, max=k - 1)
    area_target = torch.histc(target, bins=k, min=0, max=k - 1)
    return area_intersection, area_output + area_target - area_intersection, area_target


def validate(val_loader, model, criterion, classes, ignore_label=255):
    intersection_sum, union_sum = np.zeros(classes), np.zeros(classes)
    loss_sum, n = 0.0, 0
    model.eval()
    end = time.time()
    for i, (input, target) in enumerate(val_loader):
        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        with torch.no_grad():
            output = model(input)
        if target.shape[-1] == 1:
            target = target[:, 0]
        output = F.interpolate(output, size=target.shape[-2:], mode="bilinear", align_corners=True)
        loss = criterion(output, target)
        loss_sum += loss.item() * input.size(0)
        n += input.size(0)
        output = output.max(1)[1]
        intersection, union, _ = intersection_and_union_gpu(output, target, classes, ignore_label)
        intersection_sum += intersection.cpu().numpy()
        union_sum += union.cpu().numpy()
    iou = intersection_sum / (union_sum + 1e-10)
    print(f"Val result: mIoU {np.mean(iou):.4f} loss {loss_sum / n:.4f} ({time.time() - end:.1f}s)")
    return loss_sum / n, np.mean(iou)
