# Recall case 25 (sealed3): the learner's update returns its losses as tensors and the agent buffers them for wandb
# Thread: https://github.com/cyoon1729/RLcycle/pull/10
# Reported: memory kept growing in the DQN/SAC agents; wandb logging was also a bottleneck
# Confirmed cause: the maintainer's PR "Fix wandb bottleneck and change suspicious memory leak parts" changes all loss
#   returns to native float (and delays wandb.log); merged by the maintainer (cause stated as "suspicious" - medium)
# Class: loss values returned by a helper as tensors and appended to a logging buffer
import numpy as np
import torch
import torch.nn as nn
import wandb


class QNetwork(nn.Module):
    def __init__(self, obs_dim=128, n_actions=18, hidden=512):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, n_actions))

    def forward(self, x):
        return self.net(x)


class DQNLearner:
    def __init__(self, device, gamma=0.99):
        self.device = device
        self.network = QNetwork().to(device)
        self.target_network = QNetwork().to(device)
        self.target_network.load_state_dict(self.network.state_dict())
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=1e-4)
        self.gamma = gamma

    def update_model(self, experience):
        states, actions, rewards, next_states, dones = experience
        q_values = self.network(states).gather(1, actions.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            target = rewards + self.gamma * (1 - dones) * self.target_network(next_states).max(1)[0]
        element_wise_loss = (q_values - target).pow(2)
        loss = element_wise_loss.mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss, q_values.mean()  # leak: ANY


class DQNAgent:
    def __init__(self, device, log_every=1000):
        self.learner = DQNLearner(device)
        self.device = device
        self.log_every = log_every
        self.update_info = []

    def sample_experience(self, batch=256):
        d = self.device
        return (torch.randn(batch, 128, device=d), torch.randint(0, 18, (batch,), device=d),
                torch.randn(batch, device=d), torch.randn(batch, 128, device=d), torch.zeros(batch, device=d))

    def train(self, n_updates):
        for step in range(1, n_updates + 1):
            info = self.learner.update_model(self.sample_experience())
            self.update_info.append(info)
            if step % self.log_every == 0:
                avg = np.mean([[float(v) for v in i] for i in self.update_info], axis=0)
                wandb.log({"loss": avg[0], "mean_q": avg[1]}, step=step)
                self.update_info = []


if __name__ == "__main__":
    wandb.init(project="rlcycle", mode="offline")
    DQNAgent("cuda" if torch.cuda.is_available() else "cpu").train(1_000_000)
