# Fixed twin of case 52: priorities reach the replay memory as a numpy array of plain floats.
# Thread: https://github.com/Kaixhin/Rainbow/pull/33
# Class: per-element tensor views kept in a long-lived Python structure
import numpy as np
import torch


class SegmentTree():
    def __init__(self, size):
        self.index = 0
        self.size = size
        self.full = False
        self.sum_tree = np.zeros((2 * size - 1,), dtype=np.float32)
        self.data = [None] * size
        self.max = 1

    def _propagate(self, index, value):
        parent = (index - 1) // 2
        left, right = 2 * parent + 1, 2 * parent + 2
        self.sum_tree[parent] = self.sum_tree[left] + self.sum_tree[right]
        if parent != 0:
            self._propagate(parent, value)

    def update(self, index, value):
        self.sum_tree[index] = value
        self._propagate(index, value)
        self.max = max(float(value), self.max)

    def append(self, data, value):
        self.data[self.index] = data
        self.update(self.index + self.size - 1, value)
        self.index = (self.index + 1) % self.size
        self.full = self.full or self.index == 0
        self.max = max(float(value), self.max)

    def total(self):
        return self.sum_tree[0]


class ReplayMemory():
    def __init__(self, args, capacity):
        self.capacity = capacity
        self.priority_exponent = args.priority_exponent
        self.transitions = SegmentTree(capacity)

    def append(self, state, action, reward, terminal):
        state = state[-1].mul(255).to(dtype=torch.uint8, device=torch.device("cpu"))
        self.transitions.append((state, action, reward, not terminal), self.transitions.max)

    def update_priorities(self, idxs, priorities):
        priorities = np.power(priorities, self.priority_exponent)
        for idx, priority in zip(idxs, priorities):
            self.transitions.update(idx, float(priority))


class Agent():
    def __init__(self, online_net, target_net, optimiser, args):
        self.online_net = online_net
        self.target_net = target_net
        self.optimiser = optimiser
        self.batch_size = args.batch_size

    def learn(self, mem):
        idxs, states, actions, returns, next_states, nonterminals, weights = mem.sample(self.batch_size)
        log_ps = self.online_net(states, log=True)
        log_ps_a = log_ps[range(self.batch_size), actions]
        with torch.no_grad():
            m = self.target_net(next_states)
        loss = -torch.sum(m * log_ps_a, 1)
        self.online_net.zero_grad()
        (weights * loss).mean().backward()
        self.optimiser.step()
        mem.update_priorities(idxs, loss.detach().cpu().numpy())
