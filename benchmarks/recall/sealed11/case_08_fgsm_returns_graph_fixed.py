# Fixed twin of case 08: returns xadv.detach() so kept adversarial batches do not reference the attack graph
# Thread: https://github.com/BorealisAI/advertorch/pull/68
# Reported: high memory usage in large-scale use of FGSM/FGM: PyTorch keeps the attack's graph (and input gradients) alive after the attack has finished
# Confirmed cause: perturb() returned xadv without detach(), so every adversarial example the caller keeps references the graph back to the grad-requiring input; the merged PR returns xadv.detach()
# Class: function returns a result tensor still attached to a graph; caller keeps many such results
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def clamp(x, lo, hi):
    return torch.max(torch.min(x, torch.full_like(x, hi)), torch.full_like(x, lo))


class GradientSignAttack:
    def __init__(self, predict, loss_fn=None, eps=0.3, clip_min=0.0, clip_max=1.0, targeted=False):
        self.predict = predict
        self.loss_fn = loss_fn or nn.CrossEntropyLoss(reduction="sum")
        self.eps = eps
        self.clip_min = clip_min
        self.clip_max = clip_max
        self.targeted = targeted

    def perturb(self, x, y=None):
        if y is None:
            with torch.no_grad():
                y = self.predict(x).argmax(dim=1)
        xadv = x.clone().requires_grad_()
        outputs = self.predict(xadv)
        loss = self.loss_fn(outputs, y)
        if self.targeted:
            loss = -loss
        loss.backward()
        grad_sign = xadv.grad.detach().sign()
        xadv = xadv + self.eps * grad_sign
        xadv = clamp(xadv, self.clip_min, self.clip_max)
        return xadv.detach()


FGSM = GradientSignAttack


def build_adversarial_set(model, loader, eps):
    adversary = FGSM(model, eps=eps)
    adv_images, labels = [], []
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        adv = adversary.perturb(x, y)
        adv_images.append(adv)
        labels.append(y)
    return torch.cat(adv_images), torch.cat(labels)


if __name__ == "__main__":
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(32 * 16 * 16, 10)).cuda().eval()
    data = TensorDataset(torch.rand(50000, 3, 32, 32), torch.randint(0, 10, (50000,)))
    loader = DataLoader(data, batch_size=256, num_workers=4, pin_memory=True)
    adv_x, adv_y = build_adversarial_set(model, loader, eps=8 / 255)
    with torch.no_grad():
        acc = (model(adv_x[:1024]).argmax(1) == adv_y[:1024]).float().mean()
    print("robust acc", float(acc), torch.cuda.memory_allocated() / 2**20)
