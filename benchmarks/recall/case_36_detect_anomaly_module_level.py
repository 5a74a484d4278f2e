# Recall case 36: anomaly detection switched on at import of the agent module
# Thread: https://github.com/Xingyu-Lin/mbpo_pytorch/issues/8
# Reported: extremely slow training (thousands of times slower than expected).
# Confirmed cause: sac/sac.py line 11 calls `torch.autograd.set_detect_anomaly(True)` for the
#   whole run; "Set to False returns to normal running speed". Anomaly mode records a Python
#   traceback for every autograd node (pytorch/pytorch#26408: it also leaks those strings).
# Class: anomaly detection left on for training
import torch
import torch.nn.functional as F
from torch.optim import Adam

torch.autograd.set_detect_anomaly(True)  # leak: ANY


def soft_update(target, source, tau):
    for target_param, param in zip(target.parameters(), source.parameters()):
        target_param.data.copy_(target_param.data * (1.0 - tau) + param.data * tau)


class SAC:
    def __init__(self, critic, critic_target, policy, args):
        self.gamma, self.tau, self.alpha = args.gamma, args.tau, args.alpha
        self.critic, self.critic_target, self.policy = critic, critic_target, policy
        self.critic_optim = Adam(self.critic.parameters(), lr=args.lr)
        self.policy_optim = Adam(self.policy.parameters(), lr=args.lr)

    def update_parameters(self, memory, batch_size, updates):
        state, action, reward, next_state, mask = memory.sample(batch_size=batch_size)
        with torch.no_grad():
            next_action, next_log_pi, _ = self.policy.sample(next_state)
            qf1_next, qf2_next = self.critic_target(next_state, next_action)
            min_qf_next = torch.min(qf1_next, qf2_next) - self.alpha * next_log_pi
            next_q_value = reward + mask * self.gamma * min_qf_next
        qf1, qf2 = self.critic(state, action)
        qf_loss = F.mse_loss(qf1, next_q_value) + F.mse_loss(qf2, next_q_value)
        self.critic_optim.zero_grad()
        qf_loss.backward()
        self.critic_optim.step()
        pi, log_pi, _ = self.policy.sample(state)
        qf1_pi, qf2_pi = self.critic(state, pi)
        policy_loss = ((self.alpha * log_pi) - torch.min(qf1_pi, qf2_pi)).mean()
        self.policy_optim.zero_grad()
        policy_loss.backward()
        self.policy_optim.step()
        if updates % 1 == 0:
            soft_update(self.critic_target, self.critic, self.tau)
        return qf_loss.item(), policy_loss.item()
