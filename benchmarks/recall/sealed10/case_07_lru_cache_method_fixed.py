# Fixed twin of case 07: the name cache lives on the instance (a plain dict), so it dies with the wrapper
# Thread: https://github.com/pytorch/pytorch/pull/147233
# Reported: objects created per compilation are never freed; their memory leaks for the life of the process
# Confirmed cause: "Putting lru_cache on methods will keep pointers to the self objects alive forever and leak memory" (merged PR by the inductor maintainer, replacing the method cache with a per-instance cache)
# Class: lru_cache/functools cache on a method of an object that holds tensors
import functools

import torch


class WrapperCodegen:
    """Generates and runs a wrapper for one compiled graph; owns scratch buffers on the device."""

    def __init__(self, graph_id, device, workspace_numel=16 * 1024 * 1024):
        self.graph_id = graph_id
        self.device = device
        self.workspace = torch.empty(workspace_numel, device=device)
        self.constants = {f"c{i}": torch.randn(1024, 1024, device=device) for i in range(4)}
        self._constant_name_cache = {}

    def codegen_constant_name(self, name):
        if name not in self._constant_name_cache:
            self._constant_name_cache[name] = f"graph{self.graph_id}_{name}_{self.constants[name].shape[0]}"
        return self._constant_name_cache[name]

    def generate(self):
        return "\n".join(self.codegen_constant_name(n) for n in self.constants)

    def run(self, x):
        out = x
        for t in self.constants.values():
            out = out @ t[: out.shape[-1], : out.shape[-1]]
        return out


def compile_graph(graph_id, x):
    wrapper = WrapperCodegen(graph_id, x.device)
    _ = wrapper.generate()
    return wrapper.run(x)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    for graph_id in range(500):
        y = compile_graph(graph_id, torch.randn(8, 1024, device=device))
        if graph_id % 50 == 0 and torch.cuda.is_available():
            print(graph_id, torch.cuda.memory_allocated() // 2**20, "MiB")
