# Fixed twin of case 04: detach the gradient and GGN vectors returned by the closure before they enter the optimizer state
# Thread: https://github.com/emtiyaz/vadam/pull/2
# Reported: running VOGN, memory use increased linearly with the number of epochs, making runs with limited resources impossible
# Confirmed cause: the merged PR states that some tensors in the VOGN optimizer had to be detached from the computation graph, otherwise they (and their graphs) accumulate in memory; the per-example GGN is built from forward activations, so the running Precision state chained every step's graph
# Class: optimizer state updated from graph-carrying tensors (graph chained across steps through the state)
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.optimizer import Optimizer
from torch.nn.utils import parameters_to_vector, vector_to_parameters


class PerExampleMLP(nn.Module):
    def __init__(self, sizes=(784, 400, 400, 1)):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        activations, linear_combs = [], []
        h = x
        for i, layer in enumerate(self.layers):
            activations.append(h)
            z = layer(h)
            z.retain_grad()
            linear_combs.append(z)
            h = torch.relu(z) if i < len(self.layers) - 1 else z
        return h.squeeze(-1), activations, linear_combs


class VOGN(Optimizer):
    def __init__(self, params, train_set_size, lr=1e-3, beta=0.999, prior_prec=1.0, prec_init=1.0):
        defaults = dict(lr=lr, beta=beta, prior_prec=prior_prec, prec_init=prec_init, train_set_size=train_set_size)
        super().__init__(params, defaults)

    def step(self, closure):
        d = self.defaults
        params = self.param_groups[0]["params"]
        if "Precision" not in self.state:
            p = parameters_to_vector(params)
            self.state["mu"] = p.detach().clone()
            self.state["Precision"] = torch.ones_like(p) * d["prec_init"]
        mu, precision = self.state["mu"], self.state["Precision"]
        noise = torch.randn_like(mu)
        vector_to_parameters(mu + noise / precision.sqrt(), params)
        loss, grad, ggn, m = closure()
        grad_vec = parameters_to_vector(grad).div(m).detach()
        ggn_vec = parameters_to_vector(ggn).div(m).detach()
        grad_vec = grad_vec.mul(d["train_set_size"])
        ggn_vec = ggn_vec.mul(d["train_set_size"])
        precision = precision.mul(d["beta"]) + ggn_vec.add(d["prior_prec"]).mul(1 - d["beta"])
        self.state["Precision"] = precision
        mu.addcdiv_(grad_vec + mu * d["prior_prec"], precision, value=-d["lr"])
        return loss


def make_closure(model, x, y):
    def closure():
        logits, acts, zs = model(x)
        loss = F.binary_cross_entropy_with_logits(logits, y, reduction="sum")
        z_grads = torch.autograd.grad(loss, zs, retain_graph=True)
        grads, ggn = [], []
        for a, g in zip(acts, z_grads):
            per_example_w = torch.bmm(g.unsqueeze(2), a.unsqueeze(1))
            grads.append(per_example_w.sum(0))
            ggn.append((per_example_w ** 2).sum(0))
            grads.append(g.sum(0))
            ggn.append((g ** 2).sum(0))
        return loss, grads, ggn, x.shape[0]
    return closure


def train(loader, epochs=50):
    model = PerExampleMLP().cuda()
    opt = VOGN(model.parameters(), train_set_size=60000)
    for epoch in range(epochs):
        for x, y in loader:
            x, y = x.cuda().flatten(1), y.cuda().float()
            opt.step(make_closure(model, x, y))
        print(epoch, torch.cuda.memory_allocated())
