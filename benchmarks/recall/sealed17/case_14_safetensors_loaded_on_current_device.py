# Recall case 14 (sealed17): checkpoint helper reads the safetensors state dict straight onto the current CUDA device and copies it into a model that already sits on the GPU
# Thread: https://github.com/hpcaitech/Open-Sora/pull/841
# Reported: GPU memory peaks at about twice the weights while the large checkpoint is loaded for inference, so loading runs out of memory on GPUs where the model itself fits
# Confirmed cause: load_checkpoint materialized every tensor of the safetensors file on the current CUDA device before load_state_dict copied it into the already-placed model, so the GPU briefly held the weights twice; the merged PR loads the checkpoint on the CPU instead
# Class: torch.load onto the GPU (state dict materialized on the device next to the live model)
import os

import torch
import torch.nn as nn
from safetensors.torch import load_file


def print_load_warning(missing, unexpected):
    if missing:
        print(f"Got {len(missing)} missing keys:\n\t" + "\n\t".join(missing))
    if unexpected:
        print(f"Got {len(unexpected)} unexpected keys:\n\t" + "\n\t".join(unexpected))


def load_checkpoint(model: nn.Module, path: str, device_map="cpu", strict: bool = False, rename_keys: dict = None) -> nn.Module:
    assert os.path.exists(path), f"Could not find checkpoint at {path}"
    print(f"Loading checkpoint from {path}")
    if path.endswith(".safetensors"):
        ckpt = load_file(path, device=torch.cuda.current_device())  # leak: ANY
        if rename_keys is not None:
            renamed = {}
            for old_key, v in ckpt.items():
                new_key = old_key
                for old_prefix, new_prefix in rename_keys.items():
                    if old_prefix in old_key:
                        new_key = old_key.replace(old_prefix, new_prefix)
                        break
                renamed[new_key] = v
            ckpt = renamed
        missing, unexpected = model.load_state_dict(ckpt, strict=strict)
        print_load_warning(missing, unexpected)
    else:
        ckpt = torch.load(path, map_location=device_map)
        missing, unexpected = model.load_state_dict(ckpt, strict=strict)
        print_load_warning(missing, unexpected)
    return model


def build_model(model_cls, model_cfg, ckpt_path, device="cuda", dtype=torch.bfloat16):
    model = model_cls(**model_cfg).to(device=device, dtype=dtype).eval()
    model = load_checkpoint(model, ckpt_path)
    return model
