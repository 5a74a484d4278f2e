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
    """One reported problem. Lines and columns are 1-based."""

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

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.line, self.column, self.code)

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
        )


def unchecked_file(path: str, message: str, line: int = 1, column: int = 1) -> Finding:
    """ML901: ``path`` could not be checked (unreadable, undecodable, a syntax error...)."""
    return Finding(path, line, column, line, column, "ML901", "unchecked-file", "error", message)


def internal_error(path: str, message: str) -> Finding:
    """ML902: memlint itself failed on ``path`` (a bug in memlint); other files are still checked."""
    return Finding(path, 1, 1, 1, 1, "ML902", "internal-error", "error", message)


@dataclass
class CheckResult:
    """Findings of a run, and how many files were checked."""

    findings: list[Finding] = field(default_factory=list)
    files_checked: int = 0

    @property
    def has_unchecked_files(self) -> bool:
        """True when some file could not be checked (ML901) or a rule failed (ML902)."""
        return any(f.code in ("ML901", "ML902") for f in self.findings)
