"""memlint: find PyTorch memory anti-patterns in training code.

The public API: :func:`check_paths` (``memlint check``), :func:`verify_script`
(``memlint verify``), :func:`step` (mark a step for ``memlint verify``) and ``__version__``.
Everything else is private and free to change.

Importing this package never imports torch or libcst: ``memlint check`` and the pre-commit
hook must work where torch is not installed, and a cached run never needs libcst.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memlint.dynamic.marker import step
from memlint.version import __version__

if TYPE_CHECKING:
    from memlint.dynamic.api import verify_script
    from memlint.static.runner import check_paths

__all__ = ["__version__", "check_paths", "verify_script", "step"]


def __getattr__(name: str):
    # Every ``import memlint.x`` (and pytest, through the plugin) runs this file first, so the
    # two halves load on first use (PEP 562): ``memlint.check_paths`` is the runner's own function.
    if name == "check_paths":
        from memlint.static.runner import check_paths

        return check_paths
    if name == "verify_script":
        from memlint.dynamic.api import verify_script

        return verify_script
    raise AttributeError(f"module 'memlint' has no attribute {name!r}")
