# Fixed twin of case 29: the tracker receives loss.item(), a Python float.
# Thread: https://github.com/wandb/wandb/issues/354
# Class: tensors handed to a logger/tracker (with their graph)
import torch
import torch.nn.functional as F
import wandb


def train(model, loader, optimizer, epochs, device="cuda", log_every=1):
    wandb.init(project="segmentation")
    step = 0
    for epoch in range(epochs):
        model.train()
        for images, masks in loader:
            images, masks = images.to(device), masks.to(device)
            logits = model(images)
            loss = F.cross_entropy(logits, masks)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if step % log_every == 0:
                wandb.log({"loss": loss.item(), "epoch": epoch}, step=step)
            step += 1
