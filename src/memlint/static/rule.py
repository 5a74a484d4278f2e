"""The base class of every rule.

A rule is one module in ``memlint/static/rules/`` holding one :class:`Rule` subclass:
its code, the detector (``visit_<Node>`` / ``leave_<Node>`` methods that the engine calls
during its single walk of the module), its messages, and ``VALID`` / ``INVALID`` examples
that the test suite runs automatically. Its name, severity, summary and triggers come from
its entry in :mod:`memlint.catalogue`, where every code is listed.

Rules read scope facts from ``self.facts`` (see :mod:`memlint.static.facts`) and report
with :meth:`Rule.report`. A decision that needs the whole function (is this value
backpropagated later?) is deferred with :meth:`Rule.at_function_exit`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, ClassVar

from memlint.catalogue import BY_CODE, RuleInfo

if TYPE_CHECKING:  # libcst is imported by the engine, not here: a cached run never needs it
    import libcst as cst

    from memlint.static.engine import FileChecker
    from memlint.static.facts import Facts


@dataclass(frozen=True)
class Invalid:
    """An example the rule must flag: ``line`` is the 1-based line of the expected finding."""

    code: str
    line: int | None = None
    # Text the fixed code must contain (for rules with fixes); None: no fix expected.
    fixed: str | None = None


@dataclass
class Report:
    """A finding before positions are known (the engine adds them at the end)."""

    node: cst.CSTNode
    message: str
    statement: cst.CSTNode | None
    function: object | None  # the FunctionScope the node is in, for no-grad-by-caller filtering
    needs_grad: bool
    fix: object | None = None  # a FixSpec, see memlint.static.fixes
    severity: str | None = None  # overrides the rule's severity for this finding


class Rule:
    code: ClassVar[str]
    # From the rule's catalogue entry (memlint.catalogue.RuleInfo), set when the class is made.
    name: ClassVar[str]
    severity: ClassVar[str]  # "error" | "warning" | "info"
    summary: ClassVar[str]
    enabled_by_default: ClassVar[bool]
    fixable: ClassVar[bool]
    triggers: ClassVar[tuple[str, ...]]
    torch_only: ClassVar[bool]

    VALID: ClassVar[list[str]] = []
    INVALID: ClassVar[list[Invalid]] = []

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        code = cls.__dict__.get("code")
        if code is None:
            return
        info = BY_CODE.get(code)
        if info is None:
            # Not a shipped rule (a test's probe): it must say what it is itself.
            if not all(field in cls.__dict__ for field in ("name", "severity", "summary")):
                raise TypeError(f"{cls.__name__}: rule code {code} has no entry in memlint.catalogue")
            info = RuleInfo(code, cls.name, cls.severity, cls.summary)
        for field in ("name", "severity", "summary", "enabled_by_default", "fixable", "triggers", "torch_only"):
            setattr(cls, field, getattr(info, field))

    def __init__(self, checker: "FileChecker") -> None:
        self._checker = checker
        self.facts: Facts = checker.facts

    def report(self, node: cst.CSTNode, message: str, *, needs_grad: bool = True, fix: object | None = None,
               severity: str | None = None, function: object | None = None) -> None:
        """Report ``node``. ``needs_grad``: the problem exists only with autograd on, so the
        finding is dropped if the enclosing function turns out to be called only under
        no-grad. ``function``: the FunctionScope ``node`` is in, when reporting from an
        :meth:`at_module_exit` callback (default: the function being walked)."""
        self._checker.add_report(self, node, message, needs_grad=needs_grad, fix=fix, severity=severity,
                                 function=function)

    def at_function_exit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` when the walk leaves the current function (or the module), when
        facts that need the whole function (backward, return) are complete. Inside the
        callback, ``self.facts.function`` is still that function."""
        self._checker.defer(self, callback)

    def at_module_exit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` after the whole module has been walked (module-wide facts such as
        imports, DataLoader calls or ``set_device`` are then complete), reporting against the
        statement being walked now."""
        self._checker.defer(self, callback, scope=self.facts.module_scope)

    @classmethod
    def page_path(cls) -> str:
        return f"{cls.code}.md"
