"""Golden facts of a target: the ``golden`` key of a ``ttlgen.target/v1`` file.

A golden is a query and the exact answer TT-Lang's lit tests pin for the target, written
in the target's spec next to the facts it guards. Nothing here answers the query: the
generated C++ table header asserts each golden against its own tables at compile time,
so a spec edit that changes a guarded answer fails the build of every C++ includer, and
the equality test keeps the Python resolver answering alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ttlgen.errors import DiagnosticSink, Mark, did_you_mean
from ttlgen.model.ops import VOCABULARY
from ttlgen.resolver.semantics import DestWidth, Route, UnpackMode
from ttlgen.spec.document import SpecDocument

KEY = "golden"


@dataclass(frozen=True)
class GoldenOrigin:
    """Where a golden is written (``file`` and ``golden.<query>[index]``) and why it holds."""

    file: str
    label: str  # golden.dest_width[0]
    why: str
    mark: Mark


@dataclass(frozen=True)
class DestWidthGolden:
    """A pinned answer: the DST widths a primitive and element type allow."""

    primitive: str
    element: str
    widths: frozenset[DestWidth]
    origin: GoldenOrigin


@dataclass(frozen=True)
class DfbUnpackGolden:
    """The exact configurations: every pairing of ``widths`` and ``modes``."""

    primitive: str
    element: str
    route: Route
    widths: frozenset[DestWidth]
    modes: frozenset[UnpackMode]
    origin: GoldenOrigin


@dataclass(frozen=True)
class FullFp32Golden:
    """A pinned answer: whether a full-fp32 kind is supported, and its warning."""

    kind: str
    supported: bool
    warns: bool
    warning: str | None  # the exact warning text, when the golden pins it
    origin: GoldenOrigin


@dataclass(frozen=True)
class DfbCapacityGolden:
    """A pinned answer: the architecture's number of DFB indices."""

    capacity: int
    origin: GoldenOrigin


Golden = DestWidthGolden | DfbUnpackGolden | FullFp32Golden | DfbCapacityGolden


def _origin(doc: SpecDocument, path: tuple[str | int, ...], raw: dict[str, Any]) -> GoldenOrigin:
    label = f"{KEY}.{path[1]}" + (f"[{path[2]}]" if len(path) > 2 else "")
    return GoldenOrigin(doc.source, label, " ".join(str(raw["why"]).split()), doc.mark(path))


def _named(
    doc: SpecDocument, path: tuple[str | int, ...], value: str, known: tuple[str, ...], what: str, sink: DiagnosticSink
) -> None:
    if value not in known:
        # Names come from the vocabulary: when it is broken, these follow from it.
        sink.error(doc.mark(path), f"unknown {what} {value!r}{did_you_mean(value, known)}; declared: {', '.join(known)}", after=[VOCABULARY])


def build(
    doc: SpecDocument,
    primitives: tuple[str, ...],
    elements: tuple[str, ...],
    kinds: tuple[str, ...],
    sink: DiagnosticSink,
) -> tuple[Golden, ...]:
    """The goldens of a target document, in file order; names are checked against the
    vocabulary (errors go to ``sink``)."""
    raw = doc.data.get(KEY)
    if raw is None:
        return ()
    found: list[Golden] = []
    for index, entry in enumerate(raw.get("dest_width", ())):
        path = (KEY, "dest_width", index)
        _named(doc, (*path, "primitive"), entry["primitive"], primitives, "primitive", sink)
        _named(doc, (*path, "element"), entry["element"], elements, "element type", sink)
        found.append(
            DestWidthGolden(
                entry["primitive"], entry["element"], frozenset(DestWidth(w) for w in entry["allow"]), _origin(doc, path, entry)
            )
        )
    for index, entry in enumerate(raw.get("dfb_unpack", ())):
        path = (KEY, "dfb_unpack", index)
        _named(doc, (*path, "primitive"), entry["primitive"], primitives, "primitive", sink)
        _named(doc, (*path, "element"), entry["element"], elements, "element type", sink)
        allow = entry["allow"]
        found.append(
            DfbUnpackGolden(
                entry["primitive"],
                entry["element"],
                Route(entry["route"]),
                frozenset(DestWidth(w) for w in allow["dest_width"]),
                frozenset(UnpackMode(m) for m in allow["unpack"]),
                _origin(doc, path, entry),
            )
        )
    for index, entry in enumerate(raw.get("full_fp32", ())):
        path = (KEY, "full_fp32", index)
        _named(doc, (*path, "kind"), entry["kind"], kinds, "full-fp32 kind", sink)
        if entry["supported"] and entry["warns"]:
            sink.error(doc.mark((*path, "warns")), "a supported kind never warns; a warning belongs to an unsupported kind")
        if "warning" in entry and not entry["warns"]:
            sink.error(doc.key_mark((*path, "warning")), "a warning text pins the warning of a kind that warns: set warns: true, or drop the text")
        found.append(
            FullFp32Golden(entry["kind"], entry["supported"], entry["warns"], entry.get("warning"), _origin(doc, path, entry))
        )
    if "dfb_capacity" in raw:
        entry = raw["dfb_capacity"]
        found.append(DfbCapacityGolden(entry["value"], _origin(doc, (KEY, "dfb_capacity"), entry)))
    return tuple(found)
