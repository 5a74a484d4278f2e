# Fixed twin of case 25: the best checkpoint's state_dict is loaded with map_location="cpu"
# Thread: https://github.com/huggingface/transformers/pull/20920
# Reported: OOM after the full training is done, when the best checkpoint is loaded back (load_best_model_at_end)
# Confirmed cause: `_load_best_model` called torch.load(best_model_path) without map_location, so the weights were materialised on the GPU (2x the model's memory) before load_state_dict copied them; the merged PR loads with map_location="cpu"
# Class: torch.load of a checkpoint onto the GPU when the tensors are only copied into an existing model
import os

import torch
import torch.nn as nn
from transformers import AutoConfig, AutoModelForCausalLM

WEIGHTS_NAME = "pytorch_model.bin"


class Trainer:
    def __init__(self, model, train_batches, eval_batches, output_dir, lr=2e-5, load_best_model_at_end=True):
        self.model = model.cuda()
        self.train_batches, self.eval_batches = train_batches, eval_batches
        self.output_dir, self.load_best_model_at_end = output_dir, load_best_model_at_end
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr)
        self.best_metric, self.best_model_checkpoint = float("inf"), None

    def evaluate(self):
        self.model.eval()
        with torch.no_grad():
            losses = [self.model(input_ids=b.cuda(), labels=b.cuda()).loss.item() for b in self.eval_batches]
        self.model.train()
        return sum(losses) / len(losses)

    def _save_checkpoint(self, step):
        ckpt = os.path.join(self.output_dir, f"checkpoint-{step}")
        os.makedirs(ckpt, exist_ok=True)
        torch.save(self.model.state_dict(), os.path.join(ckpt, WEIGHTS_NAME))
        return ckpt

    def _load_best_model(self):
        best_model_path = os.path.join(self.best_model_checkpoint, WEIGHTS_NAME)
        if os.path.exists(best_model_path):
            state_dict = torch.load(best_model_path, map_location="cpu")
            load_result = self.model.load_state_dict(state_dict, strict=False)
            print(f"Loaded best model from {self.best_model_checkpoint}: {load_result}")

    def train(self, eval_steps=500):
        self.model.train()
        for step, batch in enumerate(self.train_batches, start=1):
            batch = batch.cuda()
            loss = self.model(input_ids=batch, labels=batch).loss
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)
            if step % eval_steps == 0:
                metric = self.evaluate()
                ckpt = self._save_checkpoint(step)
                if metric < self.best_metric:
                    self.best_metric, self.best_model_checkpoint = metric, ckpt
        if self.load_best_model_at_end and self.best_model_checkpoint is not None:
            self._load_best_model()


if __name__ == "__main__":
    config = AutoConfig.from_pretrained("gpt2-large")
    model = AutoModelForCausalLM.from_config(config)
    train = [torch.randint(0, config.vocab_size, (4, 512)) for _ in range(5000)]
    evals = [torch.randint(0, config.vocab_size, (4, 512)) for _ in range(50)]
    Trainer(model, train, evals, output_dir="./out").train()
