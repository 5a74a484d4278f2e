# Fixed twin of case 11: validation_step only logs its loss and returns nothing, so no per-batch outputs are kept
# Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/8453
# Reported: memory keeps growing through the evaluation loop until OOM
# Confirmed cause: maintainer (tchaton): anything returned from validation_step is stored (on GPU) for validation_epoch_end; memory stays constant when nothing is returned
# Class: per-batch eval outputs returned to a framework that accumulates them for the epoch
import torch
import torch.nn as nn
import pytorch_lightning as pl


class BoringModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1024))

    def loss(self, batch, prediction):
        return nn.functional.mse_loss(prediction, torch.ones_like(prediction))

    def training_step(self, batch, batch_idx):
        output = self.layer(batch)
        return self.loss(batch, output)

    def validation_step(self, batch, batch_idx):
        output = self.layer(batch)
        loss = self.loss(batch, output)
        self.log("val_loss", loss)

    def configure_optimizers(self):
        return torch.optim.SGD(self.layer.parameters(), lr=0.1)


if __name__ == "__main__":
    train = torch.utils.data.DataLoader(torch.randn(2000, 1024), batch_size=64)
    val = torch.utils.data.DataLoader(torch.randn(200000, 1024), batch_size=256)
    pl.Trainer(max_epochs=1, accelerator="gpu", devices=1).fit(BoringModel(), train, val)
