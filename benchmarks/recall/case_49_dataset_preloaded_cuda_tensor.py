# Recall case 49: a Dataset preloads a tensor file saved from the GPU, without map_location
# Thread: https://github.com/pytorch/pytorch/issues/40403
# Reported: "Cannot re-initialize CUDA in forked subprocess" from the DataLoader workers.
# Confirmed cause: the commenter: "The problem for me was caused by a torch.Tensor that was
#   preloaded into my dataset. I finally fixed it by adding map_location="cpu" to torch.load()":
#   the tensors came back on the GPU they were saved from, and the forked workers touched them.
# Class: torch.load without map_location, feeding DataLoader workers
import torch
from torch.utils.data import DataLoader, Dataset


class PrecomputedFeatures(Dataset):
    def __init__(self, feature_file, label_file):
        self.features = torch.load(feature_file)  # leak: ML203,ML204
        self.labels = torch.load(label_file, map_location="cpu")

    def __len__(self):
        return self.features.shape[0]

    def __getitem__(self, idx):
        return self.features[idx], self.labels[idx]


def train_probe(probe, feature_file, label_file, epochs=20):
    loader = DataLoader(PrecomputedFeatures(feature_file, label_file), batch_size=512, shuffle=True, num_workers=4)
    optimizer = torch.optim.SGD(probe.parameters(), lr=0.1, momentum=0.9)
    probe.cuda()
    for epoch in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(probe(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
