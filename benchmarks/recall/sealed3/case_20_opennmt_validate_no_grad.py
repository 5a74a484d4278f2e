# Recall case 20 (sealed3): Trainer.validate() evaluates the NMT model without torch.no_grad()
# Thread: https://github.com/OpenNMT/OpenNMT-py/issues/1141
# Reported: "torch.no_grad() is not used in validate(). I think it should be used"
# Confirmed cause: the maintainer agreed - it was forgotten in the 0.4 -> 1.0 migration (volatile removed), so
#   validation builds and keeps autograd state for every batch's forward and loss computation
# Class: eval helper called inside training with grad enabled (model.eval() alone)
import torch
import torch.nn as nn


class Statistics:
    def __init__(self, loss=0.0, n_words=0, n_correct=0):
        self.loss, self.n_words, self.n_correct = loss, n_words, n_correct

    def update(self, stat):
        self.loss += stat.loss
        self.n_words += stat.n_words
        self.n_correct += stat.n_correct

    def ppl(self):
        return float(torch.exp(torch.tensor(self.loss / max(self.n_words, 1))))


class NMTLossCompute:
    def __init__(self, generator, padding_idx=1):
        self.generator = generator
        self.criterion = nn.NLLLoss(ignore_index=padding_idx, reduction="sum")
        self.padding_idx = padding_idx

    def monolithic_compute_loss(self, batch, output):
        scores = self.generator(output.view(-1, output.size(-1)))
        gtruth = batch["tgt"][1:].reshape(-1)
        loss = self.criterion(scores, gtruth)
        non_pad = gtruth.ne(self.padding_idx)
        correct = scores.argmax(1).eq(gtruth).masked_select(non_pad).sum().item()
        return Statistics(loss.item(), non_pad.sum().item(), correct)


class NMTModel(nn.Module):
    def __init__(self, vocab=32000, d=512):
        super().__init__()
        self.src_emb, self.tgt_emb = nn.Embedding(vocab, d), nn.Embedding(vocab, d)
        self.transformer = nn.Transformer(d, 8, 6, 6)

    def forward(self, src, tgt, lengths=None):
        return self.transformer(self.src_emb(src), self.tgt_emb(tgt[:-1]))


class Trainer:
    def __init__(self, model, generator, train_loss, valid_loss, optim):
        self.model, self.generator = model, generator
        self.train_loss, self.valid_loss, self.optim = train_loss, valid_loss, optim

    def validate(self, valid_iter):
        self.model.eval()
        stats = Statistics()
        for batch in valid_iter:
            src, src_lengths, tgt = batch["src"], batch["src_lengths"], batch["tgt"]
            outputs = self.model(src, tgt, src_lengths)  # leak: ANY
            batch_stats = self.valid_loss.monolithic_compute_loss(batch, outputs)  # leak: ANY
            stats.update(batch_stats)
        self.model.train()
        return stats


def batches(n, device, length=100, bsz=64):
    for _ in range(n):
        yield {"src": torch.randint(2, 32000, (length, bsz), device=device),
               "src_lengths": torch.full((bsz,), length, device=device),
               "tgt": torch.randint(2, 32000, (length, bsz), device=device)}


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = NMTModel().to(device)
    generator = nn.Sequential(nn.Linear(512, 32000), nn.LogSoftmax(dim=-1)).to(device)
    loss = NMTLossCompute(generator)
    trainer = Trainer(model, generator, loss, loss, torch.optim.Adam(model.parameters()))
    for step in range(0, 200000, 10000):
        print(step, trainer.validate(batches(500, device)).ppl())
