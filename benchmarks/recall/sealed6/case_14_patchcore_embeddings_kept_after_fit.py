# Recall case 14 (sealed6): memory-bank model keeps the list of per-batch training embeddings on the GPU after fitting
# Thread: https://github.com/open-edge-platform/anomalib/pull/2813
# Reported: peak memory did not drop during validation for PatchCore/PaDiM; training embeddings stayed on device (memory plots in the PR)
# Confirmed cause: training_step appends every batch's embedding to self.embeddings and fit() stacks/subsamples them but never releases the list, so the full training embedding set (plus the stacked copy) stays allocated; merged maintainer PR deletes/clears the collected embeddings after fit
# Class: list of device tensors collected during an epoch and never cleared after use
import torch
import torch.nn.functional as F
from pytorch_lightning import LightningModule, Trainer
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torchvision.models import wide_resnet50_2


class PatchcoreModel(nn.Module):
    def __init__(self):
        super().__init__()
        backbone = wide_resnet50_2(weights=None)
        self.stem = nn.Sequential(backbone.conv1, backbone.bn1, backbone.relu, backbone.maxpool, backbone.layer1)
        self.layer2, self.layer3 = backbone.layer2, backbone.layer3
        self.register_buffer("memory_bank", torch.empty(0))

    def forward(self, images):
        with torch.no_grad():
            f1 = self.stem(images)
            f2 = self.layer2(f1)
            f3 = self.layer3(f2)
        f3 = F.interpolate(f3, size=f2.shape[-2:], mode="bilinear")
        emb = torch.cat([F.avg_pool2d(f2, 3, 1, 1), F.avg_pool2d(f3, 3, 1, 1)], dim=1)
        emb = emb.permute(0, 2, 3, 1).reshape(-1, emb.shape[1])
        if self.training:
            return emb
        dist = torch.cdist(emb, self.memory_bank).min(dim=1).values
        return dist.view(images.shape[0], -1).max(dim=1).values

    def subsample_embedding(self, embeddings, ratio):
        n = max(1, int(embeddings.shape[0] * ratio))
        idx = torch.randperm(embeddings.shape[0], device=embeddings.device)[:n]
        self.memory_bank = embeddings[idx].clone()


class Patchcore(LightningModule):
    def __init__(self, coreset_sampling_ratio=0.1):
        super().__init__()
        self.model = PatchcoreModel()
        self.coreset_sampling_ratio = coreset_sampling_ratio
        self.embeddings: list[torch.Tensor] = []

    def configure_optimizers(self):
        return None

    def training_step(self, batch, batch_idx):
        embedding = self.model(batch[0])
        self.embeddings.append(embedding)  # leak: ANY
        return None

    def fit(self) -> None:
        embeddings = torch.vstack(self.embeddings)
        self.model.subsample_embedding(embeddings, self.coreset_sampling_ratio)

    def on_validation_start(self) -> None:
        if self.model.memory_bank.numel() == 0:
            self.fit()

    def validation_step(self, batch, batch_idx):
        self.model.eval()
        scores = self.model(batch[0])
        self.log("val/max_score", scores.max())


if __name__ == "__main__":
    train = DataLoader(TensorDataset(torch.randn(2000, 3, 256, 256)), batch_size=32)
    val = DataLoader(TensorDataset(torch.randn(500, 3, 256, 256)), batch_size=32)
    Trainer(accelerator="gpu", devices=1, max_epochs=1, num_sanity_val_steps=0).fit(Patchcore(), train, val)
