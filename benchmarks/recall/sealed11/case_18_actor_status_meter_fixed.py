# Fixed twin of case 18: converts the status losses to Python floats with .item() before they reach the AverageMeters
# Thread: https://github.com/VISION-SJTU/DiffusionTrack/issues/2
# Reported: memory usage keeps increasing during training on a single GPU until the process is killed
# Confirmed cause: users tracking it down found that compute_losses returns `status = loss_dict.copy()` (graph-attached loss tensors, no .item()), and _update_stats hands them to AverageMeter which accumulates them (sum += val * n) for the whole epoch; a user in the thread located this and posted the .item() conversion of the status values as the fix after re-training (community confirmation only, no maintainer reply)
# Class: tensors (graph-attached losses) handed to logging/AverageMeter statistics that live for the whole epoch
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F


class AverageMeter:
    """Computes and stores the average and current value"""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class DiffusionTrackNet(nn.Module):
    def __init__(self, d=256):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 64, 7, 4, 3), nn.ReLU(), nn.Conv2d(64, d, 3, 2, 1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.box_head = nn.Linear(2 * d + 4, 4)
        self.cls_head = nn.Linear(2 * d + 4, 1)

    def forward(self, template, search, noisy_boxes):
        f = torch.cat([self.backbone(template), self.backbone(search), noisy_boxes], dim=1)
        return {"pred_boxes": self.box_head(f).sigmoid(), "pred_logits": self.cls_head(f)}

    def compute_loss(self, outputs, targets):
        loss_dict = {
            "loss_ce": F.binary_cross_entropy_with_logits(outputs["pred_logits"].squeeze(1), torch.ones_like(targets[:, 0])),
            "loss_bbox": F.l1_loss(outputs["pred_boxes"], targets),
            "loss_giou": (1 - (outputs["pred_boxes"] - targets).abs().sum(1)).clamp(min=0).mean(),
        }
        weight_dict = {"loss_ce": 2.0, "loss_bbox": 5.0, "loss_giou": 2.0}
        return loss_dict, weight_dict


class DiffusionTrackActor:
    def __init__(self, net):
        self.net = net

    def __call__(self, data):
        noisy = (data["search_anno"] + 0.1 * torch.randn_like(data["search_anno"])).clamp(0, 1)
        outputs = self.net(data["template_images"], data["search_images"], noisy)
        return self.compute_losses(outputs, data["search_anno"])

    def compute_losses(self, outputs, new_targets, return_status=True):
        loss_dict, weight_dict = self.net.compute_loss(outputs, new_targets)
        new_loss_dict = {k: loss_dict[k] * weight_dict[k] for k in loss_dict if k in weight_dict}
        losses = sum(new_loss_dict.values())
        status = {k: v.item() for k, v in loss_dict.items()}
        status["total_loss"] = losses.clone().detach().item()
        if return_status:
            return losses, status
        return losses


class LTRTrainer:
    def __init__(self, actor, optimizer, device="cuda"):
        self.actor = actor
        self.optimizer = optimizer
        self.device = device
        self.stats = OrderedDict()

    def _update_stats(self, new_stats, batch_size, loader_name):
        if loader_name not in self.stats or self.stats[loader_name] is None:
            self.stats[loader_name] = OrderedDict({name: AverageMeter() for name in new_stats.keys()})
        for name, val in new_stats.items():
            if name not in self.stats[loader_name]:
                self.stats[loader_name][name] = AverageMeter()
            self.stats[loader_name][name].update(val, batch_size)

    def cycle_dataset(self, num_iters, batch_size=32, loader_name="train"):
        for i in range(1, num_iters + 1):
            data = {
                "template_images": torch.rand(batch_size, 3, 128, 128, device=self.device),
                "search_images": torch.rand(batch_size, 3, 256, 256, device=self.device),
                "search_anno": torch.rand(batch_size, 4, device=self.device),
            }
            loss, stats = self.actor(data)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self._update_stats(stats, batch_size, loader_name)
            if i % 100 == 0:
                print(i, {k: float(m.avg) for k, m in self.stats[loader_name].items()},
                      torch.cuda.memory_allocated() / 2**20)

    def train(self, epochs, iters_per_epoch):
        for _ in range(epochs):
            self.cycle_dataset(iters_per_epoch)
            for meter in self.stats["train"].values():
                meter.reset()


if __name__ == "__main__":
    net = DiffusionTrackNet().cuda()
    trainer = LTRTrainer(DiffusionTrackActor(net), torch.optim.AdamW(net.parameters(), lr=1e-4))
    trainer.train(epochs=300, iters_per_epoch=20_000)
