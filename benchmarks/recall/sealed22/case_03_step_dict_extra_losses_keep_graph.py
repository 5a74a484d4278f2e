# Recall case 03 (sealed22): training_step returns per-component losses (never backpropagated) with their graphs, and Lightning keeps every step's dict for training_epoch_end
# Thread: https://github.com/pdearena/pdearena/pull/4
# Reported: training a UNet on Navier-Stokes on a single GPU, memory grows steadily through the first epoch (about 2 MB per step, 7.6 GB at start, over 23 GB by iteration 4800) until OOM on an RTX 3090; with short epochs (100 batches) it never happens
# Confirmed cause: the PR author found that the step outputs scalar_loss and vector_loss build computation graphs of their own (back to the prediction) that are kept with the outputs collected for training_epoch_end; detaching the two extra losses before returning them keeps memory flat at 7.6 GB; merged by the maintainers
# Class: loss returned/stored with its graph (second loss never backpropagated)
from typing import Any, List

import torch
from pytorch_lightning import LightningModule


def bootstrap(x, n_samples, dim):
    idx = torch.randint(0, x.shape[dim], (n_samples, x.shape[dim]), device=x.device)
    means = x[idx].mean(dim=1)
    return means.mean(), means.std()


class PDEModel(LightningModule):
    def __init__(self, model, train_criterion, n_scalar_components, n_vector_components, lr=2e-4):
        super().__init__()
        self.model = model
        self.train_criterion = train_criterion
        self.n_scalar_components = n_scalar_components
        self.n_vector_components = n_vector_components
        self.lr = lr

    def train_step(self, batch):
        x, y = batch
        pred = self.model(x)
        loss = self.train_criterion(pred, y)
        return loss, pred, y

    def training_step(self, batch, batch_idx: int):
        loss, preds, targets = self.train_step(batch)
        scalar_loss = self.train_criterion(
            preds[:, :, 0:self.n_scalar_components, ...],
            targets[:, :, 0:self.n_scalar_components, ...],
        )
        if self.n_vector_components > 0:
            vector_loss = self.train_criterion(
                preds[:, :, self.n_scalar_components:, ...],
                targets[:, :, self.n_scalar_components:, ...],
            )
        else:
            vector_loss = torch.tensor(0.0)
        self.log("train/loss", loss)
        self.log("train/scalar_loss", scalar_loss)
        self.log("train/vector_loss", vector_loss)
        return {
            "loss": loss,
            "scalar_loss": scalar_loss,  # leak: ANY
            "vector_loss": vector_loss,  # leak: ANY
        }

    def training_epoch_end(self, outputs: List[Any]):
        # outputs: every dict returned by training_step during the epoch
        for key in outputs[0].keys():
            if "loss" in key:
                loss_vec = torch.stack([outputs[i][key] for i in range(len(outputs))])
                mean, std = bootstrap(loss_vec, 64, 0)
                self.log(f"train/{key}_mean", mean)
                self.log(f"train/{key}_std", std)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)
