# Recall case 03 (sealed9): metrics are updated with model outputs while autograd is on, so each metric keeps the batch graphs
# Thread: https://github.com/amjltc295/pytorch-golden-template/pull/64
# Reported: GPU memory leaked during training whenever a metric's update() was not wrapped in no_grad()
# Confirmed cause: metric updates recorded graph-carrying tensors; merged PR runs all metric updates inside torch.no_grad() in WorkerTemplate
# Class: tensors handed to metric/meter objects under autograd
from abc import abstractmethod

import torch
import torch.nn as nn
import torch.nn.functional as F


class BaseMetric:
    def __init__(self, output_key, target_key):
        self.output_key = output_key
        self.target_key = target_key

    @abstractmethod
    def update(self, data, output):
        pass

    @abstractmethod
    def finalize(self):
        pass


class L1Error(BaseMetric):
    def __init__(self, output_key="pred", target_key="target"):
        super().__init__(output_key, target_key)
        self.total = 0
        self.count = 0

    def update(self, data, output):
        err = (output[self.output_key] - data[self.target_key]).abs().sum()
        self.total = self.total + err
        self.count += data[self.target_key].numel()

    def finalize(self):
        value = self.total / max(self.count, 1)
        self.total, self.count = 0, 0
        return float(value)


class WorkerTemplate:
    def __init__(self, model, optimizer, metrics, device):
        self.model, self.optimizer, self.metrics, self.device = model, optimizer, metrics, device

    def _update_all_metrics(self, data, output):
        for metric in self.metrics:
            metric.update(data, output)  # leak: ANY

    def run_epoch(self, loader):
        self.model.train()
        for batch in loader:
            data = {k: v.to(self.device) for k, v in batch.items()}
            output = {"pred": self.model(data["image"])}
            loss = F.mse_loss(output["pred"], data["target"])
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self._update_all_metrics(data, output)
        return {type(m).__name__: m.finalize() for m in self.metrics}


if __name__ == "__main__":
    device = torch.device("cuda")
    model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 3, 3, padding=1)).to(device)
    worker = WorkerTemplate(model, torch.optim.Adam(model.parameters()), [L1Error()], device)
    loader = [{"image": torch.randn(16, 3, 128, 128), "target": torch.randn(16, 3, 128, 128)} for _ in range(400)]
    for epoch in range(10):
        print(epoch, worker.run_epoch(loader))
