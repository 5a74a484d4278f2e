# Fixed twin of case 28: the dataset keeps image paths and sample IDs in NumPy arrays instead of Python lists
# Thread: https://github.com/voxel51/fiftyone/issues/1442
# Reported: memory leak when computing predictions/embeddings with Torch models over large datasets with many workers
# Confirmed cause: maintainer (brimoor): the torch data loaders keep long Python lists (image_paths, sample_ids), whose per-element refcount updates in every forked worker trigger copy-on-write of the whole list (pytorch#13246); the follow-up PR #1444 (merged) stores them as NumPy arrays
# Class: DataLoader workers and copy-on-read of large Python lists held by the Dataset
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms
from torchvision.io import ImageReadMode, read_image


class TorchImageDataset(Dataset):
    def __init__(self, image_paths, sample_ids=None, transform=None):
        self.image_paths = np.array(image_paths)
        self.sample_ids = np.array(sample_ids) if sample_ids is not None else None
        self.transform = transform

    def __len__(self):
        return len(self.image_paths)

    def __getitem__(self, idx):
        img = read_image(str(self.image_paths[idx]), mode=ImageReadMode.RGB)
        if self.transform is not None:
            img = self.transform(img)
        if self.sample_ids is not None:
            return img, str(self.sample_ids[idx])
        return img, idx


def compute_embeddings(model, image_paths, sample_ids, batch_size=64, num_workers=32, device="cuda"):
    transform = transforms.Compose([transforms.Resize((224, 224), antialias=True), transforms.ConvertImageDtype(torch.float32)])
    dataset = TorchImageDataset(image_paths, sample_ids=sample_ids, transform=transform)
    loader = DataLoader(dataset, batch_size=batch_size, num_workers=num_workers, shuffle=False)
    model = model.to(device).eval()
    embeddings, ids = [], []
    with torch.no_grad():
        for imgs, batch_ids in loader:
            embeddings.append(model(imgs.to(device)).cpu().numpy())
            ids.extend(batch_ids)
    return ids, np.concatenate(embeddings)


if __name__ == "__main__":
    n = 5_000_000
    paths = [f"/data/coco/images/{i:012d}.jpg" for i in range(n)]
    ids = [f"{i:024x}" for i in range(n)]
    model = nn.Sequential(nn.Conv2d(3, 32, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
    compute_embeddings(model, paths, ids, num_workers=64)
