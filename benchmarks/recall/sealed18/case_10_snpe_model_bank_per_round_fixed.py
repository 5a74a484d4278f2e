# Fixed twin of case 10: no model bank; `train()` returns the trained network itself and `build_posterior()` takes one snapshot of the estimator and returns the posterior without further copies (as in the merged PR)
# Thread: https://github.com/sbi-dev/sbi/issues/812
# Reported: in multi-round SNPE with a large embedding net, memory stays around 6 GB for the first rounds and then grows to 24 GB by round 30
# Confirmed cause: `build_posterior()` appends `deepcopy(self._posterior)` (which holds the whole density estimator) to `self._model_bank` every round, and `train()`/`build_posterior()` return further deep copies; the maintainer pointed to the model bank and suggested trimming it, a maintainer issue (#1616) found it write-only, and the merged PR #1749 removed the bank and the extra copies
# Class: object lifetimes (a copy of the model kept per round)
from copy import deepcopy

import torch
from torch import nn, optim


class DirectPosterior:
    def __init__(self, posterior_estimator, prior, device):
        self.posterior_estimator = posterior_estimator
        self.prior = prior
        self._device = device
        self.default_x = None

    def set_default_x(self, x):
        self.default_x = x
        return self

    def sample(self, sample_shape, x=None):
        x = self.default_x if x is None else x
        return self.posterior_estimator.sample(sample_shape, context=x)


class PosteriorEstimator:
    def __init__(self, prior, density_estimator_builder, device="cuda"):
        self._prior = prior
        self._build_neural_net = density_estimator_builder
        self._device = device
        self._neural_net = None
        self._posterior = None
        self._theta_roundwise = []
        self._x_roundwise = []

    def append_simulations(self, theta, x, proposal=None):
        self._theta_roundwise.append(theta)
        self._x_roundwise.append(x)
        return self

    def train(self, max_num_epochs=200, learning_rate=5e-4, training_batch_size=50):
        theta = torch.cat(self._theta_roundwise)
        x = torch.cat(self._x_roundwise)
        if self._neural_net is None:
            self._neural_net = self._build_neural_net(theta, x)
        self._neural_net.to(self._device)
        optimizer = optim.Adam(list(self._neural_net.parameters()), lr=learning_rate)
        for _ in range(max_num_epochs):
            for start in range(0, theta.shape[0], training_batch_size):
                theta_b = theta[start:start + training_batch_size].to(self._device)
                x_b = x[start:start + training_batch_size].to(self._device)
                optimizer.zero_grad()
                loss = -self._neural_net.log_prob(theta_b, context=x_b).mean()
                loss.backward()
                optimizer.step()
        self._neural_net.zero_grad(set_to_none=True)
        return self._neural_net

    def build_posterior(self, density_estimator=None):
        posterior_estimator = self._neural_net if density_estimator is None else density_estimator
        posterior_estimator = deepcopy(posterior_estimator)
        self._posterior = DirectPosterior(posterior_estimator=posterior_estimator, prior=self._prior,
                                          device=self._device)
        return self._posterior


def run_multi_round(prior, simulator, x_o, density_estimator_builder, num_rounds=30, num_simulations=1000):
    inference = PosteriorEstimator(prior=prior, density_estimator_builder=density_estimator_builder)
    proposal = prior
    posterior = None
    for _ in range(num_rounds):
        theta = proposal.sample((num_simulations,))
        x = simulator(theta)
        density_estimator = inference.append_simulations(theta, x, proposal=proposal).train()
        posterior = inference.build_posterior(density_estimator)
        proposal = posterior.set_default_x(x_o)
    return posterior
