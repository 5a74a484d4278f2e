# Recall case 22: a Dataset moves each sample to the GPU at the end of __getitem__
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
    def __init__(self, paths, labels, device="cuda"):
        self.paths = np.array(paths)
        self.labels = np.array(labels)
        self.device = device
        self.transform = transforms.Compose([transforms.Resize(256), transforms.ToTensor()])

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, idx):
        image = self.transform(Image.open(self.paths[idx]).convert("RGB"))
        label = torch.tensor(self.labels[idx])
        return image.to(self.device), label.to(self.device)  # leak: ML204


def train(model, paths, labels, epochs=10):
    loader = DataLoader(SlideTiles(paths, labels), batch_size=64, shuffle=True, num_workers=8)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    model.cuda().train()
    for epoch in range(epochs):
        for image, label in loader:
            loss = torch.nn.functional.cross_entropy(model(image), label)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
