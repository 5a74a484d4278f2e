# Recall case 39: a torchmetrics metric computed at every validation epoch end, never reset
# Thread: https://github.com/NRCan/geo-deep-learning/issues/582
# Reported: a slow memory leak in training that ends in OOM if run for enough epochs; more
#   metrics make it faster; memory rises at each validation and never comes down.
# Confirmed cause: the metrics are updated each step and `compute()`d at epoch end but never
#   `reset()`, so their states keep accumulating (fix from Lightning-AI/torchmetrics#1949:
#   call `self.iou_classwise_metric.reset()` at the end of validation and test).
# Class: metric state never reset across epochs
import lightning as L
import torch
from torch.nn import functional as F
from torchmetrics.classification import MulticlassJaccardIndex


class SegmentationTask(L.LightningModule):
    def __init__(self, model, num_classes, class_names, lr=1e-4):
        super().__init__()
        self.model = model
        self.class_names = class_names
        self.lr = lr
        self.iou_classwise_metric = MulticlassJaccardIndex(num_classes=num_classes, average=None)

    def training_step(self, batch, batch_idx):
        images, masks = batch["image"], batch["mask"]
        loss = F.cross_entropy(self.model(images), masks)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        images, masks = batch["image"], batch["mask"]
        logits = self.model(images)
        self.log("val_loss", F.cross_entropy(logits, masks))
        self.iou_classwise_metric.update(logits.argmax(dim=1), masks)

    def on_validation_epoch_end(self):
        iou_per_class = self.iou_classwise_metric.compute()  # leak: ANY
        for name, value in zip(self.class_names, iou_per_class):
            self.log(f"val_iou_{name}", value)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)
