# Recall case 08: training_step returns a big tensor next to the loss, training_epoch_end is overridden
# Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/15514
# Reported: CUDA OOM after some steps, only when `training_epoch_end` is implemented.
# Confirmed cause: with `training_epoch_end` overridden, Lightning keeps every dict that
#   `training_step` returns until the epoch ends; `"x"` is a (10240 x 24000) float tensor on the
#   GPU per step ("x is probably the main culprit"; reporter: "this issue is a feature instead of
#   a bug", labelled "working as intended").
# Class: Lightning step outputs kept by the framework for an epoch-end hook
import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from torch import nn


class SpectrogramRegressor(pl.LightningModule):
    def __init__(self, n_bins=24000, hidden=512):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_bins, hidden), nn.GELU(), nn.Linear(hidden, n_bins))

    def forward(self, x):
        return self.encoder(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        y_hat = self(x)
        loss = F.mse_loss(y_hat, y)
        self.log("train_loss", loss)
        return {"loss": loss, "x": x}  # leak: ANY

    def training_epoch_end(self, outputs):
        self.log("epoch_loss", torch.stack([o["loss"] for o in outputs]).mean())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    from torch.utils.data import DataLoader, TensorDataset

    data = TensorDataset(torch.randn(10240, 24000), torch.randn(10240, 24000))
    trainer = pl.Trainer(accelerator="gpu", devices=1, max_epochs=3)
    trainer.fit(SpectrogramRegressor(), DataLoader(data, batch_size=8))
