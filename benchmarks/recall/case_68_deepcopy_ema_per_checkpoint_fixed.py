# Fixed twin of case 68: the checkpoint converts the state_dict's tensors into CPU copies
#   instead of deep-copying the module on the device.
# Thread: https://github.com/lucidrains/ema-pytorch/issues/35
# Class: deepcopy of the model per checkpoint on the device
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
            pkg = {
                name: value.to(device="cpu", dtype=self.checkpoint_dtype, copy=True)
                for name, value in ema_model.state_dict().items()
            }
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
