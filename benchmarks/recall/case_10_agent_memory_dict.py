# Recall case 10: per-agent LSTM memories kept in a dict between environment steps
# Thread: https://github.com/Unity-Technologies/ml-agents/pull/5048
# Reported: with recurrent (LSTM) policies, memory and step time explode over long episodes.
# Confirmed cause: "LSTMs would store the memory as a tensor, and keep a gradient. So the next
#   time around, Torch would try to backprop through this gradient. For long episodes, this
#   caused the graph to explode." (merged fix: keep the memories without their graph).
# Class: recurrent state stored per agent in a dict and fed back on the next step (RL rollout)
import numpy as np
import torch
from torch import nn


class RecurrentActor(nn.Module):
    def __init__(self, obs_size, act_size, memory_size=128):
        super().__init__()
        self.memory_size = memory_size
        self.encoder = nn.Linear(obs_size, memory_size)
        self.lstm = nn.LSTM(memory_size, memory_size // 2, batch_first=True)
        self.policy = nn.Linear(memory_size // 2, act_size)

    def forward(self, obs, memories):
        h, c = torch.split(memories, self.memory_size // 2, dim=-1)
        encoded = torch.relu(self.encoder(obs)).unsqueeze(1)
        out, (h, c) = self.lstm(encoded, (h.unsqueeze(0).contiguous(), c.unsqueeze(0).contiguous()))
        actions = torch.distributions.Categorical(logits=self.policy(out.squeeze(1))).sample()
        return actions, torch.cat([h, c], dim=-1)


class TorchPolicy:
    def __init__(self, actor):
        self.actor = actor
        self.memory_dict = {}

    def retrieve_memories(self, agent_ids):
        memory_matrix = torch.zeros(1, len(agent_ids), self.actor.memory_size)
        for index, agent_id in enumerate(agent_ids):
            if agent_id in self.memory_dict:
                memory_matrix[0, index, :] = self.memory_dict[agent_id]
        return memory_matrix

    def save_memories(self, agent_ids, memories):
        for i, agent_id in enumerate(agent_ids):
            self.memory_dict[agent_id] = memories[0, i]  # leak: ANY

    def evaluate(self, decision_requests, agent_ids):
        obs = torch.as_tensor(np.asarray(decision_requests.obs), dtype=torch.float32)
        memories = self.retrieve_memories(agent_ids)
        actions, new_memories = self.actor(obs, memories[0])
        self.save_memories(agent_ids, new_memories)
        return actions.numpy()


def rollout(env, policy, steps):
    for _ in range(steps):
        decision_requests, agent_ids = env.get_steps()
        env.set_actions(policy.evaluate(decision_requests, agent_ids))
        env.step()
