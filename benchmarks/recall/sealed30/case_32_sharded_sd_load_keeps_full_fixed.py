# Thread: https://github.com/meta-pytorch/torchtune/pull/2656
# Reported: very high host RAM while loading a checkpoint for a distributed (FSDP2) run without
#   DCP's set_model_state_dict: at the end of loading, every process holds the whole state dict
#   in CPU memory (see torchtune issue #1318).
# Confirmed cause: the merged PR: checkpoints are mmap-loaded, so tensors are only read into RAM
#   when copied in the loop of load_from_full_model_state_dict, but "`full_tensor` are stored in
#   `full_sd` so the memory will not be released after used. As a result, each process will have
#   a full state dict in its cpu memory at the end of the loop"; fixed by releasing each
#   full_tensor from full_sd at the end of its iteration.
# Class: sharded checkpoint restore keeps the full (materialised) copy of every tensor alive
import torch
from torch import nn
from torch.distributed._tensor import distribute_tensor


def load_from_full_model_state_dict(model: nn.Module, full_sd: dict, device: torch.device,
                                    strict: bool = False):
    meta_sharded_sd = model.state_dict()
    sharded_sd = {}
    for param_name, full_tensor in full_sd.items():
        sharded_meta_param = meta_sharded_sd.get(param_name)
        full_tensor = full_tensor.to(sharded_meta_param.dtype).to(device)
        if not hasattr(sharded_meta_param, "device_mesh"):
            sharded_tensor = full_tensor
        else:
            sharded_tensor = distribute_tensor(
                full_tensor,
                sharded_meta_param.device_mesh,
                sharded_meta_param.placements,
            )
        sharded_sd[param_name] = nn.Parameter(sharded_tensor)
        # drop the materialised full tensor from the caller's dict right away
        full_sd[param_name] = None
        del full_tensor
    return model.load_state_dict(sharded_sd, strict=strict, assign=True)


def setup_model(model_fn, checkpoint_path, device):
    with torch.device("meta"):
        model = model_fn()
    full_sd = torch.load(checkpoint_path, map_location="cpu", mmap=True, weights_only=True)
    load_from_full_model_state_dict(model, full_sd, device)
    return model
