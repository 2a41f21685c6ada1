"""Diagnostics, warnings and typed conflict evidence."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import NamedTuple

from .semantics import Route


class Source(enum.Enum):
    """Who imposed a requirement."""

    OP = "op"  # a tile operation (fixed, or one strategy option)
    DEST_POLICY = "dest_policy"  # fp32_dest_acc_en / fp32-dest-acc-en enabled or disabled
    UNPACK_POLICY = "unpack_policy"  # an explicit ttl.unpack_to_dest_fp32 set
    UNPACK_ENTRY = "unpack_entry"  # an entry the target accepts only with 32-bit DST
    DST_RESIDENCY = "dst_residency"  # the DST slots an op holds at once, under the sync policy


class Requirement(NamedTuple):
    """One restriction of the kernel-wide domains, with where it came from.

    ``widths`` and ``modes`` are bit masks (see ``semantics.WIDTH_BIT``/``MODE_BIT``);
    ``dfb`` is None for a pure destination-width requirement.
    """

    source: Source
    op: str | None
    op_name: str | None
    operand: int | None
    primitive: str | None
    element: str | None
    route: Route | None
    dfb: int | None
    widths: int
    modes: int


class ConflictKind(enum.Enum):
    DEST_WIDTH = "dest_width"
    UNPACK_MODE = "unpack_mode"
    NO_WIDTH = "no_width"  # a single requirement allows no width at all
    NO_CONFIGURATION = "no_configuration"  # a single DFB use allows nothing


class Conflict(NamedTuple):
    """Typed evidence of an empty domain: the requirement that emptied it and the one
    that had established the domain's previous restriction."""

    kind: ConflictKind
    requirement: Requirement
    established_by: Requirement | None


class Note(NamedTuple):
    op: str | None
    operand: int | None
    message: str


class Diagnostic(NamedTuple):
    op: str | None  # None: function- or module-level
    operand: int | None
    message: str
    notes: tuple[Note, ...] = ()

    def format(self, where: str = "kernel") -> str:
        return self.format_located(lambda op, operand: where)

    def format_located(self, where: Callable[[str | None, int | None], str]) -> str:
        """The error and its notes, each after ``where(op, operand)``: a caller that knows
        where each op was written (a file:line:column) puts it there."""
        lines = [f"{where(self.op, self.operand)}: {_prefix(self.op, self.operand)}error: {self.message}"]
        lines.extend(f"  {where(n.op, n.operand)}: {_prefix(n.op, n.operand)}note: {n.message}" for n in self.notes)
        return "\n".join(lines)

    def to_json(self) -> dict[str, object]:
        return {
            "op": self.op,
            "operand": self.operand,
            "message": self.message,
            "notes": [{"op": n.op, "message": n.message} for n in self.notes],
        }


class ResolveWarning(NamedTuple):
    op: str | None
    message: str

    def format(self, where: str = "kernel") -> str:
        return f"{where}: {_prefix(self.op, None)}warning: {self.message}"

    def to_json(self) -> dict[str, object]:
        return {"op": self.op, "message": self.message}


class ResolveFailure(NamedTuple):
    """The kernel cannot be configured. Nothing was applied anywhere."""

    errors: tuple[Diagnostic, ...]
    conflict: Conflict | None = None

    def format(self, where: str = "kernel") -> str:
        return "\n".join(e.format(where) for e in self.errors)

    def to_json(self) -> dict[str, object]:
        return {"status": "error", "errors": [e.to_json() for e in self.errors]}


class TargetError(ValueError):
    """Target lookup or architecture discovery failed."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class TranslationError(ValueError):
    """A plan cannot be expressed in a runtime configuration API."""


def _prefix(op: str | None, operand: int | None) -> str:
    if op is None:
        return ""
    if operand is None:
        return f"op {op!r}: "
    return f"op {op!r} operand {operand}: "
