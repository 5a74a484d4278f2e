# Fixed twin of case 15: stores the dataset dicts serialized in one shared torch uint8 tensor (_TorchSerializedList)
# Thread: https://github.com/facebookresearch/detectron2/pull/4721
# Reported: RAM usage of multi-GPU training with several data loader workers per GPU grows far beyond the dataset's size (the metadata is effectively replicated per worker process)
# Confirmed cause: reading elements of a list of Python objects in forked workers bumps their refcounts, so copy-on-write pages get copied into every worker (and numpy-backed storage is not shared under spawn/forkserver); the maintainer's change stores the dataset as pickled bytes in one torch uint8 tensor plus an offset tensor (_TorchSerializedList) so all workers share it
# Class: DataLoader dataset holding a large list/dict of Python objects read by num_workers > 0 workers (copy-on-read replication)
import json
import pickle

import numpy as np
import torch
import torch.utils.data as data


class _TorchSerializedList:
    """A list-like object whose items are pickled into one uint8 tensor; shareable across workers."""

    def __init__(self, lst):
        self._lst = [np.frombuffer(pickle.dumps(x, protocol=-1), dtype=np.uint8) for x in lst]
        self._addr = torch.from_numpy(np.cumsum(np.asarray([len(x) for x in self._lst], dtype=np.int64)))
        self._lst = torch.from_numpy(np.concatenate(self._lst))

    def __len__(self):
        return len(self._addr)

    def __getitem__(self, idx):
        start_addr = 0 if idx == 0 else self._addr[idx - 1].item()
        end_addr = self._addr[idx].item()
        return pickle.loads(memoryview(self._lst[start_addr:end_addr].numpy()))


class DatasetFromList(data.Dataset):
    """Wrap a list of dataset dicts (COCO-style annotations) as a torch Dataset."""

    def __init__(self, lst, copy=True):
        self._lst = _TorchSerializedList(lst)
        self._copy = copy

    def __len__(self):
        return len(self._lst)

    def __getitem__(self, idx):
        record = self._lst[idx]
        if self._copy:
            record = dict(record)
        return record


class MapDataset(data.Dataset):
    def __init__(self, dataset, map_func):
        self._dataset = dataset
        self._map_func = map_func

    def __len__(self):
        return len(self._dataset)

    def __getitem__(self, idx):
        return self._map_func(self._dataset[idx])


def load_coco_json(json_file):
    with open(json_file) as f:
        coco = json.load(f)
    anns_per_image = {}
    for ann in coco["annotations"]:
        anns_per_image.setdefault(ann["image_id"], []).append(
            {"bbox": ann["bbox"], "category_id": ann["category_id"], "segmentation": ann.get("segmentation")})
    return [{"file_name": img["file_name"], "height": img["height"], "width": img["width"],
             "image_id": img["id"], "annotations": anns_per_image.get(img["id"], [])} for img in coco["images"]]


def mapper(record):
    image = torch.zeros(3, record["height"] // 4, record["width"] // 4, dtype=torch.uint8)
    boxes = torch.tensor([a["bbox"] for a in record["annotations"]], dtype=torch.float32).reshape(-1, 4)
    return {"image": image, "boxes": boxes, "image_id": record["image_id"]}


def build_train_loader(json_file, batch_size=16, num_workers=8):
    dataset_dicts = load_coco_json(json_file)
    dataset = MapDataset(DatasetFromList(dataset_dicts, copy=False), mapper)
    return data.DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=num_workers,
                           collate_fn=lambda batch: batch, persistent_workers=True)


if __name__ == "__main__":
    loader = build_train_loader("datasets/coco/annotations/instances_train2017.json")
    for epoch in range(12):
        for it, batch in enumerate(loader):
            if it % 1000 == 0:
                print(epoch, it, len(batch))
