# Fixed twin of case 12: the records are pickled into one numpy byte buffer plus offsets, so workers share pages instead of copying Python objects
# Thread: https://github.com/facebookresearch/d2go/pull/405
# Reported: per-process RSS of GPU workers and data-loader workers far above the dataset size (about 21 GiB per GPU worker and 14 GiB per loader worker for a 2.4 GiB dataset)
# Confirmed cause: DatasetFromList held a plain list of Python dicts; reading items from forked workers touches refcounts and copies the pages into every process (copy-on-read); the change offloads the list into a serialized shared buffer (SharedList / NumpySerializedList), with before/after benchmark in the PR (landed internally via fb-exported diff)
# Class: DataLoader workers reading a large list of Python objects (copy-on-read)
import json
import pickle
import random

import numpy as np
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
        serialized = [np.frombuffer(pickle.dumps(x, protocol=-1), dtype=np.uint8) for x in lst]
        self._addr = np.cumsum(np.asarray([len(x) for x in serialized], dtype=np.int64))
        self._buf = np.concatenate(serialized)
        del serialized
        self._copy = copy

    def __len__(self):
        return len(self._addr)

    def __getitem__(self, idx):
        start = 0 if idx == 0 else int(self._addr[idx - 1])
        end = int(self._addr[idx])
        return pickle.loads(memoryview(self._buf[start:end]))


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
