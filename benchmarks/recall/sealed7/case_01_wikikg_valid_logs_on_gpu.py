# Recall case 01 (sealed7): validation/test scores of every query batch are appended to a list while still on the GPU
# Thread: https://github.com/snap-stanford/ogb/issues/139
# Reported: GPU memory grows during the wikikg90m baseline's validation/test pass until it runs out
# Confirmed cause: `log` returned by forward_test_wikikg is a CUDA tensor appended to `logs` for every batch; maintainer (hyren) pushed the `.cpu()` fix
# Class: per-batch eval result tensors kept on the device in a Python list for the whole pass
import torch
import torch.nn as nn


class KEModel(nn.Module):
    def __init__(self, n_entities, n_relations, hidden_dim):
        super().__init__()
        self.entity_emb = nn.Embedding(n_entities, hidden_dim)
        self.relation_emb = nn.Embedding(n_relations, hidden_dim)

    def forward_test_wikikg(self, query, ans, candidate, mode, gpu_id):
        h = self.entity_emb(query[:, 0])
        r = self.relation_emb(query[:, 1])
        cand = self.entity_emb(candidate)              # (B, C, D)
        scores = -torch.norm((h + r).unsqueeze(1) - cand, p=1, dim=-1)
        argsort = torch.argsort(scores, dim=1, descending=True)
        return {"h,r->t": {"t_pred_top10": argsort[:, :10], "t_correct_index": ans}}


def test_mp(args, model, test_samplers, gpu_id=0, mode="Valid"):
    device = torch.device("cuda", gpu_id)
    logs = []
    with torch.no_grad():
        for sampler in test_samplers:
            for query, ans, candidate in sampler:
                query, ans, candidate = query.to(device), ans.to(device), candidate.to(device)
                log = model.forward_test_wikikg(query, ans, candidate, sampler.mode, gpu_id)  # leak: ANY
                logs.append(log)  # leak: ANY
    input_dict = {"h,r->t": {
        "t_pred_top10": torch.cat([l["h,r->t"]["t_pred_top10"] for l in logs], 0),
        "t_correct_index": torch.cat([l["h,r->t"]["t_correct_index"] for l in logs], 0),
    }}
    return input_dict


def fake_sampler(n_batches, batch=256, n_cand=1001, n_ent=10000, n_rel=100):
    class S(list):
        mode = "tail"
    s = S()
    for _ in range(n_batches):
        q = torch.stack([torch.randint(0, n_ent, (batch,)), torch.randint(0, n_rel, (batch,))], 1)
        s.append((q, torch.randint(0, n_cand, (batch,)), torch.randint(0, n_ent, (batch, n_cand))))
    return s


if __name__ == "__main__":
    model = KEModel(10000, 100, 200).cuda()
    res = test_mp(None, model, [fake_sampler(500)], gpu_id=0)
    print({k: v.shape for k, v in res["h,r->t"].items()})
