# Fixed twin of case 09: an awaitable registers a callback bound to itself, forming a reference cycle over GPU tensors
# Thread: https://github.com/meta-pytorch/torchrec/pull/1226
# Reported: many GPU tensors stayed alive after each step in a training loop that runs with automatic gc disabled
# Confirmed cause: SequenceEmbeddingsAwaitable's callback pointed back to the awaitable itself; the cycle holds the
#   embedding/permute tensors until a gc pass that never comes; the PR by a Meta engineer removes the refcycle
#   (exported from Phabricator D46737088; shown as closed on GitHub, landed internally)
# Class: reference cycle (bound-method callback on self) holding device tensors, with gc disabled
import functools
import gc
from typing import Callable, List

import torch
import torch.nn as nn


class Awaitable:
    def __init__(self):
        self.callbacks: List[Callable[[torch.Tensor], torch.Tensor]] = []

    def _wait_impl(self) -> torch.Tensor:
        raise NotImplementedError

    def wait(self) -> torch.Tensor:
        ret = self._wait_impl()
        for callback in self.callbacks:
            ret = callback(ret)
        return ret


class AllToAllAwaitable(Awaitable):
    def __init__(self, embeddings: torch.Tensor):
        super().__init__()
        self._embeddings = embeddings

    def _wait_impl(self):
        return self._embeddings


def _unbucketize(embeddings: torch.Tensor, permute: torch.Tensor) -> torch.Tensor:
    return torch.index_select(embeddings, 0, permute)


class SequenceEmbeddingsAwaitable(Awaitable):
    def __init__(self, a2a: Awaitable, unbucketize_permute_tensor: torch.Tensor, embedding_dim: int):
        super().__init__()
        self._a2a = a2a
        self._unbucketize_permute_tensor = unbucketize_permute_tensor
        self._embedding_dim = embedding_dim
        self.callbacks.append(functools.partial(_unbucketize, permute=unbucketize_permute_tensor))

    def _wait_impl(self):
        return self._a2a.wait().view(-1, self._embedding_dim)


class ShardedSequenceEmbedding(nn.Module):
    def __init__(self, num_embeddings=1_000_000, dim=128):
        super().__init__()
        self.table = nn.Embedding(num_embeddings, dim)
        self.dim = dim

    def forward(self, ids: torch.Tensor) -> Awaitable:
        flat = ids.view(-1)
        permute = torch.argsort(flat % 8)
        emb = self.table(flat[permute])
        return SequenceEmbeddingsAwaitable(AllToAllAwaitable(emb), torch.argsort(permute), self.dim)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = ShardedSequenceEmbedding().to(device)
    head = nn.Linear(128, 1).to(device)
    opt = torch.optim.SGD(list(model.parameters()) + list(head.parameters()), lr=0.01)
    gc.disable()  # training loop manages gc manually for throughput
    for step in range(100000):
        ids = torch.randint(0, 1_000_000, (4096, 50), device=device)
        out = model(ids).wait()
        loss = head(out).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10000 == 0:
            gc.collect()
