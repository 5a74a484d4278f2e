# Fixed twin of case 09: load every checkpoint file with map_location="cpu", then gc.collect() and torch.cuda.empty_cache() after loading, as the merged PR does
# Thread: https://github.com/nvidia-cosmos/cosmos-rl/pull/562
# Reported: resuming GRPO policy training from a checkpoint OOMs in the first FSDP all-gather although training from scratch fits; after the optimizer load the rank shows ~49 GB allocated but ~83 GB reserved
# Confirmed cause: the merged PR states that the checkpoint loads (model, optimizer, scheduler, extra info) deserialized their tensors onto the GPU they were saved from, so each state dict first lands on the GPU next to the live model/optimizer; the fix maps every torch.load to the CPU and frees the cached blocks after loading (reserved drops to ~50 GB)
# Class: torch.load of a CUDA checkpoint without map_location (checkpoint materialized on the GPU)
import gc
import os

import torch


class CheckpointManager:
    def __init__(self, config, global_rank):
        self.config = config
        self.global_rank = global_rank

    def get_latest_ckpt_paths(self):
        root = self.config.train.resume
        steps = sorted(os.listdir(root), reverse=True)
        return [os.path.join(root, s) for s in steps]

    def ckpt_path_check(self, base_path):
        return os.path.exists(os.path.join(base_path, "complete"))

    @staticmethod
    def load_extra_info(extra_info_path):
        if os.path.exists(extra_info_path):
            with open(extra_info_path, "rb") as f:
                extra_info = torch.load(f, weights_only=False, map_location="cpu")
            return extra_info
        return {}

    def load_checkpoint(self, model, optimizer, scheduler, strict=True):
        extra_vars = {}
        for base_path in self.get_latest_ckpt_paths():
            if not self.ckpt_path_check(base_path):
                continue
            model_path = os.path.join(base_path, f"model_rank_{self.global_rank}.pth")
            optimizer_path = os.path.join(base_path, f"optimizer_rank_{self.global_rank}.pth")
            scheduler_path = os.path.join(base_path, f"scheduler_rank_{self.global_rank}.pth")
            extra_info_path = os.path.join(base_path, f"extra_info_rank_{self.global_rank}.pth")
            extra_info = self.load_extra_info(extra_info_path)
            for key in extra_info:
                extra_vars[key] = extra_info[key]

            scheduler.load_state_dict(torch.load(scheduler_path, weights_only=False, map_location="cpu"))
            model.load_state_dict(torch.load(model_path, weights_only=False, map_location="cpu"), strict=strict)
            optimizer.load_state_dict(torch.load(optimizer_path, weights_only=False, map_location="cpu"))
            gc.collect()
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            return extra_vars, scheduler
        raise FileNotFoundError("no checkpoint found")
