# Recall case 12 (sealed7): the PPO training loop sums each minibatch loss tensor into a running total for logging
# Thread: https://github.com/google/brax/pull/152
# Reported: the PyTorch training example accumulates losses that still carry a grad_fn, a slow memory leak over long runs
# Confirmed cause: `total_loss += loss` keeps every iteration's autograd history alive (PyTorch FAQ pattern); fixed with `float(loss)` in the merged PR, maintainer thanked the author
# Class: `total += loss` accumulation of a differentiable loss across the training loop
import collections
import torch
import torch.nn as nn


class Agent(nn.Module):
    def __init__(self, obs_size, act_size, hidden=256):
        super().__init__()
        self.policy = nn.Sequential(nn.Linear(obs_size, hidden), nn.SiLU(), nn.Linear(hidden, 2 * act_size))
        self.value = nn.Sequential(nn.Linear(obs_size, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def loss(self, td):
        logits = self.policy(td["observation"])
        loc, scale = logits.chunk(2, dim=-1)
        dist = torch.distributions.Normal(loc, nn.functional.softplus(scale) + 1e-3)
        logp = dist.log_prob(td["action"]).sum(-1)
        ratio = torch.exp(logp - td["logp"])
        adv = td["advantage"]
        policy_loss = -torch.min(ratio * adv, ratio.clamp(0.7, 1.3) * adv).mean()
        v_loss = 0.5 * (self.value(td["observation"]).squeeze(-1) - td["returns"]).pow(2).mean()
        return policy_loss + 0.5 * v_loss - 1e-2 * dist.entropy().sum(-1).mean()


def train(agent, rollouts, num_update_epochs=4, learning_rate=3e-4):
    optimizer = torch.optim.Adam(agent.parameters(), lr=learning_rate)
    total_loss = 0
    total_steps = 0
    metrics = collections.defaultdict(list)
    for update in range(len(rollouts)):
        for _ in range(num_update_epochs):
            for td in rollouts[update]:
                loss = agent.loss(td)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total_loss += loss  # leak: ANY
                total_steps += 1
        metrics["loss"].append(total_loss / total_steps)
    return metrics
