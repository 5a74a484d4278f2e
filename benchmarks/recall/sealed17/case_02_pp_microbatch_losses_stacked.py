# Recall case 02 (sealed17): pipeline-parallel train step stacks the schedule's per-microbatch losses (still attached) into the reported step loss
# Thread: https://github.com/pytorch/torchtitan/pull/4430
# Reported: with pipeline parallelism the last stage holds on to more memory than needed across the train step; every microbatch's loss graph stays reachable from the loss the trainer keeps for the optimizer step and logging
# Confirmed cause: the schedule appends each microbatch's loss tensor with its autograd history to the trainer-owned `losses` list and the trainer builds the reported loss with torch.stack/torch.sum from those attached tensors; the merged fix detaches the losses before stacking (the value is only used for logging)
# Class: losses that travel (per-microbatch loss tensors collected and combined without detach)
import torch
import torch.nn as nn
import torch.nn.functional as F


class LastStageSchedule:
    """Stand-in for the pipeline schedule of the last stage: forward+backward per microbatch."""

    def __init__(self, stage, loss_fn, n_microbatches):
        self.stage = stage
        self.loss_fn = loss_fn
        self.n_microbatches = n_microbatches

    def step(self, inputs, target=None, losses=None):
        for x_mb, y_mb in zip(inputs.chunk(self.n_microbatches), target.chunk(self.n_microbatches)):
            out = self.stage(x_mb)
            loss = self.loss_fn(out, y_mb)
            if losses is not None:
                losses.append(loss)
            (loss / self.n_microbatches).backward()


class Trainer:
    def __init__(self, model, n_microbatches=8, device="cuda"):
        self.device = device
        self.model = model.to(device)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=3e-4)
        self.pp_schedule = LastStageSchedule(self.model, self.loss_fn, n_microbatches)
        self.pp_has_last_stage = True
        self.metrics = []

    @staticmethod
    def loss_fn(pred, labels):
        return F.cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1))

    def forward_backward_step(self, inputs, labels):
        losses = [] if self.pp_has_last_stage else None
        self.pp_schedule.step(inputs, target=labels, losses=losses)
        loss = (
            torch.sum(torch.stack(losses)).to(self.device)  # leak: ANY
            if self.pp_has_last_stage
            else torch.tensor([-1.0], device=self.device)
        )
        return loss

    def train_step(self, inputs, labels):
        self.optimizer.zero_grad()
        loss = self.forward_backward_step(inputs, labels)
        grad_norm = nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optimizer.step()
        self.metrics.append({"loss": loss.item(), "grad_norm": grad_norm.item()})
        return loss

    def train(self, data_iter, steps):
        for step in range(steps):
            inputs, labels = next(data_iter)
            loss = self.train_step(inputs.to(self.device), labels.to(self.device))
            if step % 10 == 0:
                print(f"step {step} loss {loss.item():.4f}")
