# Fixed twin of case 03: load the checkpoint with map_location='cpu' and only then move the model to the device
# Thread: https://github.com/Robbyant/lingbot-map/pull/43
# Reported: OOM during load on a 10GB RTX 3080 before inference even starts
# Confirmed cause: torch.load(..., map_location=device) materialises the checkpoint on the GPU, then model.to(device) allocates a second copy; PR changes map_location to 'cpu' and a user confirmed it clears the load-time OOM (PR still open)
# Class: torch.load(map_location=<cuda device>) followed by model.to(device)
import argparse
import torch
import torch.nn as nn


class StreamingMapper(nn.Module):
    def __init__(self, dim=1024, depth=24):
        super().__init__()
        self.blocks = nn.ModuleList([nn.TransformerEncoderLayer(dim, 16, 4 * dim, batch_first=True) for _ in range(depth)])
        self.head = nn.Linear(dim, 3)

    def forward(self, tokens):
        for blk in self.blocks:
            tokens = blk(tokens)
        return self.head(tokens)


def load_model(ckpt_path, device):
    model = StreamingMapper()
    state = torch.load(ckpt_path, map_location="cpu")
    model.load_state_dict(state["model"], strict=False)
    model = model.to(device).eval()
    return model


@torch.no_grad()
def run(model, frames, device):
    outs = []
    for frame in frames:
        outs.append(model(frame.to(device)).cpu())
    return outs


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt", default="lingbot_map.pt")
    args = p.parse_args()
    dev = torch.device("cuda")
    m = load_model(args.ckpt, dev)
    run(m, [torch.randn(1, 256, 1024) for _ in range(8)], dev)
