# Recall case 02 (sealed19): ragged normalize_scores autograd Function keeps its own output on ctx for backward
# Thread: https://github.com/k2-fsa/k2/issues/706
# Reported: while debugging a slow memory growth in long training runs, the per-iteration P_scores produced through k2.ragged.normalize_scores were never freed
# Confirmed cause: the Function stores its output as ctx.out (a RaggedFloat whose values carry requires_grad and, through grad_fn, a reference back to ctx), forming a ctx -> out -> grad_fn -> ctx reference cycle that refcounting cannot free; the maintainer's fix (verified with a reproduction by a second maintainer) adds RaggedFloat.detach() and stores ctx.out = out[0].detach()
# Class: autograd.Function output stored as a ctx attribute instead of save_for_backward (reference cycle)
from typing import List

import torch


class RaggedFloat(object):
    def __init__(self, row_splits: torch.Tensor, values: torch.Tensor):
        self.row_splits = row_splits
        self.values = values

    def requires_grad_(self, requires_grad: bool):
        self.values.requires_grad_(requires_grad)
        return self


def _segment_logsumexp(values, row_splits):
    out = []
    for i in range(row_splits.numel() - 1):
        seg = values[row_splits[i]:row_splits[i + 1]]
        out.append(torch.logsumexp(seg, dim=0).expand(seg.numel()))
    return torch.cat(out)


class _NormalizeScores(torch.autograd.Function):
    @staticmethod
    def forward(ctx, src: RaggedFloat, out: List[RaggedFloat], unused_scores: torch.Tensor) -> torch.Tensor:
        values = src.values.detach()
        normalized = values - _segment_logsumexp(values, src.row_splits)
        out[0] = RaggedFloat(src.row_splits, normalized)
        ctx.out = out[0]  # leak: ANY
        return out[0].values

    @staticmethod
    def backward(ctx, out_grad: torch.Tensor):
        out = ctx.out
        probs = out.values.exp()
        row_sums = torch.zeros(out.row_splits.numel() - 1, dtype=out_grad.dtype, device=out_grad.device)
        ids = torch.repeat_interleave(torch.arange(row_sums.numel(), device=out_grad.device), out.row_splits.diff())
        row_sums.index_add_(0, ids, out_grad)
        return None, None, out_grad - probs * row_sums[ids]


def normalize_scores(src: RaggedFloat) -> RaggedFloat:
    out = [None]
    ans_values = _NormalizeScores.apply(src, out, src.values)
    out[0].values = ans_values
    return out[0]


def train(model, batches, optimizer):
    for features, row_splits, targets in batches:
        scores = model(features).squeeze(-1)
        P_scores = normalize_scores(RaggedFloat(row_splits, scores))
        loss = -(P_scores.values * targets).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
