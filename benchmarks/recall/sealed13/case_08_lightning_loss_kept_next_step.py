# Recall case 08 (sealed13): the batch loop stores the step's loss tensor on itself and only replaces it during the next step, so the previous graph is alive while the next forward runs
# Thread: https://github.com/Lightning-AI/pytorch-lightning/pull/9336
# Reported: neural-ODE style models with very deep backward graphs OOM'd in the next training step although one step alone fits (issue #9343)
# Confirmed cause: the training loop kept a reference to the training loss through the next step; merged P0 fix clears the reference at the end of each training step
# Class: loss tensor kept on a long-lived object across iterations (two graphs alive at once)
import torch
import torch.nn as nn


class ODEFunc(nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 1024), nn.Tanh(), nn.Linear(1024, dim))

    def forward(self, y):
        return self.net(y)


class NeuralODE(nn.Module):
    def __init__(self, dim=256, steps=400):
        super().__init__()
        self.func = ODEFunc(dim)
        self.steps = steps

    def forward(self, y0):
        y, dt = y0, 1.0 / self.steps
        for _ in range(self.steps):  # explicit Euler: backward graph is `steps` deep
            y = y + dt * self.func(y)
        return y


class TrainingBatchLoop:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self._training_step_output = None

    def training_step(self, batch):
        x, y = batch
        return {"loss": nn.functional.mse_loss(self.model(x), y)}

    def run(self, batch):
        self.optimizer.zero_grad()
        output = self.training_step(batch)
        self._training_step_output = output  # leak: ANY
        output["loss"].backward()
        self.optimizer.step()
        return output["loss"].detach()


class Trainer:
    def fit(self, model, loader, max_epochs=10):
        loop = TrainingBatchLoop(model, torch.optim.Adam(model.parameters(), lr=1e-3))
        for epoch in range(max_epochs):
            for batch in loader:
                batch = [t.cuda() for t in batch]
                loss = loop.run(batch)
            print(epoch, loss.item())


if __name__ == "__main__":
    model = NeuralODE().cuda()
    loader = [(torch.randn(4096, 256), torch.randn(4096, 256)) for _ in range(50)]
    Trainer().fit(model, loader)
