# Fixed twin of case 11: trainer.predict is called with return_predictions=False since the writer already saves them
# Thread: https://github.com/kaiko-ai/eva/issues/172
# Reported: memory leakage in the interface `predict` function while computing embeddings over a dataset
# Confirmed cause: maintainers: trainer.predict(model=..., datamodule=...) accumulates all predict tensors in order to return them, although the embeddings are already saved to disk; fix is to call it with return_predictions=False
# Class: predict loop that returns/keeps every batch output (Lightning trainer.predict default return_predictions)
import os

import torch
import torch.nn as nn
import lightning.pytorch as pl
from lightning.pytorch.callbacks import BasePredictionWriter
from torch.utils.data import DataLoader, Dataset


class PatchDataset(Dataset):
    def __init__(self, n=200_000):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        return torch.randn(3, 224, 224), idx


class PredictDataModule(pl.LightningDataModule):
    def predict_dataloader(self):
        return DataLoader(PatchDataset(), batch_size=256, num_workers=8)


class EmbeddingsModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 64, 7, stride=4), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 768))

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        images, indices = batch
        return {"embeddings": self.backbone(images), "indices": indices}


class EmbeddingsWriter(BasePredictionWriter):
    def __init__(self, output_dir):
        super().__init__(write_interval="batch")
        self.output_dir = output_dir
        os.makedirs(output_dir, exist_ok=True)

    def write_on_batch_end(self, trainer, pl_module, prediction, batch_indices, batch, batch_idx, dataloader_idx):
        torch.save({k: v.cpu() for k, v in prediction.items()}, os.path.join(self.output_dir, f"{batch_idx:06d}.pt"))


def predict(trainer, model, datamodule):
    """Interface entry point: compute and store the embeddings of the whole dataset."""
    trainer.predict(model=model, datamodule=datamodule, return_predictions=False)


if __name__ == "__main__":
    trainer = pl.Trainer(accelerator="gpu", devices=1, logger=False,
                         callbacks=[EmbeddingsWriter("./embeddings")])
    predict(trainer, EmbeddingsModel(), PredictDataModule())
