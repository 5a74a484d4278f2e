# Thread: https://github.com/fangwei123456/spikingjelly/issues/576 (fixed by https://github.com/fangwei123456/spikingjelly/pull/703)
# Reported: a hyperparameter search that builds a fresh spiking net and its STDPLearners for every
#   trial runs out of GPU memory; the tensors the learners create are never freed, even after the
#   trial's model goes out of scope.
# Confirmed cause: STDPLearner.step() was called with autograd on. The learner's monitors record
#   graph-connected spikes, its traces are recurrent, and step(on_grad=True) writes a graph-carrying
#   delta into weight.grad, so every batch's forward graph stays reachable and no backward frees it.
#   Maintainer: run `l.step()` inside `torch.no_grad()`; PR 703 then detached what the learners record.
# Class: running statistics (STDP traces / observer records) updated from tensors that carry history
import torch
import torch.nn as nn
from spikingjelly.activation_based import layer, neuron, learning, functional


def f_weight(x):
    return torch.clamp(x, -1.0, 1.0)


def run_trial(tau_pre, tau_post, loader, device="cuda", T=8):
    net = nn.Sequential(
        layer.Conv2d(1, 16, kernel_size=3, padding=1, bias=False),
        neuron.IFNode(),
        layer.MaxPool2d(2, 2),
        layer.Flatten(),
        layer.Linear(16 * 14 * 14, 10, bias=False),
        neuron.IFNode(),
    ).to(device)
    functional.set_step_mode(net, "m")

    stdp_learners = [
        learning.STDPLearner(step_mode="m", synapse=net[0], sn=net[1],
                             tau_pre=tau_pre, tau_post=tau_post,
                             f_pre=f_weight, f_post=f_weight),
        learning.STDPLearner(step_mode="m", synapse=net[4], sn=net[5],
                             tau_pre=tau_pre, tau_post=tau_post,
                             f_pre=f_weight, f_post=f_weight),
    ]
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.0)

    for img, _ in loader:
        x_seq = img.to(device).unsqueeze(0).repeat(T, 1, 1, 1, 1)
        net(x_seq)
        optimizer.zero_grad()
        for l in stdp_learners:
            l.step(on_grad=True)  # leak: ANY
        optimizer.step()
        functional.reset_net(net)
        for l in stdp_learners:
            l.reset()

    return net[0].weight.detach().abs().mean().item()


def search(loader):
    results = {}
    for tau_pre in (2.0, 4.0, 8.0):
        for tau_post in (50.0, 100.0):
            results[(tau_pre, tau_post)] = run_trial(tau_pre, tau_post, loader)
            torch.cuda.empty_cache()
    return results
