# Recall case 01 (sealed21): input-capture pre-hook stays on each decoding layer during the tuning loop and keeps appending hidden states
# Thread: https://github.com/vllm-project/llm-compressor/pull/3024
# Reported: with gradient_accumulate_steps=8, GPU memory grows by ~204 MB per tuning iteration of a layer (~40 GB by 200 iterations) until OOM on 44 GB cards
# Confirmed cause: the merged PR (fixing issue #3023) states that input_capture_hook, registered on every decoding layer at calibration start, is never removed before the SignSGD loop, so every mini-batch forward of the layer appends its (args, kwargs) with the full hidden_states to _all_module_input; the fix keeps the hook handle and removes the layer's capture hook before tuning, and pops the cached inputs
# Class: forward pre-hook registered once and never removed, storing every input it sees
import torch
import torch.nn as nn
import torch.nn.functional as F


def quantize_block(block, inputs, iters, gradient_accumulate_steps, lr):
    with torch.no_grad():
        targets = [block(*args, **kwargs) for args, kwargs in inputs]
    v = torch.zeros(block.hidden, device=targets[0].device, dtype=targets[0].dtype, requires_grad=True)
    optimizer = torch.optim.SGD([v], lr=lr)
    for _ in range(iters):
        optimizer.zero_grad()
        for step in range(gradient_accumulate_steps):
            i = step % len(inputs)
            args, kwargs = inputs[i]
            out = block(args[0] + v, *args[1:], **kwargs)
            loss = F.mse_loss(out, targets[i])
            loss.backward()
        v.grad.sign_()
        optimizer.step()
    return v.detach()


class AutoRoundModifier:
    def __init__(self, iters=200, gradient_accumulate_steps=8, lr=5e-3):
        self.iters = iters
        self.gradient_accumulate_steps = gradient_accumulate_steps
        self.lr = lr
        self._all_module_input = {}
        self._offsets = {}

    @staticmethod
    def _is_decoding_layer(module):
        return module.__class__.__name__.endswith("DecoderLayer")

    def input_capture_hook(self, module, args, kwargs):
        if module._tmp_name not in self._all_module_input:
            self._all_module_input[module._tmp_name] = []
        self._all_module_input[module._tmp_name].append((args, kwargs))

    def on_calibration_start(self, model):
        for name, module in model.named_modules():
            module._tmp_name = name
            if self._is_decoding_layer(module):
                # register input capture hook for decoding layers
                module.register_forward_pre_hook(self.input_capture_hook, with_kwargs=True)  # leak: ANY

    def on_sequential_epoch_end(self, decoding_layer):
        self.apply_autoround(decoding_layer)
        self.post_autoround_cleanup()

    def apply_autoround(self, decoding_layer):
        cur_inputs = self._all_module_input[decoding_layer._tmp_name]  # leak: ANY
        ar_inputs = [(args, kwargs) for args, kwargs in cur_inputs]
        with torch.enable_grad():
            self._offsets[decoding_layer._tmp_name] = quantize_block(
                decoding_layer,
                ar_inputs,
                iters=self.iters,
                gradient_accumulate_steps=self.gradient_accumulate_steps,
                lr=self.lr,
            )
        decoding_layer.eval()

    def post_autoround_cleanup(self):
        self._all_module_input.clear()


class LlamaDecoderLayer(nn.Module):
    def __init__(self, hidden=2048):
        super().__init__()
        self.hidden = hidden
        self.mlp = nn.Sequential(nn.Linear(hidden, 4 * hidden), nn.SiLU(), nn.Linear(4 * hidden, hidden))

    def forward(self, hidden_states, attention_mask=None):
        return hidden_states + self.mlp(hidden_states)


def oneshot(model, calibration_batches, modifier):
    modifier.on_calibration_start(model)
    for p in model.parameters():
        p.requires_grad_(False)
    hidden = calibration_batches
    for layer in [m for m in model.modules() if modifier._is_decoding_layer(m)]:
        with torch.no_grad():
            hidden = [layer(h, attention_mask=None) for h in hidden]
        modifier.on_sequential_epoch_end(layer)


if __name__ == "__main__":
    model = nn.Sequential(*[LlamaDecoderLayer() for _ in range(4)]).cuda().to(torch.bfloat16)
    batches = [torch.randn(1, 6144, 2048, device="cuda", dtype=torch.bfloat16) for _ in range(8)]
    oneshot(model, batches, AutoRoundModifier())
