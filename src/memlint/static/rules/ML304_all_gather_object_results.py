"""ML304 all-gather-object-results: ``all_gather_object`` of a whole evaluation's results.

``torch.distributed.all_gather_object`` (and accelerate's ``gather_object`` /
``gather_for_metrics(..., use_gather_object=True)``, built on it) pickles the object, sends the
bytes to every rank and unpickles every rank's copy on every rank. Gathering the list of every
batch's predictions this way makes each rank hold ``world_size`` full copies of the results as
Python objects, plus the pickled buffers (CUDA tensors inside are copied to the device of each
receiving rank): evaluation at the end of an epoch runs out of host or GPU memory
(facebookresearch/maskrcnn-benchmark's ``all_gather``, accelerate's ``gather_object``).
Gather tensors with ``all_gather`` (or ``gather`` to rank 0), reduce the metric on each rank
first, or write each rank's results to a file.

detectron2's and maskrcnn-benchmark's ``comm.all_gather(obj)`` pickle any object the same way.

Flagged: the object gathered is (or contains) a list or dict that was filled batch by batch
(``append``/``extend``/``update``/``d[k] = v``) in a loop over data in the same function.
Not flagged: small objects (a dict of counters updated with ``+=``, rank or host info,
a metric value), objects filled elsewhere.
"""

from __future__ import annotations

import re

import libcst as cst

from memlint.static.facts import dotted_name, names_in
from memlint.static.rule import Invalid, Rule

_ALL_GATHER_OBJECT = frozenset({"torch.distributed.all_gather_object",
                                "torch.distributed.distributed_c10d.all_gather_object"})
_GATHER_OBJECT = frozenset({"accelerate.utils.gather_object", "accelerate.utils.operations.gather_object"})
# all_gather helpers that pickle any object (detectron2, maskrcnn-benchmark): qualified-name suffixes
_PICKLING_ALL_GATHER = ("utils.comm.all_gather",)
# ``from ..utils.comm import all_gather`` (a relative import, which the engine does not resolve)
_RELATIVE_COMM_IMPORT = re.compile(r"^\s*from \.+(?:\w+\.)*comm import [^\n]*\ball_gather\b", re.MULTILINE)
_GROWING_METHODS = frozenset({"append", "extend", "update", "add", "insert", "setdefault"})


# Calls that reduce what they are given to a number: ``sum(losses) / len(losses)`` gathers a float.
_REDUCING = frozenset({"sum", "len", "max", "min", "any", "all", "float", "int", "round", "mean", "median", "std",
                       "average", "fsum"})


def _names_kept_whole(node: cst.BaseExpression) -> set[str]:
    """The names whose values the gathered object holds: not those only reduced to a number on
    the way (``sum(loss_logs) / len(loss_logs)``)."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call) and (dotted_name(current.func) or "").rsplit(".", 1)[-1] in _REDUCING:
            continue
        if isinstance(current, (cst.Name, cst.Attribute)):
            dotted = dotted_name(current)
            if dotted is not None:
                found |= names_in(current)
                continue
        stack.extend(child for child in current.children if isinstance(child, cst.CSTNode))
    return found


class AllGatherObjectResults(Rule):
    code = "ML304"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._grown: dict[int, set[str]] = {}  # id(function) -> collections filled in a data loop
        # One call away: functions returning a collection filled in a data loop, functions that
        # gather one of their parameters, and the calls passing something to those.
        self._returns_grown: set[str] = set()
        self._gathers_parameter: dict[str, tuple[int, cst.Call, str]] = {}  # name -> (position, call, how)
        self._calls: list[tuple[str, list[cst.CSTNode | None], set[str]]] = []  # (callee, arg bindings, grown)
        self._scheduled = False

    def _note_growth(self, name: str | None) -> None:
        """``name`` grows here: note it if this is a loop over data that the collection outlives
        (not a list made afresh in each iteration of that loop)."""
        facts = self.facts
        if name is None:
            return
        root = name.split(".", 1)[0]
        for loop in facts.loops_in_function():
            if (loop.iterates_data or loop.walks_steps) and ("." in name or root not in loop.bound_this_iteration):
                self._grown.setdefault(id(facts.function), set()).add(name)
                return

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Subscript):
                self._note_growth(dotted_name(target.target.value))

    def visit_Return(self, node: cst.Return) -> None:
        function = self.facts.function
        if node.value is not None and names_in(node.value) & self._grown.get(id(function), set()):
            self._returns_grown.add(function.name)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _GROWING_METHODS:
            self._note_growth(dotted_name(func.value))
            return
        if isinstance(func, cst.Name) and node.args:
            self._note_call(func.value, node)
        qualified = self.facts.qualified_name(func) or ""
        positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
        keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword is not None}
        if qualified in _ALL_GATHER_OBJECT:
            gathered = keywords.get("obj", positional[1] if len(positional) > 1 else None)
            how = "all_gather_object"
        elif qualified in _GATHER_OBJECT or qualified.endswith(_PICKLING_ALL_GATHER) or (
                qualified == "all_gather" and _RELATIVE_COMM_IMPORT.search(self._checker.source)):
            gathered = positional[0] if positional else keywords.get("object")
            how = qualified.rsplit(".", 1)[-1]
        elif isinstance(func, cst.Attribute) and func.attr.value == "gather_for_metrics" and any(
                key == "use_gather_object" and isinstance(value, cst.Name) and value.value == "True"
                for key, value in keywords.items()):
            gathered = positional[0] if positional else keywords.get("input_data")
            how = "gather_for_metrics()"
        else:
            return
        if gathered is None:
            return
        function = self.facts.function
        grown = self._grown.get(id(function), set())
        names = sorted(name for name in _names_kept_whole(gathered) if name in grown)
        if names:
            self._report(node, names[0], how)
        elif isinstance(gathered, cst.Name) and gathered.value in function.inputs and function.name != "<module>":
            params = [p.name.value for p in function.node.params.params] if isinstance(
                function.node, cst.FunctionDef) else []
            if gathered.value in params:  # decided at the end, from its callers
                self._gathers_parameter[function.name] = (params.index(gathered.value), node, how)
                self._schedule()

    def _note_call(self, callee: str, node: cst.Call) -> None:
        bindings = []
        for arg in node.args:
            if arg.keyword is not None or arg.star:
                break
            binding = self.facts.lookup(arg.value.value) if isinstance(arg.value, cst.Name) else None
            bindings.append(arg.value if binding is None else binding.node)
        grown = {arg.value.value for arg in node.args if isinstance(arg.value, cst.Name)} & self._grown.get(
            id(self.facts.function), set())
        self._calls.append((callee, bindings, grown))

    def _schedule(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            self.at_module_exit(self._decide_parameters)

    def _decide_parameters(self) -> None:
        """``gather(predictions)`` of a parameter, where a caller passes every batch's results
        (a collection it filled, or what a function filling one returned: maskrcnn-benchmark)."""
        for callee, bindings, grown in self._calls:
            if callee not in self._gathers_parameter:
                continue
            position, node, how = self._gathers_parameter[callee]
            if position >= len(bindings):
                continue
            passed = bindings[position]
            source = passed.func.value if isinstance(passed, cst.Call) and isinstance(passed.func, cst.Name) else None
            if grown or source in self._returns_grown:
                del self._gathers_parameter[callee]
                param = node.args[0].value if how != "all_gather_object" else node.args[-1].value
                self._report(node, dotted_name(param) or "the results", how)

    def _report(self, node: cst.Call, name: str, how: str) -> None:
        self.report(
            node,
            f"{how if '(' in how else how + '()'} copies every batch's results in '{name}', pickled, onto every rank",
            help="gather them to one rank (dist.gather_object(obj, out, dst=0), or tensors with gather), or "
                 "reduce the metric on each rank first",
            needs_grad=False,
        )

    VALID = [
        # the mean of the epoch's losses, one float per rank
        """
import torch.distributed as dist
def train_epoch(model, loader, optimizer, ce, world_size):
    loss_logs = []
    for seqs, labels in loader:
        optimizer.zero_grad()
        loss = ce(model(seqs), labels)
        loss.backward()
        optimizer.step()
        loss_logs.append(loss.item())
    outputs = [None] * world_size
    dist.all_gather_object(outputs, sum(loss_logs) / len(loss_logs))
    return sum(outputs) / len(outputs)
""",
        # counters reduced as a small dict
        """
import torch
import torch.distributed as dist
def evaluate(model, loader):
    stats = {"correct": 0, "total": 0}
    with torch.no_grad():
        for x, y in loader:
            stats["correct"] += (model(x).argmax(1) == y).sum().item()
            stats["total"] += len(y)
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, stats)
    return sum(s["correct"] for s in gathered) / sum(s["total"] for s in gathered)
""",
        # rank and host info
        """
import socket
import torch.distributed as dist
def describe():
    info = {"rank": dist.get_rank(), "host": socket.gethostname()}
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, info)
    return everyone
""",
        # tensors gathered with all_gather
        """
import torch
import torch.distributed as dist
def evaluate(model, loader, world_size):
    preds = []
    with torch.no_grad():
        for x, _ in loader:
            preds.append(model(x).argmax(1))
    local = torch.cat(preds)
    out = [torch.empty_like(local) for _ in range(world_size)]
    dist.all_gather(out, local)
    return torch.cat(out)
""",
    ]

    INVALID = [
        Invalid("""
import torch
import torch.distributed as dist
def evaluate(model, data_loader, device):
    results = []
    model.eval()
    with torch.no_grad():
        for images, targets in data_loader:
            outputs = model(images.to(device))
            for target, output in zip(targets, outputs):
                results.append({"image_id": target["image_id"], "boxes": output["boxes"].cpu(),
                                "scores": output["scores"].cpu()})
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, results)
    return [r for part in gathered for r in part]
""", line=14),
        # a dict keyed by sample id, accelerate's gather_object
        Invalid("""
import torch
from accelerate.utils import gather_object
def predict(model, eval_dataloader, accelerator):
    predictions = {}
    for step, batch in enumerate(eval_dataloader):
        with torch.no_grad():
            logits = model(**batch).logits
        for sample_id, pred in zip(batch["ids"].tolist(), logits.argmax(-1).tolist()):
            predictions[sample_id] = pred
    return gather_object([predictions])
""", line=11),
        # one call away: the results come from a function that filled them (maskrcnn-benchmark)
        Invalid("""
import torch
from maskrcnn_benchmark.utils.comm import all_gather, is_main_process
def compute_on_dataset(model, data_loader, device):
    results = {}
    for images, targets, image_ids in data_loader:
        with torch.no_grad():
            outputs = [o.to("cpu") for o in model(images.to(device))]
        results.update({img_id: result for img_id, result in zip(image_ids, outputs)})
    return results

def accumulate(predictions_per_gpu):
    all_predictions = all_gather(predictions_per_gpu)
    if not is_main_process():
        return None
    return all_predictions

def inference(model, data_loader, device):
    predictions = compute_on_dataset(model, data_loader, device)
    return accumulate(predictions)
""", line=13),
        # maskrcnn-benchmark's pickling all_gather, imported relatively
        Invalid("""
import torch
from ..utils.comm import all_gather, is_main_process
def inference(model, data_loader, device):
    predictions = {}
    with torch.no_grad():
        for images, targets, image_ids in data_loader:
            outputs = [o.to("cpu") for o in model(images.to(device))]
            predictions.update({img_id: result for img_id, result in zip(image_ids, outputs)})
    all_predictions = all_gather(predictions)
    return all_predictions if is_main_process() else None
""", line=10),
        # gather_for_metrics with use_gather_object
        Invalid("""
import torch
def generate_all(model, loader, accelerator, tokenizer):
    texts = []
    for batch in loader:
        ids = accelerator.unwrap_model(model).generate(**batch, max_new_tokens=64)
        texts.extend(tokenizer.batch_decode(ids, skip_special_tokens=True))
    return accelerator.gather_for_metrics(texts, use_gather_object=True)
""", line=8),
    ]
