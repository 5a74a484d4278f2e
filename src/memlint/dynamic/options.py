"""Options of one verify run: command line, then ``[tool.memlint.verify]``, then defaults."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from memlint.config import ConfigError
from memlint.dynamic.boundaries import STEP_ON
from memlint.dynamic.cards import parse_capacity
from memlint.dynamic.verdict import DEFAULT_NODE_THRESHOLD, DEFAULT_RSS_THRESHOLD, DEFAULT_THRESHOLD

DEVICES = ("auto", "cpu", "cuda")
STEP_ON_CHOICES = tuple(STEP_ON)


@dataclass
class VerifyOptions:
    script: str | None = None
    module: str | None = None
    args: list[str] = field(default_factory=list)
    steps: int = 20
    warmup: int = 3
    device: str = "auto"
    timeout: float = 600.0  # seconds for the whole child run
    threshold: float = DEFAULT_THRESHOLD  # tensor bytes per step
    node_threshold: float = DEFAULT_NODE_THRESHOLD  # autograd nodes per step
    rss_threshold: float = DEFAULT_RSS_THRESHOLD  # RSS bytes per step
    trace_dir: str | None = None
    plot: str | None = None
    nproc_per_node: int = 1
    static_check: bool = True  # run `memlint check` on the script and mark confirmed findings
    gpu_memory: str | int | None = None  # project the peak onto this GPU: "24GiB", bytes, or a card name
    step_on: str | None = None  # force one step boundary: optimizer | dataloader | module | marker

    def validate(self) -> None:
        if bool(self.script) == bool(self.module):
            raise ConfigError("give either a SCRIPT or -m MODULE")
        if self.steps < 2:
            raise ConfigError("--steps must be at least 2 (a slope needs two points)")
        if self.warmup < 0:
            raise ConfigError("--warmup must not be negative")
        if self.device not in DEVICES:
            raise ConfigError(f"--device must be one of {', '.join(DEVICES)}, not {self.device!r}")
        if self.timeout <= 0:
            raise ConfigError("--timeout must be positive")
        if self.nproc_per_node < 1:
            raise ConfigError("--nproc-per-node must be at least 1")
        if self.step_on is not None and self.step_on not in STEP_ON_CHOICES:
            raise ConfigError(f"--step-on must be one of {', '.join(STEP_ON_CHOICES)}, not {self.step_on!r}")
        if self.plot and not self.plot.lower().endswith((".svg", ".html", ".htm")):
            raise ConfigError("--plot must name an .svg or .html file")
        parse_capacity(self.gpu_memory)


# [tool.memlint.verify] key -> VerifyOptions field and expected type.
CONFIG_FIELDS = {
    "steps": ("steps", int),
    "warmup": ("warmup", int),
    "threshold": ("threshold", (int, float)),
    "node-threshold": ("node_threshold", (int, float)),
    "rss-threshold": ("rss_threshold", (int, float)),
    "device": ("device", str),
    "timeout": ("timeout", (int, float)),
    "gpu-memory": ("gpu_memory", (str, int)),
    "step-on": ("step_on", str),
}


def build_options(config_table: dict | None = None, **given) -> VerifyOptions:
    """Options from keyword arguments (None = not given) over the config table over defaults."""
    values: dict = {}
    for key, value in (config_table or {}).items():
        name, kind = CONFIG_FIELDS[key]
        if isinstance(value, bool) or not isinstance(value, kind):
            raise ConfigError(f"[tool.memlint.verify] {key}: {value!r} has the wrong type")
        values[name] = value
    known = {f.name for f in fields(VerifyOptions)}
    for name, value in given.items():
        if name not in known:
            raise TypeError(f"unknown verify option {name!r}")
        if value is not None:
            values[name] = value
    options = VerifyOptions(**values)
    options.args = list(options.args)
    options.validate()
    return options
