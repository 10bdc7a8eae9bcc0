"""The records every part of ms-lint passes around: a finding, and the fix a rule offers for it."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence, Tuple, Union

from ms_lint.records import field, record

if TYPE_CHECKING:  # libcst is imported only where files are parsed: a warm cached run never loads it
    import libcst as cst

SAFE = "safe"
UNSAFE = "unsafe"

# What a rewrite puts in place of a node: one node, several statements, or nothing (removal).
Replacement = Union["cst.CSTNode", Sequence["cst.CSTNode"], None]


@record(frozen=True)
class ImportRequest:
    """An import statement a rewrite needs (``from mindspore import ops``); added once, after the imports."""

    statement: str


@record
class Fix:
    """A rewrite a rule offers: node replacements applied together, plus the imports they need.

    ``edits`` maps original nodes (by identity) to what replaces them. Rules build replacement code
    with :meth:`ms_lint.context.ModuleContext.spell`, which also records the imports in ``imports``.
    """

    applicability: str  # SAFE or UNSAFE
    message: str
    edits: Tuple[Tuple["cst.CSTNode", Replacement], ...] = ()
    imports: Tuple[ImportRequest, ...] = ()

    def summary(self) -> Dict[str, str]:
        return {"applicability": self.applicability, "message": self.message}


@record
class Finding:
    """One diagnostic, with 1-based line and column (the column of the reported node's first character)."""

    code: str
    message: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    fix: Optional[Dict[str, str]] = None  # Fix.summary(), or None
    fix_object: Optional[Fix] = field(default=None, repr=False, compare=False)
    detail: Optional[str] = None  # the longer explanation of this case (``--output-format full``, JSON)
    # What runs the fix's code ("f", "Net" for a Cell's construct, "Cls.method"): set by the fixer (--verified-only).
    function: Optional[str] = field(default=None, repr=False, compare=False)

    @property
    def text(self) -> str:
        """The message and, when the rule gave one, the longer explanation of this case (``detail``)."""
        return f"{self.message}\n{self.detail}" if self.detail else self.message

    def to_json(self) -> Dict[str, Any]:
        return {
            "code": self.code,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "message": self.message,
            "fix": self.fix,
            "detail": self.detail,
        }

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Finding":
        return cls(
            code=data["code"],
            message=data["message"],
            path=data["path"],
            line=data["line"],
            column=data["column"],
            end_line=data["end_line"],
            end_column=data["end_column"],
            fix=data.get("fix"),
            detail=data.get("detail"),
        )

    def sort_key(self) -> Tuple[str, int, int, str]:
        return (self.path, self.line, self.column, self.code)
