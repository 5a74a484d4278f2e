# Recall case 25: a Dataset keeps millions of Python strings in a list read by every worker
# Thread: https://github.com/pytorch/pytorch/issues/20433
# Reported: DataLoader's memory usage keeps increasing during one single epoch.
# Confirmed cause: the per-sample metadata is a Python list (`self.metadata = [...]`); each
#   worker's reads touch the objects' reference counts, so copy-on-write pages are copied into
#   every worker (the pure-Python repro in the thread, after pytorch/pytorch#13246); a numpy
#   array of the same data does not grow.
# Class: dataset samples held as Python objects, read by DataLoader workers (copy-on-read)
import json

import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms


class CaptionDataset(Dataset):
    def __init__(self, annotation_file, image_root):
        with open(annotation_file) as f:
            annotations = json.load(f)["annotations"]
        self.metadata = [(a["image_id"], a["caption"]) for a in annotations]  # leak: ML205
        self.image_root = image_root
        self.transform = transforms.Compose([transforms.Resize((224, 224)), transforms.ToTensor()])

    def __len__(self):
        return len(self.metadata)

    def __getitem__(self, index):
        image_id, caption = self.metadata[index]
        image = Image.open(f"{self.image_root}/{image_id:012d}.jpg").convert("RGB")
        return self.transform(image), caption


def make_loader(annotation_file, image_root):
    return DataLoader(CaptionDataset(annotation_file, image_root), batch_size=256,
                      shuffle=True, num_workers=16, pin_memory=True)
