# Fixed twin of case 08: register the module-bound pre-hook through a weak proxy so the module does not own itself
import weakref

import torch
from torch import nn


class LightningModule(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._current_fx_name = None
        self._register_sharded_tensor_state_dict_hooks_if_available()

    def _register_sharded_tensor_state_dict_hooks_if_available(self):
        """Makes ShardedTensors survive state_dict() and load_state_dict()."""
        if not torch.distributed.is_available():
            return
        from torch.distributed._sharded_tensor import pre_load_state_dict_hook, state_dict_hook

        self._register_state_dict_hook(state_dict_hook)
        # the hook must see the module, but through a weak proxy, not a strong reference
        self.__class__._register_load_state_dict_pre_hook(weakref.proxy(self), pre_load_state_dict_hook, True)


class LitClassifier(LightningModule):
    def __init__(self, width):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4096, width), nn.ReLU(), nn.Linear(width, 1000))

    def forward(self, x):
        return self.net(x)


def sweep(widths, loader):
    scores = {}
    for width in widths:
        model = LitClassifier(width).cuda()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            loss.backward()
            optimizer.step()
        scores[width] = loss.item()
        del model, optimizer, loss
        torch.cuda.empty_cache()
    return scores
