# Recall case 02 (sealed): a Metric with a list state is called as a differentiable loss
# Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/4098
# Reported: memory grows steadily during training when a custom `Metric` whose state is a list
#   (a differentiable Dice coefficient) is called in `training_step` and its result used in the
#   loss.
# Confirmed cause: the maintainers (SkafteNicki) and the fixing PR #4313 ("make sure that the
#   metrics states gets detached from the computational graph to prevent memory consumption
#   from growing"): calling the metric appends the graph-carrying per-batch score to the list
#   state (and a cached copy), so every training step's graph stays referenced until the metric
#   is reset. Metric states are now detached; the loss itself should come from a functional.
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
        self.dice_by_batch.append(dice)  # leak: ANY

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
        dice = self._dice(y_hat, y)  # leak: ANY
        loss = ce + (1 - dice)
        self.log("train_dice", dice, on_step=True, on_epoch=False)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
