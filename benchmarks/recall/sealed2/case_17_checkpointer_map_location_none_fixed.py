# Fixed twin of case 17: the checkpoint is always loaded with map_location=torch.device('cpu') (the merged PR).
# Thread: https://github.com/HorizonRobotics/alf/pull/1532
# Reported: out of GPU memory when loading checkpoints (a GPU RAM surge while restoring a model).
# Confirmed cause: the merged PR: `map_location` was left `None` whenever CUDA is available, so
#   `torch.load` rebuilt every saved tensor on the GPU before `load_state_dict` copied it into the
#   modules already there; the fix always uses `torch.device('cpu')` (no need to move weights back,
#   the author notes, since `load_state_dict` copies into the existing GPU parameters).
# Class: torch.load with a conditional map_location that is None exactly when a GPU is present
import os

import torch


class Checkpointer:
    def __init__(self, ckpt_dir, **modules):
        self._ckpt_dir = ckpt_dir
        self._modules = modules
        self._global_step = -1
        os.makedirs(ckpt_dir, exist_ok=True)

    def _path(self, global_step):
        return os.path.join(self._ckpt_dir, f"ckpt-{global_step}")

    def save(self, global_step):
        state = {name: m.state_dict() for name, m in self._modules.items()}
        state["global_step"] = global_step
        torch.save(state, self._path(global_step))
        with open(os.path.join(self._ckpt_dir, "latest"), "w") as fh:
            fh.write(str(global_step))

    def load(self, global_step="latest", including_optimizer=True):
        if global_step == "latest":
            latest = os.path.join(self._ckpt_dir, "latest")
            if not os.path.isfile(latest):
                print("Checkpoint does not exist. Train from scratch.")
                return self._global_step
            with open(latest) as fh:
                global_step = int(fh.read())
        f_path = self._path(global_step)
        if not os.path.isfile(f_path):
            print(f"Checkpoint '{f_path}' does not exist. Train from scratch.")
            return self._global_step

        # use cpu as the map location to avoid a GPU memory surge when loading a checkpoint
        map_location = torch.device("cpu")
        checkpoint = torch.load(f_path, map_location=map_location)
        for name, module in self._modules.items():
            if not including_optimizer and "optimizer" in name:
                continue
            module.load_state_dict(checkpoint[name])
        self._global_step = checkpoint["global_step"]
        print(f"Checkpoint 'ckpt-{global_step}' is loaded successfully.")
        return self._global_step
