"""ML116 model-deepcopy-per-step: ``copy.deepcopy`` of a whole model, on its device, on every
step of a loop, or made only to take its weights (state dict, another dtype).

A deep copy of an ``nn.Module`` duplicates every parameter, buffer and gradient, on the device
they live on, and everything the module refers to (an EMA wrapper's online model, hooks and
their objects). Made once (an EMA or teacher initialised from the model) it is what is wanted;
made on every step of a training loop it allocates a whole model per step, and when the module
holds a reference cycle (hooks bound to objects, modules referring to their parents) each copy
waits for the cycle collector, so copies pile up on the GPU (learnables/learn2learn#88). Made
only to read its weights (``deepcopy(model).half().state_dict()``, ``deepcopy(model).cpu()``)
it doubles the model on the GPU for nothing: the state dict's tensors can be converted or
moved one by one (lucidrains/ema-pytorch#35).

Flagged (warning):

- ``copy.deepcopy(m)`` of a module, unconditionally, on every step: in a loop that walks
  batches or steps or runs the backward pass / optimizer step (not an epoch loop, not under
  ``if step % k == 0`` or ``if val_loss < best``), in ``forward``/``training_step``, or in a
  helper of this module that a step loop calls;
- ``copy.deepcopy(m)`` whose copy is used only for its weights: a chain ending in
  ``.state_dict()`` (``deepcopy(m).to(dtype).state_dict()``) or moving it off the device
  (``.cpu()``, ``.to("cpu")``), in any loop or per-step code. A copy converted and then used as
  a model (``deepcopy(m).half()`` for inference) is a second model, not flagged for that.

Not flagged: a copy made once (before the loop, in ``__init__``), under a condition that
changes per step (a target network refreshed every C steps, the best model so far), copies of
state dicts or tensors (``copy.deepcopy(model.state_dict())``), copies of objects that are not
known to be modules.
"""

from __future__ import annotations

import libcst as cst

from memlint.static.facts import FunctionScope, Kind, Loop, dotted_name
from memlint.static.rule import Invalid
from memlint.static.rules.ML101_graph_accumulation import source_of
from memlint.static.rules.per_step_call import PerStepCallRule

_DEEPCOPY = "copy.deepcopy"
# Calls that turn a model copy into its weights, or into another dtype or device.
_CONVERSIONS = frozenset({"state_dict", "to", "half", "float", "double", "bfloat16", "cpu", "cuda", "type"})


class ModelDeepcopyPerStep(PerStepCallRule):
    code = "ML116"
    CALLEE_NAMES = frozenset({"deepcopy"})

    def __init__(self, checker) -> None:
        super().__init__(checker)
        # id() of a deepcopy call -> what the conversions applied to it end in: "state_dict", "cpu",
        # or "" (another dtype or device: the copy is still a model)
        self._converted: dict[int, str] = {}
        self._copied: dict[int, object] = {}  # id() of a deepcopy call -> the binding of what it copies

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _CONVERSIONS:
            inner = func.value
            while isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute) \
                    and inner.func.attr.value in _CONVERSIONS:
                inner = inner.func.value
            if isinstance(inner, cst.Call):
                # the outermost conversion: what the copy is made for
                self._converted.setdefault(id(inner), _purpose(node))
        super().visit_Call(node)

    def per_step_target(self, node: cst.Call) -> str | None:
        facts = self.facts
        if facts.qualified_name(node.func) != _DEEPCOPY or not node.args:
            return None
        model = node.args[0].value
        name = dotted_name(model)
        binding = facts.lookup(name) if name is not None else None
        if binding is None:
            return None
        # Whether it is a module is read when the function has been walked: ``maml.parameters()``
        # further down says so (a state dict, a tensor or a config never becomes one).
        self._copied[id(node)] = binding
        conversion = self._converted.get(id(node))
        if conversion == "":
            conversion = None  # deepcopy(model).half(): a second model, used as one
        if conversion is not None:
            function = facts.function
            if facts.loop is not None or function.is_per_step_method:
                self.at_function_exit(lambda: self._report_conversion(node, model, conversion, binding))
            return None
        if facts.loop is None and binding.kind is not Kind.MODULE:
            return None  # a helper, decided where it is called: a module already
        return source_of(model, 30)

    def _report_conversion(self, node: cst.Call, model: cst.BaseExpression, conversion: str, binding) -> None:
        if binding.kind is not Kind.MODULE:
            return
        what = "take its state_dict" if conversion == "state_dict" else "move it to the CPU"
        self.report(
            node,
            f"deepcopy({source_of(model, 30)}) copies the whole model on its device just to {what}",
            help="convert the state dict's tensors instead: {k: v.to('cpu', dtype, copy=True) for k, v in "
                 f"{dotted_name(model)}.state_dict().items()}}",
            needs_grad=False,
        )

    def report_per_step(self, node: cst.Call, what: str, loop: Loop | None, function: FunctionScope,
                        via: str | None = None) -> None:
        binding = self._copied.get(id(node))
        if binding is not None and binding.kind is not Kind.MODULE:
            return
        where = f"every call of {function.name}()" if loop is None else "every iteration of this step loop"
        subject = f"{via}() deep-copies the model" if via else f"copy.deepcopy({what}) copies the whole model"
        self.report(
            node,
            f"{subject} on its device {where}",
            help="make the copy once before the loop and refresh it with copy.load_state_dict(model.state_dict()), "
                 "or use a functional clone of the parameters",
            needs_grad=False,
        )

    VALID = [
        # copies made once; a target network refreshed every C steps; the best model so far
        """
import copy
import torch
def train(model, loader, optimizer, target_every=1000):
    ema = copy.deepcopy(model)
    target = copy.deepcopy(model)
    best, best_model = float("inf"), None
    for step, (x, y) in enumerate(loader):
        loss = model(x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % target_every == 0:
            target = copy.deepcopy(model)
        if loss.item() < best:
            best, best_model = loss.item(), copy.deepcopy(model)
    return ema, target, best_model
""",
        # one copy per node type, made once while the model is built: a loop over the graph's
        # metadata, not over steps ("data" inside "metadata" is not a word of a step loop)
        """
import copy
from torch import nn

class ToHetero:
    def __init__(self, module: nn.Module, metadata):
        self.module = module
        self.metadata = metadata

    def heads(self):
        heads = nn.ModuleDict()
        for node_type in self.metadata[0]:
            heads[node_type] = copy.deepcopy(self.module)
        return heads
""",
        # a converted copy used as a model (one per dtype benchmarked)
        """
import copy
import torch
def benchmark(model, batch):
    times = {}
    for dtype in (torch.float16, torch.bfloat16):
        fast = copy.deepcopy(model).to(dtype)
        times[dtype] = fast(batch.to(dtype)).sum().item()
    return times
""",
        # copies of state dicts and tensors; the weights converted one by one
        """
import copy
import torch
def checkpoint_all(models, path):
    for i, model in enumerate(models):
        weights = copy.deepcopy(model.state_dict())
        half = {k: v.to("cpu", torch.float16, copy=True) for k, v in model.state_dict().items()}
        torch.save((weights, half), f"{path}/{i}.pt")
""",
    ]

    INVALID = [
        # a meta-learner deep-copied for every task of every meta-iteration (learn2learn#88)
        Invalid("""
import copy
import torch
def meta_train(maml, tasks, optimizer, adapt, iterations, tasks_per_batch):
    for iteration in range(iterations):
        optimizer.zero_grad()
        for task in range(tasks_per_batch):
            learner = copy.deepcopy(maml)
            loss = adapt(learner, tasks.sample())
            loss.backward()
        for p in maml.parameters():
            p.grad.mul_(1.0 / tasks_per_batch)
        optimizer.step()
""", line=8),
        # EMA checkpoints converted through a deep copy on the GPU (ema-pytorch#35)
        Invalid("""
from copy import deepcopy
import torch
from torch import nn
class EMACheckpoints(nn.Module):
    def __init__(self, ema_models, dtype=torch.float16):
        super().__init__()
        self.ema_models = nn.ModuleList(ema_models)
        self.dtype = dtype

    def save(self, step):
        for i, ema_model in enumerate(self.ema_models):
            torch.save(deepcopy(ema_model).to(self.dtype).state_dict(), f"ema.{i}.{step}.pt")
""", line=13),
    ]


def _purpose(call: cst.Call) -> str:
    """"state_dict" or "cpu" when the outermost conversion of a copy takes its weights or moves
    it off the device (``.cpu()``, ``.to("cpu")``), else ""."""
    method = call.func.attr.value if isinstance(call.func, cst.Attribute) else ""
    if method in ("state_dict", "cpu"):
        return method
    if method == "to" and any("cpu" in source_of(arg.value) for arg in call.args):
        return "cpu"
    return ""
