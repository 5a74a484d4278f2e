# Fixed twin of case 11: the optimizer state is loaded on the CPU; load_state_dict moves it to the parameters' device
# Thread: https://github.com/huggingface/transformers/pull/22159
# Reported (issue #22123): resuming from a checkpoint runs out of CUDA memory while training from scratch fits
# Confirmed cause: the optimizer state file was torch.load-ed with map_location=<training device>, so a second full copy
#   of the Adam moments sat on the GPU; maintainer (sgugger) merged loading it on the CPU -- PyTorch's
#   optimizer.load_state_dict casts/moves it to the parameters' device anyway
# Class: torch.load of a large state onto the GPU (map_location=device) only to hand it to load_state_dict
import os

import torch
from torch import nn

OPTIMIZER_NAME = "optimizer.pt"
SCHEDULER_NAME = "scheduler.pt"
WEIGHTS_NAME = "pytorch_model.bin"


class Trainer:
    def __init__(self, model: nn.Module, output_dir: str, device: str = "cuda", lr: float = 5e-5):
        self.device = torch.device(device)
        self.model = model.to(self.device)
        self.output_dir = output_dir
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr)
        self.lr_scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda step: 1.0)

    def _load_from_checkpoint(self, checkpoint: str):
        state_dict = torch.load(os.path.join(checkpoint, WEIGHTS_NAME), map_location="cpu")
        self.model.load_state_dict(state_dict)
        del state_dict

    def _load_optimizer_and_scheduler(self, checkpoint: str):
        if checkpoint is None:
            return
        if os.path.isfile(os.path.join(checkpoint, OPTIMIZER_NAME)):
            self.optimizer.load_state_dict(
                torch.load(os.path.join(checkpoint, OPTIMIZER_NAME), map_location="cpu")
            )
            self.lr_scheduler.load_state_dict(torch.load(os.path.join(checkpoint, SCHEDULER_NAME)))

    def save(self, step: int):
        ckpt_dir = os.path.join(self.output_dir, f"checkpoint-{step}")
        os.makedirs(ckpt_dir, exist_ok=True)
        torch.save(self.model.state_dict(), os.path.join(ckpt_dir, WEIGHTS_NAME))
        torch.save(self.optimizer.state_dict(), os.path.join(ckpt_dir, OPTIMIZER_NAME))
        torch.save(self.lr_scheduler.state_dict(), os.path.join(ckpt_dir, SCHEDULER_NAME))

    def train(self, batches, resume_from_checkpoint: str = None, save_steps: int = 500):
        if resume_from_checkpoint is not None:
            self._load_from_checkpoint(resume_from_checkpoint)
            self._load_optimizer_and_scheduler(resume_from_checkpoint)
        self.model.train()
        for step, (x, y) in enumerate(batches):
            x, y = x.to(self.device), y.to(self.device)
            loss = nn.functional.cross_entropy(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            self.lr_scheduler.step()
            self.optimizer.zero_grad(set_to_none=True)
            if step % save_steps == 0:
                self.save(step)


if __name__ == "__main__":
    model = nn.Sequential(nn.Embedding(32000, 2048), nn.Flatten(), nn.LazyLinear(32000))
    trainer = Trainer(model, "runs/lm")
    data = [(torch.randint(0, 32000, (8, 16)), torch.randint(0, 32000, (8,))) for _ in range(1000)]
    trainer.train(data, resume_from_checkpoint="runs/lm/checkpoint-500")
