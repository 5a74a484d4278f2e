# Recall case 29 (sealed): the training loop hands the loss tensor itself to the experiment tracker
# Thread: https://github.com/wandb/wandb/issues/354
# Reported: with wandb 0.8.1, logging PyTorch loss tensors makes host memory grow severely (about
#   40 GB in under an hour just from logging the loss); logging `loss.item()` instead does not.
# Confirmed cause: the maintainer confirmed the pattern (`wandb.log({"loss": single_element_tensor})`
#   leaks, `.item()` does not) and fixed the library side in 0.8.2: the logged tensors (each with
#   its graph) were kept by the tracker. The user-side fix is to log Python numbers. (Against
#   wandb >= 0.8.2 this exact code no longer leaks.)
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
                wandb.log({"loss": loss, "epoch": epoch}, step=step)  # leak: ANY
            step += 1
