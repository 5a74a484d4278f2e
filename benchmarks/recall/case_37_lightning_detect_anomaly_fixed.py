# Fixed twin of case 37: detect_anomaly only when a debug option asks for it.
# Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/17359
# Reported: users forget to turn the debug flag off after debugging; training is 2.5x slower
#   with it on (3x and fluctuating GPU utilisation in #12344).
# Confirmed cause: `Trainer(detect_anomaly=True)` wraps every training step in
#   `torch.autograd.detect_anomaly()`, a debugging mode (maintainers: "this is used only for
#   debugging"); a performance warning was added (#17380).
# Class: anomaly detection left on for training (through a framework flag)
import lightning as L
import torch
from torch import nn
from torch.nn import functional as F


class LitClassifier(L.LightningModule):
    def __init__(self, backbone, num_classes, lr=1e-3):
        super().__init__()
        self.backbone = backbone
        self.head = nn.LazyLinear(num_classes)
        self.lr = lr

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.head(self.backbone(x)), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)


def main(backbone, datamodule, debug=False):
    model = LitClassifier(backbone, num_classes=datamodule.num_classes)
    trainer = L.Trainer(max_epochs=90, accelerator="gpu", devices=1, precision="16-mixed", detect_anomaly=debug)
    trainer.fit(model, datamodule=datamodule)
