# Recall case 17 (sealed6): slice-level segmentation dataset keeps large Python lists/dicts that every DataLoader worker ends up copying
# Thread: https://github.com/HealthML/active-segmentation/pull/142
# Reported: huge (host) memory consumption when training on some Medical Decathlon datasets (issue #135)
# Confirmed cause: the dataset's per-slice bookkeeping lived in Python lists and dicts, which are duplicated per worker process (refcount writes defeat copy-on-write); merged PR makes these containers shared between the worker processes (here: compact numpy arrays)
# Class: Dataset holding big Python list/dict metadata read from num_workers > 0 DataLoader workers
import os
from typing import Dict, List, Tuple

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class DecathlonDataset(Dataset):
    def __init__(self, root: str, n_cases: int = 400, slices_per_case: int = 155):
        self.image_paths: List[str] = [os.path.join(root, f"imagesTr/case_{i:04d}.nii.gz") for i in range(n_cases)]
        self.label_paths: List[str] = [p.replace("imagesTr", "labelsTr") for p in self.image_paths]
        # one entry per 2D slice: (case index, slice index)
        self.slice_index: List[Tuple[int, int]] = [  # leak: ANY
            (case, z) for case in range(n_cases) for z in range(slices_per_case)
        ]
        self.case_meta: Dict[int, Dict[str, float]] = {  # leak: ANY
            case: {"spacing_x": 1.0, "spacing_y": 1.0, "spacing_z": 1.0, "mean": 0.0, "std": 1.0}
            for case in range(n_cases)
        }

    def __len__(self):
        return len(self.slice_index)

    def _load_slice(self, case: int, z: int) -> Tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(case * 1000 + z)
        return rng.standard_normal((4, 240, 240), dtype=np.float32), rng.integers(0, 4, (240, 240))

    def __getitem__(self, idx):
        case, z = self.slice_index[idx]
        meta = self.case_meta[int(case)]
        image, label = self._load_slice(int(case), int(z))
        image = (image - meta["mean"]) / meta["std"]
        return torch.from_numpy(image), torch.from_numpy(label).long()


if __name__ == "__main__":
    ds = DecathlonDataset("/data/Task01_BrainTumour")
    loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=16, persistent_workers=True)
    for epoch in range(50):
        for images, labels in loader:
            pass
