# Thread: https://github.com/allenai/OLMo/pull/328
# Reported: restoring (legacy) sharded and unsharded FSDP checkpoints costs extra GPU memory at
#   resume time.
# Confirmed cause: the checkpointer's torch.load calls had no map_location, so each rank's
#   model/optimizer shard was deserialized back onto the GPU it was saved from before
#   FSDP.load_state_dict copied it into place; the merged PR loads them to CPU instead, since
#   FSDP.load_state_dict "will copy tensors to the right device anyway".
# Class: torch.load of a checkpoint onto the device it was saved from (resume)
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import StateDictType


def resource_path(folder, fname):
    return f"{folder}/{fname}"


class LegacyShardedCheckpointer:
    def __init__(self, cfg):
        self.cfg = cfg

    def restore_checkpoint(self, load_path, fsdp_model: FSDP, optim: torch.optim.Optimizer, load_optimizer_state=True):
        rank = dist.get_rank()
        with FSDP.state_dict_type(fsdp_model, StateDictType.LOCAL_STATE_DICT):
            model_state = torch.load(resource_path(load_path, f"model/rank{rank}.pt"))  # leak: ANY
            fsdp_model.load_state_dict(model_state)
            del model_state

            if load_optimizer_state:
                optim_state = torch.load(resource_path(load_path, f"optim/rank{rank}.pt"))  # leak: ANY
                optim.load_state_dict(optim_state)
                del optim_state

        trainer_state = torch.load(resource_path(load_path, f"train/rank{rank}.pt"), map_location="cpu")
        return trainer_state
