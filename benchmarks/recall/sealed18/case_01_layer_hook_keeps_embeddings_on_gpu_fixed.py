# Fixed twin of case 01: the hook moves each hooked output to the CPU before storing it
# Thread: https://github.com/EleutherAI/DeeperSpeed/pull/34
# Reported: keeping the outputs of hooked layers during training quickly runs the GPU out of memory
# Confirmed cause: the layer hook stores every hooked output tensor (embedding) on the GPU in a collection that lives across steps; the merged PR moves each hooked embedding to the CPU inside the hook
# Class: hook stores what it sees on the device
import collections

import torch


class PipelineEngine:
    def __init__(self, module, hooked_layers):
        self.module = module
        self.hooked_embeddings = collections.defaultdict(list)
        self.hook_handles = []
        for name, layer in module.named_modules():
            if name in hooked_layers:
                self.hook_handles.append(layer.register_forward_hook(self._make_hook(name)))

    def _make_hook(self, layer_name):
        def hook(module, inputs, output):
            self.hooked_embeddings[layer_name].append(output.detach().cpu())
        return hook

    def train_batch(self, batch, optimizer):
        loss = self.module(batch).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.item()

    def get_hooked_embeddings(self):
        return {k: torch.cat(v) for k, v in self.hooked_embeddings.items()}
