# Fixed twin of case 05: deserialise the checkpoint on the CPU and let load_state_dict copy it onto the model's device
import os

import torch


def torch_recovery(obj, path, end_of_epoch, device=None):
    """Default load hook: restores a module, optimizer or scheduler from `path` in place."""
    del end_of_epoch  # parameters do not care whether the checkpoint ended an epoch
    del device  # load_state_dict moves each tensor to where the parameter already lives
    state = torch.load(path, map_location="cpu")
    try:
        obj.load_state_dict(state, strict=True)
    except TypeError:
        # optimizers and schedulers take no `strict` argument
        obj.load_state_dict(state)


class Checkpointer:
    def __init__(self, checkpoints_dir, recoverables):
        self.checkpoints_dir = checkpoints_dir
        self.recoverables = dict(recoverables)

    def find_latest(self):
        names = sorted(d for d in os.listdir(self.checkpoints_dir) if d.startswith("CKPT"))
        return os.path.join(self.checkpoints_dir, names[-1]) if names else None

    def recover_if_possible(self, device=None):
        ckpt_dir = self.find_latest()
        if ckpt_dir is None:
            return False
        for name, obj in self.recoverables.items():
            torch_recovery(obj, os.path.join(ckpt_dir, name + ".ckpt"), end_of_epoch=True, device=device)
        return True


def fit(model, train_loader, epochs, device="cuda:0"):
    model = model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    checkpointer = Checkpointer("results/save", {"model": model, "optimizer": optimizer})
    checkpointer.recover_if_possible(device=device)
    for epoch in range(epochs):
        for wavs, targets in train_loader:
            optimizer.zero_grad()
            loss = model.compute_loss(wavs.to(device), targets.to(device))
            loss.backward()
            optimizer.step()
