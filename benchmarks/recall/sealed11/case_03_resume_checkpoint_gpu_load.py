# Recall case 03 (sealed11): resuming training loads the whole checkpoint (weights + optimizer state) onto the GPU next to the live model
# Thread: https://github.com/huggingface/pytorch-image-models/pull/23
# Reported: CUDA out of memory when resuming / loading a checkpoint with train.py, although training itself fit
# Confirmed cause: load_checkpoint/resume_checkpoint called torch.load(checkpoint_path) with no map_location, so all saved CUDA tensors are materialised on the GPU a second time; the merged PR loads onto the CPU (map_location='cpu')
# Class: torch.load of a GPU-saved checkpoint without map_location while the model already lives on the GPU
import argparse
import logging
import os
from collections import OrderedDict

import torch
import torch.nn as nn
import torchvision


def load_checkpoint(model, checkpoint_path, use_ema=False):
    if checkpoint_path and os.path.isfile(checkpoint_path):
        checkpoint = torch.load(checkpoint_path, weights_only=False)  # leak: ANY
        state_dict_key = ""
        if isinstance(checkpoint, dict):
            state_dict_key = "state_dict"
            if use_ema and "state_dict_ema" in checkpoint:
                state_dict_key = "state_dict_ema"
        if state_dict_key and state_dict_key in checkpoint:
            new_state_dict = OrderedDict()
            for k, v in checkpoint[state_dict_key].items():
                name = k[7:] if k.startswith("module") else k
                new_state_dict[name] = v
            model.load_state_dict(new_state_dict)
        else:
            model.load_state_dict(checkpoint)
        logging.info("Loaded %s from checkpoint '%s'", state_dict_key or "weights", checkpoint_path)
    else:
        raise FileNotFoundError(checkpoint_path)


def resume_checkpoint(model, checkpoint_path):
    optimizer_state = None
    resume_epoch = None
    if os.path.isfile(checkpoint_path):
        checkpoint = torch.load(checkpoint_path, weights_only=False)  # leak: ANY
        if isinstance(checkpoint, dict) and "state_dict" in checkpoint:
            new_state_dict = OrderedDict()
            for k, v in checkpoint["state_dict"].items():
                name = k[7:] if k.startswith("module") else k
                new_state_dict[name] = v
            model.load_state_dict(new_state_dict)
            if "optimizer" in checkpoint:
                optimizer_state = checkpoint["optimizer"]
            if "epoch" in checkpoint:
                resume_epoch = checkpoint["epoch"] + 1
        else:
            model.load_state_dict(checkpoint)
        return optimizer_state, resume_epoch
    raise FileNotFoundError(checkpoint_path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--epochs", type=int, default=90)
    args = parser.parse_args()

    model = torchvision.models.resnet152(num_classes=1000).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)

    start_epoch = 0
    if args.resume:
        optimizer_state, resume_epoch = resume_checkpoint(model, args.resume)
        if optimizer_state is not None:
            optimizer.load_state_dict(optimizer_state)
        if resume_epoch is not None:
            start_epoch = resume_epoch

    criterion = nn.CrossEntropyLoss().cuda()
    for epoch in range(start_epoch, args.epochs):
        for _ in range(100):
            x = torch.randn(64, 3, 224, 224, device="cuda")
            y = torch.randint(0, 1000, (64,), device="cuda")
            loss = criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        torch.save({"epoch": epoch, "state_dict": model.state_dict(), "optimizer": optimizer.state_dict()},
                   "last.pth.tar")


if __name__ == "__main__":
    main()
