# Fixed twin of case 01: a custom Uni-Core loss puts the live loss tensor (with grad_fn) into logging_output
# Thread: https://github.com/deepmodeling/Uni-Mol/issues/173
# Reported: host RAM (not GPU) kept rising epoch after epoch while training with a self-written loss class
# Confirmed cause: logging_output = {"loss": loss} kept the autograd graph alive in the collected logging outputs;
#   the reporter confirmed that writing loss.data instead fixed it (and that the upstream Uni-Mol losses already do so)
# Class: loss tensor with grad history handed to the logging/reporting dict that the trainer accumulates
import torch
import torch.nn as nn
import torch.nn.functional as F


class MaskedTokenLoss(nn.Module):
    """Loss written by the user for a masked-atom pretraining task (unicore-style interface)."""

    def __init__(self, padding_idx=0):
        super().__init__()
        self.padding_idx = padding_idx

    def forward(self, model, sample, reduce=True):
        masked_tokens = sample["target"].ne(self.padding_idx)
        sample_size = int(masked_tokens.long().sum())
        logits = model(sample["net_input"]["src_tokens"])[masked_tokens]
        target = sample["target"][masked_tokens]
        loss = F.cross_entropy(logits.float(), target, reduction="sum" if reduce else "none")
        logging_output = {
            "loss": loss.data,
            "sample_size": sample_size,
            "bsz": sample["target"].size(0),
        }
        return loss, sample_size, logging_output

    @staticmethod
    def reduce_metrics(logging_outputs):
        loss_sum = sum(log.get("loss", 0) for log in logging_outputs)
        sample_size = sum(log.get("sample_size", 0) for log in logging_outputs)
        return float(loss_sum) / max(sample_size, 1)


class TinyEncoder(nn.Module):
    def __init__(self, vocab=32, dim=256):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.layers = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, 8, batch_first=True), 4)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.head(self.layers(self.emb(tokens)))


def train_epoch(model, criterion, optimizer, batches, log_interval=200):
    logging_outputs = []
    for step, sample in enumerate(batches):
        loss, sample_size, logging_output = criterion(model, sample)
        optimizer.zero_grad()
        (loss / max(sample_size, 1)).backward()
        optimizer.step()
        logging_outputs.append(logging_output)
        if (step + 1) % log_interval == 0:
            print("step", step + 1, "loss", criterion.reduce_metrics(logging_outputs))
    return criterion.reduce_metrics(logging_outputs)


def make_batches(device, n=1000):
    for _ in range(n):
        tokens = torch.randint(1, 32, (16, 128), device=device)
        keep = torch.rand(tokens.shape, device=device) < 0.15
        target = torch.where(keep, tokens, torch.zeros_like(tokens))
        yield {"net_input": {"src_tokens": tokens}, "target": target}


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = TinyEncoder().to(device)
    criterion = MaskedTokenLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(100):
        print("epoch", epoch, train_epoch(model, criterion, optimizer, make_batches(device)))
