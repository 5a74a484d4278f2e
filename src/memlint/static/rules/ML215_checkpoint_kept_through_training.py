"""ML215 checkpoint-kept-through-training: a checkpoint loaded into a local, copied into the model
or optimizer, and kept alive by that local through the training loop that follows.

``load_state_dict`` copies the loaded tensors into the model's own parameters (and an
optimizer's state into its own), so once it has run, the loaded checkpoint is a second copy of
the weights (and of the optimizer state: twice the weights for Adam). The local that holds it
lives until the function returns: when training runs in the same function, the copy sits on the
GPU it was loaded to (or in host memory) for the whole run (huggingface/transformers#12718, a
resumed Trainer holding a model's worth of memory; the fix was ``del state_dict``).

Flagged: ``name = torch.load(...)`` (or a part of it, ``torch.load(...)["model"]``) in a function
or script, then ``name`` (or a part of it) handed to a ``.load_state_dict(...)``, then a loop of the
same function that trains (it backpropagates or steps an optimizer, itself, in a loop inside it,
or in what it calls), with ``name`` not deleted, not rebound and not mentioned from the loop on.
Warning when the checkpoint is loaded onto a device (no ``map_location``, or one naming a
device); info when it is loaded onto the CPU (host memory).

Not flagged: ``del name`` (or ``name = None``) before the loop; a name the loop or what follows
reads (``checkpoint["epoch"]`` after training); a load in a helper that returns (the local dies
with it); a load inside the training loop; a name a nested function reads.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from memlint.static.facts import Loop, expression_children, literal_value
from memlint.static.rule import Invalid, Rule

_LOADS = frozenset({"torch.load"})
_NESTED = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


class CheckpointKeptThroughTraining(Rule):
    code = "ML215"

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return
        value = node.value
        load = value.value if isinstance(value, cst.Subscript) else value
        if not isinstance(load, cst.Call) or self.facts.qualified_name(load.func) not in _LOADS:
            return
        name = node.targets[0].target.value
        facts = self.facts
        function = facts.function
        # decided once the module is walked: whether a loop trains may hang on a function below
        at_top = function is None or function is facts.module_scope
        self.at_module_exit(lambda: self._decide(node, name, load,
                                                 self._checker.module if at_top else function.node, function))

    def _decide(self, assign: cst.Assign, name: str, load: cst.Call, body: cst.CSTNode, function) -> None:
        loops = self.facts.loop_of_node
        seen_load = copied = False
        kept_through: Loop | None = None
        for node, nested in _in_order(body):
            if node is assign:
                seen_load = True
                continue
            if not seen_load:
                continue
            if kept_through is None and isinstance(node, (cst.For, cst.While)) and not nested:
                loop = loops.get(id(node))
                if loop is not None and _trains(loop, loops):
                    if not copied:
                        return
                    kept_through = loop
                    continue
            if isinstance(node, cst.Name) and node.value == name:
                if kept_through is not None or nested:
                    return  # read by the loop, after it, or by a nested function
            elif isinstance(node, cst.Del) and name in _names(node.target):
                return
            elif isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and node is not assign \
                    and name in _bound_names(node):
                return  # rebound: the checkpoint is dropped
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value == "load_state_dict" \
                    and any(name in _names(arg.value) for arg in node.args):
                copied = True
        if kept_through is None:
            return
        on_cpu = _loads_to_cpu(load)
        self.report(
            assign,
            f"'{name}' keeps the loaded checkpoint alive through the training loop below: a second copy "
            f"of the state load_state_dict() copied{' (in host memory)' if on_cpu else ' on the device'}",
            help=f"`del {name}` once its state is loaded, before training starts",
            needs_grad=False,
            severity="info" if on_cpu else None,
            function=function,
        )

    VALID = [
        # the checkpoint is deleted once loaded
        """
import torch

def main(model, optimizer, loader, path, epochs):
    checkpoint = torch.load(path, map_location="cuda")
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    del checkpoint
    for epoch in range(epochs):
        for x, y in loader:
            loss = model(x, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
""",
        # loaded in a helper that returns: the local dies with the call
        """
import torch

def resume(model, path):
    state = torch.load(path)
    model.load_state_dict(state)
    return model

def main(model, optimizer, loader, path):
    model = resume(model, path)
    for x, y in loader:
        loss = model(x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
        # read after training: needed (its tensors too, but the author keeps it on purpose)
        """
import torch

def main(model, optimizer, loader, path):
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model"])
    for x, y in loader:
        loss = model(x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return checkpoint["epoch"]
""",
        # evaluation only: no loop that trains follows
        """
import torch

def evaluate(model, loader, path):
    state = torch.load(path)
    model.load_state_dict(state)
    with torch.no_grad():
        return [model(x).argmax(1) for x, _ in loader]
""",
    ]

    INVALID = [
        Invalid("""
import torch

def main_worker(gpu, args, model, optimizer, train_loader):
    if args.resume:
        checkpoint = torch.load(args.resume, map_location=f"cuda:{gpu}")
        args.start_epoch = checkpoint["epoch"]
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])
    for epoch in range(args.start_epoch, args.epochs):
        train(train_loader, model, optimizer, epoch)

def train(train_loader, model, optimizer, epoch):
    for images, target in train_loader:
        loss = model(images, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""", line=6),
        # loaded onto the CPU: host memory (info)
        Invalid("""
import torch

class Trainer:
    def train(self, loader, optimizer, resume=None):
        if resume is not None:
            state_dict = torch.load(resume, map_location="cpu")
            self.model.load_state_dict(state_dict)
        for step, batch in enumerate(loader):
            loss = self.model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
""", line=7),
    ]


def _trains(loop: Loop, loops: dict) -> bool:
    """Does the loop train: backpropagate or step an optimizer, in its body, in a loop inside it,
    or in what it (or a loop inside it) calls? An evaluation loop, however many steps, does not."""
    inner = [loops.get(id(node)) for node, _ in _in_order(loop.node) if isinstance(node, (cst.For, cst.While))]
    for each in [loop, *(found for found in inner if found is not None)]:
        if each.has_backward_pass or each.has_optimizer_step:
            return True
        if each.callees_train is not None and each.callees_train():
            return True
    return False


def _in_order(node: cst.CSTNode, nested: bool = False) -> Iterator[tuple[cst.CSTNode, bool]]:
    """Every node below ``node`` in source order, and whether it is inside a nested function
    or class."""
    for child in expression_children(node):
        yield child, nested
        yield from _in_order(child, nested or isinstance(child, _NESTED))


def _names(node: cst.CSTNode) -> set[str]:
    found = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            found.add(current.value)
        stack.extend(expression_children(current))
    return found


def _bound_names(node: "cst.Assign | cst.AugAssign | cst.AnnAssign") -> set[str]:
    targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
    return {t.value for t in targets if isinstance(t, cst.Name)} | {
        e.value.value for t in targets if isinstance(t, (cst.Tuple, cst.List))
        for e in t.elements if isinstance(e.value, cst.Name)}


def _loads_to_cpu(load: cst.Call) -> bool:
    """``map_location="cpu"``, ``torch.device("cpu")``, or a function returning the storage as
    it is read (``lambda storage, loc: storage``: the CPU)."""
    for arg in load.args:
        if arg.keyword is not None and arg.keyword.value == "map_location":
            value = arg.value
            if literal_value(value) == "cpu":
                return True
            if isinstance(value, cst.Call) and value.args and literal_value(value.args[0].value) == "cpu":
                return True
            if isinstance(value, cst.Lambda) and isinstance(value.body, cst.Name) and value.params.params \
                    and value.body.value == value.params.params[0].name.value:
                return True
    return False
