"""ML213 grad-mode-without-effect: ``torch.no_grad()`` is written where it switches nothing off.

Two shapes, both seen in reports where the author meant inference and autograd recorded
every forward pass anyway:

- **a bare call**: ``torch.no_grad()`` (or ``torch.inference_mode()``) on its own line builds
  a context manager and throws it away; grad mode is untouched. ``torch.set_grad_enabled(False)``
  is the statement that switches grad off;
- **a factory**: a function decorated with ``@torch.no_grad()`` (or defining a function inside
  ``with torch.no_grad():``) returns a nested function that does the real work. The decorator
  holds only while the factory runs; the returned closure runs later, with the caller's grad
  mode (on). Reported when the closure calls something, with grad on, and returns nothing that
  carries a graph (a loss closure handed to a training loop returns one, and needs grad), and
  runs no backward pass itself.

Not flagged: ``with torch.no_grad():``, ``@torch.no_grad()`` on the function doing the work,
a closure with its own decorator or ``with`` block, ``torch.set_grad_enabled(False)`` as a
statement, ``torch.no_grad().__enter__()``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from memlint.static.facts import NO_GRAD_CONTEXTS, SET_GRAD_ENABLED, FunctionScope, Graph
from memlint.static.rule import Invalid, Rule

# Calls that do no tensor work of their own: a closure calling only these builds no graph.
_PLAIN_CALLS = frozenset({"print", "len", "str", "repr", "int", "float", "bool", "isinstance", "range", "enumerate",
                          "zip", "list", "tuple", "dict", "set", "sorted", "min", "max", "abs", "round", "getattr",
                          "setattr", "hasattr", "type", "id", "format", "open", "super"})


@dataclass
class _Closure:
    node: cst.FunctionDef
    scope: FunctionScope
    factory: FunctionScope
    context: str  # "@torch.no_grad()" or "with torch.no_grad()"
    calls_with_grad: list[str] = field(default_factory=list)  # what it calls with grad on


class GradModeWithoutEffect(Rule):
    code = "ML213"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._closures: dict[int, _Closure] = {}  # id(closure's scope) -> record
        self._with_depth: dict[int, int] = {}  # id(function) -> grad-off ``with`` blocks open in it

    # ----- a bare call --------------------------------------------------------------------------
    def visit_Expr(self, node: cst.Expr) -> None:
        call = node.value
        if not isinstance(call, cst.Call):
            return
        qualified = self.facts.qualified_name(call.func)
        if qualified not in NO_GRAD_CONTEXTS:
            return
        if qualified.endswith("inference_mode") and call.args and _is_false(call.args[0].value):
            return
        short = qualified.rsplit(".", 1)[-1]
        self.report(
            call,
            f"'{short}()' alone on a line switches nothing off: autograd stays on",
            help=f"use 'with torch.{short}():' around the work or decorate the function with @torch.{short}(); "
                 "to switch grad off from here on, call torch.set_grad_enabled(False)",
            needs_grad=False,
        )

    # ----- a factory ------------------------------------------------------------------------------
    def visit_With(self, node: cst.With) -> None:
        if any(self._turns_grad_off(item.item) for item in node.items):
            key = id(self.facts.function)
            self._with_depth[key] = self._with_depth.get(key, 0) + 1

    def leave_With(self, node: cst.With) -> None:
        if any(self._turns_grad_off(item.item) for item in node.items):
            self._with_depth[id(self.facts.function)] -= 1

    def _turns_grad_off(self, item: cst.BaseExpression) -> bool:
        func = item.func if isinstance(item, cst.Call) else item
        return self.facts.qualified_name(func) in NO_GRAD_CONTEXTS

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        facts = self.facts
        factory = facts.function  # the walk has not entered ``node`` yet
        scope = facts.function_scopes.get(id(node))
        if factory is facts.module_scope or scope is None or scope.entry_grad_mode_explicit or not facts.grad_off:
            return
        if self._with_depth.get(id(factory), 0):
            context = "with torch.no_grad()"
        elif factory.entry_grad_mode_explicit:
            context = "@torch.no_grad()"
        else:
            return  # off because of set_grad_enabled(False) or a caller: not this rule's shape
        self._closures[id(scope)] = _Closure(node, scope, factory, context)
        if len(self._closures) == 1:
            self.at_module_exit(self._decide)

    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        closure = self._closures.get(id(facts.function))
        if closure is None or facts.in_no_grad:
            return
        func = node.func
        if isinstance(func, cst.Name) and func.value in _PLAIN_CALLS:
            return
        qualified = facts.qualified_name(func)
        if qualified in NO_GRAD_CONTEXTS or qualified in SET_GRAD_ENABLED:
            return  # the closure's own ``with torch.no_grad():``
        closure.calls_with_grad.append(qualified or type(func).__name__)

    def _decide(self) -> None:
        facts = self.facts
        for closure in self._closures.values():
            scope, factory = closure.scope, closure.factory
            name = closure.node.name.value
            if name not in factory.returned_names or not closure.calls_with_grad:
                continue
            if scope.has_backward or scope.is_generator:
                continue  # a training closure (an optimizer's closure) needs grad
            if any(facts.resolve(value).state is not Graph.NONE for value, _ in scope.returns):
                continue  # hands a graph back: the caller may backpropagate it (a loss closure)
            self.report(
                closure.node.name,
                f"'{name}' is returned by a {closure.context} factory and runs later with grad on",
                help=f"decorate '{name}' itself with @torch.no_grad() (or open the block inside it): the factory's "
                     f"grad mode ends when '{factory.name}' returns",
                function=scope,
            )

    VALID = [
        # a with block; the decorator on the function doing the work; set_grad_enabled(False) as a statement
        """
import torch
torch.set_grad_enabled(False)

def evaluate(model, loader):
    with torch.no_grad():
        return [model(x).argmax(1) for x in loader]

@torch.no_grad()
def predict(model, x):
    return model(x).argmax(1)
""",
        # the returned closure carries its own decorator, or its own with block
        """
import torch
class Generator:
    @torch.no_grad()
    def get_make_image(self, sampler, cond):
        init = self.model.encode(cond)

        @torch.no_grad()
        def make_image(x_T):
            return self.to_image(sampler.decode(init, x_T))
        return make_image

    @torch.no_grad()
    def get_make_mask(self, sampler):
        def make_mask(x):
            with torch.no_grad():
                return sampler.mask(x).cpu().numpy()
        return make_mask
""",
        # a loss closure: the factory precomputes targets without grad, the closure returns a loss
        """
import torch
import torch.nn.functional as F
@torch.no_grad()
def make_distill_loss(teacher, images):
    targets = teacher(images).softmax(-1)

    def loss_fn(student_logits):
        return F.kl_div(student_logits.log_softmax(-1), targets, reduction="batchmean")
    return loss_fn
""",
        # an optimizer's closure runs a backward pass: it needs grad
        """
import torch
@torch.no_grad()
def make_closure(model, x, y, optimizer, criterion):
    def closure():
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        return loss.item()
    return closure
""",
        # a nested helper used only inside the factory; inference_mode(False) statement
        """
import torch
@torch.no_grad()
def embed_all(model, batches):
    def embed(x):
        return model(x).cpu().numpy()
    return [embed(x) for x in batches]

torch.inference_mode(False)
""",
    ]

    INVALID = [
        # a bare call at module level (min-dalle)
        Invalid("""
import torch
torch.no_grad()

def generate(model, tokens):
    return model(tokens).argmax(-1).cpu().numpy()
""", line=3),
        # inside a function, and inference_mode through an alias
        Invalid("""
from torch import inference_mode
def run(model, x):
    inference_mode()
    return model(x).argmax(1).tolist()
""", line=4),
        # @torch.no_grad() on the factory, the closure does the sampling (InvokeAI)
        Invalid("""
import torch
class Img2Img:
    @torch.no_grad()
    def get_make_image(self, sampler, conditioning, init_image, steps):
        init_latent = self.model.encode_first_stage(init_image)

        def make_image(x_T):
            samples = sampler.decode(init_latent, conditioning, steps, noise=x_T)
            return self.model.decode_first_stage(samples).cpu().numpy()
        return make_image
""", line=8),
        # a closure defined inside a with block and returned
        Invalid("""
import torch
def build_predictor(model, tokenizer):
    with torch.no_grad():
        model.eval()

        def predict(text):
            ids = tokenizer(text, return_tensors="pt").input_ids
            return model(ids).logits.argmax(-1).tolist()
    return predict
""", line=7),
    ]


def _is_false(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "False"
