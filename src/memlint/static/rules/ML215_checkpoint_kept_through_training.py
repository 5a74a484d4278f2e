"""ML215 checkpoint-kept-through-training: a checkpoint loaded into host memory, copied into a
model, and kept alive by its local through the training loop that follows.

``nn.Module.load_state_dict`` copies the loaded tensors into the module's own parameters, so once
it has run the loaded checkpoint is a second copy of the weights. The local that holds it lives
until the function returns: when training runs in the same function, the copy sits in host
memory for the whole run (huggingface/transformers#12718, a resumed Trainer holding a model's
worth of memory; the fix was ``del state_dict``). A checkpoint mapped onto a device and kept so is
ML203's finding (with the loads that give no ``map_location``); this rule is its host-memory twin.

Flagged (info): ``name = torch.load(..., map_location="cpu")`` (or a part of it,
``torch.load(...)["model"]``) in a function or script, then ``name`` (or a part of it, also through a
name bound to one) handed to a module's ``.load_state_dict(...)``, then a loop of the same function
that trains (it backpropagates or steps an optimizer, itself, in a loop inside it, or in what it
calls), with ``name`` not deleted, not rebound and not mentioned from the loop on.

Not flagged: ``del name`` (or ``name = None``) before the loop; a name the loop or what follows
reads (``checkpoint["epoch"]`` after training); ``name.pop("model")`` (the state leaves the dict);
only an optimizer's ``load_state_dict`` (it keeps the loaded tensors as its state), or that of a
class of the project defining its own (an EMA helper keeping the dict); a load in a helper that
returns; a load inside the training loop; a name a nested function reads.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from memlint.static.facts import (
    Kind, Loop, dotted_name, expression_children, literal_value, names_a_module_object, names_in,
    without_self_returning_calls,
)
from memlint.static.rule import Invalid, Rule

_LOADS = frozenset({"torch.load"})
_NESTED = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
_STATEMENT_LEVEL = (cst.Module, cst.BaseSuite, cst.BaseCompoundStatement, cst.SimpleStatementLine, cst.Else,
                    cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally)


class CheckpointKeptThroughTraining(Rule):
    code = "ML215"

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return
        value = node.value
        load = value.value if type(value) is cst.Subscript else value
        if type(load) is not cst.Call:
            return
        func = load.func
        last = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
        if last != "load":
            return  # (cheap: most assignments are not loads)
        if self.facts.qualified_name(func) not in _LOADS:
            return
        if not _loads_to_cpu(load):
            return  # onto a device, or the one it was saved from: ML203 judges it (kept through training too)
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
        held = {name}  # the checkpoint's name, and names bound to parts of it that a module copies
        parts: set[str] = set()  # names bound to parts of it (state_dict = checkpoint["model"])
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
            if isinstance(node, cst.Name) and node.value in held:
                if kept_through is not None or nested:
                    return  # read by the loop, after it, or by a nested function
            elif isinstance(node, cst.Del) and held & names_in(node.target):
                return
            elif isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                bound = _bound_names(node)
                if held & bound:
                    return  # rebound: the checkpoint (or a part of it) is dropped
                parts -= bound
                if kept_through is None and isinstance(node, cst.Assign) and len(bound) == 1 \
                        and _part_of(node.value, held):
                    parts |= bound
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                if node.func.attr.value == "pop" and held & names_in(node.func.value):
                    return  # checkpoint.pop("model"): the state leaves the dict as it is loaded
                if node.func.attr.value == "load_state_dict" and kept_through is None \
                        and self._copies_into_a_module(node.func.value, function):
                    given = {found for arg in node.args for found in names_in(arg.value)}
                    if given & (held | parts):
                        copied = True
                        held |= given & parts
        if kept_through is None or _left_before(assign, kept_through.node, body):
            return
        self.report(
            assign,
            f"'{name}' keeps the loaded checkpoint alive through the training loop below: a second copy "
            "of the weights load_state_dict() copied, in host memory",
            help=f"`del {name}` once its state is loaded, before training starts",
            needs_grad=False,
            function=function,
        )

    def _copies_into_a_module(self, receiver: cst.BaseExpression, function) -> bool:
        """Is ``receiver.load_state_dict(...)`` torch.nn.Module's, which copies the tensors into the
        module's own parameters? The receiver holds a module (built, annotated, its parameters read;
        an attribute never bound in view breaks the tie by its name, as parameters do), and is no
        instance of a class of the project with a ``load_state_dict`` of its own (an EMA helper
        keeping the dict it is given). An optimizer's keeps the loaded tensors as its state."""
        facts = self.facts
        name = dotted_name(receiver)
        if name is None:
            return False
        if function is None or function is facts.module_scope:
            binding = facts.module_scope.lookup(name) if "." not in name else None
        elif name.startswith("self."):
            info = function.class_info
            binding = info.attributes.get(name) if info is not None else None
        else:
            binding = function.lookup(name)
        if binding is None:
            return name.startswith("self.") and names_a_module_object(name.rsplit(".", 1)[-1])
        if binding.kind is not Kind.MODULE:
            return False
        built = without_self_returning_calls(binding.node)
        qualified = facts.qualified_name(built.func) if isinstance(built, cst.Call) else None
        if qualified is None:
            return True
        if qualified.startswith("torch.optim."):
            return False
        if qualified in facts.class_nodes:
            return not any(True for _ in facts.methods_of(qualified, "load_state_dict"))
        project = facts.project
        definition = project.definition(qualified) if project is not None else None
        outline = definition.class_outline if definition is not None else None
        return outline is None or "load_state_dict" not in outline.methods

    VALID = [
        # loaded in a branch that returns: the training loop runs only when nothing was loaded
        """
import torch


def main(args, model, optimizer, loader):
    if args.test:
        state_dict = torch.load(args.ckpt, map_location="cpu")
        model.load_state_dict(state_dict)
        validate(model, loader)
        return
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = model(x, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
""",
        # the checkpoint is deleted once loaded
        """
import torch

def main(model, optimizer, loader, path, epochs):
    checkpoint = torch.load(path, map_location="cpu")
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
    state = torch.load(path, map_location="cpu")
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
    checkpoint = torch.load(path, map_location="cpu")
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
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state)
    with torch.no_grad():
        return [model(x).argmax(1) for x, _ in loader]
""",
        # the weights popped out of the checkpoint as they are loaded; an optimizer's state (the
        # optimizer keeps the loaded tensors as its own: no second copy); an EMA helper of the
        # file whose load_state_dict keeps the dict it is given
        """
import torch

class EMAHelper:
    def __init__(self, mu=0.999):
        self.shadow = {}

    def load_state_dict(self, state_dict):
        self.shadow = state_dict

def main(model, optimizer, loader, path, ema_path):
    checkpoint = torch.load(path, map_location="cpu")
    model.load_state_dict(checkpoint.pop("model"))
    optimizer_state = torch.load(path + ".optim", map_location="cpu")
    optimizer.load_state_dict(optimizer_state)
    ema = EMAHelper()
    ema_state = torch.load(ema_path, map_location="cpu")
    ema.load_state_dict(ema_state)
    for x, y in loader:
        loss = model(x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
    ]

    INVALID = [
        Invalid("""
import torch

def main_worker(gpu, args, model, optimizer, train_loader):
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
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


def _left_before(assign: cst.Assign, loop: cst.CSTNode, body: cst.CSTNode) -> bool:
    """Is ``assign`` in a block that ends by returning or raising (``if args.test: ckpt = torch.load(p);
    ...; return``) and that does not hold ``loop``? Then the loop runs only on paths where the
    checkpoint was never loaded. (Not when the block can also be left by ``break``/``continue``.)"""
    for block in _blocks_around(assign, body):
        statements = block.body
        last = statements[-1] if statements else None
        if not isinstance(last, cst.SimpleStatementLine) or not any(
                isinstance(small, (cst.Return, cst.Raise)) for small in last.body):
            continue
        inside = {id(node) for node, _ in _in_order(block)}
        if id(loop) in inside:
            return False
        return not any(isinstance(node, (cst.Break, cst.Continue)) for node, _ in _in_order(block))
    return False


def _blocks_around(target: cst.CSTNode, body: cst.CSTNode) -> list[cst.IndentedBlock]:
    """The indented blocks of ``body`` (not of functions it defines) that hold ``target``, innermost first."""
    found: list[cst.IndentedBlock] = []

    def holds(node: cst.CSTNode) -> bool:
        if node is target:
            return True
        if isinstance(node, _NESTED) and node is not body or not isinstance(node, _STATEMENT_LEVEL):
            return False  # (statements and blocks only: expressions nest deep, and hold no block)
        for child in node.children:
            if holds(child):
                if isinstance(node, cst.IndentedBlock):
                    found.append(node)
                return True
        return False

    holds(body)
    return found


def _in_order(node: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, bool]]:
    """Every node below ``node`` in source order, and whether it is inside a nested function
    or class (a stack, not recursion: expressions nest deep)."""
    stack = [(child, False) for child in reversed(list(expression_children(node)))]
    while stack:
        current, nested = stack.pop()
        yield current, nested
        inner = nested or isinstance(current, _NESTED)
        stack.extend((child, inner) for child in reversed(list(expression_children(current))))


def _bound_names(node: "cst.Assign | cst.AugAssign | cst.AnnAssign") -> set[str]:
    targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
    return {t.value for t in targets if isinstance(t, cst.Name)} | {
        e.value.value for t in targets if isinstance(t, (cst.Tuple, cst.List))
        for e in t.elements if isinstance(e.value, cst.Name)}


def _part_of(value: cst.BaseExpression, held: set[str]) -> bool:
    """``checkpoint["model"]`` or ``checkpoint.get("model")`` of a held name."""
    if isinstance(value, cst.Subscript):
        return isinstance(value.value, cst.Name) and value.value.value in held
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "get" \
        and isinstance(value.func.value, cst.Name) and value.func.value.value in held


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
