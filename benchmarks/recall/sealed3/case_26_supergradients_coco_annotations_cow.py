# Recall case 26 (sealed3): a COCO-format detection dataset keeps per-image annotations as a Python list of dicts
# Thread: https://github.com/Deci-AI/super-gradients/pull/1885
# Reported: host RAM of DDP training with large datasets grows with every DataLoader worker until the machine OOMs
# Confirmed cause: the copy-on-read problem (pytorch#13246): workers touching refcounts of the list/dict objects copy
#   the pages; the PR stores the annotations as one serialized uint8 tensor plus offsets (detectron2's fix);
#   maintainers reviewing it agree ("a memory leak is a memory leak") - PR shown open (weaker)
# Class: DataLoader workers and copy-on-read of Python containers in the Dataset
import pickle

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


def parse_coco_into_detection_annotations(n_images):
    annotations = []
    rng = np.random.default_rng(0)
    for image_id in range(n_images):
        n_boxes = int(rng.integers(1, 60))
        annotations.append({
            "image_id": image_id,
            "img_path": f"images/{image_id:012d}.jpg",
            "bboxes_xyxy": rng.random((n_boxes, 4), dtype=np.float32) * 640,
            "labels": rng.integers(0, 80, n_boxes),
            "is_crowd": np.zeros(n_boxes, dtype=bool),
            "segmentation": [[float(v) for v in rng.random(64) * 640] for _ in range(n_boxes)],
        })
    return annotations


class COCOFormatDetectionDataset(Dataset):
    def __init__(self, n_images=2_000_000):
        annotations = parse_coco_into_detection_annotations(n_images)
        self._annotations = annotations  # leak: ANY

    def __len__(self):
        return len(self._annotations)

    def _load_annotation(self, sample_id: int) -> dict:
        annotation = self._annotations[sample_id]
        return annotation

    def __getitem__(self, index):
        ann = self._load_annotation(index)
        image = torch.zeros(3, 640, 640, dtype=torch.uint8)  # image decoding elided
        boxes = torch.from_numpy(ann["bboxes_xyxy"])
        return image, torch.cat([torch.from_numpy(ann["labels"]).float().unsqueeze(1), boxes], 1)


def collate(batch):
    images = torch.stack([b[0] for b in batch])
    targets = [b[1] for b in batch]
    return images, targets


if __name__ == "__main__":
    dataset = COCOFormatDetectionDataset()
    loader = DataLoader(dataset, batch_size=64, num_workers=16, shuffle=True, collate_fn=collate,
                        persistent_workers=True)
    for epoch in range(100):
        for images, targets in loader:
            pass
