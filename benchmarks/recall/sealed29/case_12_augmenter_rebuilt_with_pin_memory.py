# Thread: https://github.com/MIC-DKFZ/batchgenerators/issues/14
# Reported: host RAM overflows when a MultiThreadedAugmenter with pin_memory=True is used; the
#   pin-memory processes it starts appear never to be stopped.
# Confirmed cause: the maintainer: "there can be a memory leak if you repeatedly delete and re
#   instantiate the multithreaded augmenter" with pin_memory on; until fixed, "don't reinstantiate it
#   or use pin_memory=False".
# Class: data-loading workers with pin_memory rebuilt every epoch
import torch
from batchgenerators.dataloading.multi_threaded_augmenter import MultiThreadedAugmenter


def train(network, optimizer, dl_train, tr_transforms, num_epochs, num_batches_per_epoch):
    criterion = torch.nn.CrossEntropyLoss()
    for epoch in range(num_epochs):
        tr_gen = MultiThreadedAugmenter(dl_train, tr_transforms, num_processes=4,  # leak: ANY
                                        num_cached_per_queue=2, pin_memory=True)
        network.train()
        for _ in range(num_batches_per_epoch):
            batch = next(tr_gen)
            data = torch.from_numpy(batch["data"]).float().cuda(non_blocking=True)
            target = torch.from_numpy(batch["seg"]).long().cuda(non_blocking=True)
            optimizer.zero_grad()
            loss = criterion(network(data), target[:, 0])
            loss.backward()
            optimizer.step()
        del tr_gen
