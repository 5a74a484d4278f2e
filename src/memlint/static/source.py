"""A source file's text: read it safely, decode it as Python would, and parse it.

Every problem becomes :class:`UncheckableFile` (reported as ML901), never a traceback:
unreadable or special files, undecodable bytes, syntax errors (with Python's own message
and place), and files that would crash or stall libcst's parser (brackets nested too
deep, pathological operator chains), which Python's parser looks at first.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import stat
import sys
import threading
import tokenize
import warnings
from array import array
from itertools import accumulate
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst


# What to do about an ML901, by kind of problem (the finding's help).
EXCLUDE = "exclude it (exclude = [...] in [tool.memlint])"
SYNTAX_HELP = f"memlint checks code that Python parses: fix the syntax error, or {EXCLUDE}"
DECODE_HELP = "save the file as UTF-8, or declare its encoding in a '# -*- coding: NAME -*-' line"
GENERATED_HELP = f"generated code? {EXCLUDE}"
READ_HELP = f"make the file readable, or {EXCLUDE}"


class UncheckableFile(Exception):
    """The file cannot be checked: reported as ML901 with this message and help."""

    def __init__(self, message: str, line: int = 1, column: int = 1, help: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.help = help


def read_bytes(path: str) -> bytes:
    """The bytes of a regular file. Anything else is an OSError: opening a FIFO for reading
    would wait for a writer forever, and a device may never end."""

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device or socket"
            raise OSError(0, f"not a regular file ({kind})")
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with fh:
        return fh.read()


def content_digest(data: bytes) -> str:
    """A short digest of a file's bytes: what caches key a module's text by."""
    return hashlib.sha256(data).hexdigest()[:24]


_digests: dict[str, tuple[int, int, str | None]] = {}


def file_digest(path: str) -> str | None:
    """The :func:`content_digest` of a file, read again only when its size or modification
    time changed; None if it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    known = _digests.get(path)
    if known is not None and known[0] == st.st_mtime_ns and known[1] == st.st_size:
        return known[2]
    try:
        digest = content_digest(read_bytes(path))
    except (OSError, MemoryError):
        digest = None
    _digests[path] = (st.st_mtime_ns, st.st_size, digest)
    return digest


def decode_source(data: bytes) -> str:
    """Decode Python source bytes as the interpreter would (BOM, PEP 263 cookie, UTF-8)."""

    if b"\x00" in data:
        raise UncheckableFile("binary file: not Python source (contains NUL bytes)", help=f"not Python? {EXCLUDE}")
    try:
        encoding, _ = tokenize.detect_encoding(iter(data.splitlines(keepends=True)).__next__)
    except SyntaxError as exc:
        raise UncheckableFile(f"cannot decode: {exc}", help=DECODE_HELP) from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        reason = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
        line = data[: getattr(exc, "start", 0)].count(b"\n") + 1
        raise UncheckableFile(f"cannot decode as {encoding}: {reason}", line, help=DECODE_HELP) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


# CPython refuses brackets nested deeper than this ("too many nested parentheses"); libcst's
# native parser overflows its stack and kills the process at about 1,500.
MAX_BRACKET_DEPTH = 200
_NOT_BRACKETS = re.compile(r"[^()\[\]{}]+")
_BRACKET_STEP = bytes.maketrans(b"([{)]}", b"\x01\x01\x01\xff\xff\xff")


def too_deeply_bracketed(source: str, limit: int = MAX_BRACKET_DEPTH) -> bool:
    """Are brackets nested deeper than ``limit`` (counting those in strings and comments
    too, so it may say yes for a valid file; never no for a too deep one)?"""
    if source.count("(") + source.count("[") + source.count("{") <= limit:
        return False  # nearly every file: three C-speed counts

    steps = _NOT_BRACKETS.sub("", source).encode("ascii").translate(_BRACKET_STEP)
    return max(accumulate(array("b", steps)), default=0) > limit


# A line this long is generated code (a table, an unrolled expression). libcst takes time
# quadratic in the length of an operator chain (~20 s for ``a + a + ...`` of 5,000 terms,
# which CPython itself refuses as too deep), so Python's parser looks at such a file first.
LONG_LINE = 5000


def has_long_line(source: str) -> bool:
    return len(source) >= LONG_LINE and max(map(len, source.split("\n"))) >= LONG_LINE


def parse(source: str) -> "cst.Module":
    import libcst as cst  # here, not at the top: a run whose files are all cached never needs libcst

    if too_deeply_bracketed(source) or has_long_line(source):
        # Only Python's own parser can tell safely: libcst's would crash the process.
        python = python_syntax_error(source, too_deep=True)
        if python is not None:
            raise python
    try:
        return parse_module(source)
    except cst.ParserSyntaxError as exc:
        python = python_syntax_error(source)
        if python is not None:  # Python's own message and place are the better ones
            raise python from None
        message = str(exc.message).strip().splitlines()[0] if exc.message else "invalid syntax"
        raise UncheckableFile(f"cannot parse (libcst): {message}", exc.editor_line, exc.editor_column,
                              help=f"Python parses this file but libcst does not: please report it; {EXCLUDE} "
                                   "meanwhile") from None
    except RecursionError:
        raise UncheckableFile("file is too deeply nested to parse", help=GENERATED_HELP) from None
    except MemoryError:
        raise UncheckableFile("file is too large to parse in memory", help=GENERATED_HELP) from None


# Serialises parse_module's swap of libcst's class-wide validation hook between threads (the LSP's).
_VALIDATION_OFF = threading.Lock()


def _no_validation(node) -> None:
    pass


def parse_module(source: str) -> "cst.Module":
    """``libcst.parse_module`` without libcst's check of each node it builds (a tenth of a
    parse's CPU instructions; a 1,500-line file: 1,390M -> 1,350M).

    Every node runs ``CSTNode._validate`` from ``__post_init__``; the parser's nodes come from
    its grammar, and the check (which only raises) is for trees built by hand. Nodes built by
    other threads meanwhile skip it too. Raises what ``libcst.parse_module`` raises."""
    import libcst as cst  # here, not at the top: a run whose files are all cached never needs libcst
    from libcst._nodes.base import CSTNode  # libcst, as above

    validate = CSTNode.__dict__.get("__post_init__")
    if validate is None:  # a libcst that validates elsewhere
        return cst.parse_module(source)
    with _VALIDATION_OFF:
        CSTNode.__post_init__ = _no_validation
        try:
            return cst.parse_module(source)
        finally:
            CSTNode.__post_init__ = validate


def python_parse(source: str):
    """``ast.parse`` without the SyntaxWarnings it prints for odd code (``1()``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source)


def syntax_error(source: str) -> UncheckableFile | None:
    """The syntax error of ``source``, for a file no rule reads: Python's own, unless libcst
    parses it (syntax newer than the Python memlint runs on: ``type X = ...`` on 3.11)."""
    error = python_syntax_error(source)
    if error is None or not _newer_syntax_on(source, error.line) or too_deeply_bracketed(source) \
            or has_long_line(source):
        return error
    try:
        parse_module(source)
    except Exception:
        return error
    return None


# Statements of Python 3.12's grammar that older Pythons reject: ``type X = ...`` and generic
# ``def f[T]`` / ``class C[T]``. Only an error on such a line is worth libcst's second opinion
# (a plain broken file stays libcst-free).
_NEWER_SYNTAX = re.compile(r"^\s*(type\s+\w+\s*(\[|=)|(async\s+)?def\s+\w+\s*\[|class\s+\w+\s*\[)")


def _newer_syntax_on(source: str, line: int) -> bool:
    if sys.version_info >= (3, 12):
        return False
    lines = source.splitlines()
    return 0 < line <= len(lines) and _NEWER_SYNTAX.match(lines[line - 1]) is not None


def python_syntax_error(source: str, too_deep: bool = False) -> UncheckableFile | None:
    """The syntax error Python itself reports for ``source`` (None if it parses). When
    Python's parser gives up (too deep, out of memory): None, or with ``too_deep`` an error
    saying so."""
    try:
        python_parse(source)
    except SyntaxError as exc:
        message = (exc.msg or "invalid syntax").strip().splitlines()[0]
        return UncheckableFile(f"syntax error: {message}", max(1, exc.lineno or 1), max(1, exc.offset or 1),
                              help=SYNTAX_HELP)
    except (RecursionError, MemoryError, ValueError):
        return UncheckableFile("file is too deeply nested to parse", help=GENERATED_HELP) if too_deep else None
    return None
