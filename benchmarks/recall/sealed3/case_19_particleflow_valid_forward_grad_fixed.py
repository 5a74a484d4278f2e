# Fixed twin of case 19: one train_and_valid() helper runs the validation pass with autograd still enabled
# Thread: https://github.com/jpata/particleflow/pull/290
# Reported: larger batch sizes OOM in the PyTorch MLPF training; the validation loop is the culprit
# Confirmed cause: "no_grad is required around the model forward pass in the validation loop to allow larger batch
#   sizes not to OOM" (merged PR by the maintainer)
# Class: evaluation pass with grad on inside a shared train/valid helper
import torch
import torch.nn as nn


class MLPF(nn.Module):
    def __init__(self, input_dim=55, width=512, num_convs=3, num_classes=9):
        super().__init__()
        self.nn0 = nn.Sequential(nn.Linear(input_dim, width), nn.ELU(), nn.Linear(width, width))
        self.convs = nn.ModuleList([nn.MultiheadAttention(width, 8, batch_first=True) for _ in range(num_convs)])
        self.nn_id = nn.Linear(width, num_classes)
        self.nn_p4 = nn.Linear(width, 5)

    def forward(self, X, mask):
        h = self.nn0(X)
        for conv in self.convs:
            h = h + conv(h, h, h, key_padding_mask=~mask)[0]
        return self.nn_id(h), self.nn_p4(h)


def train_and_valid(rank, model, optimizer, loader, is_train=True):
    if is_train:
        model.train()
    else:
        model.eval()
    epoch_loss = {"Total": 0.0, "Classification": 0.0, "Regression": 0.0}
    n = 0
    for X, mask, ygen_id, ygen_p4 in loader:
        X, mask, ygen_id, ygen_p4 = X.to(rank), mask.to(rank), ygen_id.to(rank), ygen_p4.to(rank)
        with torch.set_grad_enabled(is_train):
            pred_id, pred_p4 = model(X, mask)
        loss_cls = nn.functional.cross_entropy(pred_id[mask], ygen_id[mask])
        loss_reg = nn.functional.mse_loss(pred_p4[mask], ygen_p4[mask])
        loss = loss_cls + loss_reg
        if is_train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        epoch_loss["Total"] += loss.detach().item()
        epoch_loss["Classification"] += loss_cls.detach().item()
        epoch_loss["Regression"] += loss_reg.detach().item()
        n += 1
    return {k: v / max(n, 1) for k, v in epoch_loss.items()}


def loader(n_batches, batch=64, max_elems=4096):
    for _ in range(n_batches):
        X = torch.randn(batch, max_elems, 55)
        mask = torch.rand(batch, max_elems) < 0.8
        yield X, mask, torch.randint(0, 9, (batch, max_elems)), torch.randn(batch, max_elems, 5)


if __name__ == "__main__":
    rank = "cuda:0" if torch.cuda.is_available() else "cpu"
    model = MLPF().to(rank)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(50):
        train_loss = train_and_valid(rank, model, optimizer, loader(200, batch=8), is_train=True)
        valid_loss = train_and_valid(rank, model, optimizer, loader(50, batch=32), is_train=False)
        print(epoch, train_loss, valid_loss)
