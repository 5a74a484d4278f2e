# Recall case 32: every DDP rank loads the training snapshot without map_location
# Thread: https://github.com/pytorch/examples/issues/1078
# Reported: resuming the DDP tutorial from a snapshot, GPU 0 uses significantly more memory
#   than the other GPUs.
# Confirmed cause: "torch.load() first loads the snapshot to CPU then moves to the device it
#   was saved from (I guess it's GPU0). In this case, all ranks load the snapshot to GPU0"
#   (reply in the thread, which asks for a PR); fix: `torch.load(path, map_location=f"cuda:{LOCAL_RANK}")`.
# Class: torch.load without map_location on every rank
import os

import torch
import torch.nn.functional as F
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, model, train_data, optimizer, save_every, snapshot_path):
        self.gpu_id = int(os.environ["LOCAL_RANK"])
        self.model = model.to(self.gpu_id)
        self.train_data = train_data
        self.optimizer = optimizer
        self.save_every = save_every
        self.epochs_run = 0
        self.snapshot_path = snapshot_path
        if os.path.exists(snapshot_path):
            self._load_snapshot(snapshot_path)
        self.model = DDP(self.model, device_ids=[self.gpu_id])

    def _load_snapshot(self, snapshot_path):
        snapshot = torch.load(snapshot_path)  # leak: ML203
        self.model.load_state_dict(snapshot["MODEL_STATE"])
        self.epochs_run = snapshot["EPOCHS_RUN"]

    def _save_snapshot(self, epoch):
        torch.save({"MODEL_STATE": self.model.module.state_dict(), "EPOCHS_RUN": epoch}, self.snapshot_path)

    def train(self, max_epochs):
        for epoch in range(self.epochs_run, max_epochs):
            self.train_data.sampler.set_epoch(epoch)
            for source, targets in self.train_data:
                source, targets = source.to(self.gpu_id), targets.to(self.gpu_id)
                self.optimizer.zero_grad()
                loss = F.cross_entropy(self.model(source), targets)
                loss.backward()
                self.optimizer.step()
            if self.gpu_id == 0 and epoch % self.save_every == 0:
                self._save_snapshot(epoch)


def main(model, train_data, optimizer, save_every, total_epochs, snapshot_path="snapshot.pt"):
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    init_process_group(backend="nccl")
    Trainer(model, train_data, optimizer, save_every, snapshot_path).train(total_epochs)
    destroy_process_group()
