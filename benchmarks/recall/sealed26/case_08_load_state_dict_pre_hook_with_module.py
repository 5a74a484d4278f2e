# Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/12622
# Reported: sys.getrefcount() of a fresh LightningModule is 3 where a plain nn.Module gives 2, and `del model` on a LightningModule does not release its memory; clearing model._load_state_dict_pre_hooks before deleting works around it.
# Confirmed cause: (maintainer carmocca, fixed by Lightning-AI/pytorch-lightning#12897) LightningModule.__init__ registers the ShardedTensor load_state_dict pre-hook with with_module=True, which stores functools.partial(hook, self) in the module's own hook dict, so every module holds a strong reference to itself and is only freed by the cyclic garbage collector; the fix registers the hook through weakref.proxy(self).
# Class: hook registered in the constructor that keeps its own module alive
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
        self._register_load_state_dict_pre_hook(pre_load_state_dict_hook, True)  # leak: ANY


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
