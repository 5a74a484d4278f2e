# Thread: https://github.com/coqui-ai/TTS/issues/750
# Reported: restoring a model that barely fits on the GPU (Trainer.restore_model, --restore_path)
#   runs out of GPU memory; the checkpoint load "leaves some residue in GPU RAM".
# Confirmed cause: the maintainer (erogol) found the checkpoint is read with load_fsspec(restore_path),
#   i.e. torch.load without map_location, so every tensor is first materialised on the GPU it was
#   saved from and then copied again by load_state_dict; "only load_fsspec(restore_path,
#   map_location='cpu') works in my case" (the weights still reach the GPU through load_state_dict).
# Class: torch.load of a checkpoint onto the GPU it was saved from (resume)
import os

import fsspec
import torch


def load_fsspec(path, map_location=None, **kwargs):
    """Open a local or remote checkpoint and unpickle it with torch.load."""
    with fsspec.open(path, "rb") as f:
        return torch.load(f, map_location=map_location, **kwargs)


class Trainer:
    def __init__(self, config, model, optimizer, scaler=None, use_cuda=True):
        self.config = config
        self.model = model.cuda() if use_cuda else model
        self.optimizer = optimizer
        self.scaler = scaler
        self.restore_step = 0
        self.best_loss = float("inf")

    def restore_model(self, config, restore_path, model, optimizer, scaler=None):
        print(" > Restoring from %s ..." % os.path.basename(restore_path))
        checkpoint = load_fsspec(restore_path, map_location=torch.device("cpu"))
        try:
            print(" > Restoring Model...")
            model.load_state_dict(checkpoint["model"])
            print(" > Restoring Optimizer...")
            optimizer.load_state_dict(checkpoint["optimizer"])
            if scaler is not None and "scaler" in checkpoint:
                print(" > Restoring Scaler...")
                scaler.load_state_dict(checkpoint["scaler"])
        except (KeyError, RuntimeError):
            print(" > Partial model initialization...")
            model_dict = model.state_dict()
            pretrained = {k: v for k, v in checkpoint["model"].items() if k in model_dict}
            model_dict.update(pretrained)
            model.load_state_dict(model_dict)
        for group in optimizer.param_groups:
            group["lr"] = config.lr
        print(" > Model restored from step %d" % checkpoint["step"])
        restore_step = checkpoint["step"]
        best_loss = checkpoint.get("model_loss", float("inf"))
        del checkpoint
        return model, optimizer, scaler, restore_step, best_loss

    def fit(self, restore_path=None):
        if restore_path:
            (self.model, self.optimizer, self.scaler,
             self.restore_step, self.best_loss) = self.restore_model(
                self.config, restore_path, self.model, self.optimizer, self.scaler)
        for epoch in range(self.config.epochs):
            self.train_epoch(epoch)

    def train_epoch(self, epoch):
        raise NotImplementedError
