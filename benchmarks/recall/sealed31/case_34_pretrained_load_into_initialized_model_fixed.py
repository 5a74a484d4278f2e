# Thread: https://github.com/flagos-ai/FlagScale/pull/1221
# Reported: loading the PI0.5 pretrained checkpoint (model.safetensors) peaks at about
#   18.2 GB of CPU RSS.
# Confirmed cause: the merged PR ("fix pi05 pretrained loading memory peak"): the policy was
#   first constructed as a fully initialized model on CPU (random weights allocated) and the
#   safetensors state dict was then copied into it, so two full copies of the weights were
#   alive at once. Building the model under init_empty_weights() and materializing it with
#   load_state_dict(..., assign=True) dropped the peak to about 13.4 GB.
# Class: checkpoint restore that keeps a second full copy (initialized model + loaded state dict)
import torch
from accelerate import init_empty_weights
from safetensors.torch import load_file


class PI05Policy(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.backbone = torch.nn.Linear(config.hidden_size, config.hidden_size)
        self.action_head = torch.nn.Linear(config.hidden_size, config.action_dim)

    @staticmethod
    def _remap_keys(state_dict):
        return {k.replace("model.", "", 1): v for k, v in state_dict.items()}

    @classmethod
    def from_pretrained(cls, config, pretrained_path):
        with init_empty_weights():
            model = cls(config)
        state_dict = load_file(f"{pretrained_path}/model.safetensors")
        state_dict = cls._remap_keys(state_dict)
        missing, unexpected = model.load_state_dict(state_dict, strict=False, assign=True)
        if missing or unexpected:
            raise RuntimeError(f"bad checkpoint: missing={missing} unexpected={unexpected}")
        leftover = [n for n, t in list(model.named_parameters()) + list(model.named_buffers())
                    if t.is_meta]
        if leftover:
            raise RuntimeError(f"parameters left on meta device: {leftover}")
        model.to(dtype=config.dtype)
        for p in model.parameters():
            p.requires_grad_(config.trainable)
        return model.to(config.device)
