# Fixed twin of case 11: del the training step's tensors before running validation
# Thread: https://github.com/UCSD-E4E/acoustic-multiclass-training/pull/85
# Reported: GPU utilisation worsens inside the inner validation loop, ending in CUDA out of memory
# Confirmed cause: training tensors from the step before validation were still referenced, so their activations stayed allocated during validation; merged hotfix dels them before the validation run (a reviewer still saw spikes: weaker)
# Class: training-step locals (mels, outputs, loss) kept alive across a mid-epoch validation call
import torch
import torch.nn as nn


class BirdClassifier(nn.Module):
    def __init__(self, n_classes=264):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 128, 3, padding=1), nn.ReLU())
        self.head = nn.Linear(128, n_classes)

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))


@torch.no_grad()
def valid(model, valid_loader, device):
    model.eval()
    correct = 0
    for mels, labels in valid_loader:
        correct += (model(mels.to(device)).argmax(1) == labels.to(device)).sum().item()
    model.train()
    return correct


def train(model, train_loader, valid_loader, optimizer, device, valid_every=500):
    loss_fn = nn.CrossEntropyLoss()
    for i, (mels, labels) in enumerate(train_loader):
        mels, labels = mels.to(device), labels.to(device)
        outputs = model(mels)
        loss = loss_fn(outputs, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i % valid_every == 0:
            del mels, labels, outputs, loss
            valid(model, valid_loader, device)


if __name__ == "__main__":
    dev = torch.device("cuda")
    m = BirdClassifier().to(dev)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    tl = [(torch.randn(32, 1, 128, 512), torch.randint(0, 264, (32,))) for _ in range(50)]
    vl = [(torch.randn(64, 1, 128, 512), torch.randint(0, 264, (64,))) for _ in range(20)]
    train(m, tl, vl, opt, dev, valid_every=10)
