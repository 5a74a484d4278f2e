# Fixed twin of case 03: the MSE primitive returns the squared error's .data, so the epoch mean holds no graph
# Thread: https://github.com/pytorchbearer/torchbearer/issues/506
# Reported: memory leak when training with the 'mse' metric, growing over long epochs
# Confirmed cause: MeanSquaredError.process returned torch.pow(y_pred - y_true, 2) with its autograd graph, and the Mean aggregator summed it across every batch of the epoch; fixed in the merged PR #507 by returning `.data`
# Class: metric/meter accumulates graph-attached per-batch values (no detach in the metric primitive)
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

Y_PRED, Y_TRUE, LOSS = "y_pred", "y_true", "loss"


class Metric:
    def process(self, state):
        raise NotImplementedError

    def reset(self, state):
        pass


class MeanSquaredError(Metric):
    """Per-sample squared error primitive, decorated with running/epoch means below."""

    def __init__(self, pred_key=Y_PRED, target_key=Y_TRUE):
        self.pred_key, self.target_key = pred_key, target_key

    def process(self, state):
        y_pred = state[self.pred_key]
        y_true = state[self.target_key]
        return torch.pow(y_pred - y_true.view_as(y_pred), 2).data


class Mean(Metric):
    """Epoch aggregator: keeps a running sum of everything the wrapped metric produced."""

    def __init__(self, metric):
        self.metric = metric
        self._sum, self._count = 0.0, 0

    def reset(self, state):
        self._sum, self._count = 0.0, 0

    def process(self, state):
        value = self.metric.process(state)
        self._sum = self._sum + value.sum()
        self._count += value.numel()
        return self._sum / self._count


class Trial:
    def __init__(self, model, optimizer, criterion, metrics, device="cuda"):
        self.model, self.optimizer, self.criterion = model.to(device), optimizer, criterion
        self.metrics, self.device = metrics, device

    def run(self, loader, epochs):
        state = {}
        for epoch in range(epochs):
            for m in self.metrics:
                m.reset(state)
            for x, y in loader:
                x, y = x.to(self.device), y.to(self.device)
                self.optimizer.zero_grad()
                state[Y_PRED] = self.model(x)
                state[Y_TRUE] = y
                state[LOSS] = self.criterion(state[Y_PRED], y)
                state[LOSS].backward()
                self.optimizer.step()
                results = {type(m.metric).__name__: m.process(state) for m in self.metrics}
            print(epoch, {k: float(v) for k, v in results.items()})


if __name__ == "__main__":
    x = torch.randn(200_000, 64)
    y = torch.randn(200_000, 1)
    loader = DataLoader(TensorDataset(x, y), batch_size=128, shuffle=True)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 1))
    trial = Trial(model, torch.optim.SGD(model.parameters(), lr=1e-3), nn.MSELoss(), [Mean(MeanSquaredError())])
    trial.run(loader, epochs=10)
