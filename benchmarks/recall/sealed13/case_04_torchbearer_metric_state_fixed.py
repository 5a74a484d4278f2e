# Fixed twin of case 04: metrics are processed on state.data (tensors without autograd history) instead of the live state
# Thread: https://github.com/pytorchbearer/torchbearer/pull/533
# Reported: memory leak with metrics that causes issues with very long epochs (CHANGELOG entry of the merged fix)
# Confirmed cause: running metrics received state[Y_PRED]/state[LOSS] with their autograd history and kept them in running accumulators; merged fix (maintainer) passes `state.data`, a copy of the state with every tensor replaced by `.data`
# Class: graph-attached tensors handed to metric/meter objects that keep them across steps
import torch
import torch.nn as nn


class State(dict):
    @property
    def data(self):
        new_state = State()
        for key in self.keys():
            try:
                new_state[key] = self[key].data
            except AttributeError:
                new_state[key] = self[key]
        return new_state


class RunningMean:
    """Running metric: keeps a window of the last values it has seen."""

    def __init__(self, key, window=50):
        self.key = key
        self.window = window
        self._cache = []

    def process(self, state):
        value = state[self.key]
        if value.dim() > 0:
            value = value.mean()
        self._cache.append(value)
        if len(self._cache) > self.window:
            self._cache.pop(0)
        return {f"running_{self.key}": sum(self._cache) / len(self._cache)}

    def process_final(self, state):
        return self.process(state)


class MetricList:
    def __init__(self, metrics):
        self.metrics = metrics

    def process(self, state):
        out = {}
        for m in self.metrics:
            out.update(m.process(state))
        return out


class Trial:
    def __init__(self, model, optimizer, criterion, metrics):
        self.model, self.optimizer, self.criterion = model, optimizer, criterion
        self.metric_list = MetricList(metrics)

    def train_epoch(self, loader, device="cuda"):
        self.model.train()
        state = State()
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            self.optimizer.zero_grad()
            state["y_pred"] = self.model(x)
            state["loss"] = self.criterion(state["y_pred"], y)
            state["loss"].backward()
            self.optimizer.step()
            state["metrics"] = self.metric_list.process(state.data)
        return state["metrics"]


if __name__ == "__main__":
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 64 * 64, 1024), nn.ReLU(), nn.Linear(1024, 10)).cuda()
    trial = Trial(model, torch.optim.SGD(model.parameters(), lr=0.1), nn.CrossEntropyLoss(),
                  [RunningMean("loss"), RunningMean("y_pred")])
    loader = [(torch.randn(256, 3, 64, 64), torch.randint(0, 10, (256,))) for _ in range(5000)]
    print(trial.train_epoch(loader))
