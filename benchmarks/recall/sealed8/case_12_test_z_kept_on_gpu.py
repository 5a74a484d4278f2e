# Recall case 12 (sealed8): every test batch's flow output z is kept on the GPU and concatenated at the end to score anomalies
# Thread: https://github.com/AlessioGalluccio/FastFlow/issues/9
# Reported: "calculate anomaly score waste lots of GPU memory" -- torch.cat(test_z) after the test loop needs a lot of GPU memory
# Confirmed cause: all per-batch z tensors were accumulated on the device for the whole test set; the maintainer changed
#   the loop to compute the anomaly score per batch (as the reporter suggested) and users confirmed "it works"
# Class: evaluation loop appends full device outputs to a list and concatenates them on the GPU after the loop
import numpy as np
import torch
from torch import nn
from sklearn.metrics import roc_auc_score

device = "cuda"
n_transforms_test = 64
n_feat = 256 * 3


def t2np(tensor):
    return tensor.cpu().data.numpy() if tensor is not None else None


class FastFlow(nn.Module):
    def __init__(self):
        super().__init__()
        self.feature_extractor = nn.Sequential(nn.Conv2d(3, 64, 7, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten())
        self.nf = nn.Sequential(nn.Linear(64 * 16, n_feat), nn.Tanh(), nn.Linear(n_feat, n_feat))

    def forward(self, x):
        return self.nf(self.feature_extractor(x))


def get_loss(z):
    return torch.mean(0.5 * torch.sum(z ** 2, dim=1))


def evaluate(model, test_loader):
    model.eval()
    test_z, test_loss, test_labels = [], [], []
    with torch.no_grad():
        for inputs, labels in test_loader:
            inputs = inputs.to(device).view(-1, 3, 224, 224)
            z = model(inputs)
            loss = get_loss(z)
            test_z.append(z)  # leak: ANY
            test_loss.append(t2np(loss))
            test_labels.append(t2np(labels))
    test_labels = np.concatenate(test_labels)
    is_anomaly = np.array([0 if label == 0 else 1 for label in test_labels])
    z_grouped = torch.cat(test_z, dim=0).view(-1, n_transforms_test, n_feat)
    anomaly_score = t2np(torch.mean(z_grouped ** 2, dim=(-2, -1)))
    return roc_auc_score(is_anomaly, anomaly_score), float(np.mean(test_loss))


if __name__ == "__main__":
    model = FastFlow().to(device)
    # each test image is augmented n_transforms_test times
    test_loader = [(torch.rand(1, n_transforms_test, 3, 224, 224), torch.randint(0, 2, (1,))) for _ in range(500)]
    auroc, test_loss = evaluate(model, test_loader)
    print(f"AUROC {auroc:.4f} test loss {test_loss:.4f}")
