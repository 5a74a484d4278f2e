# Fixed twin of case 02: the loss uses the functional score; the metric state only ever
#   holds detached values and is reset every epoch.
# Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/4098
# Class: a metric object whose list state accumulates graph-carrying values
import torch
import pytorch_lightning as pl
from pytorch_lightning.metrics import Metric


def differentiable_dice_score(probs, target, include_background=False, eps=1e-6):
    one_hot = torch.nn.functional.one_hot(target, probs.shape[1]).permute(0, 3, 1, 2).float()
    if not include_background:
        probs, one_hot = probs[:, 1:], one_hot[:, 1:]
    inter = (probs * one_hot).sum(dim=(0, 2, 3))
    union = probs.sum(dim=(0, 2, 3)) + one_hot.sum(dim=(0, 2, 3))
    return ((2 * inter + eps) / (union + eps)).mean()


class DifferentiableDiceCoefficient(Metric):
    def __init__(self, include_background=False):
        super().__init__(compute_on_step=True)
        self.include_background = include_background
        self.add_state("dice_by_batch", default=[], dist_reduce_fx="cat")

    def update(self, input, target):
        dice = differentiable_dice_score(input.softmax(dim=1), target, self.include_background)
        self.dice_by_batch.append(dice.detach())

    def compute(self):
        return torch.stack(self.dice_by_batch).mean()


class SegmentationTask(pl.LightningModule):
    def __init__(self, module):
        super().__init__()
        self.module = module
        self._dice = DifferentiableDiceCoefficient(include_background=False)

    def training_step(self, batch, batch_idx):
        x, y = batch
        y_hat = self.module(x)
        ce = torch.nn.functional.cross_entropy(y_hat, y)
        dice = differentiable_dice_score(y_hat.softmax(dim=1), y, include_background=False)
        loss = ce + (1 - dice)
        self._dice.update(y_hat.detach(), y)
        self.log("train_dice", dice.detach(), on_step=True, on_epoch=False)
        return loss

    def on_train_epoch_end(self):
        self.log("train_dice_epoch", self._dice.compute())
        self._dice.reset()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
