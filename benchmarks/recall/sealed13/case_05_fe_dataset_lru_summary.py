# Recall case 05 (sealed13): an in-memory dataset wraps its own bound summary() in a per-instance lru_cache, so every dataset object sits in a reference cycle with its data
# Thread: https://github.com/fastestimator/fastestimator/pull/1234
# Reported: "unwanted memory stickiness that comes from lru cache": datasets (and the arrays they hold) were not released when dropped, e.g. after split() or between runs
# Confirmed cause: `self.summary = lru_cache(maxsize=1)(self.summary)` stores a cache wrapping the bound method on the instance (instance -> cache -> bound method -> instance); merged fix replaces it with a plain `self._summary` attribute cleared on mutation
# Class: functools.lru_cache applied to a bound method and stored on the instance
from functools import lru_cache
from typing import Dict, List

import numpy as np
import torch
from torch.utils.data import Dataset


class DatasetSummary:
    def __init__(self, num_instances: int, keys: Dict[str, tuple]):
        self.num_instances = num_instances
        self.keys = keys


class InMemoryDataset(Dataset):
    def __init__(self, data: Dict[int, Dict[str, np.ndarray]]):
        self.data = data
        # make the summary cache per instance instead of shared by the class
        self.summary = lru_cache(maxsize=1)(self.summary)  # leak: ANY

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        return {k: torch.from_numpy(v) for k, v in self.data[index].items()}

    def summary(self) -> DatasetSummary:
        first = self.data[0]
        return DatasetSummary(len(self.data), {k: v.shape for k, v in first.items()})

    def __setitem__(self, key: str, value: List[np.ndarray]):
        for i in range(len(self.data)):
            self.data[i][key] = value[i]
        self.summary.cache_clear()

    def split(self, frac: float) -> "InMemoryDataset":
        n = int(len(self.data) * frac)
        taken = {i: self.data[i] for i in range(n)}
        self.data = {j: v for j, (i, v) in enumerate(list(self.data.items())[n:])}
        self.summary.cache_clear()
        return InMemoryDataset(taken)


def make_fold(seed: int) -> InMemoryDataset:
    rng = np.random.default_rng(seed)
    data = {i: {"x": rng.standard_normal((3, 128, 128), dtype=np.float32),
                "y": np.array(rng.integers(0, 10))} for i in range(4000)}
    return InMemoryDataset(data)


if __name__ == "__main__":
    for fold in range(10):
        train = make_fold(fold)
        val = train.split(0.2)
        print(fold, train.summary().num_instances, val.summary().num_instances)
        del train, val
