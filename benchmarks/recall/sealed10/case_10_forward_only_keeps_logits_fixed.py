# Fixed twin of case 10: the forward-only pass keeps only the per-token log-probs, not each micro-batch's logits
# Thread: https://github.com/THUDM/slime/pull/1506
# Reported: GPU memory climbs during the compute-log-probs (forward_only) phase of RL training (before/after memory plots in the PR)
# Confirmed cause: when no-loss data was collected in forward, the logits of each micro-batch were saved into the forward_only outputs; the merged fix stops keeping them and keeps only the per-token log-probs
# Class: per-batch results (full logits) accumulated on the GPU in an inference loop
import torch
import torch.nn as nn
import torch.nn.functional as F


class PolicyModel(nn.Module):
    def __init__(self, vocab=151936, dim=1024):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.body = nn.Sequential(nn.Linear(dim, dim), nn.GELU())
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        return self.lm_head(self.body(self.embed(tokens)))


def get_log_probs(logits, tokens):
    logp = F.log_softmax(logits[:, :-1].float(), dim=-1)
    return logp.gather(-1, tokens[:, 1:, None]).squeeze(-1)


@torch.no_grad()
def forward_only(model, micro_batches, col_no_loss_data=True):
    results = []
    for tokens in micro_batches:
        logits = model(tokens)
        log_probs = get_log_probs(logits, tokens)
        item = {"log_probs": log_probs}
        del logits
        results.append(item)
    return results


def compute_log_prob(model, rollout, micro_batch_size=2):
    micro_batches = list(torch.split(rollout, micro_batch_size))
    outs = forward_only(model, micro_batches)
    return torch.cat([o["log_probs"] for o in outs])


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = PolicyModel().to(device).eval()
    for rollout_id in range(100):
        rollout = torch.randint(0, 151936, (64, 2048), device=device)
        old_log_probs = compute_log_prob(model, rollout)
        print(rollout_id, old_log_probs.shape)
