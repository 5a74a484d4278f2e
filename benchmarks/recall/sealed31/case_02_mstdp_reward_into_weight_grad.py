# Thread: https://github.com/fangwei123456/spikingjelly/pull/705
# Reported: reward-modulated STDP with a reward produced by a critic network: synapse.weight.grad
#   carries a grad_fn and about a hundred more tensors survive gc.collect() after every run,
#   growing linearly with the number of steps.
# Confirmed cause: the reward handed to MSTDPLearner.step() is graph-connected (a critic's output);
#   dw = reward * eligibility is written into synapse.weight.grad, and each later step() chains
#   onto it through weight.grad - delta_w, so every forward graph stays alive. The merged PR
#   detaches the reward at the top of step() (the same retention as the earlier spike-recording
#   leak, "just entering through the reward").
# Class: carried state (weight.grad) updated every step with a graph-connected tensor, never detached
import torch
from torch import nn


class MSTDPLearner:
    def __init__(self, synapse, sn, tau_pre=20.0, tau_post=20.0):
        self.synapse = synapse
        self.sn = sn
        self.tau_pre = tau_pre
        self.tau_post = tau_post
        self.in_spikes = []
        self.out_spikes = []
        self.trace_pre = None
        self.trace_post = None
        synapse.register_forward_hook(self._record_input)
        sn.register_forward_hook(self._record_output)

    def _record_input(self, module, inputs, output):
        self.in_spikes.append(inputs[0].detach())

    def _record_output(self, module, inputs, output):
        self.out_spikes.append(output.detach())

    def reset(self):
        self.in_spikes.clear()
        self.out_spikes.clear()
        self.trace_pre = None
        self.trace_post = None

    def step(self, reward, on_grad=True, scale=1.0):
        delta_w = None
        for in_spike, out_spike in zip(self.in_spikes, self.out_spikes):
            if self.trace_pre is None:
                self.trace_pre = torch.zeros_like(in_spike)
                self.trace_post = torch.zeros_like(out_spike)
            self.trace_pre = self.trace_pre - self.trace_pre / self.tau_pre + in_spike
            self.trace_post = self.trace_post - self.trace_post / self.tau_post + out_spike
            eligibility = out_spike.unsqueeze(2) * self.trace_pre.unsqueeze(1) \
                - self.trace_post.unsqueeze(2) * in_spike.unsqueeze(1)
            dw = (reward.view(-1, 1, 1) * eligibility).sum(0)  # leak: ANY
            delta_w = dw if delta_w is None else delta_w + dw
        self.in_spikes.clear()
        self.out_spikes.clear()
        if delta_w is None:
            return None
        delta_w = delta_w * scale
        if on_grad:
            if self.synapse.weight.grad is None:
                self.synapse.weight.grad = -delta_w
            else:
                self.synapse.weight.grad = self.synapse.weight.grad - delta_w  # leak: ANY
        return delta_w


def train(net, critic, learner, optimizer, loader, num_epochs, T=20):
    for epoch in range(num_epochs):
        for x, target in loader:
            optimizer.zero_grad()
            out_rate = 0.0
            for t in range(T):
                out_rate = out_rate + net(x)
            out_rate = out_rate / T
            reward = critic(out_rate).squeeze(-1)
            learner.step(reward, on_grad=True)
            optimizer.step()
            learner.reset()
            for m in net.modules():
                if hasattr(m, "reset"):
                    m.reset()
