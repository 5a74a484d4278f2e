# Recall case 07 (sealed5): custom torchmetrics-style metrics are computed each validation epoch but never reset, so their list states keep growing
# Thread: https://github.com/luxonis/luxonis-train/pull/25
# Reported: training runs failed from a memory leak across epochs
# Confirmed cause: custom/reused metrics were never reset, so accumulated states grew every epoch; merged fix adds the missing reset
# Class: stateful metric objects updated every step and never reset
import torch
import lightning.pytorch as pl
import torch.nn as nn
import torch.nn.functional as F
from torchmetrics import Metric


class ConfusionStats(Metric):
    def __init__(self):
        super().__init__()
        self.add_state("preds", default=[], dist_reduce_fx="cat")
        self.add_state("targets", default=[], dist_reduce_fx="cat")

    def update(self, preds, target):
        self.preds.append(preds.detach())
        self.targets.append(target.detach())

    def compute(self):
        p = torch.cat(self.preds)
        t = torch.cat(self.targets)
        return (p.argmax(1) == t).float().mean()


class LuxonisModel(pl.LightningModule):
    def __init__(self, num_classes=10):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                                 nn.Flatten(), nn.Linear(32, num_classes))
        self.val_metrics = nn.ModuleDict({"accuracy": ConfusionStats()})

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        for metric in self.val_metrics.values():
            metric.update(logits, y)

    def on_validation_epoch_end(self):
        for name, metric in self.val_metrics.items():
            value = metric.compute()
            self.log(f"val/{name}", value)  # leak: ANY

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
