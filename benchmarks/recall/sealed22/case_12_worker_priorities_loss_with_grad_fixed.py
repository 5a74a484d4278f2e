# Fixed twin of case 12: compute the priority loss under torch.no_grad(), as the merged PR does
# Thread: https://github.com/medipixel/rl_algorithms/pull/252
# Reported: issue #251 (filed by the Ape-X author) reports an (inconsistent) memory leak when training Ape-X DQN with several worker processes
# Confirmed cause: the merged fix (for issue #251) puts every CPU-side inference of the workers in eval()/no_grad() "to reduce memory": compute_priorities ran the element-wise DQN loss over the whole local buffer with autograd on, building a graph (saving all activations) that is only used to read the loss values as priorities; the same PR also caps PyTorch's CPU primitive cache (LRU_CACHE_CAPACITY) for the remaining growth
# Class: evaluation helper (priority / value estimate) run with grad on inside the rollout worker
from typing import Dict

import numpy as np
import torch


class DQNWorker:
    def __init__(self, dqn, loss_fn, hyper_params, head_cfg, device, env):
        self.dqn = dqn
        self.loss_fn = loss_fn
        self.hyper_params = hyper_params
        self.head_cfg = head_cfg
        self.device = device
        self.env = env
        self.epsilon = hyper_params.max_epsilon

    def select_action(self, state: np.ndarray) -> np.ndarray:
        if self.epsilon > np.random.random():
            return np.array(self.env.action_space.sample())
        with torch.no_grad():
            state = torch.FloatTensor(state).unsqueeze(0).to(self.device)
            selected_action = self.dqn(state).argmax()
        return selected_action.cpu().numpy()

    def compute_priorities(self, memory: Dict[str, np.ndarray]) -> np.ndarray:
        """Compute initial priority values of experiences in local memory."""
        states = torch.FloatTensor(memory["states"]).to(self.device)
        actions = torch.LongTensor(memory["actions"]).to(self.device)
        rewards = torch.FloatTensor(memory["rewards"].reshape(-1, 1)).to(self.device)
        next_states = torch.FloatTensor(memory["next_states"]).to(self.device)
        dones = torch.FloatTensor(memory["dones"].reshape(-1, 1)).to(self.device)
        memory_tensors = (states, actions, rewards, next_states, dones)

        with torch.no_grad():
            dq_loss_element_wise, _ = self.loss_fn(self.dqn, self.dqn, memory_tensors, self.hyper_params.gamma, self.head_cfg)
        loss_for_prior = dq_loss_element_wise.detach().cpu().numpy()
        new_priorities = loss_for_prior + self.hyper_params.per_eps
        return new_priorities
