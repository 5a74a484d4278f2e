# Recall case 02 (sealed15): torchtitan-style train loop keeps every step's loss tensor on the GPU in losses_since_last_log until the next log step
# Thread: https://github.com/pytorch/torchtitan/issues/763
# Reported: with logging disabled or very infrequent (large log_freq), memory grows slowly for the whole run
# Confirmed cause: the maintainer agreed that the list of on-device loss tensors (losses_since_last_log), only drained at a log step to avoid a .item() sync every step, grows without bound when log_freq is large; it asked for a PR that only reads the loss at the log step
# Class: per-step loss tensors appended to a logging list that is flushed only on log steps
import logging
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger("train")


class TinyLM(nn.Module):
    def __init__(self, vocab=32000, dim=512):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.block = nn.TransformerEncoderLayer(dim, 8, 4 * dim, batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.out(self.block(self.emb(tokens)))


def loss_fn(pred, labels):
    return F.cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1))


def train(model, optimizer, data_iter, job_config, device):
    losses_since_last_log = []
    for step in range(1, job_config.training.steps + 1):
        input_ids, labels = next(data_iter)
        input_ids, labels = input_ids.to(device), labels.to(device)
        optimizer.zero_grad()
        pred = model(input_ids)
        loss = loss_fn(pred, labels)
        loss.backward()
        optimizer.step()
        losses_since_last_log.append(loss)  # leak: ANY
        if step == 1 or step % job_config.metrics.log_freq == 0:
            losses = [l.item() for l in losses_since_last_log]
            avg_loss, max_loss = sum(losses) / len(losses), max(losses)
            logger.info("step %d loss %.4f (max %.4f)", step, avg_loss, max_loss)
            losses_since_last_log.clear()


if __name__ == "__main__":
    dev = torch.device("cuda")
    m = TinyLM().to(dev)
    opt = torch.optim.AdamW(m.parameters(), lr=3e-4)
    cfg = SimpleNamespace(training=SimpleNamespace(steps=10 ** 6), metrics=SimpleNamespace(log_freq=10 ** 9))
    batches = iter(lambda: (torch.randint(0, 32000, (8, 256)), torch.randint(0, 32000, (8, 256))), None)
    train(m, opt, batches, cfg, dev)
