# Fixed twin of case 14: the except block only records the failure; cleanup and the CPU fallback run after it, once the exception is gone
# Thread: https://github.com/pytorch/pytorch/issues/26188
# Reported: after catching the OOM from model.to("cuda") and calling del/gc.collect()/empty_cache(), about 10 GB stays allocated on the GPU
# Confirmed cause: inside the `except` the live exception's traceback still references the frames (and the partly moved module and its CUDA tensors), so nothing can be freed there; triaged by maintainers as documentation (same explanation given by maintainers for OOM recovery: do the recovery outside the except block)
# Class: OOM handling that retries/falls back inside `except`
import gc

import numpy as np
import torch
import torch.nn as nn


class MyModel(nn.Module):
    def __init__(self, *embeddings):
        super().__init__()
        self.embeddings = nn.ModuleList()
        for embedding in embeddings:
            embedding = torch.as_tensor(embedding)
            self.embeddings.append(nn.Embedding.from_pretrained(embedding, freeze=True))

    def forward(self, idx):
        return torch.cat([e(idx) for e in self.embeddings], dim=-1)


def place_model(embeddings, device="cuda"):
    model = MyModel(*embeddings)
    oom = False
    try:
        model = model.to(device)
    except RuntimeError:  # CUDA out of memory
        oom = True
    if oom:
        print("GPU memory overflow. Use CPU instead.")
        del model
        gc.collect()
        torch.cuda.empty_cache()
        model = MyModel(*embeddings)
        device = "cpu"
    return model, device


if __name__ == "__main__":
    embeddings = [np.zeros((5_000_000, 1000), dtype=np.float32)] * 3
    model, device = place_model(embeddings)
    idx = torch.randint(0, 5_000_000, (64,), device=device)
    print(model(idx).shape, torch.cuda.memory_allocated() if torch.cuda.is_available() else 0)
