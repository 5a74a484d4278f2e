# Recall case 11 (sealed13): a detection dataset keeps per-image boxes/labels as numpy objects inside a pandas DataFrame that every DataLoader worker reads with df.iloc
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
        self.df = pd.read_csv(annotation_path)
        self.df[bbox_column] = self.df[bbox_column].apply(json.loads)
        self.df[target_column] = self.df[target_column].apply(json.loads)
        self.df[bbox_column] = self.df[bbox_column].apply(np.array)  # leak: ANY
        self.df[target_column] = self.df[target_column].apply(np.array)  # leak: ANY

    def __len__(self) -> int:
        return len(self.df)

    def _read_image(self, path):
        return torch.zeros(3, 640, 640)

    def get_raw(self, idx: int) -> dict:
        record = self.df.iloc[idx]  # leak: ANY
        image = self._read_image(record[self.input_column])
        sample = {"image": image, "index": idx}
        sample["label"] = torch.as_tensor(record[self.target_column])
        sample["bboxes"] = torch.as_tensor(record[self.bbox_column], dtype=torch.float32)
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
