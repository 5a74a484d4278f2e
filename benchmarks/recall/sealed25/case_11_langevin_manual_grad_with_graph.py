# Recall case 11 (sealed25): diffusion inverse-problem solver hands SGD a hand-made gradient that was computed from the leaf with autograd on
# Thread: https://github.com/devzhk/InverseBench/pull/22
# Reported: CUDA memory leak while running the DAPS sampler: memory kept growing over the annealing steps / problems solved, since every Langevin call left tensors behind
# Confirmed cause: the merged PR (maintainer: "Thanks for catching the memory leak"): in LangevinDynamics.sample the anchor term (x - x0hat) / sigma**2 is computed from the leaf x (requires_grad=True), so the manually built gradient carries a grad_fn that points back at x's AccumulateGrad node; assigning it to x.grad makes x -> x.grad -> grad_fn -> x a cycle through autograd internals that is never freed, once per Langevin call. The fix detaches the anchor term and the assigned gradient and clears x.grad before returning (also on the NaN early return)
# Class: gradient tensor built with autograd on and stored into a leaf's .grad (graph-bearing manual gradient kept alive through the leaf)
import numpy as np
import torch
import tqdm

from inverse_bench_stub import Algo, Scheduler, DiffusionSampler


class LangevinDynamics:
    def __init__(self, num_steps, lr, tau=0.01, lr_min_ratio=0.01):
        self.num_steps = num_steps
        self.lr = lr
        self.tau = tau
        self.lr_min_ratio = lr_min_ratio

    def sample(self, x0hat, operator, measurement, sigma, ratio, verbose=False):
        pbar = tqdm.trange(self.num_steps) if verbose else range(self.num_steps)
        lr = self.get_lr(ratio)
        x0hat = x0hat.detach()
        x = x0hat.clone().detach().requires_grad_(True)
        optimizer = torch.optim.SGD([x], lr)
        for _ in pbar:
            optimizer.zero_grad()
            # operator.gradient runs torch.autograd.grad on its own detached copy: no graph here
            gradient = operator.gradient(x, measurement) / (2 * self.tau ** 2)
            gradient += (x - x0hat) / sigma ** 2  # leak: ANY
            x.grad = gradient  # leak: ANY
            optimizer.step()
            with torch.no_grad():
                epsilon = torch.randn_like(x)
                x.data = x.data + np.sqrt(2 * lr) * epsilon
            if torch.isnan(x).any():
                return torch.zeros_like(x)
        return x.detach()

    def get_lr(self, ratio):
        multiplier = 1 + ratio * (self.lr_min_ratio - 1)
        return multiplier * self.lr


class DAPS(Algo):
    def __init__(self, net, forward_op, annealing_scheduler_config={}, diffusion_scheduler_config={},
                 lgvd_config={}):
        super().__init__(net, forward_op)
        self.net = net
        self.net.eval().requires_grad_(False)
        self.forward_op = forward_op
        self.annealing_scheduler = Scheduler(**annealing_scheduler_config)
        self.diffusion_scheduler_config = diffusion_scheduler_config
        self.lgvd = LangevinDynamics(**lgvd_config)

    def inference(self, observation, num_samples=1, verbose=True):
        device = self.forward_op.device
        steps = self.annealing_scheduler.num_steps
        pbar = tqdm.trange(steps) if verbose else range(steps)
        xt = torch.randn(num_samples, self.net.img_channels, self.net.img_resolution,
                         self.net.img_resolution, device=device) * self.annealing_scheduler.sigma_max
        for step in pbar:
            sigma = self.annealing_scheduler.sigma_steps[step]
            # 1. reverse diffusion
            sampler = DiffusionSampler(Scheduler(**self.diffusion_scheduler_config, sigma_max=sigma))
            x0hat = sampler.sample(self.net, xt, SDE=False, verbose=False)
            # 2. Langevin dynamics on the data-consistency posterior
            x0y = self.lgvd.sample(x0hat, self.forward_op, observation, sigma, step / steps)
            # 3. forward diffusion
            xt = x0y + torch.randn_like(x0y) * self.annealing_scheduler.sigma_steps[step + 1]
        return xt


def solve_all(algo, dataset):
    results = []
    for observation in dataset:
        results.append(algo.inference(observation, verbose=False).cpu())
    return results
