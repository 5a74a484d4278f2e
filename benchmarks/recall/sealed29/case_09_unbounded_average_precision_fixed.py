# Thread: https://github.com/cubert-hyperspectral/cuvis-ai/pull/36
# Reported: anomaly-detection training (Dinomaly v2, lentils data) runs out of GPU memory on a 16 GiB card
#   around epoch 8-9; memory climbs with every batch and never comes back between epochs.
# Confirmed cause: the merged PR: "Without this, `BinaryAveragePrecision` accumulates GPU preds/targets
#   unboundedly across every batch and every epoch"; fixed by a binned AP (thresholds=200) and an
#   explicit reset() at every (stage, epoch) boundary.
# Class: metric state kept for the whole run (exact AP stores every prediction; never reset)
import torch
from torchmetrics.classification import BinaryAveragePrecision


class AnomalyDetectionMetrics(torch.nn.Module):
    def __init__(self, threshold: float = 0.5, ap_thresholds: int = 200):
        super().__init__()
        self.threshold = threshold
        # binned AP: a fixed-size confusion state instead of every score ever seen
        self.average_precision_metric = BinaryAveragePrecision(thresholds=ap_thresholds)
        self._boundary = None

    def forward(self, logits: torch.Tensor, mask: torch.Tensor, stage: str, epoch: int) -> dict:
        if self._boundary != (stage, epoch):
            self.average_precision_metric.reset()
            self._boundary = (stage, epoch)

        scores = torch.sigmoid(logits).flatten()
        target = mask.flatten().long()
        preds = scores > self.threshold

        tp = (preds & (target == 1)).sum().float()
        fp = (preds & (target == 0)).sum().float()
        fn = (~preds & (target == 1)).sum().float()
        precision = tp / (tp + fp).clamp(min=1)
        recall = tp / (tp + fn).clamp(min=1)
        f1 = 2 * precision * recall / (precision + recall).clamp(min=1e-8)
        iou = tp / (tp + fp + fn).clamp(min=1)

        self.average_precision_metric.update(scores, target)
        average_precision = self.average_precision_metric.compute()

        return {
            "precision": precision.item(),
            "recall": recall.item(),
            "f1": f1.item(),
            "iou": iou.item(),
            "average_precision": average_precision.item(),
        }


def run_epoch(model, metrics_node, loader, optimizer, epoch, device="cuda"):
    model.train()
    for batch in loader:
        cube = batch["cube"].to(device)
        mask = batch["mask"].to(device)
        logits = model(cube)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, mask.float())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            logged = metrics_node(logits.detach(), mask, "train", epoch)
        print(epoch, loss.item(), logged["average_precision"])
