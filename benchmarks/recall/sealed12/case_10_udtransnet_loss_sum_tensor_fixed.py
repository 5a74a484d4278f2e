# Fixed twin of case 10: the running sums use loss.item() / dice.item()
# Thread: https://github.com/McGregorWwww/UDTransNet/issues/21
# Reported: GPU memory kept growing during training until it ran out (2D and 3D data)
# Confirmed cause: loss_sum += loss accumulated tensors with their autograd graph; a user reported that changing it to loss_sum += loss.item() fixed the leak (no maintainer reply)
# Class: running loss total accumulated as a tensor (`total += loss`)
import time

import torch
import torch.nn as nn


class WeightedDiceBCE(nn.Module):
    def forward(self, logits, target):
        prob = torch.sigmoid(logits)
        inter = (prob * target).sum()
        dice = 1 - (2 * inter + 1e-5) / (prob.sum() + target.sum() + 1e-5)
        return 0.5 * dice + 0.5 * nn.functional.binary_cross_entropy_with_logits(logits, target)


def dice_coef(logits, target):
    pred = (torch.sigmoid(logits) > 0.5).float()
    return (2 * (pred * target).sum() + 1e-5) / (pred.sum() + target.sum() + 1e-5)


def train_one_epoch(loader, model, criterion, optimizer, epoch, device="cuda"):
    model.train()
    loss_sum, dice_sum = 0.0, 0.0
    end = time.time()
    for i, (images, masks) in enumerate(loader, 1):
        images, masks = images.to(device), masks.to(device)
        preds = model(images)
        out_loss = criterion(preds, masks.float())
        optimizer.zero_grad()
        out_loss.backward()
        optimizer.step()
        train_dice = dice_coef(preds, masks.float())
        loss_sum += out_loss.item()
        dice_sum += train_dice.item()
        if i % 50 == 0:
            print(f"epoch {epoch} [{i}/{len(loader)}] loss {loss_sum / i:.4f} "
                  f"dice {dice_sum / i:.4f} time {time.time() - end:.1f}s")
    return loss_sum / len(loader), dice_sum / len(loader)


def main(model, train_loader, epochs=2000, device="cuda"):
    model = model.to(device)
    criterion = WeightedDiceBCE()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        train_one_epoch(train_loader, model, criterion, optimizer, epoch, device)
