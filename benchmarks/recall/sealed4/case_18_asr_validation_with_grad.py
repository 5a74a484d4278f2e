# Recall case 18 (sealed4): ASR trainer's validation pass runs the transformer forward with autograd enabled
# Thread: https://github.com/gentaiscool/end2end-asr-pytorch/pull/41
# Reported: OOM issue during validation although training fits
# Confirmed cause: the validation loop called model(src, src_lengths, tgt) outside torch.no_grad(), building and keeping full autograd graphs for evaluation-only batches; the merged PR wraps the forward in torch.no_grad() ("No need to store gradients during validation")
# Class: evaluation loop without torch.no_grad()
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

PAD_TOKEN = 0


class Transformer(nn.Module):
    def __init__(self, n_mels=80, vocab=5000, dim=512):
        super().__init__()
        self.proj = nn.Linear(n_mels, dim)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, 8, 2048, batch_first=True), 12)
        self.tgt_emb = nn.Embedding(vocab, dim)
        self.decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(dim, 8, 2048, batch_first=True), 6)
        self.out = nn.Linear(dim, vocab)

    def forward(self, src, src_lengths, tgt, verbose=False):
        memory = self.encoder(self.proj(src))
        tgt_in, gold = tgt[:, :-1], tgt[:, 1:]
        mask = nn.Transformer.generate_square_subsequent_mask(tgt_in.size(1), device=tgt.device)
        pred = self.out(self.decoder(self.tgt_emb(tgt_in), memory, tgt_mask=mask))
        hyp_seq = pred.argmax(-1)
        return pred, gold, hyp_seq, gold


def calculate_metrics(pred, gold, smoothing=0.1):
    loss = F.cross_entropy(pred.reshape(-1, pred.size(-1)), gold.reshape(-1), ignore_index=PAD_TOKEN,
                           label_smoothing=smoothing)
    non_pad = gold.ne(PAD_TOKEN)
    num_correct = pred.argmax(-1).eq(gold).masked_select(non_pad).sum().item()
    return loss, num_correct


class Trainer:
    def train(self, model, train_loader, valid_loader_list, opt, num_epochs):
        for epoch in range(num_epochs):
            model.train()
            total_loss = 0.0
            for i, (src, tgt, src_lengths) in enumerate(train_loader):
                src, tgt = src.cuda(), tgt.cuda()
                opt.zero_grad()
                pred, gold, hyp_seq, gold_seq = model(src, src_lengths, tgt, verbose=False)
                loss, num_correct = calculate_metrics(pred, gold)
                loss.backward()
                opt.step()
                total_loss += loss.item()
            logging.info("(Epoch %d) TRAIN LOSS:%.4f", epoch + 1, total_loss / len(train_loader))

            model.eval()
            for ind, valid_loader in enumerate(valid_loader_list):
                total_valid_loss, total_valid_correct = 0.0, 0
                for i, (src, tgt, src_lengths) in enumerate(valid_loader):
                    src, tgt = src.cuda(), tgt.cuda()
                    pred, gold, hyp_seq, gold_seq = model(src, src_lengths, tgt, verbose=False)  # leak: ANY
                    loss, num_correct = calculate_metrics(pred, gold)
                    if loss.item() == float("Inf"):
                        continue
                    total_valid_loss += loss.item()
                    total_valid_correct += num_correct
                logging.info("VALID SET %d LOSS:%.4f", ind, total_valid_loss / len(valid_loader))


def fake_loader(n, batch=8, frames=1500, tgt_len=120):
    return [(torch.randn(batch, frames, 80), torch.randint(1, 5000, (batch, tgt_len)), torch.full((batch,), frames))
            for _ in range(n)]


if __name__ == "__main__":
    model = Transformer().cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98))
    Trainer().train(model, fake_loader(200), [fake_loader(50, batch=32)], opt, num_epochs=100)
