# Fixed twin of case 08: the trainer snapshots the best model with deepcopy(state_dict()), i.e. a second GPU copy
# Thread: https://github.com/asappresearch/flambe/pull/168
# Reported: keeping the best model in memory costs a full extra copy of the weights on the training GPU
# Confirmed cause: deepcopy(self.model.state_dict()) clones every CUDA tensor on the device; the merged PR
#   ("Best model cpu") stores {k: t.cpu().detach()} instead
# Class: deepcopy of model weights per checkpoint kept on the device
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, train_batches, val_batches, lower_is_better=True, device="cuda"):
        self.model = model.to(device)
        self.device = device
        self.train_batches = train_batches
        self.val_batches = val_batches
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-4)
        self.loss_fn = nn.CrossEntropyLoss()
        self.lower_is_better = lower_is_better
        self._best_metric = None
        self._best_model = None

    def _train_step(self):
        self.model.train()
        for x, y in self.train_batches():
            loss = self.loss_fn(self.model(x.to(self.device)), y.to(self.device))
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def _eval_step(self):
        self.model.eval()
        total, n = 0.0, 0
        with torch.no_grad():
            for x, y in self.val_batches():
                total += self.loss_fn(self.model(x.to(self.device)), y.to(self.device)).item()
                n += 1
        val_metric = total / max(n, 1)
        sign = (-1) ** (self.lower_is_better)
        if self._best_metric is None or (sign * val_metric > sign * self._best_metric):
            self._best_metric = val_metric
            self._best_model = {k: t.cpu().detach() for k, t in self.model.state_dict().items()}
        return val_metric

    def run(self, epochs):
        for epoch in range(epochs):
            self._train_step()
            print(epoch, self._eval_step())
        self.model.load_state_dict(self._best_model)
        return self.model


def batches(n, dim=4096, classes=1000):
    def gen():
        for _ in range(n):
            yield torch.randn(32, dim), torch.randint(0, classes, (32,))
    return gen


if __name__ == "__main__":
    model = nn.Sequential(*[nn.Linear(4096, 4096) for _ in range(24)], nn.Linear(4096, 1000))
    Trainer(model, batches(200), batches(20)).run(10)
