# Recall case 23 (sealed): epoch means built from graph-carrying batch losses are kept in a history
# Thread: https://github.com/pnnl/neuromancer/pull/292
# Reported: long training runs with the library's `Trainer` keep accumulating memory --
#   "hundreds of MB or a few GB of autograd graph" per long run.
# Confirmed cause: the merged PR: "Trainer has two memory leaks, both from the same source, we're
#   not detaching the grad graphs from the metrics before we store them": every epoch the mean of
#   `torch.stack(losses)` (batch losses with their graphs) goes into `loss_history["train"]`, the
#   dev mean into `loss_history["dev"]`, and the best dev metric into `best_devloss`. The fix
#   detaches them (the PR includes a benchmark showing the difference).
# Class: per-epoch history of graph-carrying aggregates
from copy import deepcopy

import numpy as np
import torch


class Trainer:
    def __init__(self, problem, train_data, dev_data=None, optimizer=None, epochs=1000,
                 patience=5, warmup=0, train_metric="train_loss", dev_metric="dev_loss",
                 eval_metric="dev_loss", clip=100.0, device="cpu"):
        self.model = problem
        self.optimizer = optimizer or torch.optim.Adam(problem.parameters(), 0.01)
        self.train_data, self.dev_data = train_data, dev_data
        self.epochs, self.patience, self.warmup = epochs, patience, warmup
        self.train_metric, self.dev_metric, self.eval_metric = train_metric, dev_metric, eval_metric
        self.clip, self.device = clip, device
        self.badcount = 0
        self.best_devloss = np.finfo(np.float32).max
        self.best_model = deepcopy(self.model.state_dict())
        self.loss_history = {"train": [], "dev": []}

    def train(self):
        for i in range(self.epochs):
            self.model.train()
            losses = []
            for batch in self.train_data:
                batch = {k: v.to(self.device) if torch.is_tensor(v) else v for k, v in batch.items()}
                output = self.model(batch)
                self.optimizer.zero_grad()
                output[self.train_metric].backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
                self.optimizer.step()
                losses.append(output[self.train_metric])
            output[f"mean_{self.train_metric}"] = torch.mean(torch.stack(losses))  # leak: ANY

            with torch.set_grad_enabled(self.model.grad_inference):
                self.model.eval()
                if self.dev_data is not None:
                    losses = []
                    for batch in self.dev_data:
                        batch = {k: v.to(self.device) if torch.is_tensor(v) else v for k, v in batch.items()}
                        eval_output = self.model(batch)
                        losses.append(eval_output[self.dev_metric])
                    mean_dev_loss = torch.mean(torch.stack(losses))
                    self.loss_history["dev"].append(mean_dev_loss)  # leak: ANY
                    eval_output[f"mean_{self.dev_metric}"] = mean_dev_loss
                    output = {**output, **eval_output}
                if output[self.eval_metric] < self.best_devloss:
                    self.best_model = deepcopy(self.model.state_dict())
                    self.best_devloss = output[self.eval_metric]
                    self.badcount = 0
                elif i > self.warmup:
                    self.badcount += 1
                mean_loss = output[f"mean_{self.train_metric}"]
                self.loss_history["train"].append(mean_loss)  # leak: ANY
            if self.badcount > self.patience:
                break
        self.model.load_state_dict(self.best_model)
        return self.best_model
