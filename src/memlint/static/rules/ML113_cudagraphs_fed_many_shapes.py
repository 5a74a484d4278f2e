"""ML113 cudagraphs-fed-many-shapes: a function compiled with CUDA graphs is fed a new input
shape again and again.

``torch.compile(mode="reduce-overhead")`` (and ``"max-autotune"``) replays CUDA graphs. A CUDA
graph is recorded for fixed shapes: every new input shape records another graph, with static
input and output buffers of its own in the graphs' memory pool, and keeps it for the rest of the
run. Fed a shape that changes every step (a sequence that grows by one token per step, batches
padded to their own longest sequence), GPU memory grows with each shape until the run is out
of memory (pytorch/pytorch#128424, meta-pytorch/gpt-fast#81).

Flagged: ``torch.compile(..., mode="reduce-overhead" | "max-autotune", dynamic=True)`` (dynamic
shapes asked for, and a graph recorded per shape); a callable compiled with CUDA graphs called
in a loop with an input whose shape the loop changes: grown with ``torch.cat`` onto itself
(autoregressive decoding without a static cache), or sized by the loop's counter
(``torch.arange(idx + 1)``, ``tokens[:, :t + 1]``), or padded to the batch's longest sequence
(``tokenizer(texts, padding=True)``, ``pad_sequence(...)``). Not flagged: ``mode="default"`` / ``"max-autotune-no-cudagraphs"``,
``dynamic=False`` or unset with inputs of one shape, a growing input passed to an uncompiled
model, a fixed-size buffer written in place.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from memlint.static.facts import FunctionScope, Loop, concatenated_onto, dotted_name, names_in
from memlint.static.rule import Invalid, Rule

_COMPILERS = frozenset({"torch.compile"})
_INLINE = "<argument>"  # an argument sized by the loop, written in the call itself
_CUDAGRAPH_MODES = frozenset({"reduce-overhead", "max-autotune"})
# Calls that pad a batch to its own longest sequence.
_PADDING_TO_LONGEST = frozenset({"torch.nn.utils.rnn.pad_sequence"})
# Tensor factories whose positional arguments are sizes.
_SIZED_FACTORIES = frozenset(f"torch.{name}" for name in ("arange", "zeros", "ones", "empty", "full", "randn", "rand",
                                                          "randint"))


@dataclass
class _Call:
    node: cst.Call
    callee: str
    inputs: frozenset[str]  # names the call's arguments read
    loops: tuple[Loop, ...]


class CudagraphsFedManyShapes(Rule):
    code = "ML113"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._compiled: set[str] = set()  # names bound to a callable compiled with CUDA graphs
        self._calls: dict[int, list[_Call]] = {}  # id(function) -> calls of compiled callables in loops
        self._growing: dict[int, set[str]] = {}  # id(loop) -> names whose shape changes every iteration

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        for decorator in node.decorators:
            call = decorator.decorator
            if isinstance(call, cst.Call) and self._cudagraph_compile(call):
                self._compiled.add(node.name.value)

    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        if self._cudagraph_compile(node):
            if _keyword(node, "dynamic") is not None and _is_true(_keyword(node, "dynamic")):
                self.report(node, f"mode={_mode_text(node)} with dynamic=True records a CUDA graph for every shape",
                            help="drop dynamic=True and pad inputs to a few fixed shapes, or use mode='default' "
                                 "(or 'max-autotune-no-cudagraphs') for dynamic shapes",
                            needs_grad=False)
            for name in self._checker.assign_targets:
                self._compiled.add(name)
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value == "compile":  # model.compile(mode=...)
                owner = dotted_name(func.value)
                if owner is not None:
                    self._compiled.add(owner)
            return
        loops = tuple(facts.loops_in_function())
        if not loops:
            return
        callee = dotted_name(node.func)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "forward":
            callee = dotted_name(node.func.value)
        if callee is None or callee not in self._compiled:
            return
        inputs = frozenset(name for arg in node.args for name in names_in(arg.value))
        if any(self._sized_by_the_loop(arg.value, loops[-1]) for arg in node.args):
            inputs |= {_INLINE}  # model(tokens[:, :t + 1])
            self._growing.setdefault(id(loops[-1].node), set()).add(_INLINE)
        function = facts.function
        records = self._calls.get(id(function))
        if records is None:
            records = self._calls[id(function)] = []
            self.at_function_exit(lambda: self._decide(function))
        records.append(_Call(node, callee, inputs, loops))

    def visit_Assign(self, node: cst.Assign) -> None:
        loop = self.facts.loop
        if loop is None or len(node.targets) != 1:
            return
        name = dotted_name(node.targets[0].target)
        if name is None:
            return
        if concatenated_onto(node.value, name, self.facts) is not None:
            self._growing.setdefault(id(loop.node), set()).add(name)  # ids = torch.cat([ids, next_id], -1)
        elif self._sized_by_the_loop(node.value, loop):
            self._growing.setdefault(id(loop.node), set()).add(name)  # ids = torch.arange(idx + 1)

    def _sized_by_the_loop(self, value: cst.BaseExpression, loop: Loop) -> bool:
        """A tensor whose shape follows the loop's counter: ``torch.arange(idx + 1)``,
        ``torch.zeros(1, step)``, ``tokens[:, :t + 1]``."""
        counters = loop.target_names | loop.incremented
        if isinstance(value, cst.Call):
            qualified = self.facts.qualified_name(value.func) or ""
            if qualified in _PADDING_TO_LONGEST or _pads_to_longest(value):
                return True  # each batch padded to its own longest sequence
            if qualified in _SIZED_FACTORIES:
                return any(names_in(arg.value) & counters for arg in value.args if arg.keyword is None)
            func = value.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("to", "cuda", "unsqueeze", "long", "int"):
                return self._sized_by_the_loop(func.value, loop)
            return False
        if isinstance(value, cst.Subscript):
            return any(isinstance(element.slice, cst.Slice) and any(
                part is not None and names_in(part) & counters
                for part in (element.slice.lower, element.slice.upper)) for element in value.slice)
        return False

    def _decide(self, function: FunctionScope) -> None:
        for call in self._calls.get(id(function), ()):
            for loop in call.loops:
                grown = call.inputs & self._growing.get(id(loop.node), set())
                if grown:
                    name = sorted(grown - {_INLINE}) or ["its input"]
                    what = f"'{name[0]}'" if name[0] != "its input" else name[0]
                    self.report(call.node, f"'{call.callee}' replays CUDA graphs, and {what} changes shape every "
                                           "iteration: a graph per shape",
                                help="use a static cache and fixed-shape inputs (pad to the maximum length), or "
                                     "compile with mode='default' for growing inputs",
                                needs_grad=False, function=function)
                    break

    def _cudagraph_compile(self, call: cst.Call) -> bool:
        """``torch.compile(..., mode="reduce-overhead")``, ``model.compile(mode="max-autotune")``."""
        func = call.func
        qualified = self.facts.qualified_name(func)
        if qualified not in _COMPILERS and not (isinstance(func, cst.Attribute) and func.attr.value == "compile"):
            return False
        mode = _keyword(call, "mode")
        return isinstance(mode, cst.SimpleString) and mode.evaluated_value in _CUDAGRAPH_MODES

    VALID = [
        # default mode with dynamic shapes; CUDA graphs with one shape
        """
import torch
model = torch.compile(model, dynamic=True)
step = torch.compile(train_step, mode="max-autotune-no-cudagraphs", dynamic=True)

def run(model, loader):
    fast = torch.compile(model, mode="reduce-overhead")
    for batch in loader:
        fast(batch)
""",
        # decoding with a static cache: one token in, a fixed-size buffer written in place
        """
import torch
def generate(model, prompt, steps):
    decode_one = torch.compile(model, mode="reduce-overhead", fullgraph=True)
    tokens = torch.zeros(1, steps, dtype=torch.long)
    cur = prompt[:, -1:]
    for pos in range(steps):
        logits = decode_one(cur, torch.tensor([pos]))
        cur = logits.argmax(-1)
        tokens[:, pos] = cur[:, 0]
    return tokens
""",
        # batches padded to a fixed length
        """
import torch
def train(model, tokenizer, texts, optimizer, batch_size):
    model = torch.compile(model, mode="reduce-overhead")
    for start in range(0, len(texts), batch_size):
        batch = tokenizer(texts[start:start + batch_size], padding="max_length", max_length=512,
                          truncation=True, return_tensors="pt")
        model(**batch).loss.backward()
        optimizer.step()
""",
        # a growing input fed to a model that is not compiled with CUDA graphs
        """
import torch
def generate(model, ids, steps):
    model = torch.compile(model)
    for _ in range(steps):
        nxt = model(ids)[:, -1:].argmax(-1)
        ids = torch.cat([ids, nxt], dim=-1)
    return ids
""",
    ]

    INVALID = [
        # dynamic shapes asked for, with CUDA graphs (gpt-fast#81)
        Invalid("""
import torch
def setup(model):
    return torch.compile(model, mode="reduce-overhead", fullgraph=True, dynamic=True)
""", line=4),
        # autoregressive decoding: the sequence grows by one token per step
        Invalid("""
import torch
def generate(model, input_ids, max_new_tokens):
    model = torch.compile(model, mode="reduce-overhead")
    for _ in range(max_new_tokens):
        logits = model(input_ids)
        next_token = logits[:, -1, :].argmax(-1, keepdim=True)
        input_ids = torch.cat([input_ids, next_token], dim=-1)
    return input_ids
""", line=6),
        # an input sized by the loop's counter, forward replaced by its compiled version (pytorch#128424)
        Invalid("""
import torch
def run(model, max_len):
    model.forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)
    with torch.no_grad():
        for idx in range(max_len):
            input_ids = torch.arange(idx + 1, device="cuda").unsqueeze(0)
            model(input_ids)
""", line=8),
        # batches tokenized in the loop, each padded to its own longest sequence (pytorch#188150)
        Invalid("""
import torch
def train(model, tokenizer, texts, labels, optimizer, batch_size):
    model = torch.compile(model, mode="reduce-overhead")
    for start in range(0, len(texts), batch_size):
        batch = tokenizer(texts[start:start + batch_size], padding=True, return_tensors="pt").to("cuda")
        loss = model(**batch, labels=labels[start:start + batch_size]).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""", line=7),
        # the decorator form, and Module.compile
        Invalid("""
import torch
@torch.compile(mode="max-autotune")
def score(model, ids):
    return model(ids).logits

def sample(model, ids, steps):
    for _ in range(steps):
        nxt = score(model, ids)[:, -1].argmax(-1, keepdim=True)
        ids = torch.cat((ids, nxt), 1)
    return ids
""", line=9),
    ]


def _keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def _is_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _mode_text(call: cst.Call) -> str:
    mode = _keyword(call, "mode")
    return f"'{mode.evaluated_value}'" if isinstance(mode, cst.SimpleString) else "?"


def _pads_to_longest(call: cst.Call) -> bool:
    """``tokenizer(texts, padding=True)`` / ``padding="longest"``: the batch's own longest length."""
    padding = _keyword(call, "padding")
    return (isinstance(padding, cst.Name) and padding.value == "True") or (
        isinstance(padding, cst.SimpleString) and padding.evaluated_value == "longest")
