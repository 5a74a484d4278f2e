# Fixed twin of case 12: load_custom_state loads the pickled state with map_location="cpu" before load_state_dict
# Thread: https://github.com/huggingface/accelerate/pull/1156
# Reported: resuming with accelerator.load_state() runs out of GPU memory when custom objects (registered with register_for_checkpointing) are restored
# Confirmed cause: load_custom_state calls torch.load on the custom_checkpoint_N.pkl file without map_location, so the saved CUDA tensors are materialised on their original GPU before load_state_dict copies them into the live object; the merged fix (approved by the maintainer) loads with map_location="cpu", as load_accelerator_state already did for model and optimizer
# Class: torch.load onto the GPU
import logging
from pathlib import Path

import torch

logger = logging.getLogger(__name__)


def get_pretty_name(obj):
    return getattr(obj, "__qualname__", type(obj).__name__)


def save_custom_state(obj, path, index: int = 0):
    save_location = Path(path) / f"custom_checkpoint_{index}.pkl"
    logger.info(f"Saving the state of {get_pretty_name(obj)} to {save_location}")
    torch.save(obj.state_dict(), save_location)


def load_custom_state(obj, path, index: int = 0):
    load_location = f"{path}/custom_checkpoint_{index}.pkl"
    logger.info(f"Loading the state of {get_pretty_name(obj)} from {load_location}")
    obj.load_state_dict(torch.load(load_location, map_location="cpu"))


class EMAModel:
    def __init__(self, model, decay=0.999):
        self.decay = decay
        self.shadow = {k: v.detach().clone() for k, v in model.state_dict().items()}

    def state_dict(self):
        return {"decay": self.decay, "shadow": self.shadow}

    def load_state_dict(self, state):
        self.decay = state["decay"]
        for k, v in state["shadow"].items():
            self.shadow[k].copy_(v)


class Accelerator:
    def __init__(self):
        self._custom_objects = []

    def register_for_checkpointing(self, *objects):
        self._custom_objects.extend(objects)

    def save_state(self, output_dir):
        for index, obj in enumerate(self._custom_objects):
            save_custom_state(obj, output_dir, index)

    def load_state(self, input_dir):
        for index, obj in enumerate(self._custom_objects):
            load_custom_state(obj, input_dir, index)
