# Recall case 13 (sealed14): the focal loss skips images without annotations with `continue`, leaving that image's regression tensors out of the backward
# Thread: https://github.com/zylo117/Yet-Another-EfficientDet-Pytorch/issues/237
# Reported: after a loss change, batches full of images without annotations never put the regression part through backward, risking OOM later
# Confirmed cause: maintainer agrees there is a risk; the reporter's fix deletes the regression tensor before `continue` and the maintainer confirms 'That should do it' (weaker: risk acknowledged, no measurement)
# Class: loop over a batch that `continue`s past tensors that will never be backpropagated, keeping them referenced
import torch
import torch.nn as nn


class FocalLoss(nn.Module):
    def __init__(self, alpha=0.25, gamma=2.0):
        super().__init__()
        self.alpha, self.gamma = alpha, gamma

    def forward(self, classifications, regressions, anchors, annotations):
        batch_size = classifications.shape[0]
        classification_losses, regression_losses = [], []
        for j in range(batch_size):
            classification = classifications[j].clamp(1e-4, 1.0 - 1e-4)
            regression = regressions[j]
            bbox_annotation = annotations[j]
            bbox_annotation = bbox_annotation[bbox_annotation[:, 4] != -1]
            if bbox_annotation.shape[0] == 0:
                focal = self.alpha * classification ** self.gamma * -torch.log(1.0 - classification)
                classification_losses.append(focal.sum())
                regression_losses.append(torch.tensor(0.0, device=classifications.device))
                continue  # leak: ANY
            targets = torch.zeros_like(classification)
            targets[:, 0] = 1.0
            bce = -(targets * torch.log(classification) + (1.0 - targets) * torch.log(1.0 - classification))
            classification_losses.append(bce.sum() / max(1, bbox_annotation.shape[0]))
            regression_losses.append((regression - anchors).abs().mean())
        return torch.stack(classification_losses).mean(), torch.stack(regression_losses).mean()


def train(model_out_fn, loader, optimizer, device):
    criterion = FocalLoss()
    for imgs, annots in loader:
        cls, reg, anchors = model_out_fn(imgs.to(device))
        cls_loss, reg_loss = criterion(cls, reg, anchors, annots.to(device))
        loss = cls_loss + reg_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
