# Thread: https://github.com/rundherum/pymia/issues/10
# Reported: when the DataLoader uses pymia's `collate_batch` as collate_fn, host memory grows gradually
#   over training until Python runs out of memory.
# Confirmed cause: the maintainer: the growth comes from the collate function putting the samples'
#   values into native Python lists inside the batch dictionary (the list/refcount behaviour tracked in
#   pytorch/pytorch#13246); the workaround is to turn each key's values into a numpy array.
# Class: collate function keeping per-sample objects in Python lists
import torch
from torch.utils.data import DataLoader


def collate_batch(batch: list) -> dict:
    new_batch = {}
    for key in batch[0]:
        new_batch[key] = [sample[key] for sample in batch]  # leak: ANY
    return new_batch


def train(model, dataset, optimizer, epochs, device="cuda"):
    loader = DataLoader(dataset, batch_size=16, shuffle=True, num_workers=4, collate_fn=collate_batch)
    criterion = torch.nn.CrossEntropyLoss()
    for epoch in range(epochs):
        for batch in loader:
            images = torch.as_tensor(batch["images"]).float().to(device)
            labels = torch.as_tensor(batch["labels"]).long().to(device)
            optimizer.zero_grad()
            loss = criterion(model(images), labels)
            loss.backward()
            optimizer.step()
