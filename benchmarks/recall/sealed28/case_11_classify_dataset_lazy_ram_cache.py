# Thread: https://github.com/ultralytics/ultralytics/pull/24670
# Reported: classification training with cache='ram' (issue #9824) grows host RAM every epoch
#   (3 GB, 6, 11, 15 ... 50 GB) until the run is killed; without caching RAM stays flat.
# Confirmed cause: ClassificationDataset.__getitem__ decoded each image lazily and wrote it back into
#   self.samples[i][3]; under num_workers > 0 every (persistent) DataLoader worker fills its own
#   copy-on-write copy of the list, so the cache is duplicated per worker. The merged PR decodes all
#   images once in the main process into one uint8 buffer pinned with share_memory_() before the
#   workers fork, and __getitem__ only reads views of it.
# Class: DataLoader workers keeping per-worker copies of cached samples
from pathlib import Path

import cv2
import numpy as np
import torch
import torchvision
from torch.utils.data import DataLoader, Dataset


class ClassificationDataset(Dataset):
    def __init__(self, root, args, augment=False, prefix=""):
        self.base = torchvision.datasets.ImageFolder(root=root)
        self.samples = self.base.samples  # [(file, class_index), ...]
        self.prefix = prefix
        self.cache_ram = args.cache is True or str(args.cache).lower() == "ram"
        self.cache_disk = str(args.cache).lower() == "disk"
        self.samples = [list(x) + [Path(x[0]).with_suffix(".npy"), None] for x in self.samples]  # file, cls, npy, im
        self.torch_transforms = torchvision.transforms.Compose(
            [
                torchvision.transforms.ToPILImage(),
                torchvision.transforms.Resize((args.imgsz, args.imgsz)),
                torchvision.transforms.ToTensor(),
            ]
        )

    def __getitem__(self, i):
        f, j, fn, im = self.samples[i]  # filename, class index, npy path, cached image
        if self.cache_ram:
            if im is None:
                im = self.samples[i][3] = cv2.imread(f)  # leak: ANY
        elif self.cache_disk:
            if not fn.exists():
                np.save(fn.as_posix(), cv2.imread(f), allow_pickle=False)
            im = np.load(fn)
        else:
            im = cv2.imread(f)
        sample = self.torch_transforms(cv2.cvtColor(im, cv2.COLOR_BGR2RGB))
        return {"img": sample, "cls": j}

    def __len__(self):
        return len(self.samples)


def build_dataloader(dataset, batch, workers, shuffle=True):
    # like ultralytics' InfiniteDataLoader: the same worker processes serve every epoch
    return DataLoader(
        dataset,
        batch_size=batch,
        shuffle=shuffle,
        num_workers=workers,
        pin_memory=True,
        persistent_workers=workers > 0,
    )


def train(model, args, device="cuda"):
    dataset = ClassificationDataset(args.data, args, augment=True)
    loader = build_dataloader(dataset, args.batch, args.workers)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr0, momentum=0.9)
    criterion = torch.nn.CrossEntropyLoss()
    model.to(device).train()
    for epoch in range(args.epochs):
        for batch in loader:
            imgs = batch["img"].to(device, non_blocking=True)
            cls = batch["cls"].to(device)
            loss = criterion(model(imgs), cls)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
