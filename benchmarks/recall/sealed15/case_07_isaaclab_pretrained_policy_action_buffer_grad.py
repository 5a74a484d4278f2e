# Recall case 07 (sealed15): IsaacLab PreTrainedPolicyAction copies the low-level policy output, computed with grad on, into a persistent action buffer
# Thread: https://github.com/isaac-sim/IsaacLab/pull/5923
# Reported: when environments are stepped outside torch.inference_mode(), the persistent low_level_actions buffer starts requiring grad (autograd leak) and Warp later rejects it
# Confirmed cause: the merged PR: apply_actions ran the pre-trained low-level policy without no_grad; copying its grad-carrying output into self.low_level_actions makes the persistent buffer part of the autograd graph, so each step's policy graph stays attached to it; fixed by running the policy under torch.no_grad() and detaching before the copy
# Class: policy/eval helper run with grad on, output written into a long-lived buffer
import torch
import torch.nn as nn


class LowLevelPolicy(nn.Module):
    def __init__(self, obs_dim=48, act_dim=12):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 512), nn.ELU(), nn.Linear(512, 256), nn.ELU(), nn.Linear(256, act_dim))

    def forward(self, obs):
        return self.net(obs)


class JointPositionAction:
    def __init__(self, num_envs, act_dim, device):
        self.processed_actions = torch.zeros(num_envs, act_dim, device=device)

    def process_actions(self, actions):
        self.processed_actions[:] = actions

    def apply_actions(self):
        pass


class PreTrainedPolicyAction:
    def __init__(self, num_envs, device, low_level_decimation=4):
        self.policy = LowLevelPolicy().to(device)
        self.low_level_decimation = low_level_decimation
        self.low_level_actions = torch.zeros(num_envs, 12, device=device)
        self._low_level_action_term = JointPositionAction(num_envs, 12, device)
        self._raw_actions = torch.zeros(num_envs, 3, device=device)
        self._counter = 0
        self._device = device

    def process_actions(self, actions):
        self._raw_actions[:] = actions

    def low_level_observations(self):
        return torch.cat([torch.randn(self._raw_actions.shape[0], 45, device=self._device), self._raw_actions], -1)

    def apply_actions(self):
        if self._counter % self.low_level_decimation == 0:
            low_level_obs = self.low_level_observations()
            self.low_level_actions[:] = self.policy(low_level_obs)  # leak: ANY
            self._low_level_action_term.process_actions(self.low_level_actions)
            self._counter = 0
        self._low_level_action_term.apply_actions()
        self._counter += 1


if __name__ == "__main__":
    dev = torch.device("cuda")
    term = PreTrainedPolicyAction(num_envs=4096, device=dev)
    for step in range(10 ** 6):
        term.process_actions(torch.randn(4096, 3, device=dev))
        for _ in range(4):
            term.apply_actions()
