# Fixed twin of case 01: detach fval right after closure() (as merged in PR #2529), so the stopping criterion only ever sees graph-free values
# Thread: https://github.com/meta-pytorch/botorch/issues/2526
# Reported: fitting a SingleTaskVariationalGP through fit_gpytorch_mll with a DataLoader runs the device out of memory as training progresses; not at once, but after a couple of training iterations
# Confirmed cause: the reporter traced it to torch_minimize passing fval, still attached to the autograd graph, to stopping_criterion, whose window of previous values (concatenated step after step) keeps the graphs alive; a maintainer asked for the fix, the reporter confirmed it (fitted 200k points) and the merged PR #2529 detaches fval right after closure()
# Class: tensor handed to a tracker/meter that keeps it (with its graph)
from time import monotonic

import torch
from torch import Tensor
from torch.optim import Adam


class ExpMAStoppingCriterion:
    """Stops when the exponential moving average of the loss stops decreasing."""

    def __init__(self, maxiter=10000, minimize=True, n_window=10, eta=1.0, rel_tol=1e-5):
        self.maxiter = maxiter
        self.minimize = minimize
        self.n_window = n_window
        self.rel_tol = rel_tol
        self.iter = 0
        weights = torch.exp(torch.linspace(-eta, 0, n_window))
        self.weights = weights / weights.sum()
        self._prev_fvals = None

    def __call__(self, fvals: Tensor) -> bool:
        self.iter += 1
        if self.iter == self.maxiter:
            return True
        if self._prev_fvals is None:
            self._prev_fvals = fvals.unsqueeze(0)
        else:
            # window of past losses, rebuilt from the previous window every step
            self._prev_fvals = torch.cat([self._prev_fvals[-self.n_window:], fvals.unsqueeze(0)])
        if self._prev_fvals.size(0) < self.n_window + 1:
            return False
        weights = self.weights.to(fvals)
        if self._prev_fvals.ndim > 1:
            weights = weights.unsqueeze(-1)
        prev_ma = (self._prev_fvals[:-1] * weights).sum(dim=0)
        ma = (self._prev_fvals[1:] * weights).sum(dim=0)
        rel_delta = (prev_ma - ma) / prev_ma.abs()
        if not self.minimize:
            rel_delta = -rel_delta
        return bool(torch.max(rel_delta) < self.rel_tol)


def torch_minimize(closure, parameters, optimizer=Adam, step_limit=None, stopping_criterion=None):
    """closure() runs forward + backward on the next DataLoader batch and returns (loss, grads)."""
    start_time = monotonic()
    if step_limit is None:
        step_limit = 10 ** 9
    optimizer = optimizer(list(parameters.values()))
    result = None
    for step in range(1, step_limit + 1):
        fval = closure()[0].detach()
        result = {"step": step, "fval": fval.cpu().item(), "runtime": monotonic() - start_time}
        if stopping_criterion and stopping_criterion(fval):
            result["status"] = "stopped"
            break
        optimizer.step()
    return result
