# Recall case 13 (sealed6): Infini-attention compressive memory M/z is carried across segments with its graph, forcing retain_graph=True
# Thread: https://github.com/jlamprou/Infini-Attention/issues/3
# Reported: per-segment backward failed with "Trying to backward through the graph a second time"; with retain_graph=True memory use grew, defeating the purpose of Infini-attention
# Confirmed cause: the memory state (M, z) updated from one segment was fed to the next without detaching, chaining every segment's graph; repo author: detach M and z in _update_memory so no retained graph is needed; reporter confirmed it helped
# Class: recurrent state carried across chunks/batches without detach, plus backward(retain_graph=True) in a loop
import torch
import torch.nn.functional as F
from torch import nn


class InfiniAttention(nn.Module):
    def __init__(self, dim=1024, n_heads=16):
        super().__init__()
        self.h, self.dh = n_heads, dim // n_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.o = nn.Linear(dim, dim)
        self.beta = nn.Parameter(torch.zeros(1, n_heads, 1, 1))
        self.M = None
        self.z = None

    def reset_memory(self):
        self.M, self.z = None, None

    def _retrieve(self, sq):
        if self.M is None:
            return torch.zeros_like(sq)
        return (sq @ self.M) / ((sq @ self.z.unsqueeze(-1)) + 1e-6)

    def _update_memory(self, sk, v):
        new_M = sk.transpose(-2, -1) @ v
        new_z = sk.sum(dim=-2)
        if self.M is None:
            self.M, self.z = new_M, new_z  # leak: ANY
        else:
            self.M, self.z = self.M + new_M, self.z + new_z  # leak: ANY

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
        sq, sk = F.elu(q) + 1, F.elu(k) + 1
        mem_out = self._retrieve(sq)
        self._update_memory(sk, v)
        local = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        g = torch.sigmoid(self.beta)
        out = g * mem_out + (1 - g) * local
        return self.o(out.transpose(1, 2).reshape(B, T, -1))


class TinyLM(nn.Module):
    def __init__(self, vocab=32000, dim=1024, layers=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(InfiniAttention(dim) for _ in range(layers))
        self.head = nn.Linear(dim, vocab)

    def reset_memory(self):
        for layer in self.layers:
            layer.reset_memory()

    def forward(self, ids):
        x = self.emb(ids)
        for layer in self.layers:
            x = x + layer(x)
        return self.head(x)


if __name__ == "__main__":
    model = TinyLM().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    segment_len = 2048
    for step in range(1000):
        ids = torch.randint(0, 32000, (2, 32768 + 1), device="cuda")
        model.reset_memory()
        opt.zero_grad()
        for s in range(0, 32768, segment_len):
            seg, tgt = ids[:, s:s + segment_len], ids[:, s + 1:s + segment_len + 1]
            logits = model(seg)
            loss = F.cross_entropy(logits.flatten(0, 1), tgt.flatten())
            loss.backward(retain_graph=True)  # leak: ANY
        opt.step()
