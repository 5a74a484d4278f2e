# Fixed twin of case 38: the cache is a module-level function of plain arguments (sizes, device, dtype), not of self.
# Thread: https://github.com/huggingface/transformers/issues/45412
# Reported: after `del model; gc.collect(); torch.cuda.empty_cache()` an RT-DETR model still
#   holds ~85 MB of GPU memory; evaluating many checkpoints in one process runs out of memory.
# Confirmed cause: the position-embedding method is wrapped in a class-level `lru_cache`;
#   "since `self` is the first positional arg, it becomes a cache key, creating a strong
#   reference from the class-level cache back to the instance" (PRs #45708/#45780/#45819), so
#   the module and everything it references are never freed (also pytorch/pytorch#149100).
# Class: a cache over a method of a module (the cache keeps self alive)
import functools

import torch
from torch import nn


@functools.lru_cache(maxsize=32)
def sine_position_table(width, height, embed_dim, temperature, device, dtype):
    """The constant 2-D sine/cosine table for one feature-map size."""
    grid_w = torch.arange(width, device=device, dtype=dtype)
    grid_h = torch.arange(height, device=device, dtype=dtype)
    grid_w, grid_h = torch.meshgrid(grid_w, grid_h, indexing="xy")
    pos_dim = embed_dim // 4
    omega = 1.0 / (temperature ** (torch.arange(pos_dim, device=device, dtype=dtype) / pos_dim))
    out_w = grid_w.flatten()[..., None] @ omega[None]
    out_h = grid_h.flatten()[..., None] @ omega[None]
    return torch.cat([out_w.sin(), out_w.cos(), out_h.sin(), out_h.cos()], dim=1)[None]


class SinePositionEmbedding(nn.Module):
    def __init__(self, embed_dim=256, temperature=10000):
        super().__init__()
        self.embed_dim = embed_dim
        self.temperature = temperature

    def forward(self, width, height, device, dtype):
        return sine_position_table(width, height, self.embed_dim, self.temperature, device, dtype)


class HybridEncoder(nn.Module):
    def __init__(self, embed_dim=256):
        super().__init__()
        self.position_embedding = SinePositionEmbedding(embed_dim)
        self.layer = nn.TransformerEncoderLayer(embed_dim, 8, batch_first=True)

    def forward(self, feature_map):
        b, c, h, w = feature_map.shape
        src = feature_map.flatten(2).transpose(1, 2)
        pos = self.position_embedding(w, h, feature_map.device, feature_map.dtype)
        return self.layer(src + pos)


def evaluate_checkpoints(paths, loader, build_model):
    scores = {}
    for path in paths:
        model = build_model().cuda().eval()
        model.load_state_dict(torch.load(path, map_location="cuda"))
        with torch.no_grad():
            scores[path] = sum(float(model(x.cuda()).mean()) for x in loader)
        del model
    return scores
