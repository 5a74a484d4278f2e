# Recall case 10 (sealed19): MoE layer appends router tensors to a module-global list on every training forward, never cleared by the user's loop
# Thread: https://github.com/databricks/megablocks/pull/119
# Reported: GPU memory leak when training with MegaBlocks MoE layers while computing the load-balancing loss outside MegaBlocks (moe_loss_weight=0)
# Confirmed cause: ParallelMLP.forward saves (tokens_per_expert, expert scores) into the global _LOAD_BALANCING_LOSS list on every training forward and only clear_load_balancing_loss() empties it; a loop that never calls batched_load_balancing_loss/clear keeps every step's attached router scores (and their graphs); the merged fix skips saving when moe_loss_weight is 0
# Class: module-global list of per-forward tensors never cleared
import torch
from torch import nn

_LOAD_BALANCING_LOSS = []


def save_load_balancing_loss(loss):
    global _LOAD_BALANCING_LOSS
    _LOAD_BALANCING_LOSS.append(loss)  # leak: ANY


def get_load_balancing_loss():
    return _LOAD_BALANCING_LOSS


def clear_load_balancing_loss():
    _LOAD_BALANCING_LOSS.clear()


class Arguments:
    def __init__(self, hidden_size=512, moe_num_experts=8, moe_top_k=2, moe_loss_weight=0.0):
        self.hidden_size = hidden_size
        self.moe_num_experts = moe_num_experts
        self.moe_top_k = moe_top_k
        self.moe_loss_weight = moe_loss_weight


class ParallelMLP(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.router = nn.Linear(args.hidden_size, args.moe_num_experts, bias=False)
        self.experts = nn.ModuleList(
            nn.Linear(args.hidden_size, args.hidden_size) for _ in range(args.moe_num_experts)
        )

    def forward(self, x):
        in_shape = x.shape
        x = x.view(-1, in_shape[-1])
        scores = self.router(x).softmax(dim=-1)
        expert_weights, top_experts = torch.topk(scores, self.args.moe_top_k, dim=-1)
        tokens_per_expert = torch.bincount(top_experts.flatten(), minlength=self.args.moe_num_experts)
        out = torch.zeros_like(x)
        for k in range(self.args.moe_top_k):
            for e, expert in enumerate(self.experts):
                mask = top_experts[:, k] == e
                if mask.any():
                    out[mask] += expert_weights[mask, k, None] * expert(x[mask])
        if self.training:  # leak: ANY
            save_load_balancing_loss((tokens_per_expert, scores))  # leak: ANY
        return out.view(in_shape)


def my_router_aux_loss(model):
    return sum(m.router.weight.pow(2).sum() for m in model.modules() if isinstance(m, ParallelMLP))


def train(model, loader, optimizer, aux_coef=1e-3):
    model.train()
    for x, y in loader:
        out = model(x)
        loss = nn.functional.mse_loss(out, y) + aux_coef * my_router_aux_loss(model)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
