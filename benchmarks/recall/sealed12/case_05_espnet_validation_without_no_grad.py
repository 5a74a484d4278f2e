# Recall case 05 (sealed12): the validation evaluator runs the model forward with autograd on, so attention/loss graphs fill the GPU
# Thread: https://github.com/espnet/espnet/issues/191
# Reported: pytorch backend training ran fine but the GPU memory filled up and crashed at validation
# Confirmed cause: validation batches were forwarded with gradient tracking (volatile no longer works after PyTorch 0.4); maintainer patch #192 disables grad in evaluation, confirmed by sw005320 ('#192 seems to solve this issue')
# Class: validation/evaluation loop forwarding the model without torch.no_grad()
import torch
import torch.nn as nn


class E2E(nn.Module):
    def __init__(self, idim=83, odim=52, hdim=320):
        super().__init__()
        self.enc = nn.LSTM(idim, hdim, num_layers=4, batch_first=True, bidirectional=True)
        self.att = nn.Linear(2 * hdim, 2 * hdim)
        self.dec = nn.Linear(2 * hdim, odim)

    def forward(self, xs, ys):
        hs, _ = self.enc(xs)
        att = torch.softmax(self.att(hs) @ hs.transpose(1, 2), dim=-1) @ hs
        logits = self.dec(att)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), ys.flatten())
        acc = (logits.argmax(-1) == ys).float().mean()
        return loss, acc


class PytorchSeqEvaluator:
    def __init__(self, model, iterator, device):
        self.model = model
        self.iterator = iterator
        self.device = device

    def evaluate(self):
        self.model.eval()
        losses, accs = [], []
        for xs, ys in self.iterator:  # leak: ANY
            loss, acc = self.model(xs.to(self.device), ys.to(self.device))
            losses.append(float(loss))
            accs.append(float(acc))
        self.model.train()
        return sum(losses) / len(losses), sum(accs) / len(accs)


def train(model, train_iter, valid_iter, device="cuda", epochs=15):
    opt = torch.optim.Adadelta(model.parameters(), eps=1e-8)
    evaluator = PytorchSeqEvaluator(model, valid_iter, device)
    for epoch in range(epochs):
        for xs, ys in train_iter:
            loss, _ = model(xs.to(device), ys.to(device))
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5)
            opt.step()
        print(epoch, evaluator.evaluate())
