# Recall case 13 (sealed19): model-graph tracing helper runs the whole forward pass under torch.enable_grad()
# Thread: https://github.com/openvinotoolkit/nncf/pull/3278
# Reported: high memory usage while NNCF (experimental torch2 path) builds the graph of a model before compression; the PR shows memory charts before and after
# Confirmed cause: build_graph wraps the hooked forward pass in torch.enable_grad() only so that post-hooks can read grad_fn to recognise tensor.T / tensor.mT, so every intermediate activation of the traced forward is kept for a backward that never happens; the merged fix (reviewed and approved) runs the trace under torch.no_grad() and drops the grad_fn inspection
# Class: helper that only inspects the model runs its forward with grad on
from typing import Any, Callable, Optional

import networkx as nx
import torch
from torch import nn
from torch.overrides import TorchFunctionMode


class OpMeta:
    def __init__(self, func: Callable, node_id: int):
        self.func = func
        self.kwargs: dict = {}
        self.node_id = node_id


class GraphBuilderMode(TorchFunctionMode):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model
        self.graph = nx.MultiDiGraph()
        self.next_id = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        op_meta = OpMeta(func, self.next_id)
        self.graph.add_node(self.next_id, meta=op_meta)
        self.next_id += 1
        outputs = func(*args, **kwargs)
        return self.execute_post_hooks(outputs, op_meta)

    def process_tensor_attributes(self, output: torch.Tensor, op_meta: OpMeta) -> None:
        fn: Optional[Callable] = None
        fn_kwargs = None
        if output.grad_fn is not None:
            if output.grad_fn.name() == "TransposeBackward0":
                fn, fn_kwargs = torch.transpose, {"dim0": -2, "dim1": -1}
            if output.grad_fn.name() == "PermuteBackward0":
                fn, fn_kwargs = torch.permute, {"dims": output.grad_fn._saved_dims}
        if fn is not None:
            self.graph.nodes[op_meta.node_id]["meta"].func = fn
            self.graph.nodes[op_meta.node_id]["meta"].kwargs = fn_kwargs

    def execute_post_hooks(self, outputs: Any, op_meta: OpMeta) -> Any:
        if op_meta.func.__name__ == "__get__":
            if isinstance(outputs, torch.Tensor):
                self.process_tensor_attributes(outputs, op_meta)
            else:
                self.graph.remove_node(op_meta.node_id)
        return outputs


def build_graph(model: nn.Module, *args: Any, **kwargs: Any) -> nx.MultiDiGraph:
    was_training = model.training
    model.eval()
    try:
        with torch.enable_grad():  # leak: ANY
            with GraphBuilderMode(model) as ctx:
                outputs = model(*args, **kwargs)  # leak: ANY
    finally:
        model.train(was_training)
    return ctx.graph
