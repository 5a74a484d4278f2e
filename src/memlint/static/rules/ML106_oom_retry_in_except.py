"""ML106 oom-retry-in-except: an out-of-memory handler re-runs the work inside the ``except``.

While an ``except`` block runs, the exception is alive, and its traceback holds the frames
of the failed step, with every tensor they referenced (activations, the half-built graph).
Retrying from inside the handler therefore starts the retry with the failed step's memory
still allocated, and it fails again (the PyTorch FAQ, "My out of memory exception handler
can't allocate memory"). The fix is to leave the ``except`` first: set a flag or halve the
batch size there, and retry after the block.

Re-running work: calling the model, the function itself, what the ``try`` body called, a
step-like callee, a function of the module or the project that runs a module's forward or
a backward pass (its summary's effects), whatever its name, or a function of the module that
computes with torch on the tensors the ``try`` body's calls were given (a fallback for the
failed work: sliced attention after the fused kernel ran out of memory).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import libcst as cst

from memlint.static.facts import FunctionScope, dotted_name
from memlint.static.rule import Invalid, Rule
from memlint.static.summaries import BACKWARD, MODULE_CALL
from memlint.static.rules.ML101_graph_accumulation import source_of

_OOM_EXCEPTIONS = frozenset({"torch.cuda.OutOfMemoryError", "torch.OutOfMemoryError",
                             "torch.cuda.memory.OutOfMemoryError"})
# Broad exception types whose handler is an OOM handler only if it tests the message.
_BROAD_EXCEPTIONS = frozenset({"RuntimeError", "Exception", "BaseException"})
# Words in a helper's name that say it tests for an out-of-memory error.
_OOM_TEST_WORDS = ("oom", "out_of_memory", "outofmemory", "should_reduce_batch_size")
# Words in a callee's name that say it runs a training/evaluation step.
_STEP_WORDS = ("forward", "backward", "train", "step", "fit", "predict", "evaluate", "generate",
               "infer", "run_batch", "process_batch")
_NOT_STEP_WORDS = ("sched", "log", "print", "warn", "adjust", "reset", "reduce", "decrease", "halve",
                   "clear", "cache", "collect", "sync", "empty", "zero_grad", "oom", "memory")
# Calls that never re-run work, even when the try body called them too.
_HARMLESS_METHODS = frozenset({
    # a module's own listings: they run no forward (for p in model.parameters(): del p.grad)
    "parameters", "named_parameters", "buffers", "named_buffers", "modules", "named_modules", "children",
    "named_children",
    "to", "cpu", "cuda", "detach", "item", "append", "extend", "pop", "get", "format", "join", "split",
    "update", "add", "info", "debug", "warning", "warn", "error", "exception", "critical", "log",
    "write", "flush", "set_postfix", "set_description", "close", "keys", "values", "items",
    "zero_grad", "empty_cache", "synchronize", "collect", "reset_peak_memory_stats", "size", "numel",
})
# Callee names that query state or rebuild the data pipeline (retrying after the handler is fine).
_SETUP_PREFIXES = ("get_", "is_", "has_", "make_", "build_", "create_", "setup", "init", "load", "prepare")
_SETUP_WORDS = ("loader", "dataset", "pipeline", "sampler", "collate", "rank", "world_size", "device")
_MESSAGE_METHODS = frozenset({"info", "debug", "warning", "warn", "error", "exception", "critical", "log", "print",
                              "write", "set_description", "set_postfix", "format"})
# torch functions that compute nothing on tensors (queries, memory management, set-up).
_NOT_COMPUTE = ("torch.cuda.", "torch.distributed.", "torch.utils.", "torch.no_grad", "torch.set_", "torch.get_",
                "torch.is_", "torch.manual_seed", "torch.device", "torch.load", "torch.save", "torch.jit.")
_HARMLESS_FUNCTIONS = frozenset({"print", "len", "str", "repr", "int", "float", "isinstance", "range",
                                 "min", "max", "getattr", "setattr", "hasattr", "type", "dict", "list",
                                 "tuple", "set", "sorted", "enumerate", "zip", "next", "iter"})


@dataclass
class _Handler:
    node: cst.ExceptHandler
    function: FunctionScope
    typed_oom: bool  # catches torch's OutOfMemoryError itself
    tests_oom: bool = False  # "out of memory" in str(e), is_oom_error(e)
    cpu_fallback: bool = False  # x = x.cpu() / x.to("cpu"): the retry does not need device memory
    calls: list[cst.Call] = field(default_factory=list)


@dataclass
class _Try:
    function: FunctionScope
    in_body: bool = True
    body_callees: set[str] = field(default_factory=set)
    body_arguments: set[str] = field(default_factory=set)  # names the try body's calls were given


class OomRetryInExcept(Rule):
    code = "ML106"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._tries: list[_Try] = []
        self._handlers: list[_Handler] = []
        self._comparisons = 0
        self._message_depth = 0  # inside a log/print call or an f-string: calls there build text
        self._message_calls: set[int] = set()

    # ----- structure ---------------------------------------------------------------------------
    def visit_Try(self, node: cst.Try) -> None:
        self._tries.append(_Try(self.facts.function))

    def leave_Try(self, node: cst.Try) -> None:
        self._tries.pop()

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if self._tries:
            self._tries[-1].in_body = False
        self._handlers.append(_Handler(node, self.facts.function, self._catches_oom(node.type)))

    def leave_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        handler = self._handlers.pop()
        if not (handler.typed_oom or handler.tests_oom) or not handler.calls or handler.cpu_fallback:
            return
        try_frame = self._tries[-1] if self._tries else None
        for call in handler.calls:
            reason = self._reruns_work(call, handler, try_frame)
            if reason is not None:
                self._report(call, reason)
                return
        # What the handler calls does the work, whatever its name (self._run_dummy_batch()):
        # decided once every function of the module has been walked.
        given = frozenset(try_frame.body_arguments) if try_frame is not None and try_frame.function is \
            handler.function else frozenset()
        self.at_module_exit(lambda calls=list(handler.calls): self._decide_by_behaviour(calls, given))

    def _report(self, call: cst.Call, reason: str) -> None:
        self.report(
            call,
            f"'{_call_text(call)}' {reason} in the OOM handler, with the failed step's tensors alive",
            help="set a flag (or halve the batch size) in the handler and retry after the except block",
            needs_grad=False,
        )

    def _decide_by_behaviour(self, calls: list[cst.Call], given: frozenset[str] = frozenset()) -> None:
        for call in calls:
            callee = _callee(call) or ""
            if callee.rsplit(".", 1)[-1] in _HARMLESS_METHODS:
                continue
            if self._runs_a_step(call):
                self._report(call, "runs the model")
                return
            if given & _argument_roots(call) and self._computes_on_tensors(call):
                self._report(call, "redoes the failed work")
                return

    def _computes_on_tensors(self, call: cst.Call) -> bool:
        """Is ``call`` a function of this module whose body (or what it calls here) computes
        with torch (``torch.bmm``, ``F.softmax``, not ``torch.cuda.*`` queries)? Handed the
        tensors the failed ``try`` body was given, it is a fallback for that work (sliced
        attention after the fused kernel ran out of memory)."""
        facts = self.facts
        found = facts.callees(call)
        if found is None:
            return False
        for definition in found[0]:
            scope = facts.function_scopes.get(id(definition))
            if scope is None:
                continue
            for name in facts.calls_made(scope, depth=2):
                qualified = facts.imports.qualify(name)
                if qualified.startswith("torch.") and not qualified.startswith(_NOT_COMPUTE):
                    return True
        return False

    def _runs_a_step(self, call: cst.Call) -> bool:
        """Does a function ``call`` runs (of this module, or of another module of the project)
        run a module's forward or a backward pass, itself or through what it calls?"""
        facts = self.facts
        found = facts.callees(call)
        if found is not None:
            stack = [facts.function_scopes.get(id(definition)) for definition in found[0]]
            seen: set[int] = set()
            while stack:
                scope = stack.pop()
                if scope is None or id(scope) in seen or len(seen) > 20:
                    continue
                seen.add(id(scope))
                if scope.has_backward or MODULE_CALL in scope.effects:
                    return True
                for name in scope.callees:
                    stack.extend(facts.callee_scopes(name, scope))
                if any(facts.project is not None and facts.project.has_effect(key, effect)
                       for key in scope.call_keys if not key.startswith(f"{facts.module_name}:")
                       for effect in (BACKWARD, MODULE_CALL)):
                    return True
            return False
        definition = facts.project_definition(facts.qualified_name(call.func))
        if definition is None or definition.kind == "class" or facts.project is None:
            return False
        return any(facts.project.has_effect(definition.key, effect) for effect in (BACKWARD, MODULE_CALL))

    # ----- what the handler does -----------------------------------------------------------------
    def visit_Comparison(self, node: cst.Comparison) -> None:
        self._comparisons += 1

    def leave_Comparison(self, node: cst.Comparison) -> None:
        self._comparisons -= 1

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if self._handlers and self._comparisons and "out of memory" in node.value.lower():
            self._handlers[-1].tests_oom = True

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self._message_depth += 1

    def leave_FormattedString(self, node: cst.FormattedString) -> None:
        self._message_depth -= 1

    def leave_Call(self, node: cst.Call) -> None:
        if id(node) in self._message_calls:
            self._message_calls.discard(id(node))
            self._message_depth -= 1

    def visit_Call(self, node: cst.Call) -> None:
        function = self.facts.function
        callee = _callee(node)
        for frame in self._tries:
            if frame.in_body and frame.function is function and callee is not None:
                frame.body_callees.add(callee)
                frame.body_arguments.update(_argument_roots(node))
        if not self._handlers:
            return
        if self._message_depth:
            return  # builds a log message: f"OOM on rank {dist.get_rank()}"
        if _is_message_call(node):
            self._message_calls.add(id(node))
            self._message_depth += 1
        handler = self._handlers[-1]
        if callee is not None and any(word in callee.lower().rsplit(".", 1)[-1] for word in _OOM_TEST_WORDS):
            handler.tests_oom = True
            return
        if handler.function is function:  # not inside a def/lambda nested in the handler
            handler.calls.append(node)
            if isinstance(node.func, cst.Attribute) and (node.func.attr.value == "cpu" or (
                    node.func.attr.value == "to" and any("cpu" in source_of(arg.value) for arg in node.args))):
                handler.cpu_fallback = True

    # ----- helpers ---------------------------------------------------------------------------------
    def _catches_oom(self, type_expr: cst.BaseExpression | None) -> bool:
        if type_expr is None:
            return False
        if isinstance(type_expr, cst.Tuple):
            return any(self._catches_oom(el.value) for el in type_expr.elements)
        qualified = self.facts.qualified_name(type_expr) or ""
        return qualified in _OOM_EXCEPTIONS or (
            qualified.endswith("OutOfMemoryError") and qualified.startswith("torch")
        )

    def _reruns_work(self, call: cst.Call, handler: _Handler, try_frame: _Try | None) -> str | None:
        facts = self.facts
        callee = _callee(call)
        if isinstance(call.func, cst.Name) and call.func.value in _HARMLESS_FUNCTIONS:
            return None
        last = callee.rsplit(".", 1)[-1] if callee else None
        if last in _HARMLESS_METHODS:
            return None
        if facts.is_module_expr(call.func) and not facts.is_module_constructor(call):
            return "reruns the model"
        if callee is None:
            return None
        qualified = facts.qualified_name(call.func) or callee
        if qualified.startswith(("torch.cuda.", "gc.", "logging.", "warnings.", "time.", "sys.", "os.")):
            return None
        resolved = facts.qualified_name(call.func)
        if resolved is not None and "." in resolved and resolved.split(".", 1)[0] in sys.stdlib_module_names:
            return None  # json.dumps(ret), as imported: the standard library runs no model
        function = handler.function
        if function.name != "<module>" and last == function.name:
            return "recurses"
        lowered = callee.lower()
        if any(word in lowered for word in _NOT_STEP_WORDS) or "optim" in lowered or "pbar" in lowered:
            return None  # bookkeeping: adjust_batch_size, reset_dataloaders, scheduler.step...
        if qualified.startswith(("torch.distributed.", "torch.utils.data.")) or last[:1].isupper() or (
                last.startswith(_SETUP_PREFIXES) or any(word in last.lower() for word in _SETUP_WORDS)):
            return None  # a query or a rebuilt data pipeline: get_rank(), make_train_loader(...), DataLoader(...)
        if try_frame is not None and try_frame.function is function and callee in try_frame.body_callees:
            return "runs again"
        if last != "step" and any(word in last.lower() for word in _STEP_WORDS):
            return "reruns a step"
        return None

    VALID = [
        # a helper of the module given the same tensors only describes them (no torch computation)
        """
import logging
import torch
import torch.nn.functional as F

def describe(q, k):
    logging.warning("attention of %s x %s", tuple(q.shape), tuple(k.shape))

def attention(q, k, v):
    try:
        return F.scaled_dot_product_attention(q, k, v)
    except torch.cuda.OutOfMemoryError:
        describe(q, k)
        raise
""",
        # the handler frees the gradients and skips the batch: listing parameters runs no forward
        """
import torch
def train_epoch(model, loader, optimizer, ema):
    for data in loader:
        try:
            loss = model(data).mean()
            loss.backward()
            optimizer.step()
            ema.update(model.parameters())
        except RuntimeError as e:
            if "out of memory" in str(e):
                for p in model.parameters():
                    if p.grad is not None:
                        del p.grad
                torch.cuda.empty_cache()
                continue
            raise
""",
        # a streaming server answers with an error message: json.dumps runs in both, it re-runs no work
        """
import json
import torch
def generate_stream_gate(self, params):
    try:
        for output in self.generate_stream_func(self.model, self.tokenizer, params):
            ret = {"text": output["text"], "error_code": 0}
            yield json.dumps(ret).encode() + b"\\0"
    except torch.cuda.OutOfMemoryError as e:
        ret = {"text": f"server error ({e})", "error_code": 50002}
        yield json.dumps(ret).encode() + b"\\0"
""",
        # flag in the handler, retry after the except block (PyTorch FAQ)
        """
import torch
def run_with_fallback(model, batch):
    oom = False
    try:
        out = model(batch)
    except torch.cuda.OutOfMemoryError:
        oom = True
    if oom:
        torch.cuda.empty_cache()
        out = torch.cat([model(chunk) for chunk in batch.split(len(batch) // 2)])
    return out
""",
        # halve the batch size in the handler; the while loop retries after it (accelerate style)
        """
import gc
import torch
def find_batch_size(train_fn, batch_size=512):
    while batch_size > 0:
        try:
            return train_fn(batch_size)
        except RuntimeError as e:
            if "out of memory" in str(e):
                gc.collect()
                torch.cuda.empty_cache()
                batch_size //= 2
            else:
                raise
""",
        # fairseq-style: log, zero the gradients, skip the batch
        """
import logging
import torch
logger = logging.getLogger(__name__)
def train_epoch(model, loader, optimizer, criterion):
    for batch in loader:
        try:
            loss = criterion(model(batch["x"]), batch["y"])
            loss.backward()
            optimizer.step()
        except RuntimeError as e:
            if "out of memory" not in str(e):
                raise
            logger.warning("OOM, skipping batch: %s", e)
            optimizer.zero_grad()
            torch.cuda.empty_cache()
            continue
""",
        # empty_cache alone and re-raise
        """
import torch
def forward_or_explain(model, x):
    try:
        return model(x)
    except torch.OutOfMemoryError:
        torch.cuda.empty_cache()
        print(torch.cuda.memory_summary())
        raise
""",
        # a RuntimeError handler that is not about memory
        """
import torch
def load(model, path):
    try:
        model.load_state_dict(torch.load(path, map_location="cpu"))
    except RuntimeError:
        model.load_state_dict(torch.load(path, map_location="cpu"), strict=False)
""",
        # bookkeeping in the handler: the scheduler, the optimizer, a progress bar, a checkpoint
        """
import torch
def train(engine, loader, optimizer, scheduler, pbar):
    for batch in loader:
        try:
            engine.train_step(batch)
        except torch.cuda.OutOfMemoryError:
            optimizer.zero_grad(set_to_none=True)
            scheduler.step()
            pbar.update(1)
            engine.save_checkpoint("oom.ckpt")
            raise
""",
        # a deliberate CPU fallback: the retry runs on the CPU (transformers' mxfp4 conversion)
        """
import torch
def convert_packed(blocks, scales, dtype=torch.bfloat16):
    try:
        return _convert_packed(blocks, scales, dtype=dtype)
    except torch.OutOfMemoryError:
        blocks = blocks.to("cpu")
        scales = scales.to("cpu")
        return _convert_packed(blocks, scales, dtype=dtype)
""",
        # lightning's batch-size finder: adjusts the size and resets loaders, retries next loop turn
        """
import torch
from lightning.pytorch.utilities.memory import garbage_collection_cuda, is_oom_error
def _run_power_scaling(trainer, new_size, batch_arg_name, max_trials, params):
    for _ in range(max_trials):
        garbage_collection_cuda()
        try:
            _try_loop_run(trainer, params)
            new_size, changed = _adjust_batch_size(trainer, batch_arg_name, factor=2.0)
        except RuntimeError as exception:
            if is_oom_error(exception):
                garbage_collection_cuda()
                new_size, _ = _adjust_batch_size(trainer, batch_arg_name, factor=0.5, desc="failed")
                _reset_dataloaders(trainer)
                break
            raise
    return new_size
""",
    ]

    VALID += [
        # a handler that only logs, with a rank query in the message
        """
import logging
import torch
import torch.distributed as dist
logger = logging.getLogger(__name__)
def train_step(model, batch, optimizer):
    try:
        rank = dist.get_rank()
        model(**batch).loss.backward()
        optimizer.step()
    except torch.cuda.OutOfMemoryError:
        logger.warning(f"OOM on rank {dist.get_rank()} with {len(batch['input_ids'])} sequences")
        print("rank", get_local_rank(), "ran out of memory")
        raise
""",
        # shrink the batch and rebuild the data pipeline in the handler; the retried step runs after it
        """
import torch
def fit(dataset, model, optimizer, batch_size):
    loader = make_train_loader(dataset, batch_size)
    while True:
        try:
            for batch in loader:
                model(batch).sum().backward()
                optimizer.step()
            break
        except RuntimeError as e:
            if "out of memory" not in str(e):
                raise
            batch_size //= 2
            loader = make_train_loader(dataset, batch_size)
            sampler = torch.utils.data.RandomSampler(dataset)
            torch.cuda.empty_cache()
""",
    ]

    INVALID = [
        # the fallback (sliced attention, a function of the module computing with torch) runs in the
        # handler on the tensors the failed call was given
        Invalid("""
import torch
import torch.nn.functional as F

def sliced(q, k, v, size=1024):
    out = torch.empty_like(q)
    for i in range(0, q.shape[1], size):
        out[:, i:i + size] = torch.softmax(q[:, i:i + size] @ k.transpose(1, 2), -1) @ v
    return out

def attention(q, k, v):
    try:
        return F.scaled_dot_product_attention(q, k, v)
    except torch.cuda.OutOfMemoryError:
        return sliced(q, k, v)
""", line=15),
        # the same, but the handler re-runs the forward/backward itself
        Invalid("""
import torch
def fit(dataset, model, optimizer, batch_size):
    loader = make_train_loader(dataset, batch_size)
    try:
        for batch in loader:
            model(batch).sum().backward()
            optimizer.step()
    except RuntimeError as e:
        if "out of memory" not in str(e):
            raise
        loader = make_train_loader(dataset, batch_size // 2)
        for batch in loader:
            model(batch).sum().backward()
            optimizer.step()
""", line=14),
        # recursion with a smaller batch from inside the handler
        Invalid("""
import torch
def train_step(model, batch, optimizer, criterion):
    try:
        loss = criterion(model(batch["x"]), batch["y"])
        loss.backward()
        optimizer.step()
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
        half = {k: v[: len(v) // 2] for k, v in batch.items()}
        train_step(model, half, optimizer, criterion)
""", line=11),
        # the model is called again in the handler
        Invalid("""
import torch
def predict(model, images):
    try:
        return model(images)
    except RuntimeError as err:
        if "CUDA out of memory" in str(err):
            torch.cuda.empty_cache()
            return torch.cat([model(chunk) for chunk in images.chunk(4)])
        raise
""", line=9),
        # the failed call is repeated (an is_oom helper tests the error)
        Invalid("""
import torch
from mylib.utils import is_oom_error
def fit_epoch(trainer, loader):
    for batch in loader:
        try:
            trainer.run_batch(batch)
        except RuntimeError as exc:
            if not is_oom_error(exc):
                raise
            torch.cuda.empty_cache()
            trainer.run_batch(batch[: len(batch) // 2])
""", line=12),
        # torch.OutOfMemoryError with a step-like helper
        Invalid("""
import torch
from torch import OutOfMemoryError
class Runner:
    def step(self, batch):
        try:
            return self._step(batch)
        except OutOfMemoryError:
            torch.cuda.empty_cache()
            return self.training_step_low_mem(batch)
""", line=10),
        # a helper of the class runs a dummy forward/backward pass, whatever its name (fairseq-like)
        Invalid("""
import torch
class Trainer:
    def train_step(self, batch):
        try:
            self.forward_backward(batch)
        except RuntimeError as e:
            if "out of memory" in str(e):
                self._run_placeholder()
            else:
                raise

    def _run_placeholder(self):
        out = self.model(self.placeholder)
        (out.sum() * 0).backward()
""", line=9),
    ]


def _callee(call: cst.Call) -> str | None:
    return dotted_name(call.func)


def _call_text(call: cst.Call, limit: int = 24) -> str:
    """The call as the message names it: its source when short, else ``callee(...)``."""
    text = source_of(call, 1000)
    if len(text) <= limit:
        return text
    callee = _callee(call)
    if callee is None:
        return source_of(call, limit)
    return f"{callee if len(callee) <= limit - 5 else callee.rsplit('.', 1)[-1]}(...)"


def _is_message_call(call: cst.Call) -> bool:
    """``print(...)``, ``logger.warning(...)``, ``warnings.warn(...)``: its arguments build text."""
    func = call.func
    if isinstance(func, cst.Name):
        return func.value in ("print", "str", "repr")
    return isinstance(func, cst.Attribute) and func.attr.value in _MESSAGE_METHODS


def _argument_roots(call: cst.Call) -> set[str]:
    """The names at the root of a call's arguments: ``q`` and ``k`` in ``f(q.view(b, -1), k)``."""
    roots: set[str] = set()
    for arg in call.args:
        value = arg.value
        while True:
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
                value = value.func.value
            elif isinstance(value, (cst.Attribute, cst.Subscript)):
                value = value.value
            else:
                break
        if isinstance(value, cst.Name) and value.value not in ("self", "cls"):
            roots.add(value.value)
    return roots
