# Recall case 68: every EMA checkpoint deep-copies the EMA model on the GPU to change its dtype
# Thread: https://github.com/lucidrains/ema-pytorch/issues/35
# Reported: a project using PostHocEMA leaks memory over training; the reporter narrowed it down
#   to the periodic checkpointing of the EMA models.
# Confirmed cause: the reporter isolated it and the maintainer applied the fix (0.7.7):
#   `checkpoint()` did `deepcopy(ema_model).to(self.checkpoint_dtype).state_dict()` for each EMA
#   model at every checkpoint; the device-resident copies were not reclaimed and GPU memory
#   accumulated. Fixed by taking `ema_model.state_dict()` and converting each value with
#   `.to(device="cpu", dtype=..., copy=True)`.
# Class: deepcopy of the model per checkpoint on the device
from copy import deepcopy
from pathlib import Path

import torch
from torch.nn import Module


class PostHocEMA(Module):
    def __init__(self, model: Module, ema_models, checkpoint_folder="./post-hoc-ema-checkpoints",
                 checkpoint_every_num_steps=1000, checkpoint_dtype=torch.float16):
        super().__init__()
        self.online_model = [model]
        self.ema_models = torch.nn.ModuleList(ema_models)
        self.checkpoint_folder = Path(checkpoint_folder)
        self.checkpoint_folder.mkdir(exist_ok=True, parents=True)
        self.checkpoint_every_num_steps = checkpoint_every_num_steps
        self.checkpoint_dtype = checkpoint_dtype
        self.register_buffer("step", torch.tensor(0))

    def update(self):
        self.step.add_(1)
        for ema_model in self.ema_models:
            ema_model.update()
        if self.step.item() % self.checkpoint_every_num_steps == 0:
            self.checkpoint()

    def checkpoint(self):
        step = self.step.item()
        for ind, ema_model in enumerate(self.ema_models):
            path = self.checkpoint_folder / f"{ind}.{step}.pt"
            pkg = deepcopy(ema_model).to(self.checkpoint_dtype).state_dict()  # leak: ANY
            torch.save(pkg, str(path))


def train(model, emas: PostHocEMA, loader, optimizer, epochs, device="cuda"):
    for epoch in range(epochs):
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            loss = torch.nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            emas.update()
