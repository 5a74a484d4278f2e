"""memlint: find PyTorch memory anti-patterns in training code.

Public surface: :func:`check_paths`, :func:`verify_script`, :func:`step` and the
``memlint`` command. Everything else is private and free to change.

Importing this package never imports torch: ``memlint check`` and the
pre-commit hook must work where torch is not installed.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "check_paths", "verify_script", "step"]


def check_paths(paths, **options):
    """Check files or directories; return a :class:`memlint.findings.CheckResult`.

    ``options`` are those of :func:`memlint.static.engine.check_paths`.
    """
    from memlint.static.engine import check_paths as _check_paths

    return _check_paths(paths, **options)


def verify_script(path, **options):
    """Run a training script under ``memlint verify``; return its report dataclass."""
    from memlint.dynamic.api import verify_script as _verify_script

    return _verify_script(path, **options)


def step() -> None:
    """Mark the end of one training step for ``memlint verify``.

    Only needed by loops that never call ``torch.optim.Optimizer.step``. Outside
    ``memlint verify`` this does nothing.
    """
    import sys

    runtime = sys.modules.get("memlint.dynamic.runtime")
    if runtime is not None:
        runtime.manual_step()
