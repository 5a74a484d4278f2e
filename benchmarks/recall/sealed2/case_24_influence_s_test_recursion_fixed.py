# Fixed twin of case 24: the h_estimate update runs under torch.no_grad() (the reporter's fix).
# Thread: https://github.com/nimarb/pytorch_influence_functions/issues/15
# Reported: computing s_test runs out of GPU memory within 3-4 iterations, even with tiny models and batches.
# Confirmed cause: the reporter, after fixing it in a fork: `h_estimate` is recomputed from `hv`
#   (built with `create_graph=True`) at every recursion step without `no_grad`, so each new estimate
#   carries the graphs of all previous steps; encasing the update in `torch.no_grad()` solved it.
# Class: a long-lived estimate updated each iteration from values that carry a graph (no detach/no_grad)
import torch
from torch.autograd import grad


def calc_loss(y, t):
    return torch.nn.functional.cross_entropy(y, t)


def hvp(loss, params, v):
    first_grads = grad(loss, params, retain_graph=True, create_graph=True)
    elemwise_products = sum((g * v_i).sum() for g, v_i in zip(first_grads, v))
    return grad(elemwise_products, params, create_graph=True)


def grad_z(z, t, model, gpu=-1):
    model.eval()
    if gpu >= 0:
        z, t = z.cuda(), t.cuda()
    loss = calc_loss(model(z), t)
    params = [p for p in model.parameters() if p.requires_grad]
    return list(grad(loss, params, create_graph=True))


def s_test(z_test, t_test, model, z_loader, gpu=-1, damp=0.01, scale=25.0, recursion_depth=5000):
    v = grad_z(z_test, t_test, model, gpu=gpu)
    h_estimate = [t.clone() for t in v]
    for i in range(recursion_depth):
        for x, t in z_loader:
            if gpu >= 0:
                x, t = x.cuda(), t.cuda()
            loss = calc_loss(model(x), t)
            params = [p for p in model.parameters() if p.requires_grad]
            hv = hvp(loss, params, h_estimate)
            with torch.no_grad():
                h_estimate = [_v + (1 - damp) * _h_e - _hv / scale
                              for _v, _h_e, _hv in zip(v, h_estimate, hv)]
            break
        if i % 100 == 0:
            print(f"Calc. s_test recursions: {i}/{recursion_depth}")
    return h_estimate


def calc_influence(model, train_loader, test_loader, test_id, gpu=0, recursion_depth=5000):
    z_test, t_test = test_loader.dataset[test_id]
    z_test, t_test = z_test.unsqueeze(0), torch.tensor([t_test])
    s_test_vec = s_test(z_test, t_test, model, train_loader, gpu=gpu, recursion_depth=recursion_depth)
    influences = []
    for i in range(len(train_loader.dataset)):
        z, t = train_loader.dataset[i]
        grad_z_vec = grad_z(z.unsqueeze(0), torch.tensor([t]), model, gpu=gpu)
        influences.append(-sum(torch.sum(k * j).item() for k, j in zip(grad_z_vec, s_test_vec)) / len(train_loader.dataset))
    return influences
