"""ML111 recording-left-on: a memory-history recorder or a profiler records a whole training run.

Two debugging tools keep a record of every event in host memory for as long as they are on:

- ``torch.cuda.memory._record_memory_history()`` keeps, for every CUDA allocation and free,
  an entry with its stack trace; with the default ``max_entries`` (unbounded) the history
  grows with every step until ``_record_memory_history(enabled=None)`` stops it;
- ``torch.profiler.profile(...)`` without a ``schedule`` (and ``torch.autograd.profiler.profile``,
  which has none) records every operator of every step it spans; its events are only freed
  when the profiler exits.

Flagged: a recorder started (the default ``enabled="all"``, no ``max_entries``) and stopped
nowhere in the module, when no other module of the project mentions it (a stop may live
there), with a loop that runs steps (over a loader, or with a backward pass or an optimizer
step) at or after the start; a profiler without a schedule whose ``with`` block (or
``start()`` ... ``stop()`` span) holds such a loop, unless the loop is bounded (``break``,
``range(<literal>)``); such a profiler opened in a ``@contextmanager`` around its ``yield``,
when a ``with`` block of that helper in the module holds such a loop. Not flagged: ``max_entries=...``, ``enabled="state"`` (live blocks only),
a stop anywhere in the module, a profiler with a ``schedule=`` (it records only its active
steps), ``enabled=<flag>`` (a debugging switch), test files.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from memlint.static.facts import FunctionScope, Loop, dotted_name, is_test_file, stops_memory_history
from memlint.static.summaries import STOPS_MEMORY_HISTORY
from memlint.static.rule import Invalid, Rule

_RECORDER = "_record_memory_history"
_PROFILERS = frozenset({"torch.profiler.profile", "torch.profiler.profiler.profile", "torch.autograd.profiler.profile",
                        "torch.autograd.profile"})
_SCHEDULED_PROFILERS = frozenset({"torch.profiler.profile", "torch.profiler.profiler.profile"})
# Hooks that Lightning (LightningModule, Callback) and the Hugging Face Trainer (TrainerCallback)
# call before or during the training steps.
_TRAINING_HOOKS = frozenset({"on_fit_start", "on_train_start", "on_train_epoch_start", "on_train_batch_start",
                             "on_train_batch_end", "on_before_backward", "on_after_backward", "setup",
                             "on_train_begin", "on_epoch_begin", "on_step_begin", "on_step_end"})
_TRAINING_FRAMEWORKS = frozenset({"lightning", "pytorch_lightning", "transformers"})


_CONTEXT_MANAGERS = frozenset({"contextlib.contextmanager", "contextmanager"})


@dataclass
class _Recorder:
    call: cst.Call
    what: str  # for the message
    loops_open: tuple[Loop, ...]  # the loops of its function around the start
    loops_after: list[cst.CSTNode] = field(default_factory=list)  # loops of its function entered while on
    calls_after: list[cst.Call] = field(default_factory=list)  # calls its function makes while on
    profiler: bool = False
    function: FunctionScope | None = None  # where a memory-history recorder starts
    yields: bool = False  # a ``yield`` in its block: a @contextmanager hands the block to its caller


class RecordingLeftOn(Rule):
    code = "ML111"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._test_file = is_test_file(checker.path)
        self._recorders: list[_Recorder] = []  # memory-history starts, decided at the module's end
        self._stopped = False  # _record_memory_history(enabled=None) somewhere in the module
        self._open: dict[int, list[_Recorder]] = {}  # id(function) -> what records now in it
        self._blocks: list[tuple[cst.With, _Recorder]] = []  # open ``with profile(...)`` blocks
        self._profilers_made: dict[str, cst.Call] = {}  # name -> unscheduled profiler call bound to it
        self._started: dict[str, _Recorder] = {}  # name -> profiler started by name, not stopped yet
        self._bounded: set[int] = set()  # id() of loops with a ``break`` directly in their body
        # A profiler whose block yields, in a @contextmanager: function name -> the profiler; and
        # the functions of this module whose ``with f(...):`` blocks run steps
        self._yielding: dict[str, _Recorder] = {}
        self._helper_blocks: list[tuple[cst.With, str, _Recorder]] = []
        self._steps_under: set[str] = set()

    # ----- memory history -----------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        for recorder in self._open.get(id(facts.function), ()):
            recorder.calls_after.append(node)
        qualified = facts.qualified_name(node.func) or ""
        if qualified.rsplit(".", 1)[-1] == _RECORDER and qualified.startswith("torch."):
            self._memory_history(node)
            return
        func = node.func
        if not isinstance(func, cst.Attribute) or node.args:
            return
        name = dotted_name(func.value)
        if name is None:
            return
        if func.attr.value == "start" and name in self._profilers_made:  # prof.start()
            made = self._profilers_made[name]
            recorder = _Recorder(made, _short(made, facts), tuple(facts.loops_in_function()), profiler=True)
            self._started[name] = recorder
            self._open.setdefault(id(facts.function), []).append(recorder)
            self.at_function_exit(lambda: self._decide_profiler(recorder))
        elif func.attr.value == "stop" and name in self._started:  # prof.stop()
            self._close(self._started.pop(name))

    def _memory_history(self, node: cst.Call) -> None:
        if stops_memory_history(node, self.facts.qualified_name(node.func) or ""):
            self._stopped = True
            return
        enabled = _argument(node, "enabled", 0)
        if _argument(node, "max_entries", 3) is not None or _argument(node, "trace_alloc_max_entries", 2) is not None:
            return  # a bounded ring buffer
        if enabled is not None and not (isinstance(enabled, cst.SimpleString) and enabled.evaluated_value == "all"):
            return  # "state" (live blocks only), a legacy True (one trace entry), a flag
        if self._test_file:
            return
        recorder = _Recorder(node, "_record_memory_history()", tuple(self.facts.loops_in_function()),
                             function=self.facts.function)
        self._recorders.append(recorder)
        self._open.setdefault(id(self.facts.function), []).append(recorder)  # never closed: stops are module-wide
        if len(self._recorders) == 1:
            self.at_module_exit(self._decide_memory_history)

    def _decide_memory_history(self) -> None:
        facts = self.facts
        if self._stopped or facts.effect_through_project(STOPS_MEMORY_HISTORY) is not False:
            return  # stopped here, or by a function of another module this one calls (or may)
        for recorder in self._recorders:
            if facts.effect_in_callers(recorder.function, STOPS_MEMORY_HISTORY) is not False:
                continue  # a module that calls this code may stop it
            if self._records_steps(recorder) or self._framework_runs_steps_after(recorder.function):
                self.report(recorder.call, "CUDA memory history is recorded from here on and never stopped",
                            help="stop it once the steps you need are recorded: "
                                 "torch.cuda.memory._record_memory_history(enabled=None), or pass max_entries=...",
                            needs_grad=False)

    def _framework_runs_steps_after(self, function: FunctionScope | None) -> bool:
        """Started in a hook a training framework calls at the start of (or during) training:
        Lightning's ``training_step`` / ``on_train_start`` / ``on_train_batch_start``..., a
        Hugging Face ``TrainerCallback``'s ``on_train_begin`` / ``on_step_begin``...: the steps
        run after it, in the framework."""
        if function is None or function.class_info is None:
            return False
        if function.is_per_step_method and function.name != "forward":
            return True
        bases = function.class_info.base_names
        return function.name in _TRAINING_HOOKS and any(
            base.split(".", 1)[0] in _TRAINING_FRAMEWORKS for base in bases)

    # ----- profilers ------------------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        # prof = torch.profiler.profile(...): started and stopped by name
        if isinstance(node.value, cst.Call) and self._unscheduled_profiler(node.value) and len(node.targets) == 1:
            name = dotted_name(node.targets[0].target)
            if name is not None:
                self._profilers_made[name] = node.value

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            call = item.item
            if isinstance(call, cst.Call) and self._unscheduled_profiler(call):
                recorder = _Recorder(call, _short(call, self.facts), (), profiler=True)
                self._blocks.append((node, recorder))
                self._open.setdefault(id(self.facts.function), []).append(recorder)
            elif isinstance(call, cst.Call) and isinstance(call.func, cst.Name) \
                    and call.func.value in self.facts.module_functions:
                # with torch_profile(params): a context manager of this module around the block
                helper = _Recorder(call, call.func.value, ())
                self._helper_blocks.append((node, call.func.value, helper))
                self._open.setdefault(id(self.facts.function), []).append(helper)

    def leave_With(self, node: cst.With) -> None:
        while self._blocks and self._blocks[-1][0] is node:
            _, recorder = self._blocks.pop()
            self._close(recorder)
            function = self.facts.function
            if recorder.yields and any(self.facts.qualified_name(d.decorator) in _CONTEXT_MANAGERS
                                       for d in getattr(function.node, "decorators", ())):
                self._yielding[function.name] = recorder  # decided where the helper is used
                self.at_module_exit(lambda recorder=recorder, name=function.name: self._decide_yielded(recorder, name))
                continue
            self.at_function_exit(lambda recorder=recorder: self._decide_profiler(recorder))
        while self._helper_blocks and self._helper_blocks[-1][0] is node:
            _, name, helper = self._helper_blocks.pop()
            self._close(helper)
            self.at_function_exit(lambda helper=helper, name=name: self._note_steps_under(helper, name))

    def visit_Yield(self, node: cst.Yield) -> None:
        for recorder in self._open.get(id(self.facts.function), ()):
            recorder.yields = True

    def _note_steps_under(self, helper: _Recorder, name: str) -> None:
        if self._records_steps(helper):
            self._steps_under.add(name)

    def _decide_yielded(self, recorder: _Recorder, name: str) -> None:
        if name in self._steps_under:
            self.report(recorder.call, f"'{recorder.what}' has no schedule and records every step run under {name}()",
                        help="pass schedule=torch.profiler.schedule(wait=..., warmup=..., active=...) and call "
                             "prof.step() each step, or profile a few steps only",
                        needs_grad=False)

    def _unscheduled_profiler(self, call: cst.Call) -> bool:
        qualified = self.facts.qualified_name(call.func)
        if qualified not in _PROFILERS or self._test_file:
            return False
        schedule = _argument(call, "schedule", None) if qualified in _SCHEDULED_PROFILERS else None
        if schedule is not None and not _is_none(schedule):
            return False  # records its active steps only
        enabled = _argument(call, "enabled", None if qualified in _SCHEDULED_PROFILERS else 0)
        return enabled is None or _is_true(enabled)

    def _decide_profiler(self, recorder: _Recorder) -> None:
        if self._records_steps(recorder):
            self.report(recorder.call, f"'{recorder.what}' has no schedule and records every step of the loop it spans",
                        help="pass schedule=torch.profiler.schedule(wait=..., warmup=..., active=...) and call "
                             "prof.step() each step, or profile a few steps only",
                        needs_grad=False)

    # ----- loops ---------------------------------------------------------------------------------
    def _close(self, recorder: _Recorder) -> None:
        recorders = self._open.get(id(self.facts.function), [])
        if recorder in recorders:
            recorders.remove(recorder)

    def visit_For(self, node: cst.For) -> None:
        self._note_loop(node)

    def visit_While(self, node: cst.While) -> None:
        self._note_loop(node)

    def _note_loop(self, node: cst.CSTNode) -> None:
        for recorder in self._open.get(id(self.facts.function), ()):
            recorder.loops_after.append(node)

    def visit_Break(self, node: cst.Break) -> None:
        loop = self.facts.loop
        if loop is not None:
            self._bounded.add(id(loop.node))

    def _records_steps(self, recorder: _Recorder) -> bool:
        """Does an unbounded loop that runs steps run while ``recorder`` records: one around
        its start, one entered after it (complete at its function's exit), or one in a function
        of this module called after it (``main()`` below the start, in a script)?"""
        facts = self.facts
        loops = [facts.loop_of_node.get(id(node)) for node in recorder.loops_after]
        if any(loop is not None and self._runs_unbounded_steps(loop) for loop in (*recorder.loops_open, *loops)):
            return True
        called = set()
        for call in recorder.calls_after:
            found = facts.callees(call)
            if found is not None:
                called |= {id(facts.function_scopes.get(id(definition))) for definition in found[0]}
        return bool(called) and any(id(loop.scope) in called and self._runs_unbounded_steps(loop)
                                    for loop in facts.loop_of_node.values())

    def _runs_unbounded_steps(self, loop: Loop) -> bool:
        if id(loop.node) in self._bounded:
            return False
        node = loop.node
        if isinstance(node, cst.For) and _literal_range(node.iter):
            return False  # for step in range(10): a few steps
        return loop.runs_steps and not loop.over_parts

    VALID = [
        # stopped after the active window (torchtune's fix), or bounded by max_entries
        """
import torch
def train(model, loader, optimizer, profile_memory, first, last):
    for idx, batch in enumerate(loader):
        if profile_memory and idx == first:
            torch.cuda.memory._record_memory_history()
        model(batch).sum().backward()
        optimizer.step()
        if profile_memory and idx == last:
            torch.cuda.memory._record_memory_history(enabled=None)

def train_bounded(model, loader, optimizer):
    torch.cuda.memory._record_memory_history(max_entries=100000)
    for batch in loader:
        model(batch).sum().backward()
        optimizer.step()
""",
        # a few steps, then a snapshot; a legacy bool (one trace entry); live blocks only
        """
import torch
def snapshot(model, batch, optimizer):
    torch.cuda.memory._record_memory_history()
    for _ in range(5):
        model(batch).sum().backward()
        optimizer.step()
    torch.cuda.memory._dump_snapshot("snapshot.pickle")

def legacy(model, loader, optimizer):
    torch.cuda.memory._record_memory_history(True)
    torch.cuda.memory._record_memory_history(enabled="state")
    for batch in loader:
        model(batch).sum().backward()
        optimizer.step()
""",
        # a profiler with a schedule, stepped every step; a profiler around a bounded loop
        """
import torch
from torch.profiler import profile, schedule, ProfilerActivity
def train(model, loader, optimizer):
    with profile(activities=[ProfilerActivity.CUDA], schedule=schedule(wait=1, warmup=1, active=3)) as prof:
        for batch in loader:
            model(batch).sum().backward()
            optimizer.step()
            prof.step()

def profile_few(model, loader, optimizer):
    with profile(profile_memory=True) as prof:
        for step, batch in enumerate(loader):
            if step >= 10:
                break
            model(batch).sum().backward()
            optimizer.step()
    print(prof.key_averages().table())
""",
        # a callback that starts and stops the recording around a window of steps
        """
import torch
import lightning as L
class MemoryProfiler(L.Callback):
    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if batch_idx == 10:
            torch.cuda.memory._record_memory_history()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if batch_idx == 20:
            torch.cuda.memory._dump_snapshot("snapshot.pickle")
            torch.cuda.memory._record_memory_history(enabled=None)
""",
        # a profiler behind a flag; around one step outside any loop
        """
import torch
def train(model, loader, optimizer, args):
    with torch.autograd.profiler.profile(enabled=args.profile) as prof:
        for batch in loader:
            model(batch).sum().backward()
            optimizer.step()

def one_step(model, batch):
    with torch.profiler.profile() as prof:
        model(batch).sum().backward()
    return prof
""",
    ]

    VALID += [
        # the same @contextmanager around one forward pass: a few events, then exited
        """
import contextlib
import torch
from torch.profiler import profile, ProfilerActivity
@contextlib.contextmanager
def torch_profile():
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        yield prof
def snapshot(model, batch):
    with torch_profile():
        model(batch).sum().backward()
""",
    ]

    INVALID = [
        # a profiler opened in a @contextmanager, with the whole training run under it
        Invalid("""
import contextlib
import torch
from torch.profiler import profile, ProfilerActivity
@contextlib.contextmanager
def torch_profile():
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        yield prof
def train(model, loader, optimizer):
    with torch_profile() as prof:
        for x, y in loader:
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
            prof.step()
""", line=7),
        # started when the active window begins, never stopped (torchtune's GRPO recipe)
        Invalid("""
import torch
class Recipe:
    def train(self):
        for idx, batch in enumerate(self._dataloader):
            if self.profile_memory and idx == self.profiler_wait_steps:
                torch.cuda.memory._record_memory_history()
            loss = self.loss_step(batch)
            loss.backward()
            self._optimizer.step()
""", line=7),
        # started before the training loop, never stopped
        Invalid("""
import torch
def main(model, loader, optimizer):
    torch.cuda.memory._record_memory_history(enabled="all", stacks="python")
    for epoch in range(10):
        for batch in loader:
            model(batch).sum().backward()
            optimizer.step()
""", line=4),
        # a script starts recording, then runs its training function
        Invalid("""
import torch
def main(model, loader, optimizer):
    for batch in loader:
        model(batch).sum().backward()
        optimizer.step()

if __name__ == "__main__":
    torch.cuda.memory._record_memory_history()
    main(*build())
""", line=9),
        # started by a Lightning callback when training starts, never stopped
        Invalid("""
import torch
import lightning as L
class MemoryProfiler(L.Callback):
    def on_train_start(self, trainer, pl_module):
        torch.cuda.memory._record_memory_history()
""", line=6),
        # a profiler without a schedule around the whole training loop
        Invalid("""
import torch
from torch.profiler import profile, ProfilerActivity
def train(model, loader, optimizer):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True) as prof:
        for batch in loader:
            loss = model(batch).mean()
            loss.backward()
            optimizer.step()
    prof.export_chrome_trace("trace.json")
""", line=5),
        # the autograd profiler, started and stopped around the run
        Invalid("""
import torch
def train(model, loader, optimizer):
    prof = torch.autograd.profiler.profile(use_cuda=True)
    prof.start()
    for x, y in loader:
        model(x, y).backward()
        optimizer.step()
    prof.stop()
""", line=4),
    ]


def _argument(call: cst.Call, keyword: str, position: int | None) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    if position is not None:
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        if len(positional) > position:
            return positional[position]
    return None


def _is_none(node: cst.BaseExpression | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _is_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _literal_range(iterable: cst.BaseExpression) -> bool:
    """``range(10)``, ``enumerate(range(10))``, ``zip(range(10), loader)``: a fixed, small count."""
    if not isinstance(iterable, cst.Call):
        return False
    name = dotted_name(iterable.func)
    if name == "range":
        return all(isinstance(arg.value, cst.Integer) for arg in iterable.args) and bool(iterable.args)
    if name in ("enumerate", "zip"):
        return any(_literal_range(arg.value) for arg in iterable.args)
    return False


def _short(call: cst.Call, facts) -> str:
    qualified = facts.qualified_name(call.func) or "profile"
    return ".".join(qualified.split(".")[-2:]) + "()"
