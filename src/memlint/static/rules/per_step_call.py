"""A base for rules about a call that must not run on every step (ML202 ``empty_cache``,
ML211 ``gc.collect``): where such a call runs once per training or evaluation step.

A call runs every step when its innermost loop (in its own function) is a step loop (see
:attr:`memlint.static.facts.Loop.runs_every_step`: it walks batches or steps, or runs the
backward pass / optimizer step, and is neither an epoch loop nor a loop around another step
loop, a retry loop that leaves on success, nor a loop whose helper runs its own loop of forward
passes per iteration), or when it sits in ``training_step``, ``forward`` or another per-step method of a
class. Not every step: in an ``except`` block (out-of-memory recovery), or under an ``if``
whose test changes per step or is an opt-in about memory (see
:func:`memlint.static.facts.holds_every_step`). A call in a step loop of a function or method of
the same module that makes the call unconditionally is reported at that call.
"""

from __future__ import annotations

import libcst as cst

from memlint.static.facts import FunctionScope, Loop, holds_every_step
from memlint.static.rule import Rule

# Per-step methods whose body runs once per training or evaluation step.
PER_STEP_METHODS = frozenset({"training_step", "validation_step", "test_step", "predict_step",
                              "train_step", "eval_step", "forward", "training_step_end"})


class PerStepCallRule(Rule):
    """Subclasses say which calls they are about (:meth:`per_step_target`) and how to report
    one (:meth:`report_per_step`); this class decides whether the call runs every step."""

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._except_depth = 0
        self._ifs: list[tuple[cst.If, Loop | None]] = []  # the ifs being walked, and their loops
        self._helpers: dict[int, str] = {}  # id(function) -> the call it makes unconditionally
        # calls of this module's functions (or self's methods) inside loops: (call, callee, loop, function, tests)
        self._loop_calls: list[tuple[cst.Call, str, Loop, FunctionScope, list[cst.BaseExpression]]] = []
        self._scheduled = False

    # The callee's last name (``empty_cache`` of ``torch.cuda.empty_cache``): a cheap filter
    # before per_step_target resolves the qualified name.
    CALLEE_NAMES: frozenset[str] = frozenset()

    def per_step_target(self, node: cst.Call) -> str | None:
        """The name to report the call by, or None if the call is not one the rule is about."""
        raise NotImplementedError

    def report_per_step(self, node: cst.Call, what: str, loop: Loop | None, function: FunctionScope,
                        via: str | None = None) -> None:
        """Report ``node`` (``loop`` is its step loop, or None in a per-step method; ``via``: the
        helper of this module that ``node`` calls and that makes the call)."""
        raise NotImplementedError

    # ----- context the call needs ----------------------------------------------------------
    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self._except_depth += 1

    def leave_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self._except_depth -= 1

    def visit_If(self, node: cst.If) -> None:
        self._ifs.append((node, self.facts.loop))

    def leave_If(self, node: cst.If) -> None:
        if self._ifs and self._ifs[-1][0] is node:
            self._ifs.pop()

    # ----- the call ------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        if last not in self.CALLEE_NAMES:
            if self.facts.loop is not None and not self._except_depth and (isinstance(func, cst.Name) or (
                    isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self")):
                self._note_loop_call(node, f"self.{last}" if isinstance(func, cst.Attribute) else last)
            return
        what = self.per_step_target(node)
        if what is None or self._except_depth:
            return  # not ours, or an out-of-memory handler
        facts = self.facts
        loop = facts.loop
        tests = [if_node.test for if_node, if_loop in self._ifs if if_loop is loop]
        function = facts.function
        if loop is None:
            if (function.class_info is not None and function.name in PER_STEP_METHODS
                    and all(holds_every_step(test, None) for test in tests)):
                self.report_per_step(node, what, None, function)
            elif not tests and function is not facts.module_scope:
                self._helpers[id(function)] = what  # a helper: decided where it is called
            return
        if loop.mentions_epoch:
            return

        def decide() -> None:
            # Decided once the loop is walked: a flag set later in the iteration changes per step.
            if any(not holds_every_step(test, loop) for test in tests):
                return  # conditional within the step: every N steps, an opt-in setting, once...
            if loop.runs_every_step:
                self.report_per_step(node, what, loop, function)

        self.at_function_exit(decide)

    # ----- helpers called every step -----------------------------------------------------------
    def _note_loop_call(self, node: cst.Call, callee: str) -> None:
        loop = self.facts.loop
        tests = [if_node.test for if_node, if_loop in self._ifs if if_loop is loop]
        self._loop_calls.append((node, callee, loop, self.facts.function, tests))
        if not self._scheduled:
            self._scheduled = True
            self.at_module_exit(self._decide_helpers)

    def _decide_helpers(self) -> None:
        """``cleanup()`` in the step loop, where ``def cleanup(): gc.collect()`` is a function of
        this module making the call unconditionally."""
        for node, callee, loop, function, tests in self._loop_calls:
            scopes = self.facts.callee_scopes(callee, function)
            if len(scopes) != 1 or id(scopes[0]) not in self._helpers:
                continue
            if loop.mentions_epoch or not loop.runs_every_step:
                continue
            if any(not holds_every_step(test, loop) for test in tests):
                continue
            self.report_per_step(node, self._helpers[id(scopes[0])], loop, function, via=callee.rsplit(".", 1)[-1])
