# Fixed twin of case 04: the saved batch loss and per-term losses are detached before they reach the statistics
# Thread: https://github.com/mir-group/nequip/pull/1
# Reported: losses "that get saved" for logging kept autograd graphs alive during training and validation
# Confirmed cause: batch_step stored `self.batch_loss = loss` (and the per-term loss dicts) and end_of_batch_log appended that tensor to per-epoch lists; the merged PR #1 detaches everything that gets saved and computes the stats under no_grad
# Class: loss tensor (with graph) stored on the trainer and appended to epoch statistics lists
import torch
import torch.nn as nn

TRAIN, VALIDATION = "train", "val"


class Loss:
    def __init__(self, coeffs):
        self.coeffs = coeffs

    def __call__(self, pred, ref):
        contrib = {k: {k: torch.mean((pred[k] - ref[k]) ** 2)} for k in self.coeffs}
        loss = sum(self.coeffs[k] * contrib[k][k] for k in self.coeffs)
        return loss, contrib


class Trainer:
    def __init__(self, model, loss, lr=1e-3, device="cuda"):
        self.model = model.to(device)
        self.loss = loss
        self.device = device
        self.optim = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.statistics = {}
        self.ibatch = 0

    def batch_step(self, data, validation=False):
        self.model.train(not validation)
        data = {k: v.to(self.device) for k, v in data.items()}
        out = self.model(data)
        loss, loss_contrib = self.loss(pred=out, ref=data)
        if not validation:
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()

        self.batch_loss = loss.detach()
        self.batch_loss_contrib = {k1: {k2: v2.detach() for k2, v2 in v1.items()} for k1, v1 in loss_contrib.items()}
        self.end_of_batch_log(validation)

    def end_of_batch_log(self, validation):
        category = VALIDATION if validation else TRAIN
        if self.ibatch == 0:
            self.statistics[category] = {"loss": [], "contrib": {k: [] for k in self.batch_loss_contrib}}
        stat = self.statistics[category]
        stat["loss"] += [self.batch_loss]
        for key, d in self.batch_loss_contrib.items():
            for attr, value in d.items():
                stat["contrib"][key] += [value.item()]

    def epoch_step(self, train_loader, val_loader):
        for validation, loader in ((False, train_loader), (True, val_loader)):
            for self.ibatch, data in enumerate(loader):
                self.batch_step(data, validation=validation)
        for category, stat in self.statistics.items():
            print(category, float(sum(stat["loss"]) / len(stat["loss"])))


class EnergyForceModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 128), nn.SiLU(), nn.Linear(128, 1))

    def forward(self, data):
        pos = data["pos"].requires_grad_(True)
        energy = self.net(pos).sum(dim=1)
        forces = -torch.autograd.grad(energy.sum(), pos, create_graph=self.training)[0]
        return {"energy": energy, "forces": forces}


def random_batches(n):
    return [{"pos": torch.randn(512, 3), "energy": torch.randn(512), "forces": torch.randn(512, 3)} for _ in range(n)]


if __name__ == "__main__":
    trainer = Trainer(EnergyForceModel(), Loss({"energy": 1.0, "forces": 100.0}))
    for epoch in range(100):
        trainer.epoch_step(random_batches(500), random_batches(50))
