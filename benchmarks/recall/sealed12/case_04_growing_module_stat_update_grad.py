# Recall case 04 (sealed12): running statistics (tensor S / M) are updated from activations that require grad, so each update extends the graph
# Thread: https://github.com/growingnet/gromo/issues/137
# Reported: allocated CUDA memory kept increasing while tensor statistics were updated over the dataloader (minimal repro with FullConv2dGrowingModule / LinearGrowingModule)
# Confirmed cause: updates of the statistic tensors had requires_grad=True, so every addition was retained in the computational graph; fixed by the merged PR #138 (update wrapped with a no_grad decorator, approved by maintainer)
# Class: statistics buffer accumulated with += from tensors that carry autograd history
import torch
import torch.nn as nn


class TensorStatistic:
    """Running average of a second-order statistic (e.g. S = x^T x / n)."""

    def __init__(self, shape, update_function, device):
        self._tensor = torch.zeros(shape, device=device)
        self.samples = 0
        self.update_function = update_function
        self.updated = False

    def update(self):  # leak: ANY
        if self.updated:
            return
        update, n = self.update_function()
        self._tensor += update
        self.samples += n
        self.updated = True

    def __call__(self):
        return self._tensor / max(self.samples, 1)


class LinearGrowingModule(nn.Module):
    def __init__(self, in_features, out_features, device="cuda"):
        super().__init__()
        self.layer = nn.Linear(in_features, out_features, device=device)
        self.store_input = True
        self.input = None
        self.tensor_s = TensorStatistic((in_features, in_features), self._compute_s, device)

    def _compute_s(self):
        x = self.input.flatten(0, -2)
        return x.t() @ x, x.shape[0]

    def forward(self, x):
        if self.store_input:
            self.input = x
            self.tensor_s.updated = False
        return self.layer(x)


def compute_statistics(model, dataloader, device="cuda"):
    model.train()
    for x, y in dataloader:
        x = x.to(device)
        out = model(x)
        loss = nn.functional.cross_entropy(out, y.to(device))
        loss.backward()
        model.tensor_s.update()
        print(torch.cuda.memory_allocated() / 1e6)


if __name__ == "__main__":
    X = torch.rand(2000, 256)
    Y = torch.randint(0, 10, (2000,))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, Y), batch_size=64)
    compute_statistics(LinearGrowingModule(256, 10), loader)
