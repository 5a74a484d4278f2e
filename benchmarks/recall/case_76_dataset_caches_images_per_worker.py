# Recall case 76: a Dataset caches every image it loads, separately in each DataLoader worker
# Thread: https://github.com/ultralytics/yolov3/issues/642
# Reported: training with image caching on a large dataset (6k+ images, 32 GB RAM) fills the
#   machine's memory and training gets stuck.
# Confirmed cause: the maintainer (glenn-jocher): the dataset caches each image after loading it
#   (`self.imgs[index] = img` in `load_image`), and "each dataloader worker is caching images
#   independently of the others", so with N workers the process tree tries to hold N copies of
#   the image set in RAM. Loading without the per-worker write (caching, if at all, up front in
#   the main process) avoids it.
# Class: per-item cache filled inside DataLoader workers (one copy per worker)
import os

import cv2
import numpy as np
import torch
from torch.utils.data import Dataset, DataLoader


class LoadImagesAndLabels(Dataset):
    def __init__(self, path, img_size=416, augment=False):
        with open(path, "r") as f:
            self.img_files = [x.strip() for x in f.read().splitlines() if x.strip()]
        self.label_files = [os.path.splitext(x.replace("images", "labels"))[0] + ".txt"
                            for x in self.img_files]
        self.img_size = img_size
        self.augment = augment
        self.imgs = [None] * len(self.img_files)
        self.labels = [np.loadtxt(f, ndmin=2, dtype=np.float32) if os.path.isfile(f)
                       else np.zeros((0, 5), dtype=np.float32) for f in self.label_files]

    def __len__(self):
        return len(self.img_files)

    def __getitem__(self, index):
        img = load_image(self, index)
        labels = self.labels[index].copy()
        img = img[:, :, ::-1].transpose(2, 0, 1)
        img = np.ascontiguousarray(img, dtype=np.float32) / 255.0
        return torch.from_numpy(img), torch.from_numpy(labels), self.img_files[index]


def load_image(self, index):
    img = self.imgs[index]
    if img is None:
        img = cv2.imread(self.img_files[index])
        assert img is not None, "Image Not Found " + self.img_files[index]
        r = self.img_size / max(img.shape)
        if r < 1:
            h, w = img.shape[:2]
            img = cv2.resize(img, (int(w * r), int(h * r)), interpolation=cv2.INTER_AREA)
        self.imgs[index] = img  # leak: ANY
    return img


def make_loader(path, batch_size=16, workers=8):
    dataset = LoadImagesAndLabels(path)
    return DataLoader(dataset, batch_size=batch_size, num_workers=workers, shuffle=True,
                      pin_memory=True, collate_fn=lambda b: b)
