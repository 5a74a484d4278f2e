# Recall case 10 (sealed3): an epoch-scoring callback caches every batch prediction on the GPU until epoch end
# Thread: https://github.com/braindecode/braindecode/pull/384
# Reported: out-of-memory on GPU during scoring of cropped EEG decoding (known skorch EpochScoring caching problem)
# Confirmed cause: the scoring callback stored the predictions it received as CUDA tensors for the whole epoch;
#   merged PR moves the stored predictions to CPU (tested by the reporter, merged by the maintainer)
# Class: predict/scoring path keeping per-batch outputs on the device
import numpy as np
import torch
import torch.nn as nn


class CroppedTrialEpochScoring:
    def __init__(self, name="valid_trial_accuracy", on_train=False):
        self.name = name
        self.on_train = on_train
        self.y_preds_ = []
        self.y_trues_ = []

    def on_epoch_begin(self, net):
        self.y_preds_ = []
        self.y_trues_ = []

    def on_batch_end(self, net, X, y, y_pred, training):
        if training != self.on_train:
            return
        self.y_preds_.append(y_pred)  # leak: ANY
        self.y_trues_.append(y.numpy())

    def on_epoch_end(self, net):
        preds = torch.cat(self.y_preds_).mean(dim=2).argmax(dim=1).cpu().numpy()
        trues = np.concatenate(self.y_trues_)
        score = float((preds == trues).mean())
        net.history.append({self.name: score})
        self.y_preds_ = []


class EEGNet(nn.Module):
    def __init__(self, n_chans=64, n_classes=4):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(n_chans, 256, 25), nn.ELU(), nn.Conv1d(256, 256, 25), nn.ELU())
        self.cls = nn.Conv1d(256, n_classes, 1)

    def forward(self, x):
        return self.cls(self.conv(x))  # dense (cropped) predictions: (B, classes, T')


class EEGClassifier:
    def __init__(self, module, callbacks, device):
        self.module = module.to(device)
        self.callbacks = callbacks
        self.device = device
        self.opt = torch.optim.AdamW(self.module.parameters(), lr=1e-3)
        self.history = []

    def fit_epoch(self, train_batches, valid_batches):
        for cb in self.callbacks:
            cb.on_epoch_begin(self)
        self.module.train()
        for X, y in train_batches:
            y_pred = self.module(X.to(self.device))
            loss = nn.functional.cross_entropy(y_pred.mean(dim=2), y.to(self.device))
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
        self.module.eval()
        with torch.no_grad():
            for X, y in valid_batches:
                y_pred = self.module(X.to(self.device))
                for cb in self.callbacks:
                    cb.on_batch_end(self, X, y, y_pred, training=False)
        for cb in self.callbacks:
            cb.on_epoch_end(self)


def batches(n):
    for _ in range(n):
        yield torch.randn(64, 64, 2000), torch.randint(0, 4, (64,))


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    clf = EEGClassifier(EEGNet(), [CroppedTrialEpochScoring()], device)
    for epoch in range(30):
        clf.fit_epoch(batches(100), batches(400))
        print(clf.history[-1])
