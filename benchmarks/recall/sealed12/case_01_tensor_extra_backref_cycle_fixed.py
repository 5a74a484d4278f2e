# Fixed twin of case 01: the _extra record keeps only a weakref to its parent Tensor, breaking the cycle
# Thread: https://github.com/rwth-i6/returnn/pull/1826
# Reported: allocated CUDA memory of an rf Conformer/Transformer model grew without bound and OOM-killed at ~91 GB after ~18.5k steps; a per-step gc.collect() kept it flat
# Confirmed cause: _TensorExtra held a strong back-reference to its parent Tensor (parent <-> _extra cycle), so wrapped CUDA tensors were only freed by the cyclic collector; fixed in the merged PR by making the back-reference a weakref-backed property
# Class: wrapper object and helper record referencing each other (reference cycle) while the wrapper owns a device tensor, created many times per step
import weakref

import torch
import torch.nn as nn


class _TensorExtra:
    """Rarely used metadata, split off the main Tensor object."""

    def __init__(self, tensor):
        self._tensor_ref = weakref.ref(tensor)
        self.dyn_size_max = None
        self.control_flow_ctx = None

    @property
    def tensor(self):
        return self._tensor_ref()


class Tensor:
    """Frontend tensor wrapping a raw torch.Tensor plus named dims."""

    def __init__(self, name, raw_tensor, dims):
        self.name = name
        self.raw_tensor = raw_tensor
        self.dims = dims
        self._extra = None

    def _make_extra(self):
        if self._extra is None:
            self._extra = _TensorExtra(self)
        return self._extra

    def copy_template(self, name):
        out = Tensor(name, None, self.dims)
        out._make_extra().dyn_size_max = self._make_extra().dyn_size_max
        return out


class Decoder(nn.Module):
    def __init__(self, dim=512, vocab=1000, layers=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))
        self.out = nn.Linear(dim, vocab)

    def forward(self, targets):
        x = Tensor("emb", self.embed(targets), ("B", "T", "F"))
        x._make_extra()
        for i, layer in enumerate(self.layers):
            y = x.copy_template(f"layer{i}")
            y.raw_tensor = torch.relu(layer(x.raw_tensor))
            x = y
        return self.out(x.raw_tensor)


def train(steps=20000, device="cuda"):
    model = Decoder().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step in range(steps):
        targets = torch.randint(0, 1000, (32, 200), device=device)
        logits = model(targets)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 500 == 0:
            print(step, torch.cuda.memory_allocated() / 2**30)


if __name__ == "__main__":
    train()
