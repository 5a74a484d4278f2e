# Recall case 03 (sealed5): Dreamer agent acts in the environment with autograd on, so every step's actor/RSSM graph piles up
# Thread: https://github.com/kc-ml2/SimpleDreamer/issues/7
# Reported: CUDA out of memory during environment interaction (long/no time-limit episodes)
# Confirmed cause: environment_interaction ran the encoder/RSSM/actor without no_grad, so the recurrent state kept a growing graph; reporter showed stable 21.9 GiB with @torch.no_grad(), maintainer agreed the suggestion is proper
# Class: rollout/acting loop run with grad enabled, recurrent state chained across steps
import torch
import torch.nn as nn


class RSSM(nn.Module):
    def __init__(self, embed=256, deter=200, action_dim=3):
        super().__init__()
        self.cell = nn.GRUCell(embed + action_dim, deter)
        self.deter = deter

    def forward(self, embedded, action, state):
        return self.cell(torch.cat([embedded, action], -1), state)


class Dreamer:
    def __init__(self, obs_dim=64, action_dim=3, device="cuda"):
        self.device = device
        self.encoder = nn.Linear(obs_dim, 256).to(device)
        self.rssm = RSSM(action_dim=action_dim).to(device)
        self.actor = nn.Sequential(nn.Linear(200, 200), nn.ELU(), nn.Linear(200, action_dim)).to(device)
        self.action_dim = action_dim

    def environment_interaction(self, env, num_episodes):  # leak: ANY
        scores = []
        for _ in range(num_episodes):
            obs = env.reset()
            state = torch.zeros(1, self.rssm.deter, device=self.device)
            action = torch.zeros(1, self.action_dim, device=self.device)
            done, score = False, 0.0
            while not done:
                embedded = self.encoder(torch.as_tensor(obs, device=self.device).float().unsqueeze(0))
                state = self.rssm(embedded, action, state)
                action = torch.tanh(self.actor(state))
                obs, reward, done, _ = env.step(action.squeeze(0).cpu().numpy())
                score += reward
            scores.append(score)
        return scores
