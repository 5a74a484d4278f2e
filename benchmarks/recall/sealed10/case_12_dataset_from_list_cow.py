# Recall case 12 (sealed10): a map-style dataset keeps its annotations as a Python list of dicts that every DataLoader worker touches
# Thread: https://github.com/facebookresearch/d2go/pull/405
# Reported: per-process RSS of GPU workers and data-loader workers far above the dataset size (about 21 GiB per GPU worker and 14 GiB per loader worker for a 2.4 GiB dataset)
# Confirmed cause: DatasetFromList held a plain list of Python dicts; reading items from forked workers touches refcounts and copies the pages into every process (copy-on-read); the change offloads the list into a serialized shared buffer (SharedList / NumpySerializedList), with before/after benchmark in the PR (landed internally via fb-exported diff)
# Class: DataLoader workers reading a large list of Python objects (copy-on-read)
import json
import random

import torch
from torch.utils.data import DataLoader, Dataset


def load_coco_json(n=1_000_000):
    return [
        {
            "file_name": f"img_{i:07d}.jpg",
            "height": 480,
            "width": 640,
            "annotations": [{"bbox": [random.random() * 600, random.random() * 400, 30.0, 40.0], "category_id": i % 80} for _ in range(7)],
        }
        for i in range(n)
    ]


class DatasetFromList(Dataset):
    def __init__(self, lst, copy=True):
        self._lst = lst  # leak: ANY
        self._copy = copy

    def __len__(self):
        return len(self._lst)

    def __getitem__(self, idx):
        record = self._lst[idx]
        return json.loads(json.dumps(record)) if self._copy else record


class MapDataset(Dataset):
    def __init__(self, dataset):
        self.dataset = dataset

    def __len__(self):
        return len(self.dataset)

    def __getitem__(self, idx):
        d = self.dataset[idx]
        image = torch.zeros(3, d["height"] // 4, d["width"] // 4)
        boxes = torch.tensor([a["bbox"] for a in d["annotations"]])
        return image, boxes


def collate(batch):
    return batch


if __name__ == "__main__":
    dataset = MapDataset(DatasetFromList(load_coco_json()))
    loader = DataLoader(dataset, batch_size=16, shuffle=True, num_workers=8, collate_fn=collate, persistent_workers=True)
    for epoch in range(12):
        for i, batch in enumerate(loader):
            if i == 2000:
                break
