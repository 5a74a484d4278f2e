# Fixed twin of case 17: per-slice bookkeeping is stored in numpy arrays that the forked workers share instead of Python lists/dicts
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
        self.slice_index = np.array(
            [(case, z) for case in range(n_cases) for z in range(slices_per_case)], dtype=np.int32
        )
        # columns: spacing_x, spacing_y, spacing_z, mean, std
        self.case_meta = np.tile(np.array([1.0, 1.0, 1.0, 0.0, 1.0], dtype=np.float32), (n_cases, 1))

    def __len__(self):
        return len(self.slice_index)

    def _load_slice(self, case: int, z: int) -> Tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(case * 1000 + z)
        return rng.standard_normal((4, 240, 240), dtype=np.float32), rng.integers(0, 4, (240, 240))

    def __getitem__(self, idx):
        case, z = self.slice_index[idx]
        mean, std = self.case_meta[int(case), 3], self.case_meta[int(case), 4]
        image, label = self._load_slice(int(case), int(z))
        image = (image - mean) / std
        return torch.from_numpy(image), torch.from_numpy(label).long()


if __name__ == "__main__":
    ds = DecathlonDataset("/data/Task01_BrainTumour")
    loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=16, persistent_workers=True)
    for epoch in range(50):
        for images, labels in loader:
            pass
