# Thread: https://github.com/vllm-project/llm-compressor/pull/3055
# Reported: AutoRound quantization of a large MoE model runs out of GPU memory at
#   DDP(block, ...) inside quantize_block; the captured calibration inputs alone take ~18 GB per rank.
# Confirmed cause (the merged PR): AutoRoundModifier.input_capture_hook appends the captured
#   (args, kwargs) tensors as-is to _all_module_input, so every calibration batch's hidden states
#   stay on the GPU for the whole calibration pass; the fix offloads them to CPU inside the hook
#   (auto_round's block_forward already moves each batch back to the GPU) and drops the bulk
#   re-upload of all inputs.
# Class: forward hook storing the GPU tensors it sees in a long-lived container
from collections import defaultdict

import torch
from auto_round import AutoRound


def _to_device(obj, device):
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_device(o, device) for o in obj)
    if isinstance(obj, dict):
        return {k: _to_device(v, device) for k, v in obj.items()}
    return obj


class AutoRoundModifier:
    def __init__(self, iters=200, batch_size=8, scheme="W4A16"):
        self.iters = iters
        self.batch_size = batch_size
        self.scheme = scheme
        self._all_module_input = defaultdict(list)
        self._hooks = []

    def on_calibration_start(self, model):
        for name, layer in model.named_modules():
            if type(layer).__name__.endswith("DecoderLayer"):
                layer._tmp_name = name
                self._hooks.append(
                    layer.register_forward_pre_hook(self.input_capture_hook, with_kwargs=True)
                )

    def input_capture_hook(self, module, args, kwargs):
        name = module._tmp_name
        cpu = torch.device("cpu")
        self._all_module_input[name].append((_to_device(args, cpu), _to_device(kwargs, cpu)))

    def apply_autoround(self, model, decoding_layer, device):
        name = decoding_layer._tmp_name
        cur_inputs = self._all_module_input.pop(name)
        ar = AutoRound(model=model, scheme=self.scheme, iters=self.iters, batch_size=self.batch_size)
        ar.quantize_block(decoding_layer, inputs=cur_inputs, device=device)
        del cur_inputs

    def on_calibration_end(self, model):
        for h in self._hooks:
            h.remove()
        self._hooks.clear()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
