# Fixed twin of case 11: call torch.cuda.set_device(local_rank) first and pass map_location to torch.load
# Thread: https://github.com/NVIDIA/apex/issues/222
# Reported: with 4 GPUs and apex DDP, the processes on GPUs 1-3 each use almost 1 GB on GPU 0 (nvidia-smi)
# Confirmed cause: the reporter, after fixing it: parameters were loaded before the current CUDA device was set, and map_location had to be passed to the torch.load calls after set_device; the apex maintainer (mcarilli) lists both culprits (no set_device at process start, loading a rank-0-saved checkpoint without map_location)
# Class: torch.load without map_location restores tensors onto the saving device (cuda:0) in every rank
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from apex.parallel import DistributedDataParallel as DDP


def build_model():
    return nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 1000))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="checkpoint.pth.tar")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])

    torch.cuda.set_device(local_rank)
    model = build_model()
    checkpoint = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda(local_rank))
    model.load_state_dict(checkpoint["state_dict"])

    dist.init_process_group(backend="nccl", init_method="env://")
    model = DDP(model.cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    optimizer.load_state_dict(checkpoint["optimizer"])
    start_epoch = checkpoint["epoch"]
    return model, optimizer, start_epoch


if __name__ == "__main__":
    main()
