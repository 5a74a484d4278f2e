# Recall case 03: a training step returns its loss and the caller sums it
# Thread: https://github.com/huggingface/transformers/pull/6999
# Reported: Trainer uses all 12 GB of host RAM after ~20,000 steps, whatever the model (#6939).
# Confirmed cause: `training_step` calls `loss.backward()` and returns `loss`; `train` does
#   `tr_loss += self.training_step(model, inputs)`, so `tr_loss` chains every step's graph
#   (sgugger: "the problem is ... that we don't call .detach(), which means some variables are
#   kept forever"); merged fix: `return loss.detach()`.
# Class: graph-carrying value returned by a method and accumulated by its caller (through self)
import torch
from torch import nn
from tqdm.auto import tqdm


class Trainer:
    def __init__(self, model, args, train_dataloader, optimizer, lr_scheduler):
        self.model = model
        self.args = args
        self.train_dataloader = train_dataloader
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.global_step = 0

    def _prepare_inputs(self, inputs):
        return {k: v.to(self.args.device) if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}

    def training_step(self, model, inputs):
        model.train()
        inputs = self._prepare_inputs(inputs)
        outputs = model(**inputs)
        loss = outputs[0]
        if self.args.n_gpu > 1:
            loss = loss.mean()
        if self.args.gradient_accumulation_steps > 1:
            loss = loss / self.args.gradient_accumulation_steps
        loss.backward()
        return loss  # leak: ML101

    def train(self):
        model = self.model
        tr_loss = torch.tensor(0.0).to(self.args.device)
        logging_loss_scalar = 0.0
        model.zero_grad()
        for epoch in range(int(self.args.num_train_epochs)):
            for step, inputs in enumerate(tqdm(self.train_dataloader, desc="Iteration")):
                tr_loss += self.training_step(model, inputs)  # leak: ML101
                if (step + 1) % self.args.gradient_accumulation_steps == 0:
                    nn.utils.clip_grad_norm_(model.parameters(), self.args.max_grad_norm)
                    self.optimizer.step()
                    self.lr_scheduler.step()
                    model.zero_grad()
                    self.global_step += 1
                    if self.global_step % self.args.logging_steps == 0:
                        tr_loss_scalar = tr_loss.item()
                        print({"loss": (tr_loss_scalar - logging_loss_scalar) / self.args.logging_steps})
                        logging_loss_scalar = tr_loss_scalar
        return self.global_step, tr_loss.item() / max(self.global_step, 1)
