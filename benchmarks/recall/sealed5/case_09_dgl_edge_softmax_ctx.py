# Recall case 09 (sealed5): custom edge-softmax autograd.Function keeps its output on ctx as a plain attribute
# Thread: https://github.com/dmlc/dgl/pull/692
# Reported: GPU memory leak in a project using edge softmax
# Confirmed cause: tensor stored directly on ctx instead of via save_for_backward (output -> grad_fn -> ctx -> output cycle); merged maintainer PR switches to save_for_backward
# Class: autograd.Function storing a tensor on ctx
import torch
from torch.autograd import Function


def segment_max(scores, dst, num_nodes):
    out = torch.full((num_nodes,) + scores.shape[1:], float("-inf"), device=scores.device)
    return out.index_reduce_(0, dst, scores, "amax")


def segment_sum(values, dst, num_nodes):
    out = torch.zeros((num_nodes,) + values.shape[1:], device=values.device)
    return out.index_add_(0, dst, values)


class EdgeSoftmax(Function):
    @staticmethod
    def forward(ctx, scores, dst, num_nodes):
        smax = segment_max(scores, dst, num_nodes)
        out = torch.exp(scores - smax[dst])
        out = out / segment_sum(out, dst, num_nodes)[dst]
        ctx.dst = dst
        ctx.num_nodes = num_nodes
        ctx.out = out  # leak: ANY
        return out

    @staticmethod
    def backward(ctx, grad_out):
        out = ctx.out  # leak: ANY
        sds = out * grad_out
        accum = segment_sum(sds, ctx.dst, ctx.num_nodes)
        grad_score = sds - out * accum[ctx.dst]
        return grad_score, None, None


def edge_softmax(scores, dst, num_nodes):
    return EdgeSoftmax.apply(scores, dst, num_nodes)
