# Recall case 59: a cached tensor's grad_fn gets a hook that holds its owner
# Thread: https://github.com/cornellius-gp/gpytorch/pull/2734
# Reported: (gpytorch #2631, botorch #2728) with `detach_test_caches` off, as BoTorch uses it
#   through `propagate_grads(True)`, repeatedly building fantasy models grows memory until OOM.
# Confirmed cause: the merged PR: the cache properties register
#   `functools.partial(clear_cache_hook, self)` on the cached tensor's `grad_fn`, creating the
#   cycle prediction_strategy -> _memoize_cache -> cached tensor -> grad_fn (C++) -> hook ->
#   prediction_strategy, which Python's cycle collector cannot traverse; every iteration adds an
#   uncollectable chain. Fixed by registering the hook with `weakref.ref(module)`.
# Class: reference cycle through an autograd hook capturing its owner
import functools

import torch


def clear_cache_hook(module, *args, **kwargs):
    module._memoize_cache = {}


class DefaultPredictionStrategy:
    def __init__(self, train_inputs, train_prior_dist, train_labels, likelihood, detach_test_caches=False):
        self.train_inputs = train_inputs
        self.train_prior_dist = train_prior_dist
        self.train_labels = train_labels
        self.likelihood = likelihood
        self.detach_test_caches = detach_test_caches
        self._memoize_cache = {}

    @property
    def mean_cache(self):
        if "mean_cache" in self._memoize_cache:
            return self._memoize_cache["mean_cache"]
        mvn = self.likelihood(self.train_prior_dist, self.train_inputs)
        train_train_covar, train_mean = mvn.lazy_covariance_matrix, mvn.loc
        train_labels_offset = (self.train_labels - train_mean).unsqueeze(-1)
        mean_cache = train_train_covar.evaluate_kernel().solve(train_labels_offset).squeeze(-1)
        if self.detach_test_caches:
            mean_cache = mean_cache.detach()
        if mean_cache.grad_fn is not None:
            wrapper = functools.partial(clear_cache_hook, self)
            functools.update_wrapper(wrapper, clear_cache_hook)
            mean_cache.grad_fn.register_hook(wrapper)  # leak: ANY
        self._memoize_cache["mean_cache"] = mean_cache
        return mean_cache

    def exact_predictive_mean(self, test_mean, test_train_covar):
        return test_mean + (test_train_covar @ self.mean_cache.unsqueeze(-1)).squeeze(-1)


def fantasize_loop(model, candidate_sets, num_fantasies=16):
    values = []
    for X in candidate_sets:
        fantasy_model = model.fantasize(X, num_fantasies=num_fantasies)
        posterior = fantasy_model.posterior(X)
        values.append(posterior.mean.mean().item())
    return values
