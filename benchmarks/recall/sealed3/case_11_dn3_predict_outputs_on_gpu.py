# Recall case 11 (sealed3): BaseProcess.predict collects outputs and labels as CUDA tensors for the whole dataset
# Thread: https://github.com/SPOClab-ca/dn3/issues/38
# Reported: "GPU memory fills during prediction/evaluation"
# Confirmed cause: the maintainer's bug report and fix: move outputs/predictions/labels to the CPU as soon as the model
#   is done with them in the base process, to spare GPU memory (issue labelled bug, closed with the change)
# Class: predict returning every batch output, accumulated on the device
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class BaseProcess:
    def __init__(self, classifier: nn.Module, cuda=True):
        self.device = torch.device("cuda" if cuda and torch.cuda.is_available() else "cpu")
        self.classifier = classifier.to(self.device)

    def forward(self, *inputs):
        return self.classifier(*inputs)

    def _make_batch(self, batch):
        return [t.to(self.device) for t in batch]

    def predict(self, dataset, batch_size=64, num_workers=4):
        loader = DataLoader(dataset, batch_size=batch_size, num_workers=num_workers)
        self.classifier.eval()
        predictions, labels = [], []
        with torch.no_grad():
            for batch in loader:
                inputs = self._make_batch(batch)
                outputs = self.forward(*inputs[:-1])
                predictions.append(outputs)  # leak: ANY
                labels.append(inputs[-1])  # leak: ANY
        return torch.cat(predictions).cpu().numpy(), torch.cat(labels).cpu().numpy()

    def evaluate(self, dataset, **kwargs):
        preds, labels = self.predict(dataset, **kwargs)
        return {"Accuracy": float((preds.mean(-1).argmax(-1) == labels).mean())}


class TIDNet(nn.Module):
    def __init__(self, channels=90, samples=1536, targets=2):
        super().__init__()
        self.temporal = nn.Sequential(nn.Conv1d(channels, 128, 25, padding=12), nn.LeakyReLU())
        self.cls = nn.Conv1d(128, targets, 1)

    def forward(self, x):
        # dense per-sample logits (B, targets, samples); the caller averages over time
        return self.cls(self.temporal(x))


class RecordingDataset(Dataset):
    """Stands in for a dn3 thinker/recording set: one (channels, samples) window per item."""

    def __init__(self, n, channels=90, samples=1536):
        self.n, self.channels, self.samples = n, channels, samples

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        g = torch.Generator().manual_seed(idx)
        return torch.randn(self.channels, self.samples, generator=g), torch.tensor(idx % 2)


if __name__ == "__main__":
    data = RecordingDataset(200_000)
    process = BaseProcess(TIDNet())
    print(process.evaluate(data))
    np.save("preds.npy", process.predict(data)[0])
