# Thread: https://github.com/NVIDIA-NeMo/Automodel/pull/1742
# Reported: loading a HuggingFace GPT-OSS / MiniMax-M2 checkpoint peaks at about twice the model
#   size and runs out of memory on memory-constrained setups (DGX Spark unified memory, large
#   models on 8 GPUs).
# Confirmed cause: the merged PR: `from_hf()` "created a full shallow copy via
#   `dict(hf_state_dict)`, and `_apply_key_mapping()` created yet another dict during key
#   renaming. These copies coexist briefly, causing peak memory to reach ~2x model size"; fixed
#   by converting in place with dict.pop() and reassignment.
# Class: checkpoint conversion/restore keeps the source copy alive next to the converted one
import re

import torch


def _dequantize_mxfp4(blocks: torch.Tensor, scales: torch.Tensor, dtype=torch.bfloat16):
    exponents = scales.to(torch.int32) - 127
    values = blocks.to(dtype).reshape(*blocks.shape[:-2], -1)
    return torch.ldexp(values, exponents.repeat_interleave(values.shape[-1] // exponents.shape[-1], -1))


class GPTOSSStateDictAdapter:
    def __init__(self, config, dtype=torch.bfloat16):
        self.config = config
        self.dtype = dtype
        self.hf_to_native_map = {
            r"model\.layers\.(\d+)\.mlp\.experts\.gate_up_proj$": r"layers.\1.moe.experts.gate_and_up_projs",
            r"model\.layers\.(\d+)\.mlp\.experts\.down_proj$": r"layers.\1.moe.experts.down_projs",
        }

    def _hf_key_to_native(self, key):
        for pattern, replacement in self.hf_to_native_map.items():
            if re.search(pattern, key):
                return re.sub(pattern, replacement, key)
        return key

    def _apply_key_mapping(self, state_dict):
        new_state_dict = {}  # leak: ANY
        for key, value in state_dict.items():
            new_state_dict[self._hf_key_to_native(key)] = value
        return new_state_dict

    def _dequantize_block_scale_tensors(self, state_dict):
        for key in [k for k in state_dict if k.endswith("_blocks")]:
            base = key[: -len("_blocks")]
            scales = state_dict.pop(base + "_scales")
            blocks = state_dict.pop(key)
            state_dict[base] = _dequantize_mxfp4(blocks, scales, self.dtype)
        return state_dict

    def from_hf(self, hf_state_dict, device_mesh=None):
        native_state_dict = dict(hf_state_dict)  # leak: ANY
        native_state_dict = self._dequantize_block_scale_tensors(native_state_dict)
        return self._apply_key_mapping(native_state_dict)


def load_checkpoint(model, adapter, hf_state_dict):
    native_sd = adapter.from_hf(hf_state_dict)
    model.load_state_dict(native_sd, strict=False)
    return model
