# Fixed twin of case 09: the checkpoint is loaded with map_location='cpu' and copied into the already-placed model
# Thread: https://github.com/lucidrains/imagen-pytorch/pull/132
# Reported: extra GPU memory used on 'cuda:0' when resuming multi-GPU training from a checkpoint
# Confirmed cause: torch.load(str(path)) restores tensors to the device they were saved from (cuda:0) in each process, wasting GPU-0 memory; merged PR loads to CPU first (map_location='cpu'), approved by the maintainer
# Class: torch.load without map_location restores a CUDA checkpoint onto the GPU
from pathlib import Path

import torch
from accelerate import Accelerator
from torch import nn


class Unet(nn.Module):
    def __init__(self, dim=128):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, dim, 3, padding=1), nn.SiLU(), nn.Conv2d(dim, 3, 3, padding=1))

    def forward(self, x):
        return self.net(x)


class ImagenTrainer(nn.Module):
    def __init__(self, imagen: nn.Module, lr=1e-4):
        super().__init__()
        self.accelerator = Accelerator()
        self.imagen = imagen
        optimizer = torch.optim.Adam(imagen.parameters(), lr=lr)
        self.imagen, self.optimizer = self.accelerator.prepare(self.imagen, optimizer)
        self.register_buffer("steps", torch.tensor([0]))

    @property
    def is_main(self):
        return self.accelerator.is_main_process

    def save(self, path):
        self.accelerator.wait_for_everyone()
        if not self.is_main:
            return
        save_obj = dict(
            model=self.accelerator.unwrap_model(self.imagen).state_dict(),
            optimizer=self.optimizer.state_dict(),
            steps=self.steps.cpu(),
        )
        torch.save(save_obj, str(path))

    def load(self, path, strict=True):
        path = Path(path)
        assert path.exists(), f"{path} does not exist"
        loaded_obj = torch.load(str(path), map_location="cpu")
        self.accelerator.unwrap_model(self.imagen).load_state_dict(loaded_obj["model"], strict=strict)
        self.optimizer.load_state_dict(loaded_obj["optimizer"])
        self.steps.copy_(loaded_obj["steps"])
        return loaded_obj

    def train_step(self, images):
        self.imagen.train()
        loss = (self.imagen(images) - images).pow(2).mean()
        self.accelerator.backward(loss)
        self.optimizer.step()
        self.optimizer.zero_grad()
        self.steps += 1
        return loss.item()


if __name__ == "__main__":
    trainer = ImagenTrainer(Unet())
    ckpt = Path("./imagen-checkpoint.pt")
    if ckpt.exists():
        trainer.load(ckpt)
    for _ in range(100):
        images = torch.randn(8, 3, 64, 64, device=trainer.accelerator.device)
        trainer.train_step(images)
    trainer.save(ckpt)
