# Fixed twin of case 06: run the forward of _predict under torch.no_grad()
# Thread: https://github.com/alan-turing-institute/autoemulate/issues/558
# Reported: prediction with the torch-based emulators builds a computation graph although no backprop is done (extra overhead/memory for every predict call)
# Confirmed cause: the maintainers agreed and closed the issue with PR #561, which wraps the emulator forward in _predict in torch.no_grad() so no graph is built
# Class: predict helper with grad on returning graph-carrying outputs that the caller keeps
import torch
import torch.nn as nn


class TorchEmulator(nn.Module):
    def __init__(self, n_in=8, n_out=2, hidden=256):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, n_out))
        self.register_buffer("x_mean", torch.zeros(n_in))
        self.register_buffer("x_std", torch.ones(n_in))

    def preprocess(self, x):
        return (x - self.x_mean) / self.x_std

    def forward(self, x):
        return self.net(x)

    def _predict(self, x):
        self.eval()
        x = self.preprocess(x)
        with torch.no_grad():
            return self(x)

    def predict(self, x):
        return self._predict(torch.as_tensor(x, dtype=torch.float32))


def active_learning(emulator, simulator, n_rounds=500):
    history = []
    for _ in range(n_rounds):
        candidates = torch.rand(4096, 8)
        preds = emulator.predict(candidates)
        history.append(preds)
        pick = preds.var(dim=1).argmax()
        simulator(candidates[pick])
    return history
