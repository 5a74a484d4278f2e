"""A notebook's cells as its ``.ipynb`` JSON stores them, read without checking anything:
:mod:`memlint.static.notebook` joins the code cells to check them, and the text report
shows the cell a finding is in (so this module stays light: no checking machinery)."""

from __future__ import annotations

import json
from typing import Any

from memlint.static.source import EXCLUDE, UncheckableFile

NOTEBOOK_HELP = f"open and save it in Jupyter to repair it, or {EXCLUDE}"


def load_document(data: bytes) -> Any:
    """The notebook's JSON document (raises UncheckableFile for a broken one)."""
    try:
        return json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise UncheckableFile(f"broken notebook: not UTF-8 ({exc.reason})", help=NOTEBOOK_HELP) from None
    except json.JSONDecodeError as exc:
        raise UncheckableFile(f"broken notebook: invalid JSON: {exc.msg}", exc.lineno, exc.colno,
                              help=NOTEBOOK_HELP) from None
    except RecursionError:
        raise UncheckableFile("broken notebook: JSON nested too deeply", help=NOTEBOOK_HELP) from None


def source_text(value: Any) -> str:
    """A cell's source, stored as one string or a list of lines."""
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    if isinstance(value, str):
        return value
    return ""


def cells_of(document: Any) -> list[dict[str, Any]]:
    """Every cell, in order (nbformat 4, or 3 with its worksheets)."""
    if not isinstance(document, dict):
        raise UncheckableFile("not a notebook: the JSON document is not an object", help=NOTEBOOK_HELP)
    cells = document.get("cells")
    if cells is None and isinstance(document.get("worksheets"), list):  # nbformat 3
        cells = []
        for sheet in document["worksheets"]:
            if isinstance(sheet, dict) and isinstance(sheet.get("cells"), list):
                cells.extend(sheet["cells"])
    if not isinstance(cells, list):
        raise UncheckableFile("not a notebook: no 'cells' list", help=NOTEBOOK_HELP)
    return [cell if isinstance(cell, dict) else {} for cell in cells]


def cell_source(cell: dict[str, Any]) -> str:
    """A cell's text with ``\\n`` line ends, as positions in it are counted."""
    return source_text(cell.get("source", cell.get("input"))).replace("\r\n", "\n").replace("\r", "\n")


def code_cell_sources(data: bytes) -> dict[int, str]:
    """The text of each code cell by its 1-based number (counting every cell, as findings
    do); empty for a notebook that cannot be read."""
    try:
        cells = cells_of(load_document(data))
    except UncheckableFile:
        return {}
    return {number: cell_source(cell) for number, cell in enumerate(cells, start=1)
            if cell.get("cell_type") == "code"}
