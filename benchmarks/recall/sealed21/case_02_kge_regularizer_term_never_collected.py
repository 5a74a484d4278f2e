# Recall case 02 (sealed21): custom training loop on a KGE model whose default regularizer adds a term on every forward that the loop never collects
# Thread: https://github.com/pykeen/pykeen/issues/1297
# Reported: training DistMult (and some other models) in a hand-written loop that calls the model's scoring and the loss separately runs out of GPU memory after some epochs; other models train fine
# Confirmed cause: the maintainer explains that DistMult uses a regularizer by default which accumulates its regularization term (with its graph) across calls; the library's training loop calls collect_regularization_term, which also releases it, and when that is not called the term accumulates indefinitely and holds references until OOM; fix: pass regularizer=None or add the collected term to the loss (the reporter's project merged the regularizer=None fix, dice-group/dice-embeddings#132)
# Class: a second loss accumulated on every step without backward or reset
import torch
import torch.nn as nn
import torch.nn.functional as F


class LpRegularizer(nn.Module):
    def __init__(self, weight=1.0, p=2.0):
        super().__init__()
        self.register_buffer("weight", torch.as_tensor(weight))
        self.register_buffer("regularization_term", torch.zeros(1))
        self.p = p

    def reset(self):
        self.regularization_term.detach_().zero_()

    def forward(self, x):
        return x.norm(p=self.p, dim=-1).mean()

    def update(self, *tensors):
        if not self.training or not torch.is_grad_enabled():
            return
        self.regularization_term = self.regularization_term + sum(self.forward(x) for x in tensors)  # leak: ANY

    def pop_regularization_term(self):
        term = self.regularization_term
        self.reset()
        return self.weight * term


class DistMult(nn.Module):
    def __init__(self, num_entities, num_relations, embedding_dim=200, regularizer="lp"):
        super().__init__()
        self.entity_embeddings = nn.Embedding(num_entities, embedding_dim)
        self.relation_embeddings = nn.Embedding(num_relations, embedding_dim)
        self.regularizer = LpRegularizer(weight=0.1) if regularizer == "lp" else None

    def score_hrt(self, hrt_batch):
        h = self.entity_embeddings(hrt_batch[:, 0])
        r = self.relation_embeddings(hrt_batch[:, 1])
        t = self.entity_embeddings(hrt_batch[:, 2])
        if self.regularizer is not None:
            self.regularizer.update(h, r, t)
        return (h * r * t).sum(dim=-1, keepdim=True)

    def collect_regularization_term(self):
        if self.regularizer is None:
            return 0.0
        return self.regularizer.pop_regularization_term()


def corrupt(hrt_batch, num_entities):
    neg = hrt_batch.clone()
    neg[:, 2] = torch.randint(num_entities, (hrt_batch.shape[0],), device=hrt_batch.device)
    return neg


def train(triples, num_entities, num_relations, epochs=100, batch_size=1024, device="cuda"):
    model = DistMult(num_entities, num_relations).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    triples = triples.to(device)
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(triples.shape[0], device=device)
        for start in range(0, triples.shape[0], batch_size):
            pos = triples[perm[start:start + batch_size]]
            neg = corrupt(pos, num_entities)
            pos_scores = model.score_hrt(pos)
            neg_scores = model.score_hrt(neg)
            scores = torch.cat([pos_scores, neg_scores])
            labels = torch.cat([torch.ones_like(pos_scores), torch.zeros_like(neg_scores)])
            loss = F.binary_cross_entropy_with_logits(scores, labels)  # leak: ANY
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model


if __name__ == "__main__":
    n_ent, n_rel = 40000, 200
    triples = torch.stack([
        torch.randint(n_ent, (500000,)),
        torch.randint(n_rel, (500000,)),
        torch.randint(n_ent, (500000,)),
    ], dim=1)
    train(triples, n_ent, n_rel)
