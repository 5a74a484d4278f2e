# Fixed twin of case 01: pass the output tensor to ctx.save_for_backward and rebuild its zero-copy view from ctx.saved_tensors in backward, as merged in PR #1060
# Thread: https://github.com/dmlc/dgl/pull/1060
# Reported: memory leak of DGL's sparse message-passing ops on the PyTorch backend: the tensors created in forward() of the copy/binary-reduce autograd Functions were not deallocated, so memory grew over iterations whose forward result was not back-propagated (the PR description gives a minimal reproduction of the pattern)
# Confirmed cause: the maintainers' merged fix (PR #1060, "memory leak fix in PyTorch"): forward stored a DLPack zero-copy view of its output (`out_data_nd`) inside the plain attribute `ctx.backward_cache`; the output's grad_fn holds ctx, ctx holds the view, the view holds the output, and the cache was only cleared inside backward, so outputs that never see backward are never freed. The fix hands `out_data` to `ctx.save_for_backward` and rebuilds the view in backward
# Class: custom autograd.Function stores a tensor (a view of its output) on ctx outside save_for_backward
import torch as th
import torch.nn as nn
import torch.nn.functional as F
from torch.utils import dlpack

from dgl_kernel import nd, copy_reduce_kernel, backward_copy_reduce_kernel


def zerocopy_to_dgl_ndarray(t):
    return nd.from_dlpack(dlpack.to_dlpack(t.contiguous()))


class CopyReduce(th.autograd.Function):
    @staticmethod
    def forward(ctx, reducer, graph, target, in_data, out_size, in_map, out_map):
        out_data = in_data.new_empty((out_size,) + in_data.shape[1:])
        in_data_nd = zerocopy_to_dgl_ndarray(in_data)
        out_data_nd = zerocopy_to_dgl_ndarray(out_data)
        copy_reduce_kernel(reducer, graph, target, in_data_nd, out_data_nd,
                           in_map[0], out_map[0])
        # save_for_backward can only save variables
        ctx.backward_cache = (reducer, graph, target, in_map, out_map,
                              in_data_nd)
        ctx.save_for_backward(out_data)
        return out_data

    @staticmethod
    def backward(ctx, grad_out):
        reducer, graph, target, in_map, out_map, in_data_nd = ctx.backward_cache
        out_data, = ctx.saved_tensors
        out_data_nd = zerocopy_to_dgl_ndarray(out_data)
        grad_in = None
        grad_out_nd = zerocopy_to_dgl_ndarray(grad_out)
        if ctx.needs_input_grad[3]:
            grad_in = grad_out.new_empty(in_data_nd.shape)
            backward_copy_reduce_kernel(reducer, graph, target, in_data_nd, out_data_nd,
                                        grad_out_nd, zerocopy_to_dgl_ndarray(grad_in),
                                        in_map[1], out_map[1])
        return None, None, None, grad_in, None, None, None


copy_reduce = CopyReduce.apply


class GCNLayer(nn.Module):
    def __init__(self, in_feats, out_feats):
        super().__init__()
        self.linear = nn.Linear(in_feats, out_feats)

    def forward(self, g, feature):
        # sum of the source-node features over the in-edges of every node
        h = copy_reduce("sum", g.index, "src", feature, g.number_of_nodes(),
                        g.in_map, g.out_map)
        return self.linear(h)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = GCNLayer(1433, 16)
        self.layer2 = GCNLayer(16, 7)

    def forward(self, g, features):
        x = F.relu(self.layer1(g, features))
        return self.layer2(g, x)


def train(g, features, labels, mask, epochs=30):
    net = Net().cuda()
    optimizer = th.optim.Adam(net.parameters(), lr=1e-3)
    for epoch in range(epochs):
        logits = net(g, features)
        logp = F.log_softmax(logits, 1)
        loss = F.nll_loss(logp[mask], labels[mask])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        # extra forward to watch the fit; its result is never back-propagated
        logits = net(g, features)
        print(epoch, loss.item(), th.cuda.memory_allocated())
