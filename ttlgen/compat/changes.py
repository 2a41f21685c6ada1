"""What a comparison finds: one record per change, with where it is on each side."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from ttlgen.errors import Mark, format_key_path


class Area(enum.Enum):
    LAYOUT = "layout"
    PROGRAMS = "programs"
    CAPABILITIES = "capabilities"


class Impact(enum.Enum):
    """Who a change breaks."""

    WIRE = "wire"  # peers built from the two versions disagree about bytes
    SOURCE = "source"  # code written against the generated API stops building or means something else
    COMPATIBLE = "compatible"  # an addition: old peers and old callers keep working
    REVIEW = "review"  # not versioned (capabilities): shown for a reviewer to judge

    @property
    def breaking(self) -> bool:
        return self in (Impact.WIRE, Impact.SOURCE)


class Status(enum.Enum):
    """A change held against the version bump of its layout."""

    BREAKING = "breaking"  # breaking, and the major version did not move
    ACKNOWLEDGED = "acknowledged"  # breaking, and the major version moved
    COMPATIBLE = "compatible"
    REVIEW = "review"


@dataclass(frozen=True)
class Location:
    """A place in a spec file (``line`` 0: the file as a whole)."""

    file: str
    line: int = 0
    column: int = 0
    path: str = ""  # the key path, as users write it

    @classmethod
    def of(cls, mark: Mark) -> Location:
        return cls(mark.file, mark.line, mark.column, format_key_path(mark.path) if mark.path else "")

    def __str__(self) -> str:
        where = self.file if self.line <= 0 else f"{self.file}:{self.line}:{self.column}"
        return f"{where}: {self.path}" if self.path else where

    def to_json(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "column": self.column, "path": self.path or None}


@dataclass(frozen=True)
class Cause:
    """A changed input that, alone, changes a kernel's plan (or, with ``joint``, together
    with the other causes listed)."""

    what: str
    before: Location | None
    after: Location | None
    joint: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "what": self.what,
            "before": self.before.to_json() if self.before else None,
            "after": self.after.to_json() if self.after else None,
            "joint": self.joint,
        }


@dataclass(frozen=True)
class PlanChange:
    """A shipped kernel whose resolved plan differs: each differing facet, before and after."""

    kernel: str
    facets: tuple[tuple[str, str, str], ...]  # (facet, before, after)
    causes: tuple[Cause, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "kernel": self.kernel,
            "facets": [{"facet": f, "before": b, "after": a} for f, b, a in self.facets],
            "causes": [c.to_json() for c in self.causes],
        }


@dataclass(frozen=True)
class Change:
    area: Area
    impact: Impact
    kind: str  # a stable identifier of the rule that found it, e.g. "enum-value"
    subject: str  # the thing that changed, e.g. "value 'limit' of enum 'gave'"
    message: str  # what happened to it, e.g. "2 -> 3"
    before: Location | None
    after: Location | None
    layout: str | None = None  # the layout whose ABI version covers the change
    plan: PlanChange | None = None
    status: Status = field(default=Status.REVIEW)

    @property
    def category(self) -> str:
        if self.area is Area.CAPABILITIES:
            return str(self.area.value)
        return f"{self.area.value} {self.impact.value}"

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "category": self.category,
            "area": self.area.value,
            "impact": self.impact.value,
            "status": self.status.value,
            "kind": self.kind,
            "subject": self.subject,
            "message": self.message,
            "layout": self.layout,
            "before": self.before.to_json() if self.before else None,
            "after": self.after.to_json() if self.after else None,
        }
        if self.plan is not None:
            out["plan"] = self.plan.to_json()
        return out
