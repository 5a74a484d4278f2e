# Fixed twin of case 11: boxes and labels are packed into two flat tensors with cumulative offsets; workers slice tensors instead of touching per-row Python objects
# Thread: https://github.com/eora-ai/torchok/pull/181
# Reported: host RAM kept growing while training detection with 8 workers per loader ("Partially fix problem with memory leak")
# Confirmed cause: object columns (one numpy array per row) are touched per sample in each forked worker, so refcount writes copy the pages (copy-on-read); merged fix stores labels/bboxes as two flat tensors plus cumulative offsets and slices them in get_raw
# Class: DataLoader dataset holding many small Python objects read by forked workers
import json

import numpy as np
import pandas as pd
import torch
from torch.utils.data import DataLoader, Dataset


class DetectionDataset(Dataset):
    def __init__(self, annotation_path: str, input_column="image_path", target_column="label",
                 bbox_column="bbox"):
        self.input_column = input_column
        self.target_column = target_column
        self.bbox_column = bbox_column
        df = pd.read_csv(annotation_path)
        df[bbox_column] = df[bbox_column].apply(json.loads)
        df[target_column] = df[target_column].apply(json.loads)
        self.image_paths = df.pop(input_column)
        labels = [torch.tensor(row, dtype=torch.long) for row in df[target_column]]
        bboxes = [torch.tensor(row, dtype=torch.float32).reshape(-1, 4) for row in df[bbox_column]]
        self.lengths = torch.cumsum(torch.tensor([len(i) for i in labels]), dim=0)
        self.labels = torch.cat(labels)
        self.bboxes = torch.cat(bboxes)

    def __len__(self) -> int:
        return len(self.image_paths)

    def _read_image(self, path):
        return torch.zeros(3, 640, 640)

    def get_raw(self, idx: int) -> dict:
        image = self._read_image(self.image_paths.iloc[idx])
        sample = {"image": image, "index": idx}
        region_end = self.lengths[idx]
        region_start = self.lengths[idx - 1] if idx else 0
        sample["label"] = self.labels[region_start:region_end]
        sample["bboxes"] = self.bboxes[region_start:region_end]
        return sample

    def __getitem__(self, idx: int) -> dict:
        return self.get_raw(idx)


def collate(batch):
    return {"image": torch.stack([b["image"] for b in batch]),
            "label": [b["label"] for b in batch], "bboxes": [b["bboxes"] for b in batch]}


if __name__ == "__main__":
    ds = DetectionDataset("coco_train.csv")
    loader = DataLoader(ds, batch_size=16, num_workers=8, shuffle=True, collate_fn=collate)
    for epoch in range(25):
        for batch in loader:
            pass
