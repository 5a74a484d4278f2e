# Recall case 14 (sealed4): encode() appends every row of each GPU embedding batch to a Python list and only moves them to the CPU at the end
# Thread: https://github.com/huggingface/sentence-transformers/pull/525
# Reported: VRAM grows during SentenceTransformer.encode until CUDA OOM on large datasets (issues #487, #522)
# Confirmed cause: `for emb in embeddings: all_embeddings.append(emb.detach())` kept all per-row views on the GPU until the final numpy conversion; the merged PR (tested on large data, maintainer merged) detaches the batch once and moves it to CPU per batch when convert_to_numpy
# Class: predict results kept on the GPU across the loop (per-row views of a device tensor appended to a list)
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class SentenceEncoder(nn.Module):
    def __init__(self, vocab=30522, dim=768, device="cuda"):
        super().__init__()
        self.embeddings = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.pooler = nn.Sequential(nn.Linear(dim, dim), nn.Tanh())
        self._target_device = torch.device(device)
        self.to(self._target_device)

    def forward(self, features):
        return {"sentence_embedding": self.pooler(self.embeddings(features["input_ids"], features["offsets"]))}

    def tokenize(self, sentences):
        ids = [torch.tensor([hash(w) % 30522 for w in s.split()] or [0]) for s in sentences]
        offsets = torch.tensor([0] + [len(t) for t in ids[:-1]]).cumsum(0)
        return {"input_ids": torch.cat(ids), "offsets": offsets}

    def encode(self, sentences, batch_size=32, convert_to_numpy=True, convert_to_tensor=False):
        self.eval()
        all_embeddings = []
        length_sorted_idx = np.argsort([-len(s) for s in sentences])
        sentences_sorted = [sentences[idx] for idx in length_sorted_idx]
        loader = DataLoader(sentences_sorted, batch_size=batch_size, collate_fn=self.tokenize, shuffle=False)
        for features in loader:
            for name in features:
                features[name] = features[name].to(self._target_device)
            with torch.no_grad():
                out_features = self.forward(features)
                embeddings = out_features["sentence_embedding"]
                for emb in embeddings:
                    all_embeddings.append(emb.detach())  # leak: ANY

        all_embeddings = [all_embeddings[idx] for idx in np.argsort(length_sorted_idx)]
        if convert_to_tensor:
            return torch.stack(all_embeddings)
        if convert_to_numpy:
            return np.asarray([emb.cpu().numpy() for emb in all_embeddings])
        return all_embeddings


if __name__ == "__main__":
    model = SentenceEncoder()
    corpus = [f"document number {i} about topic {i % 97}" for i in range(3_000_000)]
    vectors = model.encode(corpus, batch_size=128)
    np.save("corpus_embeddings.npy", vectors)
