# Fixed twin of case 05: when the engine is deleted (after closing), unregister the atexit callbacks so the run's State can be freed
# Thread: https://github.com/mosaicml/composer/pull/1769
# Reported: training a ResNet twice in the same Python process, the memory of the first run is not freed when its Trainer is deleted, so memory use doubles (before/after plots in the PR)
# Confirmed cause: the merged PR "Fixes memory not being freed with object deletion": Engine.__init__ calls atexit.register(self._close, state, logger), so the interpreter's atexit list keeps every run's State (model, optimizers, dataloaders) alive until exit; the fix unregisters the atexit callbacks when the engine is deleted after closing
# Class: object lifetimes - model/optimizer built per run and kept alive by a process-global registry
import atexit

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

_did_atexit_run = False


def _set_atexit_ran():
    global _did_atexit_run
    _did_atexit_run = True


atexit.register(_set_atexit_ran)


class State:
    def __init__(self, model, optimizers, train_dataloader, callbacks=()):
        self.model = model
        self.optimizers = optimizers
        self.train_dataloader = train_dataloader
        self.callbacks = list(callbacks)


class Logger:
    def __init__(self, destinations=()):
        self.destinations = list(destinations)


class Engine:
    def __init__(self, state, logger):
        self.state = state
        self.logger = logger
        self._is_closed = False
        atexit.register(self._close, state, logger)

    def run_event(self, event):
        for cb in self.state.callbacks:
            cb.run_event(event, self.state, self.logger)

    def __del__(self):
        if _did_atexit_run or self._is_closed:
            return
        self.close()
        atexit.unregister(_set_atexit_ran)
        atexit.unregister(self._close)

    def close(self):
        self._close(self.state, self.logger)
        self._is_closed = True

    @staticmethod
    def _close(state, logger):
        for callback in state.callbacks:
            callback.close(state, logger)


class Trainer:
    def __init__(self, model, train_dataloader, max_epochs=1, device="cuda"):
        model = model.to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        self.device = device
        self.max_epochs = max_epochs
        self.state = State(model, [optimizer], train_dataloader)
        self.logger = Logger()
        self.engine = Engine(self.state, self.logger)

    def fit(self):
        model, optimizer = self.state.model, self.state.optimizers[0]
        model.train()
        for _ in range(self.max_epochs):
            for x, y in self.state.train_dataloader:
                x, y = x.to(self.device), y.to(self.device)
                loss = F.cross_entropy(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        self.engine.run_event("fit_end")


def make_loader(n=512, batch_size=64):
    data = torch.utils.data.TensorDataset(torch.randn(n, 3, 224, 224), torch.randint(1000, (n,)))
    return torch.utils.data.DataLoader(data, batch_size=batch_size, shuffle=True)


if __name__ == "__main__":
    for run in range(2):
        trainer = Trainer(model=torchvision.models.resnet50(), train_dataloader=make_loader())
        trainer.fit()
        del trainer
        print(run, torch.cuda.memory_allocated() / 2**20, "MiB still allocated")
