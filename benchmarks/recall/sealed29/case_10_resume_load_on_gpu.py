# Thread: https://discuss.pytorch.org/t/multi-gpu-torch-load-out-of-memory/117775
# Reported: after pausing training and resuming from 'checkpoint/ckpt.t7', torch.load() itself runs out
#   of GPU memory, whether one GPU or two are used.
# Confirmed cause: the reporter, after fixing it: loading the checkpoint onto the CPU first
#   (map_location=torch.device("cpu")) and deleting the checkpoint dict once its state was copied into
#   the model let training resume; without it the saved CUDA tensors are materialised on the GPU a
#   second time next to the live model.
# Class: torch.load of a checkpoint onto the GPU it was saved from (resume)
import torch
import torch.nn as nn


def resume_training(model, optimizer, train_loader, num_epochs, device="cuda"):
    model.to(device)
    checkpoint = torch.load("checkpoint/ckpt.t7")  # leak: ANY
    model.load_state_dict(checkpoint["state"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    start_epoch = checkpoint["epoch"] + 1

    criterion = nn.CrossEntropyLoss()
    for epoch in range(start_epoch, num_epochs):
        model.train()
        for inputs, targets in train_loader:
            inputs, targets = inputs.to(device), targets.to(device)
            optimizer.zero_grad()
            loss = criterion(model(inputs), targets)
            loss.backward()
            optimizer.step()
        torch.save(
            {"state": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch},
            "checkpoint/ckpt.t7",
        )
