# Recall case 02 (sealed10): actions chosen by the agent network are written into the episode batch with their autograd graph attached
# Thread: https://github.com/oxwhirl/pymarl/pull/73
# Reported: CPU memory grows linearly over millions of environment steps with the episode runner until the job is OOM-killed
# Confirmed cause: EpisodeRunner stores the `actions` tensor produced by the agent forward into the batch/replay buffer without detaching it, so every stored episode keeps the graph that generated its actions (PR author's measured repro and fix; PR not merged)
# Class: rollout results with grad history appended to a long-lived buffer
import torch
import torch.nn as nn
import torch.nn.functional as F


class RNNAgent(nn.Module):
    def __init__(self, input_shape=30, rnn_hidden_dim=512, n_actions=9):
        super().__init__()
        self.fc1 = nn.Linear(input_shape, rnn_hidden_dim)
        self.rnn = nn.GRUCell(rnn_hidden_dim, rnn_hidden_dim)
        self.fc2 = nn.Linear(rnn_hidden_dim, n_actions)

    def forward(self, inputs, hidden):
        x = F.relu(self.fc1(inputs))
        h = self.rnn(x, hidden)
        return self.fc2(h), h


class BasicMAC:
    def __init__(self, n_agents=3, n_actions=9):
        self.n_agents = n_agents
        self.agent = RNNAgent(n_actions=n_actions)
        self.hidden_states = None
        self.epsilon = 0.05

    def init_hidden(self, batch_size):
        self.hidden_states = torch.zeros(batch_size * self.n_agents, 512)

    def select_actions(self, obs, avail_actions):
        agent_outs, self.hidden_states = self.agent(obs, self.hidden_states)
        agent_outs = agent_outs.masked_fill(avail_actions == 0, -1e10)
        picked = agent_outs.argmax(dim=-1, keepdim=True).float()
        # epsilon-greedy mixing keeps the result connected to agent_outs
        return picked + 0.0 * agent_outs.sum(dim=-1, keepdim=True)


class EpisodeBatch:
    def __init__(self):
        self.data = {"obs": [], "actions": [], "reward": []}

    def update(self, transition):
        for k, v in transition.items():
            self.data[k].append(v)


class ReplayBuffer:
    def __init__(self, capacity=5000):
        self.episodes = []
        self.capacity = capacity

    def insert_episode_batch(self, ep):
        self.episodes.append(ep)
        if len(self.episodes) > self.capacity:
            self.episodes.pop(0)


class EpisodeRunner:
    def __init__(self, mac, episode_limit=120):
        self.mac = mac
        self.episode_limit = episode_limit

    def run(self):
        batch = EpisodeBatch()
        self.mac.init_hidden(batch_size=1)
        for t in range(self.episode_limit):
            obs = torch.randn(self.mac.n_agents, 30)
            avail = torch.ones(self.mac.n_agents, 9)
            actions = self.mac.select_actions(obs, avail)
            reward = float(torch.rand(()))
            batch.update({"obs": obs, "actions": actions, "reward": reward})  # leak: ANY
        return batch


if __name__ == "__main__":
    mac = BasicMAC()
    runner = EpisodeRunner(mac)
    buffer = ReplayBuffer()
    for episode in range(70000):
        buffer.insert_episode_batch(runner.run())
