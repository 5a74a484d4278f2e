"""What a check reports: findings, and the result of checking many files."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Edit:
    """Replace the text between two 1-based (line, column) positions."""

    line: int
    column: int
    end_line: int
    end_column: int
    content: str

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "content": self.content,
        }


@dataclass(frozen=True)
class Fix:
    safe: bool
    edits: tuple[Edit, ...]

    def to_json(self) -> dict[str, Any]:
        return {"safe": self.safe, "edits": [e.to_json() for e in self.edits]}


@dataclass(frozen=True)
class Finding:
    """One reported problem. Lines and columns are 1-based.

    ``message`` says what is wrong in one short sentence; ``help`` (or None) says what to do
    about it, as ruff's ``help:`` line. Why it matters is the rule's page, not the finding's.
    """

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    name: str
    severity: str
    message: str
    fix: Fix | None = None
    cell: int | None = None  # notebook cell (1-based) when the file is a notebook
    help: str | None = None

    @property
    def sort_key(self) -> tuple:
        # total over what is printed: findings at one place come out in the same order in
        # every process (a set of them was once printed in hash order)
        return (self.path, self.cell or 0, self.line, self.column, self.code, self.end_line, self.end_column,
                self.message)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
            "message": self.message,
            "help": self.help,
            "fix": self.fix.to_json() if self.fix else None,
        }
        if self.cell is not None:
            data["cell"] = self.cell
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Finding":
        fix = data.get("fix")
        return cls(
            path=data["path"],
            line=data["line"],
            column=data["column"],
            end_line=data["end_line"],
            end_column=data["end_column"],
            code=data["code"],
            name=data["name"],
            severity=data["severity"],
            message=data["message"],
            fix=Fix(fix["safe"], tuple(Edit(**e) for e in fix["edits"])) if fix else None,
            cell=data.get("cell"),
            help=data.get("help"),
        )


def unchecked_file(path: str, message: str, line: int = 1, column: int = 1, help: str | None = None) -> Finding:
    """ML901: ``path`` could not be checked (unreadable, undecodable, a syntax error...)."""
    return Finding(path, line, column, line, column, "ML901", "unchecked-file", "error", message, help=help)


INTERNAL_ERROR_HELP = "a bug in memlint: please report it with this file; the other files were still checked"


def internal_error(path: str, message: str, help: str = INTERNAL_ERROR_HELP) -> Finding:
    """ML902: memlint itself failed on ``path`` (a bug in memlint); other files are still checked."""
    return Finding(path, 1, 1, 1, 1, "ML902", "internal-error", "error", message, help=help)


def has_position(finding: Finding) -> bool:
    """Does the finding point at a place in the file? ML902, and an ML901 about the whole
    file (unreadable, undecodable, too large), point at none: their 1:1 is a placeholder."""
    if finding.code == "ML902":
        return False
    return not (finding.code == "ML901" and (finding.line, finding.column, finding.end_line, finding.end_column)
                == (1, 1, 1, 1))


@dataclass
class CheckResult:
    """Findings of a run, and how many files were checked."""

    findings: list[Finding] = field(default_factory=list)
    files_checked: int = 0
    # The text a file's findings refer to, where it is not the file on disk (``--diff``
    # reports what remains in fixed text it did not write). Reports read the rest from disk.
    sources: dict[str, str] = field(default_factory=dict)
    # Paths named for the run that held nothing to check: folders with no Python file or
    # notebook (or all of them excluded), and paths skipped by --force-exclude.
    empty_paths: list[str] = field(default_factory=list)
    excluded_paths: list[str] = field(default_factory=list)

    @property
    def has_unchecked_files(self) -> bool:
        """True when some file could not be checked (ML901) or a rule failed (ML902)."""
        return any(f.code in ("ML901", "ML902") for f in self.findings)
