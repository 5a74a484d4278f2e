# Recall case 08 (sealed8): a running-average loss meter folds the raw loss tensor into its state, chaining every step's graph
# Thread: https://github.com/pytorch/ignite/pull/943
# Reported: RunningAverage attached to a trainer whose update function returns the loss tensor "can cause a mem leak"
# Confirmed cause: the running value was computed from the output tensor without detaching it, so each new value
#   referenced the previous one and its autograd graph; maintainer (vfdev-5) fixed it in this merged PR with tests
# Class: tensor (with graph) handed to a meter that keeps it across iterations (exponential moving average)
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class RunningAverage:
    """Exponential moving average of a per-iteration output (e.g. the batch loss)."""

    def __init__(self, alpha: float = 0.98):
        self.alpha = alpha
        self._value = None

    def reset(self):
        self._value = None

    def update(self, output):
        if self._value is None:
            self._value = output  # leak: ANY
        else:
            self._value = self._value * self.alpha + (1.0 - self.alpha) * output  # leak: ANY

    def compute(self) -> float:
        return float(self._value)


class Engine:
    def __init__(self, process_function):
        self._process_function = process_function
        self.metrics = {}
        self.iteration = 0

    def attach(self, name: str, metric: RunningAverage):
        self.metrics[name] = metric

    def run(self, data, max_epochs: int = 1):
        for epoch in range(max_epochs):
            for batch in data:
                self.iteration += 1
                output = self._process_function(self, batch)
                for metric in self.metrics.values():
                    metric.update(output)
                if self.iteration % 100 == 0:
                    print(epoch, self.iteration, {k: m.compute() for k, m in self.metrics.items()})


model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
criterion = nn.CrossEntropyLoss()


def update_fn(engine, batch):
    model.train()
    x, y = (t.cuda() for t in batch)
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


if __name__ == "__main__":
    data = DataLoader(TensorDataset(torch.randn(60000, 784), torch.randint(0, 10, (60000,))), batch_size=64)
    trainer = Engine(update_fn)
    trainer.attach("running_avg_loss", RunningAverage(alpha=0.98))
    trainer.run(data, max_epochs=10)
