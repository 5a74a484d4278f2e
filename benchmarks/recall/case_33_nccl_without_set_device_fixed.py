# Fixed twin of case 33: the merged fix, set_device(LOCAL_RANK) before the process group.
# Thread: https://github.com/pytorch/examples/pull/1142
# Reported: the DDP tutorial scripts (minGPT-ddp, multigpu_torchrun) use extra memory on GPU 0
#   and can hang.
# Confirmed cause: `ddp_setup()` only calls `init_process_group(backend="nccl")`; without
#   `torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))` every rank's default device is GPU 0
#   ("The recommended best practice to avoid hangs and high memory utilization on GPU:0 is to
#   set_device(i)"; merged).
# Class: NCCL process group with no set_device
import os

import torch
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def ddp_setup():
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    init_process_group(backend="nccl")


class GPTTrainer:
    def __init__(self, model, optimizer, train_dataset, batch_size, grad_norm_clip=1.0):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.global_rank = int(os.environ["RANK"])
        self.model = DDP(model.to(self.local_rank), device_ids=[self.local_rank])
        self.optimizer = optimizer
        self.grad_norm_clip = grad_norm_clip
        self.loader = DataLoader(train_dataset, batch_size=batch_size, pin_memory=True,
                                 shuffle=False, sampler=DistributedSampler(train_dataset))

    def run_epoch(self, epoch):
        self.loader.sampler.set_epoch(epoch)
        for source, targets in self.loader:
            source, targets = source.to(self.local_rank), targets.to(self.local_rank)
            _, loss = self.model(source, targets)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_norm_clip)
            self.optimizer.step()
        torch.distributed.barrier()


def main(model, optimizer, dataset, epochs=10, batch_size=32):
    ddp_setup()
    trainer = GPTTrainer(model, optimizer, dataset, batch_size)
    for epoch in range(epochs):
        trainer.run_epoch(epoch)
    destroy_process_group()
