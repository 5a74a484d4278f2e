# Recall case 74: a rejection-sampling loop keeps the accepted samples with their graph
# Thread: https://github.com/sbi-dev/sbi/issues/198
# Reported: rejection sampling from an SNPE posterior fills up RAM until the machine crashes,
#   in runs where the posterior has a lot of mass outside the prior (high "leakage").
# Confirmed cause: the maintainers (quoting the fixing commit from PR #192): "The RAM filling up
#   in sampling with leakage was not because of the problem set up, but because of the missing
#   .detach()": samples drawn from the flow carry the graph back to the flow's parameters; the
#   accept/reject loop keeps drawing batches and collecting the accepted ones, so with low
#   acceptance it accumulates many graphs. Fixed by detaching the candidates.
# Class: samples drawn from a trainable model collected in a loop with their graph
import logging

import torch
from torch import Tensor


def sample_posterior_within_prior(posterior_nn, prior, x: Tensor, num_samples: int,
                                  show_progress_bars: bool = False):
    num_remaining, num_sampled_total = num_samples, 0
    accepted = []
    while num_remaining > 0:
        candidates = posterior_nn.sample(num_remaining, context=x)  # leak: ANY
        candidates = candidates.reshape(num_remaining, -1)
        are_within_prior = torch.isfinite(prior.log_prob(candidates))
        accepted.append(candidates[are_within_prior])
        num_sampled_total += num_remaining
        num_remaining -= int(are_within_prior.sum().item())
        acceptance_rate = (num_samples - num_remaining) / num_sampled_total
        if acceptance_rate < 1e-4:
            logging.warning("Only %.4f%% of the posterior samples are inside the prior.",
                            100 * acceptance_rate)
    samples = torch.cat(accepted)[:num_samples]
    return samples, acceptance_rate


def leakage_correction(posterior_nn, prior, x: Tensor, num_rejection_samples: int = 10_000):
    _, acceptance_rate = sample_posterior_within_prior(posterior_nn, prior, x, num_rejection_samples)
    return torch.as_tensor(acceptance_rate)


def train_round(posterior_nn, optimizer, loader, prior, x_o, epochs):
    for epoch in range(epochs):
        for theta, x in loader:
            optimizer.zero_grad()
            loss = -posterior_nn.log_prob(theta, context=x).mean()
            loss.backward()
            optimizer.step()
        logging.info("epoch %d: leakage-corrected mass %.3f", epoch,
                     leakage_correction(posterior_nn, prior, x_o).item())
