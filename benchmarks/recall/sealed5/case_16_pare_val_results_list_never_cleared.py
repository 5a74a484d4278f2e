# Recall case 16 (sealed5): LightningModule appends validation results to an attribute list every epoch and never clears it
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
        self.val_accuracy_results.append({"mpjpe": err, "pred": pred})  # leak: ANY

    def on_validation_epoch_end(self):
        mpjpe = torch.cat([r["mpjpe"] for r in self.val_accuracy_results]).mean()
        self.log("val/mpjpe", mpjpe)
        pass  # leak: ANY

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=5e-5)
