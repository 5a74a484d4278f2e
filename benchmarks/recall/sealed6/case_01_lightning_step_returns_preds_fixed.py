# Fixed twin of case 01: training_step returns only the loss, so no per-step preds/targets are kept until epoch end
# Thread: https://github.com/HelmholtzAI-Consultants-Munich/Quicksetup-ai/pull/26
# Reported: GPU memory grew linearly with every training step until CUDA OOM (issue #18 of the same repo)
# Confirmed cause: the step returned {"loss", "preds", "targets"}; Lightning stores every step output for training_epoch_end, so preds/targets stay on the GPU; merged PR returns only the loss (reporter's debugging write-up)
# Class: LightningModule step returns per-batch GPU tensors that the trainer accumulates until epoch end
from typing import Any, List

import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class SimpleDenseNet(nn.Module):
    def __init__(self, input_size=784, hidden=256, n_classes=10):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(input_size, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, n_classes),
        )

    def forward(self, x):
        return self.net(x.flatten(1))


class MNISTLitModule(pl.LightningModule):
    def __init__(self, lr: float = 1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.net = SimpleDenseNet()

    def forward(self, x):
        return self.net(x)

    def step(self, batch: Any):
        x, y = batch
        logits = self.forward(x)
        loss = F.cross_entropy(logits, y)
        preds = torch.argmax(logits, dim=1)
        return loss, preds, y

    def training_step(self, batch: Any, batch_idx: int):
        loss, preds, targets = self.step(batch)
        acc = (preds == targets).float().mean()
        self.log("train/loss", loss, on_step=False, on_epoch=True, prog_bar=True)
        self.log("train/acc", acc, on_step=False, on_epoch=True)
        # a dict of any tensors can be returned and read later in training_epoch_end
        return {"loss": loss}

    def training_epoch_end(self, outputs: List[Any]):
        # outputs is the list of everything training_step returned this epoch
        pass

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


if __name__ == "__main__":
    x = torch.randn(60000, 1, 28, 28)
    y = torch.randint(0, 10, (60000,))
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)
    trainer = pl.Trainer(accelerator="gpu", devices=1, max_epochs=10)
    trainer.fit(MNISTLitModule(), loader)
