"""The verify report: dataclasses returned by ``memlint.verify_script`` and their JSON.

The JSON keys are a contract (docs/json.md, "memlint verify"); :meth:`VerifyReport.to_json`
emits exactly those keys. Everything else (text, plot) is rendered from these objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memlint.dynamic.memory import MemoryReport

EXIT_CODES = {"stable": 0, "growth": 1, "inconclusive": 2}


@dataclass
class Sample:
    """The signals at the end of one step (step numbers start at 1, warmup included)."""

    step: int
    tensor_bytes: int
    graph_nodes: int
    rss_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "tensor_bytes": self.tensor_bytes, "graph_nodes": self.graph_nodes,
                "rss_bytes": self.rss_bytes}


@dataclass
class Holder:
    """What keeps growth alive, and the line where it is appended to, stored in or rebound.

    ``name`` is a path a user recognises (``all_logits``, ``Model.step_losses``,
    ``trainer.callbacks[1].buffer``); ``kind`` says where it starts: ``variable``, ``global``,
    ``class_attribute``, ``closure`` (a cell of ``function``), ``instance`` (an object of the
    user's class, reached from framework code), ``library``, or ``graph`` (the storage is saved
    for backward inside the autograd graph of what ``name`` holds). ``container`` is the type at
    the end of the path, ``items`` its length; ``action`` what ``line`` does to it.
    """

    name: str
    function: str
    path: str
    line: int | None
    kind: str = "variable"
    container: str | None = None
    items: int | None = None
    action: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "function": self.function, "path": self.path, "line": self.line,
                "kind": self.kind, "container": self.container, "items": self.items, "action": self.action}

    @classmethod
    def from_json(cls, data: dict) -> "Holder":
        return cls(data["name"], data["function"], data["path"], data["line"], data.get("kind", "variable"),
                   data.get("container"), data.get("items"), data.get("action"))


@dataclass
class Site:
    """Where surviving memory comes from.

    A tensor site is the innermost line of the user's code whose live storages grow
    over the measured steps (``bytes_per_step`` and ``count_per_step`` are the slopes of
    their bytes and number). A graph site (``bytes_per_step`` 0, ``count_per_step`` =
    autograd nodes per step) is the line where the holder of a growing autograd graph
    is rebound, e.g. ``total_loss += loss``.
    """

    path: str
    line: int
    function: str
    bytes_per_step: float
    count_per_step: float
    holder: Holder | None = None

    @property
    def is_graph(self) -> bool:
        return self.bytes_per_step == 0

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "function": self.function,
                "bytes_per_step": self.bytes_per_step, "count_per_step": self.count_per_step,
                "holder": self.holder.to_json() if self.holder else None}


@dataclass
class VerifiedFinding:
    """A static finding on the verified script; ``confirmed`` when a growth site matches it."""

    finding: Any  # memlint.findings.Finding
    confirmed: bool
    sites: list = field(default_factory=list)  # the growth sites it explains (not in the JSON)
    reached: bool = True  # False when the run provably never ran its line (code after the measured loop)

    def to_json(self) -> dict[str, Any]:
        return {**self.finding.to_json(), "confirmed": self.confirmed, "reached": self.reached}


@dataclass
class RankReport:
    """What one process measured (one entry per rank under --nproc-per-node)."""

    rank: int
    verdict: str
    reason: str
    tensor_bytes_per_step: float | None = None
    graph_nodes_per_step: float | None = None
    rss_bytes_per_step: float | None = None
    samples: list[Sample] = field(default_factory=list)
    sites: list[Site] = field(default_factory=list)
    exhausted_at_step: int | None = None  # step at which memory runs out at this rate
    details: str = ""  # traceback or output tail for failures
    memory: MemoryReport | None = None  # the in-step peak and what it is made of
    notes: list[str] = field(default_factory=list)  # what the verdict left out or did not see, in words

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "verdict": self.verdict, "reason": self.reason,
                "tensor_bytes_per_step": self.tensor_bytes_per_step,
                "graph_nodes_per_step": self.graph_nodes_per_step,
                "rss_bytes_per_step": self.rss_bytes_per_step,
                "samples": [s.to_json() for s in self.samples], "sites": [s.to_json() for s in self.sites],
                "memory": self.memory.to_json() if self.memory else None, "notes": list(self.notes)}


@dataclass
class VerifyReport:
    """The whole run: the worst rank's figures at the top level, every rank in ``ranks``."""

    script: str
    device: str
    steps: int
    warmup: int
    verdict: str
    reason: str
    tensor_bytes_per_step: float | None = None
    graph_nodes_per_step: float | None = None
    rss_bytes_per_step: float | None = None
    samples: list[Sample] = field(default_factory=list)
    sites: list[Site] = field(default_factory=list)
    findings: list[VerifiedFinding] = field(default_factory=list)
    ranks: list[RankReport] = field(default_factory=list)  # empty for a single process
    exhausted_at_step: int | None = None
    details: str = ""
    memory: MemoryReport | None = None  # the rank with the highest peak
    step_boundary: str | None = None  # optimizer | dataloader | module_call | marker; None: no step ended
    step_owner: str = ""  # the module's class, or the DataLoader's dataset, that defined the step
    notes: list[str] = field(default_factory=list)  # what the verdict left out or did not see, in words
    static_checked: bool = False  # memlint check ran on the script (so a line no finding covers is news)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    def to_json(self) -> dict[str, Any]:
        return {
            "script": self.script, "device": self.device, "steps": self.steps, "warmup": self.warmup,
            "step_boundary": self.step_boundary, "verdict": self.verdict, "reason": self.reason,
            "tensor_bytes_per_step": self.tensor_bytes_per_step,
            "graph_nodes_per_step": self.graph_nodes_per_step,
            "rss_bytes_per_step": self.rss_bytes_per_step,
            "samples": [s.to_json() for s in self.samples],
            "sites": [s.to_json() for s in self.sites],
            "findings": [f.to_json() for f in self.findings],
            "memory": self.memory.to_json() if self.memory else None,
            "ranks": [r.to_json() for r in self.ranks],
            "notes": list(self.notes),
        }
