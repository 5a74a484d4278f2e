"""The base class of every rule.

A rule is one module in ``memlint/static/rules/`` holding one :class:`Rule` subclass:
its code, the detector (``visit_<Node>`` / ``leave_<Node>`` methods that the engine calls
during its single walk of the module), its messages, and ``VALID`` / ``INVALID`` examples
that the test suite runs automatically. Its name, severity, summary and triggers come from
its entry in :mod:`memlint.catalogue`, where every code is listed.

Rules read scope facts from ``self.facts`` (see :mod:`memlint.static.facts`) and report
with :meth:`Rule.report`. A decision that needs the whole function (is this value
backpropagated later?) is deferred with :meth:`Rule.at_function_exit`.

Writing a finding: message, help, page
--------------------------------------
A finding is read at a glance, in a terminal, an editor's problem list or a pull request,
as ruff's are. It has three parts, each in its own place:

- ``message`` (``report(node, message)``): **what is wrong here**, one sentence, at most
  ~100 characters, no trailing period, starting lower-case unless with code. Name the
  things on the line (``'running_loss'``, ``torch.load()``) and the consequence in a few
  words when it is not obvious. It is the whole of ``--format concise`` and the title of
  an editor's diagnostic.
- ``help`` (``report(node, message, help=...)``): **what to do**, as the remedy a reviewer
  would write, with the code to type: ``use loss.item() for a number, or loss.detach()
  to keep a tensor``. Shown as ``help:`` under the source in ``--format full``, in JSON's
  ``"help"``, after the message in SARIF and GitHub annotations.
- the rule's page (``rules/MLxxx.md``): **why**: the mechanism (what the allocator, autograd
  or NCCL does), references, what ``memlint verify`` shows. Shown by ``memlint rule
  MLxxx``, SARIF's rule help and the editor's hover; never repeated in each finding.

To convert an old one-line message (``what: why; remedy``): keep the part before the colon
as the message, tightened until it fits, keeping any name the line holds; move the
imperative after the semicolon (``use ...``, ``pass ...``, ``move ...``) to ``help``; check
that the page's "Why is this bad?" says what the dropped middle said, and drop it. For
example ML203 went from ``torch.load() without map_location: tensors are restored to the
device they were saved from (a GPU checkpoint fills cuda:0, ...); pass map_location='cpu'
(then move what you need) or map_location=device`` to the message ``torch.load() without
map_location restores tensors to the GPU they were saved from`` and the help ``pass
map_location='cpu' (then move what you need) or map_location=device``. Tests that pin a
message (``tests/snapshots/``) are rewritten with ``MEMLINT_UPDATE_SNAPSHOTS=1``.
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
    help: str | None = None  # the remedy, shown apart from the message


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

    def report(self, node: cst.CSTNode, message: str, *, help: str | None = None, needs_grad: bool = True,
               fix: object | None = None, severity: str | None = None, function: object | None = None) -> None:
        """Report ``node``: ``message`` says what is wrong, ``help`` what to do (see the
        module's docstring). ``needs_grad``: the problem exists only with autograd on, so the
        finding is dropped if the enclosing function turns out to be called only under
        no-grad. ``function``: the FunctionScope ``node`` is in, when reporting from an
        :meth:`at_module_exit` callback (default: the function being walked)."""
        self._checker.add_report(self, node, message, needs_grad=needs_grad, fix=fix, severity=severity,
                                 function=function, help=help)

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
