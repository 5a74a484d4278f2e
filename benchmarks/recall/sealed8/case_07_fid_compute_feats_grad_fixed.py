# Fixed twin of case 07: compute_feats runs the feature extractor under torch.no_grad()
# Thread: https://github.com/photosynthesis-team/piq/issues/147
# Reported: "In current implementation of `_compute_feats` method in `BaseFeatureMetric` class gradients are preserved,
#   which may lead to big memory consumption"
# Confirmed cause: filed and labelled "bug" by a maintainer; fix = run feature extraction under torch.no_grad()
#   (PR https://github.com/photosynthesis-team/piq/pull/175; later releases show compute_feats wrapped by no_grad)
# Class: eval/metric helper runs a frozen network without no_grad and collects its outputs for the whole dataset
from typing import Optional

import torch
from torch import nn
from torch.utils.data import DataLoader
import torchvision


class InceptionV3Features(nn.Module):
    def __init__(self):
        super().__init__()
        net = torchvision.models.inception_v3(weights=torchvision.models.Inception_V3_Weights.DEFAULT, aux_logits=True)
        net.fc = nn.Identity()
        self.net = net.eval()

    def forward(self, x: torch.Tensor):
        return [self.net(x)]


class BaseFeatureMetric(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x_features: torch.Tensor, y_features: torch.Tensor) -> torch.Tensor:
        return self.compute_metric(x_features, y_features)

    @torch.no_grad()
    def compute_feats(self, loader: DataLoader, feature_extractor: Optional[nn.Module] = None,
                      device: str = "cuda") -> torch.Tensor:
        if feature_extractor is None:
            feature_extractor = InceptionV3Features()
        feature_extractor.to(device)
        feature_extractor.eval()
        total_feats = []
        for batch in loader:
            images = batch["images"].float().to(device)
            N = images.shape[0]
            features = feature_extractor(images)
            assert len(features) == 1, "feature_encoder must return list with features from one layer"
            total_feats.append(features[0].view(N, -1))
        return torch.cat(total_feats, dim=0)

    def compute_metric(self, x_features: torch.Tensor, y_features: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError


class FID(BaseFeatureMetric):
    def compute_metric(self, x_features: torch.Tensor, y_features: torch.Tensor) -> torch.Tensor:
        mu_x, mu_y = x_features.mean(0), y_features.mean(0)
        cov_x = torch.cov(x_features.T)
        cov_y = torch.cov(y_features.T)
        covmean = torch.linalg.eigvals(cov_x @ cov_y).sqrt().real.sum()
        return (mu_x - mu_y).pow(2).sum() + torch.trace(cov_x) + torch.trace(cov_y) - 2 * covmean


class DictDataset(torch.utils.data.Dataset):
    def __init__(self, n: int):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        return {"images": torch.rand(3, 299, 299)}


if __name__ == "__main__":
    first_dl = DataLoader(DictDataset(10000), batch_size=64)
    second_dl = DataLoader(DictDataset(10000), batch_size=64)
    fid_metric = FID()
    first_feats = fid_metric.compute_feats(first_dl)
    second_feats = fid_metric.compute_feats(second_dl)
    print(fid_metric(first_feats, second_feats))
