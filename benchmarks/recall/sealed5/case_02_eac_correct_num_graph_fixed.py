# Fixed twin of case 02: loss/predictions are detached and moved to CPU before being accumulated
# Thread: https://github.com/zyh-uaiaaaa/Erasing-Attention-Consistency/issues/11
# Reported: memory use grew steadily during training in src/main.py (memory profile attached)
# Confirmed cause: running_loss and correct_num were accumulated from tensors attached to the graph (print showed <add_backward>); reporter applied .detach().cpu() to loss and predictions and the leak stopped
# Class: epoch accumulators summed from graph-attached tensors
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


class EACNet(nn.Module):
    def __init__(self, num_classes=7):
        super().__init__()
        backbone = torchvision.models.resnet18()
        backbone.fc = nn.Identity()
        self.features = backbone
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x):
        feat = self.features(x)
        return self.fc(feat), feat


def flip_consistency(feat, feat_flip):
    return F.mse_loss(feat, feat_flip)


def train(model, loader, optimizer, device, epoch):
    model.train()
    running_loss = 0.0
    correct_sum = 0
    iter_cnt = 0
    for imgs, imgs_flip, labels in loader:
        imgs, imgs_flip, labels = imgs.to(device), imgs_flip.to(device), labels.to(device)
        output, feat = model(imgs)
        _, feat_flip = model(imgs_flip)
        loss = F.cross_entropy(output, labels) + 0.5 * flip_consistency(feat, feat_flip)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        iter_cnt += 1
        running_loss += loss.detach().cpu()
        _, predicts = torch.max(output.detach().cpu(), 1)
        correct_num = torch.eq(predicts, labels.cpu()).sum()
        correct_sum += correct_num
    acc = correct_sum.float() / float(len(loader.dataset))
    print(f"epoch {epoch}: loss {running_loss / iter_cnt}, acc {acc}")
