# Fixed twin of case 09: predict() is decorated with @torch.no_grad() so no autograd graph or saved activations are kept during prediction
# Thread: https://github.com/facebookresearch/fairchem/pull/199
# Reported: validation memory usage higher than training (allocated ~7-8 GB in val vs ~3-4 GB in train, benchmarked in the PR)
# Confirmed cause: evaluation paths were not under no_grad (predict() had none; the no_grad at the validate call site was dropped once forces needed enable_grad); merged fix decorates validate() and predict() with @torch.no_grad() and keeps only the force branch under enable_grad
# Class: evaluation / prediction helper running forward passes with grad enabled
import torch
import torch.nn as nn


class SchNetLike(nn.Module):
    def __init__(self, hidden=512, layers=6):
        super().__init__()
        self.embedding = nn.Embedding(100, hidden)
        self.interactions = nn.ModuleList([nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
                                           for _ in range(layers)])
        self.out = nn.Linear(hidden, 1)

    def forward(self, batch):
        h = self.embedding(batch["atomic_numbers"])
        for block in self.interactions:
            h = h + block(h)
        energy = self.out(h).sum(dim=1)
        return {"energy": energy}


class EnergyTrainer:
    def __init__(self, model, device="cuda"):
        self.model = model.to(device)
        self.device = device
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=5e-4)

    def train_epoch(self, loader):
        self.model.train()
        for batch in loader:
            batch = {k: v.to(self.device) for k, v in batch.items()}
            out = self.model(batch)
            loss = nn.functional.l1_loss(out["energy"], batch["y"])
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    @torch.no_grad()
    def predict(self, loader):
        self.model.eval()
        predictions = {"id": [], "energy": []}
        for i, batch in enumerate(loader):
            batch = {k: v.to(self.device) for k, v in batch.items()}
            out = self.model(batch)
            predictions["id"].extend(batch["sid"].tolist())
            predictions["energy"].extend(out["energy"].to(torch.float16).tolist())
        return predictions


def make_loader(n_batches, bs=64, atoms=200):
    return [{"atomic_numbers": torch.randint(1, 90, (bs, atoms)), "y": torch.randn(bs),
             "sid": torch.arange(i * bs, (i + 1) * bs)} for i in range(n_batches)]


if __name__ == "__main__":
    trainer = EnergyTrainer(SchNetLike())
    trainer.train_epoch(make_loader(50))
    preds = trainer.predict(make_loader(200, bs=256))
    print(len(preds["energy"]))
