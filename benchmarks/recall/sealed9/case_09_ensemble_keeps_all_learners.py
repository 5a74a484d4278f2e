# Recall case 09 (sealed9): an ensemble trainer builds and trains N learners in a loop and keeps every one of them on the GPU
# Thread: https://github.com/raharth/PyMatch/issues/23
# Reported: training ensembles of more than ~20 members runs out of memory on the last models
# Confirmed cause: the maintainer notes that all models are stored in memory for the whole training while only one is needed at a time
# Class: model/optimizer built per member/trial in a loop and kept
import torch
import torch.nn as nn
import torch.nn.functional as F


class Learner:
    def __init__(self, model, optimizer, device):
        self.model, self.optimizer, self.device = model, optimizer, device

    def fit(self, loader, epochs):
        self.model.train()
        for _ in range(epochs):
            for x, y in loader:
                loss = F.cross_entropy(self.model(x.to(self.device)), y.to(self.device))
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()

    @torch.no_grad()
    def predict(self, x):
        self.model.eval()
        return torch.softmax(self.model(x.to(self.device)), -1).cpu()


def make_learner(device):
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 64 * 64, 4096), nn.ReLU(), nn.Linear(4096, 10)).to(device)
    return Learner(model, torch.optim.Adam(model.parameters(), lr=1e-4), device)


class Ensemble:
    def __init__(self, n_learners, device):
        self.n_learners = n_learners
        self.device = device
        self.learners = []

    def fit(self, loader, epochs):
        for i in range(self.n_learners):
            learner = make_learner(self.device)
            learner.fit(loader, epochs)
            self.learners.append(learner)  # leak: ANY

    def predict(self, x):
        votes = [learner.predict(x) for learner in self.learners]
        return torch.stack(votes).mean(0)


if __name__ == "__main__":
    data = [(torch.randn(32, 3, 64, 64), torch.randint(0, 10, (32,))) for _ in range(50)]
    ensemble = Ensemble(n_learners=30, device=torch.device("cuda"))
    ensemble.fit(data, epochs=3)
    print(ensemble.predict(torch.randn(8, 3, 64, 64)).argmax(-1))
