# Recall case 09 (sealed4): posterior class caches its mixture statistics with functools.lru_cache on methods/properties
# Thread: https://github.com/meta-pytorch/botorch/pull/1650
# Reported: "Don't use functools.lru_cache on methods" - it can cause memory leaks (flake8 B019)
# Confirmed cause: FullyBayesianPosterior decorated mixture_mean / mixture_variance / quantile with lru_cache(maxsize=None); the class-level cache keys on `self`, so every posterior built in the BO loop (and its GPU mean/variance tensors) stays alive; landed fix (D42980747) caches on the instance instead
# Class: functools.lru_cache on methods holding tensors (cache keyed on self never frees instances)
from functools import lru_cache

import torch

MCMC_DIM = -3


class FullyBayesianPosterior:
    def __init__(self, mean, variance):
        self._mean = mean
        self._variance = variance

    @property
    def mean(self):
        return self._mean

    @property
    def variance(self):
        return self._variance

    @property
    @lru_cache(maxsize=None)  # leak: ANY
    def mixture_mean(self):
        return self._mean.mean(dim=MCMC_DIM)

    @property
    @lru_cache(maxsize=None)  # leak: ANY
    def mixture_variance(self):
        num_mcmc_samples = self._mean.shape[MCMC_DIM]
        t1 = self._variance.sum(dim=MCMC_DIM) / num_mcmc_samples
        t2 = self._mean.pow(2).sum(dim=MCMC_DIM) / num_mcmc_samples
        t3 = -(self._mean.sum(dim=MCMC_DIM) / num_mcmc_samples).pow(2)
        return t1 + t2 + t3

    @lru_cache(maxsize=None)  # leak: ANY
    def quantile(self, value):
        dist = torch.distributions.Normal(loc=self.mixture_mean, scale=self.mixture_variance.sqrt())
        return dist.icdf(value)


class SaasGP:
    """Stand-in for a fully Bayesian GP with num_samples hyperparameter draws."""

    def __init__(self, train_x, train_y, num_samples=256):
        self.train_x, self.train_y, self.num_samples = train_x, train_y, num_samples

    def posterior(self, X):
        d = torch.cdist(X, self.train_x)  # (b, n, n_train)
        scales = torch.rand(self.num_samples, 1, 1, device=X.device) + 0.5
        w = torch.softmax(-d.unsqueeze(1) * scales, dim=-1)  # (b, num_samples, n, n_train)
        mean = w @ self.train_y  # (b, num_samples, n, 1)
        var = w @ (self.train_y - self.train_y.mean()) ** 2 + 1e-6
        return FullyBayesianPosterior(mean, var)


def ucb(posterior, beta=2.0):
    return posterior.mixture_mean + beta * posterior.mixture_variance.sqrt()


if __name__ == "__main__":
    device = "cuda"
    train_x = torch.rand(20, 6, device=device)
    train_y = torch.randn(20, 1, device=device)
    for it in range(500):
        model = SaasGP(train_x, train_y)
        candidates = torch.rand(4096, 6, device=device)
        posterior = model.posterior(candidates.unsqueeze(0))
        scores = ucb(posterior).squeeze()
        _ = posterior.quantile(torch.tensor(0.5, device=device))
        best = candidates[scores.argmax()].unsqueeze(0)
        train_x = torch.cat([train_x, best])
        train_y = torch.cat([train_y, torch.randn(1, 1, device=device)])
        print(it, torch.cuda.memory_allocated() / 2**20)
