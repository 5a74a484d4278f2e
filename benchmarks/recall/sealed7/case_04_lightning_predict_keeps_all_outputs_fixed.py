# Fixed twin of case 04: trainer.predict is called with return_predictions=False; the writer callback still saves each batch
# Thread: https://github.com/NKI-AI/ahcore/pull/37
# Reported: OOM during the predict loop of a large inference job; memory grows until the process dies
# Confirmed cause: Lightning keeps all predict_step outputs for the epoch because return_predictions defaults to True; disabling it (outputs are written by a callback) fixed the OOM (PR merged)
# Class: predict loop that returns/collects every batch's outputs although a writer callback already consumes them
import torch
import torch.nn as nn
import pytorch_lightning as pl
from pytorch_lightning.callbacks import BasePredictionWriter


class TileWriter(BasePredictionWriter):
    def __init__(self, out_dir):
        super().__init__(write_interval="batch")
        self.out_dir = out_dir

    def write_on_batch_end(self, trainer, pl_module, prediction, batch_indices, batch, batch_idx, dataloader_idx):
        torch.save({k: v.cpu() for k, v in prediction.items() if torch.is_tensor(v)},
                   f"{self.out_dir}/pred_{batch_idx}.pt")


class SegmentationModule(pl.LightningModule):
    RELEVANT_KEYS = ("coordinates", "mpp", "path", "region_index")

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 4, 1))

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        relevant = {k: v for k, v in batch.items() if k in self.RELEVANT_KEYS}
        prediction = torch.softmax(self.net(batch["image"]), dim=1)
        return {"prediction": prediction, **relevant}


def run_inference(model, datamodule, out_dir):
    trainer = pl.Trainer(accelerator="gpu", devices=1, callbacks=[TileWriter(out_dir)])
    trainer.predict(model, datamodule=datamodule, return_predictions=False)
