"""ML105 create-graph-backward: ``.backward(create_graph=True)`` without resetting ``.grad``.

With ``create_graph=True`` the gradient accumulated into ``param.grad`` carries its own
autograd graph, and that graph references the parameter: a parameter <-> gradient reference
cycle. Until ``.grad`` is set back to ``None`` the graph of the step that produced it (and
everything it saved) stays alive, and with ``zero_grad(set_to_none=False)`` or ``grad.zero_()``
it never is: PyTorch warns about exactly this. ``torch.autograd.grad(..., create_graph=True)``
returns the gradients instead of storing them on the parameters, so it makes no cycle.
"""

from __future__ import annotations

import libcst as cst

from memlint.static.facts import backpropagated_expr, dotted_name, names_in
from memlint.static.rule import Invalid, Rule
from memlint.static.rules.ML101_graph_accumulation import fit, source_of

# Calls that accumulate into ``.grad`` (as opposed to torch.autograd.grad, which returns).
_BACKWARD_METHODS = frozenset({"backward", "manual_backward"})


class CreateGraphBackward(Rule):
    code = "ML105"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._calls: list[cst.Call] = []
        self._resets_grad = False  # zero_grad() (set_to_none by default) or p.grad = None
        # Per function: tensors made leaves that require grad (real.requires_grad_(True)), and
        # those whose .grad is set back to None.
        self._leaves: dict[int, set[str]] = {}
        self._grad_cleared: dict[int, set[str]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        if method == "zero_grad":
            if not any(_keyword_is(arg, "set_to_none", "False") for arg in node.args):
                self._resets_grad = True
            return
        if method == "requires_grad_" and not any(_is_false(arg.value) for arg in node.args):
            self._leaf(func.value)
            return
        if method not in _BACKWARD_METHODS and self.facts.qualified_name(func) != "torch.autograd.backward":
            return
        if not any(_keyword_is(arg, "create_graph", "True") for arg in node.args):
            return
        function = self.facts.function
        tensor = backpropagated_expr(node)
        names = frozenset(names_in(tensor)) if tensor is not None else frozenset()
        self.at_function_exit(lambda: self._decide_inputs(function, node, names))

    def visit_Assign(self, node: cst.Assign) -> None:
        # p.grad = None (also for p in params: p.grad = None)
        if isinstance(node.value, cst.Name) and node.value.value == "None":
            for target in node.targets:
                if isinstance(target.target, cst.Attribute) and target.target.attr.value == "grad":
                    self._resets_grad = True
                    owner = dotted_name(target.target.value)
                    if owner is not None:
                        self._grad_cleared.setdefault(id(self.facts.function), set()).add(owner)
        for target in node.targets:
            if isinstance(target.target, cst.Attribute) and target.target.attr.value == "requires_grad" \
                    and _is_true(node.value):
                self._leaf(target.target.value)  # x.requires_grad = True
            elif isinstance(target.target, cst.Name) and _makes_leaf(node.value):
                self._leaf(target.target)  # x = batch.detach().requires_grad_()

    def _leaf(self, node: cst.BaseExpression) -> None:
        name = dotted_name(node)
        if name is not None and not self.facts.is_module_expr(node):
            self._leaves.setdefault(id(self.facts.function), set()).add(name)

    def _decide_inputs(self, function, call: cst.Call, names: frozenset[str]) -> None:
        """A tensor this function made require grad (an input: a batch, interpolated samples)
        whose .grad the backward pass fills with a graph: zero_grad() never resets it."""
        leaves = self._leaves.get(id(function), set()) - self._grad_cleared.get(id(function), set())
        kept = sorted(leaf for leaf in leaves if function.derives_from(names, {leaf}))
        if not kept:
            if not self._calls:
                self.at_module_exit(self._decide)
            self._calls.append(call)
            return
        leaf = kept[0]
        self.report(
            call,
            fit("'{call}' puts a graph referencing '{leaf}' in '{leaf}.grad': a cycle zero_grad() keeps",
                keep=("leaf",), call=source_of(call, 60), leaf=leaf),
            help=f"get the gradient with torch.autograd.grad(..., {leaf}, create_graph=True) instead, or set "
                 f"{leaf}.grad = None after using it",
        )

    def _decide(self) -> None:
        if self._resets_grad:
            return  # the cycle is broken every step (zero_grad() sets .grad to None since 2.0)
        for call in self._calls:
            text = source_of(call, 60)
            self.report(
                call,
                fit("'{call}' puts graphs in each parameter's .grad: a cycle nothing here breaks", call=text),
                help="use torch.autograd.grad(loss, params, create_graph=True) for higher-order gradients, or "
                     "optimizer.zero_grad(set_to_none=True) (or p.grad = None) after every step",
            )

    VALID = [
        # gradient penalty (WGAN-GP): autograd.grad returns the gradients, no cycle
        """
import torch
def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1, 1, 1, device=real.device)
    mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = critic(mixed)
    grads = torch.autograd.grad(
        outputs=scores, inputs=mixed,
        grad_outputs=torch.ones_like(scores),
        create_graph=True, retain_graph=True,
    )[0]
    return ((grads.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
""",
        # second-order optimizer: backward(create_graph=True), then zero_grad() sets .grad to None
        """
import torch
def train(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward(create_graph=True)
        optimizer.step()
""",
        # explicit reset of .grad after the step
        """
import torch
def meta_step(model, loss, lr):
    loss.backward(create_graph=True)
    for p in model.parameters():
        p.data -= lr * p.grad.data
        p.grad = None
""",
        # create_graph forwarded from a caller's argument (a framework wrapper)
        """
import torch
class Strategy:
    def backward(self, loss, create_graph=False, retain_graph=None):
        loss.backward(create_graph=create_graph, retain_graph=retain_graph)
""",
        # create_graph=False
        """
import torch
def step(model, x, y, opt):
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward(create_graph=False)
    opt.step()
""",
    ]

    INVALID = [
        Invalid("""
import torch
def train(model, loader, optimizer, criterion):
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward(create_graph=True)
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)
""", line=6),
        # torch.autograd.backward also accumulates into .grad
        Invalid("""
import torch
from torch import autograd
def hvp_step(model, loss, params):
    autograd.backward(loss, inputs=params, create_graph=True)
    grads = [p.grad for p in params]
    for p, g in zip(params, grads):
        p.grad.zero_()
    return grads
""", line=5),
        # Lightning manual optimization
        Invalid("""
import torch
import lightning as L
class MetaModel(L.LightningModule):
    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        loss = self.compute_loss(batch)
        self.manual_backward(
            loss,
            create_graph=True,
        )
        opt.step()
""", line=8),
    ]

    VALID += [
        # R1 penalty with torch.autograd.grad: the gradient is returned, not stored in real.grad
        """
import torch
import torch.nn.functional as F
def d_step(D, real, d_opt, gamma=10.0):
    d_opt.zero_grad()
    real.requires_grad_(True)
    real_logits = D(real)
    grad_real, = torch.autograd.grad(real_logits.sum(), real, create_graph=True)
    r1 = grad_real.pow(2).flatten(1).sum(1).mean()
    (F.softplus(-real_logits).mean() + gamma / 2 * r1).backward()
    d_opt.step()
""",
        # backward(create_graph=True) into the input's .grad, reset to None once used
        """
import torch
import torch.nn.functional as F
def d_step(D, real, d_opt, gamma=10.0):
    d_opt.zero_grad()
    real.requires_grad_(True)
    real_logits = D(real)
    real_logits.sum().backward(create_graph=True)
    r1 = real.grad.pow(2).flatten(1).sum(1).mean()
    real.grad = None
    (F.softplus(-real_logits).mean() + gamma / 2 * r1).backward()
    d_opt.step()
""",
    ]

    INVALID += [
        # R1 step function: the input's .grad keeps a graph that references the input; the
        # optimizer's zero_grad() only resets the parameters
        Invalid("""
import torch
import torch.nn.functional as F
def d_step(D, G, real, z, d_opt, gamma=10.0):
    d_opt.zero_grad()
    real.requires_grad_(True)
    real_logits = D(real)
    loss = F.softplus(D(G(z).detach())).mean() + F.softplus(-real_logits).mean()
    real_logits.sum().backward(create_graph=True)
    r1 = real.grad.pow(2).flatten(1).sum(1).mean()
    (loss + gamma / 2 * r1).backward()
    d_opt.step()
    return loss.item()
""", line=9),
    ]

def _keyword_is(arg: cst.Arg, keyword: str, value: str) -> bool:
    return (arg.keyword is not None and arg.keyword.value == keyword and isinstance(arg.value, cst.Name)
            and arg.value.value == value)


def _is_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _is_false(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "False"


def _makes_leaf(value: cst.BaseExpression) -> bool:
    """``x.detach().requires_grad_()``, ``torch.randn(..., requires_grad=True)``."""
    if not isinstance(value, cst.Call):
        return False
    if isinstance(value.func, cst.Attribute) and value.func.attr.value == "requires_grad_":
        return not any(_is_false(arg.value) for arg in value.args)
    return any(arg.keyword is not None and arg.keyword.value == "requires_grad" and _is_true(arg.value)
               for arg in value.args)
