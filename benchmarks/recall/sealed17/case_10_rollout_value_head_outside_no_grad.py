# Recall case 10 (sealed17): PPO rollout runs the policy under no_grad but calls the separate value network outside it and writes the value into a preallocated buffer
# Thread: https://github.com/entity-neural-network/incubator/pull/200
# Reported: memory leak when training with a separate value network: memory use grows over the rollouts
# Confirmed cause: the value-function forward in Rollout.run sat outside the torch.no_grad() block of the policy forward, so each `self.values[step] = value.flatten()` copied a graph-carrying value into the rollout buffer and chained every step's value-network graph onto it; the maintainer's fix in this PR detaches the value before storing it
# Class: eval helper with grad on (value/critic in rollouts)
import numpy as np
import torch


class Rollout:
    def __init__(self, envs, agent, value_function=None, device="cpu", tracer=None):
        self.envs = envs
        self.agent = agent
        self.value_function = value_function
        self.device = device
        self.tracer = tracer
        self.global_step = 0
        self.values = None
        self.rewards = None
        self.dones = None
        self.logprobs = []
        self.actions = []

    def run(self, steps, record_samples, next_obs, next_done):
        n_envs = len(self.envs)
        self.values = torch.zeros((steps, n_envs)).to(self.device)
        self.rewards = torch.zeros((steps, n_envs)).to(self.device)
        self.dones = torch.zeros((steps, n_envs)).to(self.device)
        self.logprobs, self.actions = [], []
        episode_returns = []

        for step in range(steps):
            self.global_step += n_envs
            if record_samples:
                self.dones[step] = next_done

            with torch.no_grad():
                action, logprob, entropy, aux, logits = self.agent(next_obs.features, next_obs.action_masks, prev_actions=None)
            if self.value_function is None:
                value = aux["value"]
            else:
                value = self.value_function.get_auxiliary_head(next_obs.features, "value", tracer=self.tracer)  # leak: ANY

            if record_samples:
                self.values[step] = value.flatten()  # leak: ANY
                self.actions.append(action)
                self.logprobs.append(logprob)

            next_obs = self.envs.act(action)
            self.rewards[step] = torch.tensor(next_obs.reward).to(self.device).view(-1)
            next_done = torch.tensor(next_obs.done).to(self.device).view(-1).float()
            for ret in next_obs.end_of_episode_returns:
                episode_returns.append(ret)

        return next_obs, next_done, {"episodic_return": float(np.mean(episode_returns)) if episode_returns else 0.0}


def returns_and_advantages(values, rewards, dones, next_value, next_done, gamma=0.99, gae_lambda=0.95):
    steps = values.shape[0]
    advantages = torch.zeros_like(rewards)
    lastgaelam = 0
    for t in reversed(range(steps)):
        if t == steps - 1:
            nextnonterminal = 1.0 - next_done
            nextvalues = next_value
        else:
            nextnonterminal = 1.0 - dones[t + 1]
            nextvalues = values[t + 1]
        delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
        advantages[t] = lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
    returns = advantages + values
    return returns, advantages
