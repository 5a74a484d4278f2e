# Fixed twin of case 15: `del state_dict` right after load_state_dict, so the loaded copy is released before training starts
# Thread: https://github.com/huggingface/transformers/pull/12718
# Reported: a model-size memory leak when training is resumed from a checkpoint (found while debugging memory in issue #12680)
# Confirmed cause: `state_dict = torch.load(...)` inside train() is still referenced by the local variable after load_state_dict, so the loaded copy of the weights lives until train() returns; the merged fix (found by a maintainer, PR by another) adds `del state_dict` right after loading
# Class: object lifetimes (loaded state dict kept alive by a long-lived local)
import logging
import os

import torch

WEIGHTS_NAME = "pytorch_model.bin"
logger = logging.getLogger(__name__)


class Trainer:
    def __init__(self, model, args, train_dataloader, optimizer, lr_scheduler):
        self.model = model
        self.args = args
        self.train_dataloader = train_dataloader
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler

    def training_step(self, model, inputs):
        model.train()
        inputs = {k: v.to(self.args.device) for k, v in inputs.items()}
        loss = model(**inputs).loss
        if self.args.gradient_accumulation_steps > 1:
            loss = loss / self.args.gradient_accumulation_steps
        loss.backward()
        return loss.detach()

    def train(self, resume_from_checkpoint=None):
        if resume_from_checkpoint is not None:
            if not os.path.isfile(os.path.join(resume_from_checkpoint, WEIGHTS_NAME)):
                raise ValueError(f"Can't find a valid checkpoint at {resume_from_checkpoint}")
            logger.info(f"Loading model from {resume_from_checkpoint}).")
            state_dict = torch.load(os.path.join(resume_from_checkpoint, WEIGHTS_NAME), map_location="cpu")
            self.model.load_state_dict(state_dict)
            # release memory
            del state_dict

        model = self.model.to(self.args.device)
        tr_loss = torch.tensor(0.0, device=self.args.device)
        global_step = 0
        for epoch in range(int(self.args.num_train_epochs)):
            for step, inputs in enumerate(self.train_dataloader):
                tr_loss += self.training_step(model, inputs)
                if (step + 1) % self.args.gradient_accumulation_steps == 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), self.args.max_grad_norm)
                    self.optimizer.step()
                    self.lr_scheduler.step()
                    model.zero_grad()
                    global_step += 1
                    if global_step % self.args.logging_steps == 0:
                        logger.info(f"step {global_step}: loss {tr_loss.item() / global_step:.4f}")
        return global_step, tr_loss.item() / max(global_step, 1)
