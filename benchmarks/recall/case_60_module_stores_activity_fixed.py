# Fixed twin of case 60: the stored activity is detached.
# Thread: https://github.com/growingnet/gromo/issues/135
# Class: module attribute keeps a graph-carrying activation between steps
import torch
from torch import nn


class TensorStatistic:
    def __init__(self, shape, update_function, device=None):
        self._tensor = torch.zeros(shape, device=device)
        self.samples = 0
        self.updated = True
        self.update_function = update_function

    def update(self):
        if not self.updated:
            increment, n = self.update_function()
            self._tensor += increment
            self.samples += n
            self.updated = True


class MergeGrowingModule(nn.Module):
    def __init__(self, in_features, post_merge_function=None):
        super().__init__()
        self.post_merge_function = post_merge_function
        self.store_input = 0
        self.store_activity = 0
        self.input = None
        self.activity = None
        self.tensor_s = TensorStatistic((in_features, in_features), self.compute_s_update)

    def compute_s_update(self):
        a = self.activity.flatten(0, -2)
        return a.T @ a, a.shape[0]

    def forward(self, x):
        self.tensor_s.updated = False
        if self.store_input > 0:
            self.input = x
            self.input.retain_grad()
        y = self.post_merge_function(x) if self.post_merge_function is not None else x
        if self.store_activity > 0:
            self.activity = y.detach()
            self.tensor_s.updated = False
        return y


def compute_statistics(model, merge_module, dataloader, loss_fn, device="cuda"):
    merge_module.store_activity = 1
    for x, y in dataloader:
        x, y = x.to(device), y.to(device)
        loss = loss_fn(model(x), y)
        loss.backward()
        merge_module.tensor_s.update()
    merge_module.store_activity = 0
