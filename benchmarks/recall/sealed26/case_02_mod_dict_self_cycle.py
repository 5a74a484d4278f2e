# Thread: https://github.com/TransformerLensOrg/TransformerLens/pull/327
# Reported: loading a HookedTransformer over and over in a loop (from_pretrained ten times) keeps raising peak tracked memory (17.5 GiB for ten gpt2-small loads) instead of reusing the memory of the previous, dropped model.
# Confirmed cause: (the PR, after @rusheb found the circular reference) HookedRootModule.setup() walks self.named_modules(), which also yields the root module itself under the name "", and stores it in the plain dict self.mod_dict, so every model refers to itself and each dropped model survives until a cyclic garbage collection; the fix skips the "" entry.
# Class: reference cycle: a module stores itself in its own plain-dict attribute
import torch
from torch import nn


class HookPoint(nn.Module):
    """Identity layer that hooks can be attached to."""

    def __init__(self):
        super().__init__()
        self.name = None

    def forward(self, x):
        return x


class HookedRootModule(nn.Module):
    def setup(self):
        # name -> module lookups used by run_with_hooks / run_with_cache
        self.mod_dict = {}
        self.hook_dict = {}
        for name, module in self.named_modules():
            module.name = name
            self.mod_dict[name] = module  # leak: ANY
            if isinstance(module, HookPoint):
                self.hook_dict[name] = module


class HookedTransformer(HookedRootModule):
    def __init__(self, d_model=768, n_layers=12, d_vocab=50257):
        super().__init__()
        self.embed = nn.Embedding(d_vocab, d_model)
        self.hook_embed = HookPoint()
        self.blocks = nn.ModuleList(nn.Linear(d_model, d_model) for _ in range(n_layers))
        self.hook_resid = nn.ModuleList(HookPoint() for _ in range(n_layers))
        self.unembed = nn.Linear(d_model, d_vocab)
        self.setup()

    def forward(self, tokens):
        x = self.hook_embed(self.embed(tokens))
        for block, hook in zip(self.blocks, self.hook_resid):
            x = hook(x + torch.relu(block(x)))
        return self.unembed(x)

    @classmethod
    def from_pretrained(cls, path, device="cpu"):
        model = cls()
        model.load_state_dict(torch.load(path, map_location="cpu"))
        return model.to(device)


def compare_checkpoints(paths, tokens):
    losses = []
    for path in paths:
        model = HookedTransformer.from_pretrained(path)
        with torch.no_grad():
            logits = model(tokens[:, :-1])
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())
        losses.append(loss.item())
    return losses
