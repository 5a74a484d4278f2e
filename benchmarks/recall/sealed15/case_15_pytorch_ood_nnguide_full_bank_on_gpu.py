# Recall case 15 (sealed15): pytorch-ood NNGuide.fit_features builds the whole (n, d) feature / logit / normalised bank on the GPU at once
# Thread: https://github.com/kkirchheim/pytorch-ood/pull/159
# Reported: OOM when fitting on ImageNet-1K (1.28M rows): 'Tried to allocate 9.78 GiB ... 33.74 GiB memory in use'; fine on CIFAR-sized sets
# Confirmed cause: the maintainer's merged PR: fit_features materialised the full feature, logit and energy-scaled normalised tensors on the device simultaneously, so peak memory scaled with n; it was rewritten as two chunked passes so peak GPU memory scales with batch_size (about 34 GiB down to about 0.13 GB)
# Class: whole-dataset tensors moved to / built on the GPU in one piece
import torch
import torch.nn.functional as F


class NNGuide:
    def __init__(self, model, k=100, alpha=1.0):
        self.model = model
        self.k = k
        self.alpha = alpha
        self.bank = None

    def fit_features(self, features, logits, device="cpu", batch_size=4096):
        features = features.to(device)  # leak: ANY
        logits = logits.to(device)
        energy = torch.logsumexp(logits, dim=1)
        normed = F.normalize(features, p=2, dim=1)
        self.bank = normed * energy[:, None]
        return self

    def predict_features(self, features, logits):
        bank = self.bank.to(features.device)
        sim = F.normalize(features, p=2, dim=1) @ bank.T
        guidance = sim.topk(self.k, dim=1).values.mean(1)
        return -(torch.logsumexp(logits, dim=1) * guidance)


if __name__ == "__main__":
    n, d, c = 1281167, 2048, 1000
    feats = torch.randn(n, d)
    logits = torch.randn(n, c)
    detector = NNGuide(model=None).fit_features(feats, logits, device="cuda")
