# Recall case 08 (sealed6): per-step GPU batch locals stay bound into the next iteration, doubling peak memory
# Thread: https://github.com/m2lines/Samudra/pull/463
# Reported: extra GPU memory held throughout training of the ocean emulator (before/after memory plots in the PR)
# Confirmed cause: single_step_data, input and label remained bound as loop locals during the next train step (its data loading and forward), keeping the previous batch's GPU data alive; merged PR moves the step into a helper so the locals are dropped right after use (reviewers approved)
# Class: large per-iteration tensors bound to loop-level names that outlive the iteration
from dataclasses import dataclass

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


@dataclass
class TrainData:
    input: torch.Tensor
    label: torch.Tensor


class OceanDataset(Dataset):
    def __len__(self):
        return 512

    def __getitem__(self, i):
        return torch.randn(77, 180, 360), torch.randn(77, 180, 360)


class TrainAggregator:
    def __init__(self):
        self.losses = []

    def record(self, loss: float):
        self.losses.append(loss)

    def get_logs(self):
        return {"train/loss": sum(self.losses) / max(len(self.losses), 1)}


class Trainer:
    def __init__(self, model, device="cuda"):
        self.device = device
        self.model = model.to(device)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=2e-4)
        self.loss_fn = nn.MSELoss()
        self.train_loader = DataLoader(OceanDataset(), batch_size=4, num_workers=4)

    def _to_train_data(self, batch) -> TrainData:
        x, y = batch
        return TrainData(input=x.to(self.device, non_blocking=True), label=y.to(self.device, non_blocking=True))

    def train_one_epoch(self, epoch):
        self.model.train()
        train_aggregator = TrainAggregator()
        for batch in self.train_loader:
            single_step_data = self._to_train_data(batch)  # leak: ANY
            input, label = single_step_data.input, single_step_data.label  # leak: ANY
            pred = self.model(input)
            loss = self.loss_fn(pred, label)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            train_aggregator.record(loss.item())
        print(f"Aggregating train logs")
        return train_aggregator.get_logs()


if __name__ == "__main__":
    net = nn.Sequential(nn.Conv2d(77, 256, 3, padding=1), nn.GELU(), nn.Conv2d(256, 77, 3, padding=1))
    trainer = Trainer(net)
    for ep in range(3):
        print(trainer.train_one_epoch(ep))
