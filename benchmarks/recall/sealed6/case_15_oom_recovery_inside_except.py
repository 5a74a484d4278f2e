# Recall case 15 (sealed6): after a CUDA OOM the agent runs a dummy forward/backward inside the except block, while the exception still pins the failed step's tensors
# Thread: https://github.com/facebookresearch/ParlAI/pull/2704
# Reported: OOM recovery was unreliable; the agent could OOM again while handling the OOM
# Confirmed cause: the catch-up forward/backward (_init_cuda_buffer) ran inside `except RuntimeError`, and the exception in scope keeps the failed step's frames/tensors alive (pytorch/pytorch#18853); merged PR sets a flag and does the sync after leaving the except block (maintainer-authored)
# Class: retrying forward/backward inside an `except` block that handles CUDA OOM
import logging

import torch
import torch.nn.functional as F
from torch import nn


class TorchGeneratorAgent:
    def __init__(self, model: nn.Module, lr=1e-4):
        self.model = model.cuda()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.skipped_batches = 0

    def zero_grad(self):
        self.optimizer.zero_grad(set_to_none=True)

    def compute_loss(self, batch):
        scores = self.model(batch["text_vec"])
        return F.cross_entropy(scores.flatten(0, 1), batch["label_vec"].flatten())

    def _init_cuda_buffer(self, batchsize, maxlen, force=False):
        """Run a tiny forward/backward so distributed workers stay in sync after a skipped batch."""
        if force or not hasattr(self, "_buffer_initialized"):
            dummy = torch.ones(batchsize, maxlen, dtype=torch.long, device="cuda")
            loss = self.compute_loss({"text_vec": dummy, "label_vec": dummy})
            loss.backward()
            self.zero_grad()
            self._buffer_initialized = True

    def train_step(self, batch):
        self.model.train()
        self.zero_grad()
        try:
            loss = self.compute_loss(batch)
            loss.backward()
            self.optimizer.step()
            return loss.item()
        except RuntimeError as e:
            if "out of memory" in str(e):
                logging.error("Ran out of memory, skipping batch. If this happens frequently, decrease batchsize.")
                self.skipped_batches += 1
                # gradients are synced on backward, now this model is going to be
                # out of sync! catch up with the other workers
                self._init_cuda_buffer(8, 8, True)  # leak: ANY
            else:
                raise e


if __name__ == "__main__":
    vocab = 50000
    model = nn.Sequential(nn.Embedding(vocab, 1024), nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, vocab))
    agent = TorchGeneratorAgent(model)
    for step in range(1000):
        bs, T = 64, int(torch.randint(64, 1024, (1,)))
        vec = torch.randint(0, vocab, (bs, T), device="cuda")
        agent.train_step({"text_vec": vec, "label_vec": vec})
