# Fixed twin of case 12: the autoregressive decoding strategy keeps the full log-prob vector of every step
# Thread: https://github.com/ai4co/rl4co/pull/180
# Reported: memory issues during autoregressive decoding ("solve memory leakage during autoregressive decoding")
# Confirmed cause: the decoding strategy buffered all logprobs (batch x num_nodes per step, with grad) instead of only
#   the logprob of the selected action; merged PR adds only_store_selected_logp=True by default
# Class: decoding loop keeping per-step scores/logits (with graph) for the whole rollout
import torch
import torch.nn as nn


class DecodingStrategy:
    def __init__(self, multistart=False, only_store_selected_logp=True):
        self.actions = []
        self.logprobs = []
        self.multistart = multistart
        self.only_store_selected_logp = only_store_selected_logp

    def step(self, logits, mask):
        logprobs = torch.log_softmax(logits.masked_fill(~mask, float("-inf")), dim=-1)
        action = torch.multinomial(logprobs.exp(), 1).squeeze(-1)
        self.actions.append(action)
        if self.only_store_selected_logp:
            logprobs = logprobs.gather(-1, action.unsqueeze(-1)).squeeze(-1)
        self.logprobs.append(logprobs)
        return action

    def post_decoder_hook(self):
        logprobs = torch.stack(self.logprobs, 1)
        actions = torch.stack(self.actions, 1)
        return logprobs, actions


def get_log_likelihood(logprobs, actions):
    if logprobs.dim() == 3:  # full distributions were stored: pick the chosen ones
        logprobs = logprobs.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    return logprobs.sum(1)


class AttentionModelPolicy(nn.Module):
    def __init__(self, embed_dim=128, num_heads=8):
        super().__init__()
        self.init = nn.Linear(2, embed_dim)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(embed_dim, num_heads, batch_first=True), 3)
        self.query = nn.Linear(embed_dim, embed_dim)

    def forward(self, locs):
        batch, n, _ = locs.shape
        h = self.encoder(self.init(locs))
        strategy = DecodingStrategy()
        mask = torch.ones(batch, n, dtype=torch.bool, device=locs.device)
        current = h.mean(1)
        for _ in range(n):
            logits = torch.einsum("bd,bnd->bn", self.query(current), h) / h.size(-1) ** 0.5
            action = strategy.step(10 * torch.tanh(logits), mask)
            mask = mask.scatter(1, action.unsqueeze(1), False)
            current = h[torch.arange(batch, device=locs.device), action]
        logprobs, actions = strategy.post_decoder_hook()
        return get_log_likelihood(logprobs, actions), actions


def tour_length(locs, actions):
    ordered = locs.gather(1, actions.unsqueeze(-1).expand(-1, -1, 2))
    return (ordered - ordered.roll(1, dims=1)).norm(dim=-1).sum(1)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    policy = AttentionModelPolicy().to(device)
    opt = torch.optim.Adam(policy.parameters(), lr=1e-4)
    for step in range(10000):
        locs = torch.rand(512, 200, 2, device=device)
        ll, actions = policy(locs)
        cost = tour_length(locs, actions)
        loss = ((cost - cost.mean()).detach() * ll).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
