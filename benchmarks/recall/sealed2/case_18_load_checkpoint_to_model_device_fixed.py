# Fixed twin of case 18: the checkpoint is loaded with map_location="cpu" and copied into the placed model (the PR).
# Thread: https://github.com/yuantianyuan01/FastWAM/pull/20
# Reported: GPU memory right after model load is unexpectedly high (issue #18 of the same repository).
# Confirmed cause: the merged PR: `load_checkpoint` and the pretrained-weight loader used
#   `map_location=self.device`, materialising the whole state dict as temporary GPU tensors next to
#   the model's parameters and inflating reserved memory; the fix loads with `map_location="cpu"`.
# Class: torch.load with map_location set to the (GPU) device of an already placed model
import torch
import torch.nn as nn


class FastWAM(nn.Module):
    def __init__(self, video_backbone: nn.Module, action_head: nn.Module, device="cuda", dtype=torch.bfloat16):
        super().__init__()
        self.video_backbone = video_backbone
        self.action_head = action_head
        self.device = torch.device(device)
        self.to(self.device, dtype=dtype)

    def forward(self, frames, proprio):
        latents = self.video_backbone(frames)
        return self.action_head(latents, proprio)

    def load_checkpoint(self, path, strict=True):
        payload = torch.load(path, map_location="cpu")
        state_dict = payload.get("state_dict", payload)
        state_dict = {k.removeprefix("module."): v for k, v in state_dict.items()}
        missing, unexpected = self.load_state_dict(state_dict, strict=strict)
        if missing or unexpected:
            print(f"missing keys: {len(missing)}, unexpected keys: {len(unexpected)}")
        return payload.get("step", 0)


def build_policy(cfg):
    from fastwam.backbones import build_backbone, build_action_head

    model = FastWAM(build_backbone(cfg.backbone), build_action_head(cfg.head), device=cfg.device)
    if cfg.checkpoint:
        step = model.load_checkpoint(cfg.checkpoint)
        print(f"resumed from step {step}")
    model.eval()
    return model
