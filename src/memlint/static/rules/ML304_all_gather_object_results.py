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

Flagged: the object gathered is (or contains) a list or dict that was filled batch by batch
(``append``/``extend``/``update``/``d[k] = v``) in a loop over data in the same function.
Not flagged: small objects (a dict of counters updated with ``+=``, rank or host info,
a metric value), objects filled elsewhere.
"""

from __future__ import annotations

import libcst as cst

from memlint.static.facts import dotted_name, names_in
from memlint.static.rule import Invalid, Rule

_ALL_GATHER_OBJECT = frozenset({"torch.distributed.all_gather_object",
                                "torch.distributed.distributed_c10d.all_gather_object"})
_GATHER_OBJECT = frozenset({"accelerate.utils.gather_object", "accelerate.utils.operations.gather_object"})
_GROWING_METHODS = frozenset({"append", "extend", "update", "add", "insert", "setdefault"})


class AllGatherObjectResults(Rule):
    code = "ML304"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._grown: dict[int, set[str]] = {}  # id(function) -> collections filled in a data loop

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

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _GROWING_METHODS:
            self._note_growth(dotted_name(func.value))
            return
        qualified = self.facts.qualified_name(func) or ""
        positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
        keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword is not None}
        if qualified in _ALL_GATHER_OBJECT:
            gathered = keywords.get("obj", positional[1] if len(positional) > 1 else None)
            how = "all_gather_object"
        elif qualified in _GATHER_OBJECT:
            gathered = positional[0] if positional else keywords.get("object")
            how = "gather_object"
        elif isinstance(func, cst.Attribute) and func.attr.value == "gather_for_metrics" and any(
                key == "use_gather_object" and isinstance(value, cst.Name) and value.value == "True"
                for key, value in keywords.items()):
            gathered = positional[0] if positional else keywords.get("input_data")
            how = "gather_for_metrics(use_gather_object=True)"
        else:
            return
        if gathered is None:
            return
        grown = self._grown.get(id(self.facts.function), set())
        names = sorted(name for name in names_in(gathered) if name in grown)
        if not names:
            return
        self.report(
            node,
            f"'{names[0]}' holds every batch's results and {how} copies them, pickled, onto every rank; gather "
            f"them to one rank (dist.gather_object(obj, out, dst=0), or tensors with gather), or reduce the "
            f"metric on each rank first",
            needs_grad=False,
        )

    VALID = [
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
