"""Colour for the text report: whether to use it, and the ANSI styles (ruff's palette).

Colour goes to a terminal only: never into a pipe or a file, never when ``NO_COLOR`` is set
(https://no-color.org), always when ``FORCE_COLOR`` is set (https://force-color.org; CI logs
render colour) or ``CLICOLOR_FORCE`` is (as ruff's colour library reads it), ``NO_COLOR``
winning over both as it does for ruff, and never on a ``TERM=dumb`` terminal. Set but empty,
a variable counts as unset.
"""

from __future__ import annotations

from typing import IO, Mapping

RESET = "\x1b[0m"
BOLD = "1"
RED, GREEN, YELLOW, BLUE, CYAN = "31", "32", "33", "94", "36"
SEVERITY_COLOURS = {"error": RED, "warning": YELLOW, "info": CYAN}


def colour_wanted(stream: IO[str], environ: Mapping[str, str]) -> bool:
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR") or environ.get("CLICOLOR_FORCE", "0") not in ("", "0"):
        return True
    if environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


class Style:
    """Paints text with ANSI codes, or leaves it as it is when colour is off."""

    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def paint(self, text: str, *codes: str) -> str:
        if not self.colour or not text:
            return text
        return f"\x1b[{';'.join(codes)}m{text}{RESET}"

    def severity(self, text: str, severity: str) -> str:
        return self.paint(text, BOLD, SEVERITY_COLOURS.get(severity, RED))

    def gutter(self, text: str) -> str:
        return self.paint(text, BOLD, BLUE)
