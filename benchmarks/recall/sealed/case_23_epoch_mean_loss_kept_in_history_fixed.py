# Fixed twin of case 23: batch losses are detached before they are aggregated and kept, and
#   the best dev metric is stored detached.
# Thread: https://github.com/pnnl/neuromancer/pull/292
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
                losses.append(output[self.train_metric].detach())
            output[f"mean_{self.train_metric}"] = torch.mean(torch.stack(losses))

            with torch.set_grad_enabled(self.model.grad_inference):
                self.model.eval()
                if self.dev_data is not None:
                    losses = []
                    for batch in self.dev_data:
                        batch = {k: v.to(self.device) if torch.is_tensor(v) else v for k, v in batch.items()}
                        eval_output = self.model(batch)
                        losses.append(eval_output[self.dev_metric].detach())
                    mean_dev_loss = torch.mean(torch.stack(losses))
                    self.loss_history["dev"].append(mean_dev_loss)
                    eval_output[f"mean_{self.dev_metric}"] = mean_dev_loss
                    output = {**output, **eval_output}
                if output[self.eval_metric] < self.best_devloss:
                    self.best_model = deepcopy(self.model.state_dict())
                    self.best_devloss = output[self.eval_metric].detach()
                    self.badcount = 0
                elif i > self.warmup:
                    self.badcount += 1
                mean_loss = output[f"mean_{self.train_metric}"]
                self.loss_history["train"].append(mean_loss)
            if self.badcount > self.patience:
                break
        self.model.load_state_dict(self.best_model)
        return self.best_model
