# Fixed twin of case 02: the input image bag is no longer stored in the per-step results dict
# Thread: https://github.com/microsoft/hi-ml/pull/293
# Reported: repeated CUDA out-of-memory errors when fine-tuning DeepMIL; memory only freed at the end of each epoch
# Confirmed cause: results[ResultsKey.IMAGE] held a reference to the input image tensor and Lightning accumulates all step outputs for *_epoch_end, i.e. the whole dataset ends up on the GPU; merged PR drops the image from the results dict (maintainers)
# Class: step output dict holds the raw input batch tensor, accumulated by the trainer for the epoch
from typing import Dict, List

import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from torch import nn


class ResultsKey:
    SLIDE_ID = "slide_id"
    IMAGE = "image"
    LOSS = "loss"
    PROB = "prob"
    PRED_LABEL = "pred_label"
    TRUE_LABEL = "true_label"
    BAG_ATTN = "bag_attn"


class GatedAttentionPooling(nn.Module):
    def __init__(self, dim=512, hidden=128):
        super().__init__()
        self.v = nn.Sequential(nn.Linear(dim, hidden), nn.Tanh())
        self.u = nn.Sequential(nn.Linear(dim, hidden), nn.Sigmoid())
        self.w = nn.Linear(hidden, 1)

    def forward(self, feats):
        attn = self.w(self.v(feats) * self.u(feats)).T.softmax(dim=-1)
        return attn, attn @ feats


class DeepMILModule(pl.LightningModule):
    def __init__(self, n_classes: int = 2, lr: float = 5e-4):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(3, 32, 3, stride=2), nn.ReLU(),
            nn.Conv2d(32, 64, 3, stride=2), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 512),
        )
        self.pooling = GatedAttentionPooling()
        self.classifier = nn.Linear(512, n_classes)
        self.lr = lr

    def forward(self, bag: torch.Tensor):
        feats = self.encoder(bag)               # (tiles, 512), encoder is fine-tuned
        attn, pooled = self.pooling(feats)
        return self.classifier(pooled), attn

    def _shared_step(self, batch: Dict, batch_idx: int, stage: str) -> Dict:
        bags, labels = batch["images"], batch["label"]
        results: Dict = {}
        losses, probs, preds, attns = [], [], [], []
        for bag, label in zip(bags, labels):
            logits, attn = self(bag)
            losses.append(F.cross_entropy(logits, label.view(1)))
            probs.append(logits.softmax(-1))
            preds.append(logits.argmax(-1))
            attns.append(attn.detach())
        loss = torch.stack(losses).mean()
        self.log(f"{stage}/loss", loss, on_epoch=True)
        results.update({
            ResultsKey.SLIDE_ID: batch["slide_id"],
            ResultsKey.LOSS: loss,
            ResultsKey.PROB: torch.cat(probs).detach(),
            ResultsKey.PRED_LABEL: torch.cat(preds),
            ResultsKey.TRUE_LABEL: labels,
            ResultsKey.BAG_ATTN: attns,
        })
        return results

    def training_step(self, batch, batch_idx):
        return self._shared_step(batch, batch_idx, "train")

    def validation_step(self, batch, batch_idx):
        return self._shared_step(batch, batch_idx, "val")

    def validation_epoch_end(self, outputs: List[Dict]) -> None:
        preds = torch.cat([o[ResultsKey.PRED_LABEL] for o in outputs])
        labels = torch.cat([o[ResultsKey.TRUE_LABEL] for o in outputs])
        self.log("val/accuracy", (preds == labels).float().mean())

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)
