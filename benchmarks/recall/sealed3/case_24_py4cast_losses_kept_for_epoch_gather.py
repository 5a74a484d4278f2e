# Recall case 24 (sealed3): a validation observer keeps every batch's loss tensor on the GPU and gathers at epoch end
# Thread: https://github.com/meteofrance/py4cast/pull/29
# Reported: OOM on large validation/test sets; moving the list to CPU instead broke multi-GPU training (gather needs
#   device tensors), so the list was left to grow on the GPU
# Confirmed cause: self.losses[name] accumulated per-step CUDA tensors until on_step_end/epoch end gathered them;
#   merged PR moves the all_gather (GPU->CPU transfer) into update(), once per batch, so only CPU copies are kept
# Class: distributed gather of results deferred to epoch end while per-step tensors pile up on the device
from collections import defaultdict

import pytorch_lightning as pl
import torch
import torch.nn as nn


def gather(obj: pl.LightningModule, tensor_to_gather: torch.Tensor) -> torch.Tensor:
    if obj.trainer.num_devices > 1:
        return obj.trainer.strategy.all_gather(tensor_to_gather).flatten(0, 1)
    return tensor_to_gather


class StateErrorObserver:
    def __init__(self):
        self.losses = defaultdict(list)

    def update(self, obj: pl.LightningModule, prediction: torch.Tensor, target: torch.Tensor):
        per_step = ((prediction - target) ** 2).mean(dim=(-2, -1))  # (batch, features)
        self.losses["mse"].append(per_step)  # leak: ANY

    def on_step_end(self, obj: pl.LightningModule, label: str = "Valid"):
        for name, values in self.losses.items():
            loss_tensor = gather(obj, torch.cat(values, dim=0))
            if obj.trainer.is_global_zero:
                obj.print(label, name, loss_tensor.mean(dim=0).cpu().numpy())
        self.losses.clear()


class AutoRegressiveLightning(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(21, 256, 3, padding=1), nn.GELU(), nn.Conv2d(256, 21, 3, padding=1))
        self.observer = StateErrorObserver()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.model(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        pred = self.model(x)
        self.observer.update(self, pred.permute(0, 2, 3, 1), y.permute(0, 2, 3, 1))

    def on_validation_epoch_end(self):
        self.observer.on_step_end(self, label="Valid")

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)


class WeatherDataset(torch.utils.data.Dataset):
    def __len__(self):
        return 20000

    def __getitem__(self, idx):
        return torch.randn(21, 512, 640), torch.randn(21, 512, 640)


if __name__ == "__main__":
    loader = torch.utils.data.DataLoader(WeatherDataset(), batch_size=4, num_workers=8)
    trainer = pl.Trainer(accelerator="gpu", devices=4, strategy="ddp", max_epochs=10)
    trainer.fit(AutoRegressiveLightning(), loader, loader)
