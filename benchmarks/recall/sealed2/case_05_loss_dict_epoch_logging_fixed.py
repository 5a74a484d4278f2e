# Fixed twin of case 05: the per-key sums take loss[key].item(), as the maintainer agreed.
# Thread: https://github.com/jokester-zzz/SSA-SC/issues/2
# Reported: GPU memory rises continuously during training of the semantic scene completion network.
# Confirmed cause: the per-key loss bookkeeping adds `loss[key]` (tensors with graph) instead of
#   `loss[key].item()`; the maintainer checked the code (inherited from LMSCNet) and agreed to change
#   it to `loss[key].item()`.
# Class: graph-carrying entries of a loss dict accumulated per key into a dict that lives for the epoch
import torch
from torch.utils.tensorboard import SummaryWriter


def compute_loss(scores, data, class_weights):
    ce = torch.nn.functional.cross_entropy(scores["pred_semantic_1_1"], data["3D_LABEL"],
                                           weight=class_weights, ignore_index=255)
    completion = torch.nn.functional.binary_cross_entropy_with_logits(
        scores["pred_completion"], data["3D_OCCUPANCY"])
    return {"total": ce + 0.5 * completion, "semantic_1_1": ce, "completion": completion}


def train_one_epoch(model, loader, optimizer, scheduler, class_weights, writer: SummaryWriter, epoch, device):
    model.train()
    epoch_loss = {}
    for t, (data, indices) in enumerate(loader):
        data = {k: v.to(device) for k, v in data.items()}
        scores = model(data)
        loss = compute_loss(scores, data, class_weights)
        optimizer.zero_grad()
        loss["total"].backward()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        for key in loss:
            epoch_loss[key] = epoch_loss.get(key, 0.0) + loss[key].item()
        if t % 50 == 0:
            print(f"epoch {epoch} iter {t}/{len(loader)} loss {loss['total'].item():.4f}")
    for key, value in epoch_loss.items():
        writer.add_scalar(f"train_loss_epoch/{key}", float(value) / len(loader), epoch)
    return float(epoch_loss["total"]) / len(loader)


def validate(model, loader, class_weights, writer: SummaryWriter, epoch, device):
    model.eval()
    epoch_loss = {}
    with torch.no_grad():
        for data, indices in loader:
            data = {k: v.to(device) for k, v in data.items()}
            loss = compute_loss(model(data), data, class_weights)
            for key in loss:
                epoch_loss[key] = epoch_loss.get(key, 0.0) + loss[key].item()
    for key, value in epoch_loss.items():
        writer.add_scalar(f"val_loss_epoch/{key}", value / len(loader), epoch)
