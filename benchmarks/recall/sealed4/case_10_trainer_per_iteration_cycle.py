# Recall case 10 (sealed4): a new optimizer + event-driven trainer is built on every outer iteration and the old ones are only reachable through reference cycles
# Thread: https://github.com/Project-MONAI/MONAI/issues/3423
# Reported: constructing and running a SupervisedTrainer in a loop eventually runs out of GPU memory
# Confirmed cause: maintainer (ericspod): the previous trainer instances are not cleaned up after each loop - the engine is kept in a reference cycle, Python's GC decides by host memory, and the trainer keeps its optimizer (and its GPU state) alive; clearing the optimizer attribute already helped the reporter; recommended collecting garbage before the next run
# Class: trainer/optimizer objects created per loop iteration and kept alive (cycle) across iterations
import gc
from collections import defaultdict

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Engine:
    """Minimal ignite-style engine: handlers are bound methods stored on the engine itself (self-reference)."""

    def __init__(self):
        self._event_handlers = defaultdict(list)
        self.state = {"iteration": 0, "output": None}
        self.add_event_handler("iteration_completed", self._log_iteration)

    def add_event_handler(self, event, handler):
        self._event_handlers[event].append(handler)

    def fire_event(self, event):
        for handler in self._event_handlers[event]:
            handler(self)

    def _log_iteration(self, engine):
        engine.state["iteration"] += 1


class SupervisedTrainer(Engine):
    def __init__(self, device, max_epochs, train_data_loader, network, optimizer, loss_function):
        super().__init__()
        self.device, self.max_epochs = device, max_epochs
        self.data_loader, self.network = train_data_loader, network
        self.optimizer, self.loss_function = optimizer, loss_function

    def run(self):
        self.network.train()
        for _ in range(self.max_epochs):
            for x, y in self.data_loader:
                x, y = x.to(self.device), y.to(self.device)
                self.optimizer.zero_grad()
                loss = self.loss_function(self.network(x), y)
                loss.backward()
                self.optimizer.step()
                self.state["output"] = {"loss": loss.item()}
                self.fire_event("iteration_completed")


def get_model():
    return nn.Sequential(
        nn.Conv2d(1, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(),
        nn.Conv2d(128, 2, 1),
    )


if __name__ == "__main__":
    device = torch.device("cuda")
    xs = 256 * torch.rand(50, 1, 256, 256)
    ys = torch.randint(0, 2, (50, 256, 256))
    train_loader = DataLoader(TensorDataset(xs, ys), batch_size=16)
    model = get_model()

    for i in range(50):
        print(f"On iteration {i}", torch.cuda.memory_allocated() / 2**20)
        model.to(device)
        optimizer = torch.optim.Adam(model.parameters())
        trainer = SupervisedTrainer(  # leak: ANY
            device=device, max_epochs=10, train_data_loader=train_loader,
            network=model, optimizer=optimizer, loss_function=nn.CrossEntropyLoss(),
        )
        trainer.run()
