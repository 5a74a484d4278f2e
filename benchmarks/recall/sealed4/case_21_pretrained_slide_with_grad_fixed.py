# Fixed twin of case 21: Model.slide runs the batched forward under torch.no_grad()
# Thread: https://github.com/pyannote/pyannote-audio/pull/444
# Reported: running a model pretrained on AMI (pretrained-model tutorial) used 5274 MB without torch.no_grad() vs 1691 MB with it
# Confirmed cause: Model.slide() ran `self(tX)` on every batch of chunks with grad tracking, keeping full activation graphs although only `.detach().cpu().numpy()` is used; the merged PR wraps that forward in torch.no_grad() (maintainer hbredin reviewed; the extra no_grad around model.to() was removed as a no-op)
# Class: inference/predict helper running forward without torch.no_grad()
import numpy as np
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n_features=60, hidden=512, n_classes=4):
        super().__init__()
        self.rnn = nn.LSTM(n_features, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(2 * hidden, 128), nn.Tanh(), nn.Linear(128, n_classes))

    def forward(self, X, return_intermediate=None):
        out, _ = self.rnn(X)
        return torch.sigmoid(self.ff(out))

    def slide(self, features, chunk_frames, step_frames, batch_size=32, device=None, return_intermediate=None):
        device = torch.device("cpu") if device is None else torch.device(device)
        starts = range(0, max(1, features.shape[0] - chunk_frames + 1), step_frames)
        chunks = [features[s:s + chunk_frames] for s in starts]
        fX = []
        for b in range(0, len(chunks), batch_size):
            batch = {"X": np.stack(chunks[b:b + batch_size])}
            tX = torch.tensor(batch["X"], dtype=torch.float32, device=device)
            with torch.no_grad():
                tfX = self(tX, return_intermediate=return_intermediate)
            tfX_npy = tfX.detach().to("cpu").numpy()
            fX.append(tfX_npy)
        return np.vstack(fX)


class Pretrained:
    """Feature extraction using a pretrained model (duration 2 s chunks, 50 % overlap)."""

    def __init__(self, model, batch_size=32, device="cuda"):
        self.device = torch.device(device)
        self.model_ = model.eval().to(self.device)
        self.batch_size = batch_size

    def __call__(self, features):
        return self.model_.slide(features, chunk_frames=200, step_frames=100,
                                 batch_size=self.batch_size, device=self.device)


if __name__ == "__main__":
    pretrained = Pretrained(Model(), batch_size=128)
    for file_idx in range(100):
        mfcc = np.random.randn(360_000, 60).astype(np.float32)  # one hour of frames
        scores = pretrained(mfcc)
        np.save(f"scores_{file_idx:03d}.npy", scores)
