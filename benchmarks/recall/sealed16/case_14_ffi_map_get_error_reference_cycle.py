# Recall case 14 (sealed16): FFI map lookup translates a missing key into a KeyError held in a local and raised, creating a traceback reference cycle that pins the caller's tensors
# Thread: https://github.com/apache/tvm-ffi/pull/327
# Reported: intermediate tensors allocated in a training function stay alive (need a gc pass) after a Map.get with a missing key; slower local freeing, more memory pressure
# Confirmed cause: the merged PR: the error-handling path creates a reference cycle (exception -> traceback -> frame -> exception) when Map.get hits a missing key and catches the KeyError, which keeps the whole call chain and its intermediate tensors alive until the cyclic GC runs; the fix removes the cycle
# Class: reference cycle through a stored exception/traceback keeping caller frames (and their GPU tensors) alive
import torch


def _translate_error(kind, message):
    return {"KeyError": KeyError, "ValueError": ValueError}[kind](message)


class Map:
    def __init__(self, items):
        self._handle = dict(items)

    def __getitem__(self, key):
        if key not in self._handle:
            py_err = _translate_error("KeyError", repr(key))
            raise py_err  # leak: ANY
        return self._handle[key]

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default


config = Map({"a": 1})


def train_step(model, batch):
    hidden = model(batch)
    scale = config.get("loss_scale", 1.0)
    return hidden.float().pow(2).mean() * scale


if __name__ == "__main__":
    model = torch.nn.Linear(4096, 4096).cuda()
    for _ in range(1000):
        loss = train_step(model, torch.randn(1024, 4096, device="cuda"))
        loss.backward()
