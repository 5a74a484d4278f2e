# Recall case 11: LSTM (h, c) stored into the experience buffer at every environment step
# Thread: https://github.com/Metta-AI/metta/pull/1139
# Reported: memory leak during PPO training with an LSTM policy.
# Confirmed cause: "computational graphs with LSTM state were persisting into the experience
#   replay buffer when they're supposed to be detached" (merged: detach the state before storing).
# Class: recurrent state passed as keyword arguments to a buffer's store(...)
import torch
from torch import nn


class LSTMPolicy(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=256):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU())
        self.lstm = nn.LSTMCell(hidden, hidden)
        self.actor = nn.Linear(hidden, n_actions)
        self.critic = nn.Linear(hidden, 1)

    def forward(self, obs, state):
        h, c = self.lstm(self.encoder(obs), state)
        return self.actor(h), self.critic(h).squeeze(-1), (h, c)


class Experience:
    def __init__(self, capacity):
        self.capacity = capacity
        self.rows = []

    def store(self, obs, actions, logprobs, values, rewards, dones, lstm_h, lstm_c):
        if len(self.rows) == self.capacity:
            self.rows.pop(0)
        self.rows.append(dict(obs=obs, actions=actions, logprobs=logprobs, values=values,
                              rewards=rewards, dones=dones, lstm_h=lstm_h, lstm_c=lstm_c))


def collect(env, policy, experience, n_steps, device="cuda"):
    obs = torch.as_tensor(env.reset(), device=device, dtype=torch.float32)
    h = torch.zeros(obs.shape[0], 256, device=device)
    c = torch.zeros_like(h)
    for _ in range(n_steps):
        logits, value, (h, c) = policy(obs, (h, c))
        dist = torch.distributions.Categorical(logits=logits)
        action = dist.sample()
        next_obs, reward, done, _ = env.step(action.cpu().numpy())
        experience.store(obs=obs, actions=action, logprobs=dist.log_prob(action).detach(),
                         values=value.detach(), rewards=torch.as_tensor(reward, device=device),
                         dones=torch.as_tensor(done, device=device), lstm_h=h, lstm_c=c)  # leak: ANY
        obs = torch.as_tensor(next_obs, device=device, dtype=torch.float32)
