# Fixed twin of case 02: the optimizer state file is loaded with map_location set to CPU and then handed to load_state_dict
# Thread: https://github.com/rwth-i6/returnn/pull/1346
# Reported: loading a PyTorch checkpoint/optimizer state put the tensors on the GPU they were saved from (extra GPU memory / wrong device when resuming)
# Confirmed cause: torch.load(filename) without map_location restores every storage to its saved CUDA device; merged PR (fixes #1345) loads optimizer and model checkpoints with map_location (cpu / engine device)
# Class: torch.load of a checkpoint saved from CUDA, without map_location, in the resume path
import torch
import torch.nn as nn


class Updater:
    def __init__(self, model, device):
        self.model = model
        self._device = device
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def save_optimizer(self, filename):
        torch.save(self.optimizer.state_dict(), filename)

    def load_optimizer(self, filename):
        print("Load optimizer %s" % filename)
        optimizer_state = torch.load(filename, map_location=torch.device("cpu"))
        self.optimizer.load_state_dict(optimizer_state)


class Engine:
    def __init__(self, device="cuda:1"):
        self._device = torch.device(device)
        self.model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1024)).to(self._device)
        self.updater = Updater(self.model, self._device)

    def load_model(self, filename, opt_filename):
        checkpoint_state = torch.load(filename, map_location=self._device)
        self.model.load_state_dict(checkpoint_state["model"])
        self.updater.load_optimizer(opt_filename)

    def train_epoch(self, steps=100):
        for _ in range(steps):
            x = torch.randn(64, 1024, device=self._device)
            loss = self.model(x).pow(2).mean()
            self.updater.optimizer.zero_grad()
            loss.backward()
            self.updater.optimizer.step()


if __name__ == "__main__":
    engine = Engine()
    engine.load_model("net-model/network.007.pt", "net-model/network.007.opt.pt")
    engine.train_epoch()
