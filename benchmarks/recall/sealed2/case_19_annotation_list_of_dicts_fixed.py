# Fixed twin of case 19: the annotation infos are pickled into one flat uint8 buffer with offsets (the PR's approach).
# Thread: https://github.com/tier4/autoware-ml/pull/78
# Reported: multi-GPU StreamPETR training (2 GPUs x 32 workers) killed by the Linux OOM killer:
#   system RAM, not CUDA memory, is exhausted.
# Confirmed cause: the merged PR: `self.data_infos: list[dict]` is read by every forked DataLoader
#   worker; touching the objects updates their reference counts, which dirties the shared pages, so
#   copy-on-write gives each worker its own copy of the whole annotation set; the fix stores the
#   annotations serialized in one flat buffer with offsets (fork-shared, no per-object refcounts).
# Class: copy-on-read of a list of dicts held by a Dataset read by DataLoader workers
import pickle

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class StreamPETRDataset(Dataset):
    def __init__(self, ann_file, pipeline, queue_length=1):
        with open(ann_file, "rb") as fh:
            data = pickle.load(fh)
        infos = sorted(data["infos"], key=lambda e: e["timestamp"])
        serialized = [np.frombuffer(pickle.dumps(info, protocol=-1), dtype=np.uint8) for info in infos]
        self._addr = torch.from_numpy(np.cumsum([len(s) for s in serialized], dtype=np.int64))
        self._buffer = torch.from_numpy(np.concatenate(serialized))
        del infos, serialized, data
        self.pipeline = pipeline
        self.queue_length = queue_length

    def __len__(self):
        return len(self._addr)

    def _info(self, index):
        start = 0 if index == 0 else int(self._addr[index - 1])
        end = int(self._addr[index])
        return pickle.loads(self._buffer[start:end].numpy().tobytes())

    def get_data_info(self, index):
        info = self._info(index)
        return {
            "sample_idx": info["token"],
            "img_filename": [cam["data_path"] for cam in info["cams"].values()],
            "lidar2img": [np.asarray(cam["lidar2img"], dtype=np.float32) for cam in info["cams"].values()],
            "gt_bboxes_3d": np.asarray(info["gt_boxes"], dtype=np.float32),
            "gt_labels_3d": np.asarray(info["gt_labels"], dtype=np.int64),
            "timestamp": info["timestamp"] / 1e6,
        }

    def __getitem__(self, index):
        return self.pipeline(self.get_data_info(index))


def build_train_loader(ann_file, pipeline, batch_size=2, num_workers=32):
    dataset = StreamPETRDataset(ann_file, pipeline)
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=num_workers,
                      persistent_workers=False, pin_memory=True, collate_fn=lambda b: b)
