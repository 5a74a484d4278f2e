# Fixed twin of case 15: the evaluate() forward runs under torch.no_grad()
# Thread: https://github.com/dmlc/dgl/issues/745
# Reported: training works but validation runs out of GPU memory
# Confirmed cause: evaluation forward kept the autograd graph of the whole graph's activations; maintainer (yzh119): 'in validation phase you should disable gradients'; reporter fixed it following the forum answer (wrap evaluation in torch.no_grad). Reconstructed without the dgl import (plain sparse adjacency)
# Class: evaluation helper forwarding the model without no_grad
import torch
import torch.nn as nn
import torch.nn.functional as F


class GCNLayer(nn.Module):
    def __init__(self, in_feats, out_feats):
        super().__init__()
        self.linear = nn.Linear(in_feats, out_feats)

    def forward(self, adj, h):
        return torch.sparse.mm(adj, self.linear(h))


class GCN(nn.Module):
    def __init__(self, in_feats, n_hidden, n_classes, n_layers=3, dropout=0.5):
        super().__init__()
        dims = [in_feats] + [n_hidden] * (n_layers - 1) + [n_classes]
        self.layers = nn.ModuleList(GCNLayer(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.dropout = nn.Dropout(dropout)

    def forward(self, adj, features):
        h = features
        for i, layer in enumerate(self.layers):
            if i != 0:
                h = self.dropout(h)
            h = layer(adj, h)
            if i != len(self.layers) - 1:
                h = F.relu(h)
        return h


def evaluate(model, adj, features, labels, mask):
    model.eval()
    with torch.no_grad():
        logits = model(adj, features)
    logits = logits[mask]
    correct = (logits.argmax(dim=1) == labels[mask]).sum()
    return correct.item() / int(mask.sum())


def train(model, adj, features, labels, train_mask, val_mask, epochs=200):
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=5e-4)
    for epoch in range(epochs):
        model.train()
        logits = model(adj, features)
        loss = F.cross_entropy(logits[train_mask], labels[train_mask])
        opt.zero_grad()
        loss.backward()
        opt.step()
        acc = evaluate(model, adj, features, labels, val_mask)
        print(f"epoch {epoch} loss {loss.item():.4f} val acc {acc:.4f}")
