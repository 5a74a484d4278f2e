# Fixed twin of case 16: the list is cleared at the end of each validation epoch after logging
# Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/14270
# Reported: memory usage and training time increased a lot after epoch 0
# Confirmed cause: Lightning maintainer (awaelchli) pointed at self.val_accuracy_results being appended forever and never cleared; reporter confirmed the memory became normal once the validation logging code was removed
# Class: results list on the module that grows across epochs
import torch
import lightning.pytorch as pl
import torch.nn.functional as F


class PARETrainer(pl.LightningModule):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.val_accuracy_results = []

    def training_step(self, batch, batch_idx):
        pred = self.model(batch["img"])
        return F.mse_loss(pred, batch["pose"])

    def validation_step(self, batch, batch_idx):
        pred = self.model(batch["img"])
        err = (pred - batch["pose"]).norm(dim=-1).mean(-1)
        self.val_accuracy_results.append({"mpjpe": err, "pred": pred})

    def on_validation_epoch_end(self):
        mpjpe = torch.cat([r["mpjpe"] for r in self.val_accuracy_results]).mean()
        self.log("val/mpjpe", mpjpe)
        self.val_accuracy_results.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=5e-5)
