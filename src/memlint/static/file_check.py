"""Check one file, whatever it holds: a Python source or a notebook. Problems reading or
parsing it become an ML901 finding, a bug in memlint an ML902: one file never stops a run."""

from __future__ import annotations

from typing import Sequence

from memlint.findings import Finding, internal_error, unchecked_file
from memlint.static.discovery import NOTEBOOK_SUFFIX
from memlint.static.notebook import check_notebook
from memlint.static.source import GENERATED_HELP, READ_HELP, UncheckableFile, decode_source, read_bytes
from memlint.static.source_check import check_source


def check_file(path: str, codes: Sequence[str], ignored: Sequence[str] = ()) -> list[Finding]:
    """Findings of the rules ``codes`` in one file (less the ``ignored`` prefixes); problems
    reading or parsing it become an ML901 finding, a bug in memlint an ML902."""
    try:
        data = read_bytes(path)
    except OSError as exc:
        return [unchecked_file(path, f"cannot read: {exc.strerror or exc}", help=READ_HELP)]
    except MemoryError:
        return [unchecked_file(path, "cannot read: file too large", help=GENERATED_HELP)]
    return check_contents(path, data, codes, ignored)


def check_contents(path: str, data: bytes | str, codes: Sequence[str], ignored: Sequence[str] = (),
                   parser=None) -> list[Finding]:
    """Findings in the contents of the file ``path``: its bytes, or the text an editor holds
    (a notebook's JSON, for a notebook); ``parser`` as for
    :func:`~memlint.static.source_check.check_source`. As :func:`check_file`, never raises."""
    try:
        if path.endswith(NOTEBOOK_SUFFIX):
            return check_notebook(data.encode("utf-8") if isinstance(data, str) else data, path, codes, ignored,
                                  parser)
        text = data if isinstance(data, str) else decode_source(data)
        return check_source(text, path, codes, ignored, parser)
    except UncheckableFile as exc:
        return [unchecked_file(path, exc.message, exc.line, exc.column, help=exc.help)]
    except RecursionError:
        return [unchecked_file(path, "file is too deeply nested to check", help=GENERATED_HELP)]
    except MemoryError:
        return [unchecked_file(path, "file is too large to check in memory", help=GENERATED_HELP)]
    except Exception as exc:  # a bug in memlint must not stop the run
        return [internal_error(path, f"internal error while checking this file: {type(exc).__name__}: {exc}")]
