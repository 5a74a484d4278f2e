# Recall case 02 (sealed9): a sentence Encoder accumulates every batch of embeddings on the GPU before concatenating
# Thread: https://github.com/JohnGiorgi/DeCLUTR/pull/151
# Reported: embedding a large list of texts with cuda_device=0 quickly ran out of GPU memory
# Confirmed cause: the Encoder kept each batch's embeddings on the GPU until the end; merged PR accumulates them on the CPU instead
# Class: predict/encode helper returning every batch's outputs kept on the device
from typing import List

import torch
import torch.nn as nn


class TinyTransformer(nn.Module):
    def __init__(self, vocab=30522, dim=768):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, 12, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=6)

    def forward(self, ids, mask):
        hidden = self.encoder(self.embed(ids), src_key_padding_mask=~mask)
        summed = (hidden * mask.unsqueeze(-1)).sum(1)
        return summed / mask.sum(1, keepdim=True)


class Encoder:
    def __init__(self, model: nn.Module, cuda_device: int = -1):
        self.device = torch.device(f"cuda:{cuda_device}" if cuda_device >= 0 else "cpu")
        self.model = model.to(self.device).eval()

    def tokenize(self, texts: List[str], max_len=128):
        ids = torch.zeros(len(texts), max_len, dtype=torch.long)
        for i, text in enumerate(texts):
            toks = [hash(t) % 30522 for t in text.split()][:max_len]
            ids[i, : len(toks)] = torch.tensor(toks or [0])
        return ids, ids != 0

    @torch.no_grad()
    def __call__(self, inputs: List[str], batch_size: int = 64) -> torch.Tensor:
        embeddings = []
        for start in range(0, len(inputs), batch_size):
            ids, mask = self.tokenize(inputs[start : start + batch_size])
            output = self.model(ids.to(self.device), mask.to(self.device))
            embeddings.append(output)  # leak: ANY
        return torch.cat(embeddings)


if __name__ == "__main__":
    encoder = Encoder(TinyTransformer(), cuda_device=0)
    corpus = [f"document number {i} about contrastive sentence encoders" for i in range(500_000)]
    vectors = encoder(corpus)
    torch.save(vectors, "embeddings.pt")
