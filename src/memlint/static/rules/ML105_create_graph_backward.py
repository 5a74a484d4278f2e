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

from memlint.static.rule import Invalid, Rule
from memlint.static.rules.ML101_graph_accumulation import source_of

# Calls that accumulate into ``.grad`` (as opposed to torch.autograd.grad, which returns).
_BACKWARD_METHODS = frozenset({"backward", "manual_backward"})


class CreateGraphBackward(Rule):
    code = "ML105"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._calls: list[cst.Call] = []
        self._resets_grad = False  # zero_grad() (set_to_none by default) or p.grad = None

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        if method == "zero_grad":
            if not any(_keyword_is(arg, "set_to_none", "False") for arg in node.args):
                self._resets_grad = True
            return
        if method not in _BACKWARD_METHODS and self.facts.qualified_name(func) != "torch.autograd.backward":
            return
        if not any(_keyword_is(arg, "create_graph", "True") for arg in node.args):
            return
        if not self._calls:
            self.at_module_exit(self._decide)
        self._calls.append(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        # p.grad = None (also for p in params: p.grad = None)
        if isinstance(node.value, cst.Name) and node.value.value == "None" and any(
            isinstance(t.target, cst.Attribute) and t.target.attr.value == "grad" for t in node.targets
        ):
            self._resets_grad = True

    def _decide(self) -> None:
        if self._resets_grad:
            return  # the cycle is broken every step (zero_grad() sets .grad to None since 2.0)
        for call in self._calls:
            text = source_of(call, 60)
            self.report(
                call,
                f"'{text}' stores gradients that carry their own graph in each parameter's .grad, "
                f"which references the parameter: a reference cycle that keeps the step's graph "
                f"alive, and nothing here resets .grad to None; use torch.autograd.grad(loss, "
                f"params, create_graph=True) for higher-order gradients, or call "
                f"optimizer.zero_grad(set_to_none=True) (or set p.grad = None) after every step",
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


def _keyword_is(arg: cst.Arg, keyword: str, value: str) -> bool:
    return (arg.keyword is not None and arg.keyword.value == keyword and isinstance(arg.value, cst.Name)
            and arg.value.value == value)
