"""Which source files are "the user's code", so allocations and holders name their lines.

A frame is the user's when its file is not part of Python itself, an installed
package (site-packages), torch or memlint. Decisions are cached per file name:
this runs for every tensor allocation.
"""

from __future__ import annotations

import os
import sys
import sysconfig


def _library_roots() -> tuple[str, ...]:
    roots = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(os.path.realpath(path))
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        roots.add(os.path.realpath(os.path.join(prefix, "lib")))
    roots.add(os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # memlint itself
    torch_module = sys.modules.get("torch")
    if torch_module is not None and getattr(torch_module, "__file__", None):
        roots.add(os.path.realpath(os.path.dirname(torch_module.__file__)))
    return tuple(root.rstrip(os.sep) + os.sep for root in roots)


class UserFiles:
    """Callable predicate ``is_user(filename) -> bool`` with a per-file cache."""

    def __init__(self) -> None:
        self._roots = _library_roots()
        self._cache: dict[str, bool] = {}

    def __call__(self, filename: str) -> bool:
        known = self._cache.get(filename)
        if known is None:
            known = self._decide(filename)
            self._cache[filename] = known
        return known

    def _decide(self, filename: str) -> bool:
        if not filename or filename.startswith("<"):
            return False
        real = os.path.realpath(filename)
        if os.sep + "site-packages" + os.sep in real or os.sep + "dist-packages" + os.sep in real:
            return False
        return not real.startswith(self._roots)


def user_frames(frame, is_user: UserFiles) -> list:
    """The user's frames from ``frame`` outwards (innermost first)."""
    out = []
    while frame is not None:
        if is_user(frame.f_code.co_filename):
            out.append(frame)
        frame = frame.f_back
    return out
