# Recall case 62: generate registers fresh scaling hooks at every decoding step
# Thread: https://github.com/huggingface/peft/pull/2761
# Reported: (peft #1472, follow-up comment) generating with an X-LoRA model gets slower and uses
#   more GPU memory with every `generate` call.
# Confirmed cause: the merged PR (maintainer BenjaminBossan): the pre-forward hook installed for
#   `generate` registers one scalings-injection hook per LoRA layer on every forward step, and
#   `generate` calls `forward` many times; only the handles of the last step were kept and
#   removed, so the hooks of all earlier steps (each holding its scalings tensor) accumulate.
#   Fixed by removing every registered handle, with try/finally.
# Class: hooks registered per call, only the last batch of handles removed
from contextlib import contextmanager
from functools import partial

import torch
import torch.nn as nn


class LoraLayer(nn.Module):
    pass


class XLoraModel(nn.Module):
    def __init__(self, lora_model, classifier):
        super().__init__()
        self.lora_model = lora_model
        self.internal_xlora_classifier = classifier

    def _lora_layers(self):
        return [m for m in self.lora_model.modules() if isinstance(m, LoraLayer)]

    def _inject_scalings(self, scalings):
        def scalings_injection_hook(module, args, kwargs, scalings):
            kwargs["scalings"] = scalings
            return args, kwargs

        handles = []
        for layer in self._lora_layers():
            hook = partial(scalings_injection_hook, scalings=scalings)
            handles.append(layer.register_forward_pre_hook(hook, with_kwargs=True))
        return handles

    @contextmanager
    def _enable_peft_forward_hooks(self):
        handles_to_remove = []

        def pre_forward(module, args, kwargs):
            nonlocal handles_to_remove
            dummy = self.internal_xlora_classifier.make_dummy_scalings(*args, **kwargs)
            dummy_handles = self._inject_scalings(dummy)
            with torch.no_grad():
                self.lora_model.disable_adapter_layers()
                try:
                    base_output = self.lora_model.model(*args, output_hidden_states=True, **kwargs)
                finally:
                    self.lora_model.enable_adapter_layers()
            for handle in dummy_handles:
                handle.remove()
            xlora_scalings = self.internal_xlora_classifier(result=base_output, *args, **kwargs)
            handles_to_remove = self._inject_scalings(xlora_scalings)  # leak: ANY
            return args, kwargs

        forward_handle = self.lora_model.model.register_forward_pre_hook(pre_forward, with_kwargs=True)
        yield
        forward_handle.remove()
        for handle in handles_to_remove:
            handle.remove()

    def generate(self, *args, **kwargs):
        with self._enable_peft_forward_hooks():
            return self.lora_model.model.generate(*args, **kwargs)


def chat(xlora_model, tokenizer, prompts, device="cuda"):
    replies = []
    for prompt in prompts:
        inputs = tokenizer(prompt, return_tensors="pt").to(device)
        out = xlora_model.generate(**inputs, max_new_tokens=128)
        replies.append(tokenizer.decode(out[0].cpu(), skip_special_tokens=True))
    return replies
