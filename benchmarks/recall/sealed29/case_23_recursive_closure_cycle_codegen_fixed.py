# Thread: https://github.com/pytorch/pytorch/issues/166721 (fix: https://github.com/pytorch/pytorch/pull/166714)
# Reported: after a dynamo change, training under torch.compile hit OOM; tensors stayed alive
#   until the next gc.collect() instead of being freed when the compiled frame finished.
# Confirmed cause: a recursive nested function (collect_temp_source) inside a PyCodegen method
#   forms a reference cycle (closure cell -> function -> closure) and the closure also captures
#   self (the PyCodegen instance), so the codegen object and the tensors it references live
#   until the cyclic GC runs; fixed by removing the recursion / not capturing the instance.
# Class: reference cycle through a nested function keeps tensors alive
import torch


class Source:
    def __init__(self, name, base=None):
        self.name = name
        self.base = base

    def children(self):
        return [self.base] if self.base is not None else []


class PyCodegen:
    def __init__(self, tx, example_values):
        self.tx = tx
        self.tempvars = {}
        self.graph_outputs = {}
        self.example_values = example_values  # name -> torch.Tensor
        self.instructions = []

    def add_graph_output(self, name):
        tensor = self.example_values[name]
        self.graph_outputs[id(tensor)] = tensor
        return len(self.graph_outputs) - 1

    def __call__(self, value, allow_cache=True):
        if allow_cache and value in self.tempvars:
            self.instructions.append(("LOAD_FAST", self.tempvars[value]))
            return

        tempvars = self.tempvars
        stack = [value]
        while stack:
            source = stack.pop()
            if source in tempvars:
                tempvars[source] = f"tmp_{len(tempvars)}"
            stack.extend(source.children())
        index = self.add_graph_output(value.name)
        self.instructions.append(("LOAD_GRAPH_OUTPUT", index))


def compile_frame(tx, sources, example_values):
    codegen = PyCodegen(tx, example_values)
    for source in sources:
        codegen(source)
    return codegen.instructions


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    for step in range(1000):
        values = {f"x{i}": torch.randn(1024, 1024, device=device) for i in range(8)}
        srcs = [Source(name, Source("L")) for name in values]
        compile_frame(None, srcs, values)
