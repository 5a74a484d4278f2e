# Fixed twin of case 17: total_loss.backward() without retain_graph (the regularization is rebuilt every step anyway)
# Thread: https://github.com/shenweichen/DeepCTR-Torch/issues/69
# Reported: "Why enable retain_graph in backward? Does the model need backward twice?" (graph buffers kept every step)
# Confirmed cause: retain_graph=True was a workaround for a regularization loss built once from the weights; maintainers recomputed the regularization per step and removed retain_graph=True (commit 7996548, released in v0.2.4)
# Class: retain_graph=True in a training loop where the graph is never backpropagated again
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class BaseModel(nn.Module):
    def __init__(self, n_sparse=26, vocab=100_000, emb_dim=16, n_dense=13, l2_reg_embedding=1e-5, device="cuda"):
        super().__init__()
        self.embedding_dict = nn.ModuleDict({f"C{i}": nn.Embedding(vocab, emb_dim) for i in range(n_sparse)})
        self.dnn = nn.Sequential(nn.Linear(n_sparse * emb_dim + n_dense, 256), nn.ReLU(), nn.Linear(256, 1))
        self.regularization_weight = []
        self.add_regularization_weight(self.embedding_dict.parameters(), l2=l2_reg_embedding)
        self.device = device
        self.to(device)

    def add_regularization_weight(self, weight_list, l2=0.0):
        self.regularization_weight.append((list(weight_list), l2))

    def get_regularization_loss(self):
        total = torch.zeros((1,), device=self.device)
        for weights, l2 in self.regularization_weight:
            for w in weights:
                total = total + l2 * torch.sum(w * w)
        return total

    def forward(self, x_sparse, x_dense):
        embs = [self.embedding_dict[f"C{i}"](x_sparse[:, i]) for i in range(x_sparse.size(1))]
        return torch.sigmoid(self.dnn(torch.cat(embs + [x_dense], dim=1)))

    def fit(self, x_sparse, x_dense, y, batch_size=1024, epochs=10):
        loader = DataLoader(TensorDataset(x_sparse, x_dense, y), batch_size=batch_size, shuffle=True)
        optim = torch.optim.Adam(self.parameters(), lr=1e-3)
        for epoch in range(epochs):
            loss_epoch, total_loss_epoch = 0.0, 0.0
            for xs, xd, yt in loader:
                xs, xd, yt = xs.to(self.device), xd.to(self.device), yt.to(self.device)
                y_pred = self(xs, xd).squeeze()
                optim.zero_grad()
                loss = F.binary_cross_entropy(y_pred, yt.squeeze(), reduction="sum")
                reg_loss = self.get_regularization_loss()
                total_loss = loss + reg_loss
                loss_epoch += loss.item()
                total_loss_epoch += total_loss.item()
                total_loss.backward()
                optim.step()
            print(f"epoch {epoch} loss {loss_epoch / len(loader.dataset):.4f}")


if __name__ == "__main__":
    n = 2_000_000
    model = BaseModel()
    model.fit(torch.randint(0, 100_000, (n, 26)), torch.rand(n, 13), torch.randint(0, 2, (n, 1)).float())
