# Recall case 19 (sealed): annealed importance sampling accumulates log-weights with autograd on
# Thread: https://github.com/lxuechen/BDMC/pull/3
# Reported: running AIS (bidirectional Monte Carlo) on a VAE decoder runs the GPU out of memory
#   as the number of intermediate distributions grows.
# Confirmed cause: the reporter's PR and the maintainer's fix (#4): "`log_f_i` has a gradient and
#   is accumulated in `logw`", so `logw` holds the graph of every annealing step; "only `grad_U`
#   should require gradient computation", so the maintainer ran the sampler under no_grad and
#   wrapped just the gradient of the potential in `torch.enable_grad()`.
# Class: a running accumulator built from graph-carrying values in a loop with no backward
import numpy as np
import torch

from . import hmc, utils


def ais_trajectory(model, loader, forward=True, schedule=np.linspace(0.0, 1.0, 500),
                   n_sample=100, device="cuda"):
    def log_f_i(z, data, t, log_likelihood_fn=utils.log_bernoulli):
        zeros = torch.zeros_like(z)
        log_prior = utils.log_normal(z, zeros, zeros)
        log_likelihood = log_likelihood_fn(model.decode(z), data)
        return log_prior + log_likelihood.mul_(t)

    logws = []
    for i, (batch, post_z) in enumerate(loader):
        B = batch.size(0) * n_sample
        batch = batch.to(device).repeat(n_sample, 1)
        epsilon = torch.full(size=(B,), device=device, fill_value=0.01)
        accept_hist = torch.zeros(size=(B,), device=device)
        logw = torch.zeros(size=(B,), device=device)
        current_z = torch.randn(size=(B, model.latent_dim), device=device) if forward \
            else post_z.repeat(n_sample, 1).to(device)
        current_z.requires_grad_()

        for j, (t0, t1) in enumerate(zip(schedule[:-1], schedule[1:]), 1):
            log_int_1 = log_f_i(current_z, batch, t0)
            log_int_2 = log_f_i(current_z, batch, t1)
            logw += log_int_2 - log_int_1  # leak: ANY

            def U(z):
                return -log_f_i(z, batch, t1)

            def grad_U(z):
                z = z.detach().requires_grad_()
                grad = torch.autograd.grad(U(z).sum(), z)[0]
                return torch.clamp(grad, -10000, 10000)

            current_v = torch.randn(size=current_z.size(), device=device)
            z, v = hmc.hmc_trajectory(current_z, current_v, grad_U, epsilon)
            current_z, epsilon, accept_hist = hmc.accept_reject(
                current_z, current_v, z, v, epsilon, accept_hist, j, U, K=lambda v: 0.5 * (v ** 2).sum(1))

        logw = utils.log_mean_exp(logw.view(n_sample, -1).transpose(0, 1))
        if not forward:
            logw = -logw
        logws.append(logw.detach().cpu())
    return logws
