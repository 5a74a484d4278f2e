# Recall case 27 (sealed4): after the training stage the optimizer zero-fills the gradients but keeps them allocated through the whole validation stage
# Thread: https://github.com/speechbrain/speechbrain/pull/1739
# Reported: validation/evaluation of large models (e.g. SepFormer) needs a smaller batch than possible because memory is still held after training
# Confirmed cause: the last call of the train stage was optimizer.zero_grad(), which stores zeros instead of freeing the .grad tensors; the merged PR calls optimizer.zero_grad(set_to_none=True) at the end of _fit_train ("flush gradients and save mem")
# Class: gradient buffers kept allocated across evaluation (zero_grad without set_to_none)
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class MaskNet(nn.Module):
    def __init__(self, dim=256, layers=16):
        super().__init__()
        self.intra = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, 8, 1024, batch_first=True), layers)

    def forward(self, feats):  # feats: (batch, channels, frames)
        mask = torch.sigmoid(self.intra(feats.transpose(1, 2))).transpose(1, 2)
        return feats * mask


class Brain:
    def __init__(self, modules, opt_class, device="cuda"):
        self.modules = nn.ModuleDict(modules).to(device)
        self.optimizer = opt_class(self.modules.parameters())
        self.device = device
        self.avg_train_loss, self.step = 0.0, 0

    def compute_forward(self, batch):
        mix = batch[0].to(self.device)
        return self.modules["decoder"](self.modules["masknet"](self.modules["encoder"](mix)))

    def compute_objectives(self, est, batch):
        return torch.nn.functional.mse_loss(est, batch[1].to(self.device))

    def fit_batch(self, batch):
        outputs = self.compute_forward(batch)
        loss = self.compute_objectives(outputs, batch)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()  # leak: ANY
        return loss.detach().cpu()

    def evaluate_batch(self, batch):
        out = self.compute_forward(batch)
        return self.compute_objectives(out, batch).detach().cpu()

    def _fit_train(self, train_set, epoch):
        self.modules.train()
        self.optimizer.zero_grad()
        for batch in train_set:
            self.step += 1
            loss = self.fit_batch(batch)
            self.avg_train_loss += (loss.item() - self.avg_train_loss) / self.step
        self.on_stage_end("train", self.avg_train_loss, epoch)  # leak: ANY
        self.avg_train_loss, self.step = 0.0, 0

    def _fit_valid(self, valid_set, epoch):
        self.modules.eval()
        avg_valid_loss = 0.0
        with torch.no_grad():
            for i, batch in enumerate(valid_set, start=1):
                loss = self.evaluate_batch(batch)
                avg_valid_loss += (loss.item() - avg_valid_loss) / i
        self.on_stage_end("valid", avg_valid_loss, epoch)

    def on_stage_end(self, stage, loss, epoch):
        print(f"epoch {epoch} {stage} loss {loss:.4f}")

    def fit(self, epochs, train_set, valid_set):
        for epoch in range(epochs):
            self._fit_train(train_set, epoch)
            self._fit_valid(valid_set, epoch)


if __name__ == "__main__":
    modules = {
        "encoder": nn.Conv1d(1, 256, 16, stride=8, padding=8),
        "masknet": MaskNet(),
        "decoder": nn.ConvTranspose1d(256, 1, 16, stride=8, padding=8),
    }
    train = DataLoader(TensorDataset(torch.randn(2000, 1, 32000), torch.randn(2000, 1, 32000)), batch_size=2)
    valid = DataLoader(TensorDataset(torch.randn(300, 1, 32000), torch.randn(300, 1, 32000)), batch_size=8)
    brain = Brain(modules, lambda params: torch.optim.Adam(params, lr=1.5e-4))
    brain.fit(200, train, valid)
