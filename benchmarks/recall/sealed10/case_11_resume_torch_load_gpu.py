# Recall case 11 (sealed10): resuming training loads a GPU-saved checkpoint straight onto the GPU while the model already lives there
# Thread: https://github.com/pytorch/pytorch/issues/7415
# Reported: memory surges (roughly doubles) when loading an already trained model
# Confirmed cause: torch.load restores the saved CUDA storages onto the GPU, so the checkpoint tensors and the model's parameters coexist on the device; maintainers (ailzhang after discussion with SsnL and colesbury) recommend loading to CPU first (map_location='cpu') and then load_state_dict
# Class: torch.load of a checkpoint onto the GPU next to an already-placed model
import argparse
import os

import torch
import torch.nn as nn


def build_model():
    return nn.Sequential(*[nn.Linear(8192, 8192) for _ in range(12)])


def save_checkpoint(model, optimizer, epoch, path):
    torch.save({"epoch": epoch, "state_dict": model.state_dict(), "optimizer": optimizer.state_dict()}, path)


def resume(model, optimizer, path):
    checkpoint = torch.load(path)  # leak: ANY
    model.load_state_dict(checkpoint["state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint["epoch"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="checkpoint.pth.tar")
    parser.add_argument("--epochs", type=int, default=90)
    args = parser.parse_args()
    model = build_model().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    start_epoch = 0
    if os.path.isfile(args.resume):
        start_epoch = resume(model, optimizer, args.resume)
    for epoch in range(start_epoch, args.epochs):
        x = torch.randn(64, 8192, device="cuda")
        loss = model(x).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        save_checkpoint(model, optimizer, epoch + 1, args.resume)


if __name__ == "__main__":
    main()
