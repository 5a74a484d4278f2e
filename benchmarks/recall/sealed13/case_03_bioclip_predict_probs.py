# Recall case 03 (sealed13): a CLIP classifier's predict() keeps every image's probability row as a GPU tensor until the whole dataset is done
# Thread: https://github.com/Imageomics/pybioclip/pull/144
# Reported: TreeOfLifeClassifier.predict on >10,000 images exhausted a 32 GB GPU at about 65% of the dataset (issue #145 by the same reporter)
# Confirmed cause: probabilities returned per batch stay on the device and are stored in the result dict for every image; merged fix moves them off with probs.detach().cpu() before building results
# Class: predict loop storing per-sample GPU tensors in a result container across all batches
from typing import Dict, List

import torch
import torch.nn as nn
import torch.nn.functional as F


class BaseClassifier(nn.Module):
    def __init__(self, image_encoder: nn.Module, txt_features: torch.Tensor, device="cuda"):
        super().__init__()
        self.device = device
        self.image_encoder = image_encoder.to(device).eval()
        self.txt_features = txt_features.to(device)  # (D, num_classes)

    @torch.no_grad()
    def create_image_features(self, images: List[torch.Tensor]) -> torch.Tensor:
        batch = torch.stack(images).to(self.device)
        feats = self.image_encoder(batch)
        return F.normalize(feats, dim=-1)

    @torch.no_grad()
    def create_probabilities(self, img_features, txt_features) -> torch.Tensor:
        logits = 100.0 * img_features @ txt_features
        return logits.softmax(dim=-1)

    def create_probabilities_for_images(self, images: List[torch.Tensor], keys: List[str]) -> Dict[str, torch.Tensor]:
        img_features = self.create_image_features(images)
        probs = self.create_probabilities(img_features, self.txt_features)  # leak: ANY
        result = {}
        for i, key in enumerate(keys):
            result[key] = probs[i]  # leak: ANY
        return result

    def predict(self, images: List[torch.Tensor], keys: List[str], batch_size: int = 32):
        all_probs = {}
        for start in range(0, len(images), batch_size):
            chunk = images[start:start + batch_size]
            chunk_keys = keys[start:start + batch_size]
            all_probs.update(self.create_probabilities_for_images(chunk, chunk_keys))
        predictions = []
        for key, p in all_probs.items():
            top = p.topk(5)
            predictions.append({"file_name": key, "classes": top.indices.tolist(), "scores": top.values.tolist()})
        return predictions


if __name__ == "__main__":
    encoder = nn.Sequential(nn.Conv2d(3, 64, 7, 4), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 512))
    txt = F.normalize(torch.randn(512, 450000), dim=0)
    clf = BaseClassifier(encoder, txt)
    imgs = [torch.randn(3, 224, 224) for _ in range(10000)]
    preds = clf.predict(imgs, [f"img_{i}.jpg" for i in range(len(imgs))])
    print(len(preds))
