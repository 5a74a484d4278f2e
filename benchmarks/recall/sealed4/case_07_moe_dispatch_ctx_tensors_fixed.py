# Fixed twin of case 07: GatingEncoder/GatingDecoder keep their input tensors through ctx.save_for_backward
# Thread: https://github.com/microsoft/Tutel/issues/237
# Reported: with gradient accumulation on, GPU memory is far higher than without and grows with the number of accumulation steps
# Confirmed cause: GatingEncoder/GatingDecoder stored reshaped_input / expert_output directly on ctx instead of ctx.save_for_backward; the reporter's PR #238 (merged, "LGTM. Thanks!") switched to save_for_backward and memory stopped growing with accumulation steps
# Class: custom autograd.Function stores tensors on ctx beyond save_for_backward
from types import SimpleNamespace

import torch
import torch.nn as nn


class GatingEncoder(torch.autograd.Function):
    @staticmethod
    def forward(ctx, config, reshaped_input, gates):
        ctx.save_for_backward(reshaped_input)
        ctx.config = config
        ctx.gates = gates
        dispatched = torch.zeros(config.num_experts * config.capacity, config.model_dim,
                                 dtype=reshaped_input.dtype, device=reshaped_input.device)
        dispatched.index_add_(0, config.locations, reshaped_input * gates.unsqueeze(-1))
        return dispatched

    @staticmethod
    def backward(ctx, grad_dispatched):
        reshaped_input = ctx.saved_tensors[0]
        grad_input = grad_dispatched.index_select(0, ctx.config.locations) * ctx.gates.unsqueeze(-1)
        grad_gates = (grad_dispatched.index_select(0, ctx.config.locations) * reshaped_input).sum(-1)
        return None, grad_input, grad_gates


class GatingDecoder(torch.autograd.Function):
    @staticmethod
    def forward(ctx, config, expert_output, gates):
        ctx.save_for_backward(expert_output)
        ctx.config = config
        ctx.gates = gates
        return expert_output.index_select(0, config.locations) * gates.unsqueeze(-1)

    @staticmethod
    def backward(ctx, grad_combined):
        expert_output = ctx.saved_tensors[0]
        grad_expert = torch.zeros_like(expert_output)
        grad_expert.index_add_(0, ctx.config.locations, grad_combined * ctx.gates.unsqueeze(-1))
        grad_gates = (expert_output.index_select(0, ctx.config.locations) * grad_combined).sum(-1)
        return None, grad_expert, grad_gates


class MoELayer(nn.Module):
    def __init__(self, model_dim=1024, num_experts=8, hidden=4096, capacity_factor=1.25):
        super().__init__()
        self.model_dim, self.num_experts, self.capacity_factor = model_dim, num_experts, capacity_factor
        self.gate = nn.Linear(model_dim, num_experts, bias=False)
        self.w1 = nn.Parameter(torch.randn(num_experts, model_dim, hidden) * 0.02)
        self.w2 = nn.Parameter(torch.randn(num_experts, hidden, model_dim) * 0.02)

    def forward(self, x):
        tokens = x.reshape(-1, self.model_dim)
        scores = torch.softmax(self.gate(tokens), dim=-1)
        gates, expert_idx = scores.max(dim=-1)
        capacity = int(self.capacity_factor * tokens.size(0) / self.num_experts) + 1
        one_hot = nn.functional.one_hot(expert_idx, self.num_experts)
        slot = (one_hot.cumsum(0) - 1).gather(1, expert_idx.unsqueeze(1)).squeeze(1).clamp(max=capacity - 1)
        config = SimpleNamespace(num_experts=self.num_experts, capacity=capacity, model_dim=self.model_dim,
                                 locations=expert_idx * capacity + slot)
        dispatched = GatingEncoder.apply(config, tokens, gates).view(self.num_experts, capacity, self.model_dim)
        h = torch.relu(torch.bmm(dispatched, self.w1))
        expert_out = torch.bmm(h, self.w2).reshape(-1, self.model_dim)
        return GatingDecoder.apply(config, expert_out, gates).view_as(x)


if __name__ == "__main__":
    device = "cuda"
    model = nn.Sequential(MoELayer(), nn.LayerNorm(1024), MoELayer()).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    grad_accum_steps = 16
    for step in range(1000):
        for micro in range(grad_accum_steps):
            x = torch.randn(8, 512, 1024, device=device)
            loss = model(x).pow(2).mean() / grad_accum_steps
            loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        print(step, torch.cuda.max_memory_allocated() / 2**30)
