# Fixed twin of case 22: samples stay on the CPU; the loop moves each batch.
# Thread: https://github.com/pytorch/pytorch/issues/77159
# Reported: "Cannot re-initialize CUDA in forked subprocess" as soon as num_workers > 0, so teams
#   run with num_workers=0 and leave the GPU under-utilised.
# Confirmed cause: the custom Dataset "as a final step there they transfer the tensor into the
#   GPU"; workers are forked processes, and CUDA cannot be used there (spawn only trades the
#   error for one CUDA context per worker). Move the batch in the training loop instead.
# Class: CUDA inside a Dataset that DataLoader workers run
import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms


class SlideTiles(Dataset):
    def __init__(self, paths, labels):
        self.paths = np.array(paths)
        self.labels = np.array(labels)
        self.transform = transforms.Compose([transforms.Resize(256), transforms.ToTensor()])

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, idx):
        image = self.transform(Image.open(self.paths[idx]).convert("RGB"))
        label = torch.tensor(self.labels[idx])
        return image, label


def train(model, paths, labels, epochs=10):
    loader = DataLoader(SlideTiles(paths, labels), batch_size=64, shuffle=True, num_workers=8, pin_memory=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    model.cuda().train()
    for epoch in range(epochs):
        for image, label in loader:
            image, label = image.cuda(non_blocking=True), label.cuda(non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(image), label)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
