"""TT-Lang's C++ spelling of the op vocabulary: the ``ttlang_cpp`` section of the
``ttlgen.op_vocabulary/v1`` file.

TT-Lang's compiler declares the capability queries' enums itself (``TilePrimitive``,
``TileOperandRoute``, ``FullFp32AccumulationKind``, ``DestinationElementWidth``,
``DFBUnpackMode``); the generated C++ must use its enumerator names and order, and its
adapter must recognize each element type in an ``mlir::Type``. The section states those
facts once; this module checks them against the vocabulary and the resolver's fixed
values and gives them typed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ttlgen.errors import DiagnosticSink, Mark, did_you_mean
from ttlgen.naming import CPP_KEYWORDS
from ttlgen.resolver.semantics import DestWidth, Route, UnpackMode
from ttlgen.spec.document import SpecDocument

SECTION = "ttlang_cpp"

V = TypeVar("V")


@dataclass(frozen=True)
class CppEnumSpelling(Generic[V]):
    """A TT-Lang enum: its name and, in TT-Lang's order, each value with its enumerator."""

    name: str
    enumerators: tuple[tuple[V, str], ...]
    mark: Mark


@dataclass(frozen=True)
class ElementPredicate:
    """The mlir::Type predicate (``isF32()``) by which TT-Lang's compiler knows a type is the
    vocabulary's element type ``element``."""

    element: str
    predicate: str
    mark: Mark


@dataclass(frozen=True)
class TtlangCpp:
    """How TT-Lang's C++ compiler spells the vocabulary's names and enums."""

    interface: str  # the KernelTargetEnvironment generation the adapter implements
    primitive_enum: str
    unknown_primitive: str  # TT-Lang's enumerator before the declared primitives
    full_fp32_kind: CppEnumSpelling[str]
    route: CppEnumSpelling[Route]
    dest_width: CppEnumSpelling[DestWidth]
    unpack_mode: CppEnumSpelling[UnpackMode]
    element_predicates: tuple[ElementPredicate, ...]  # vocabulary order
    mark: Mark


def _enum(
    doc: SpecDocument, key: str, values: Sequence[str], convert: Callable[[str], V], what: str, sink: DiagnosticSink
) -> CppEnumSpelling[V]:
    path = (SECTION, key)
    raw = doc.data[SECTION][key]
    enumerators: list[tuple[V, str]] = []
    for value, spelling in raw["enumerators"].items():
        if value not in values:
            sink.error(doc.key_mark((*path, "enumerators", value)), f"unknown {what} {value!r}{did_you_mean(value, values)}; declared: {', '.join(values)}")
            continue
        enumerators.append((convert(value), spelling))
    for value in values:
        if value not in raw["enumerators"]:
            sink.error(doc.mark((*path, "enumerators")), f"no enumerator for {what} {value!r}: TT-Lang's enum must name every one")
    _check_enumerators(doc, path, raw["enum"], [(str(v), s) for v, s in raw["enumerators"].items()], sink)
    return CppEnumSpelling(raw["enum"], tuple(enumerators), doc.mark(path))


def _check_enumerators(
    doc: SpecDocument, path: tuple[str, ...], enum: str, spellings: Sequence[tuple[str, str]], sink: DiagnosticSink
) -> None:
    """Enumerators are C++ identifiers that are no keyword, each named once."""
    if enum in CPP_KEYWORDS:
        sink.error(doc.mark((*path, "enum")), f"{enum!r} is a C++ keyword; TT-Lang's enum has another name")
    first: dict[str, str] = {}
    for value, spelling in spellings:
        where = doc.mark((*path, "enumerators", value))
        if spelling in CPP_KEYWORDS:
            sink.error(where, f"{spelling!r} is a C++ keyword, not an enumerator")
        elif spelling in first:
            sink.error(where, f"{enum}::{spelling} already names {first[spelling]!r}; each value needs its own enumerator")
        first.setdefault(spelling, value)


def build(
    doc: SpecDocument, elements: Sequence[str], primitives: Sequence[str], kinds: Sequence[str], sink: DiagnosticSink
) -> TtlangCpp:
    """The section of the vocabulary document ``doc``, checked against its names."""
    raw = doc.data[SECTION]
    primitive = raw["primitive"]
    if primitive["unknown"] in primitives:
        sink.error(doc.mark((SECTION, "primitive", "unknown")), f"{primitive['unknown']!r} is a declared primitive; the unknown enumerator must be another name")
    _check_enumerators(
        doc, (SECTION, "primitive"), primitive["enum"], [("unknown", primitive["unknown"]), *((p, p) for p in primitives)], sink
    )
    predicates = raw["element_types"]
    for element in predicates:
        if element not in elements:
            sink.error(doc.key_mark((SECTION, "element_types", element)), f"unknown element type {element!r}{did_you_mean(element, elements)}; declared: {', '.join(elements)}")
    for element in elements:
        if element not in predicates:
            sink.error(doc.mark((SECTION, "element_types")), f"no mlir::Type predicate for element type {element!r}")
    return TtlangCpp(
        interface=raw["interface"],
        primitive_enum=primitive["enum"],
        unknown_primitive=primitive["unknown"],
        full_fp32_kind=_enum(doc, "full_fp32_kind", kinds, str, "full-fp32 kind", sink),
        route=_enum(doc, "route", [r.value for r in Route], Route, "operand route", sink),
        dest_width=_enum(doc, "dest_width", [str(w.value) for w in DestWidth], lambda v: DestWidth(int(v)), "DST width", sink),
        unpack_mode=_enum(doc, "unpack_mode", [m.value for m in UnpackMode], UnpackMode, "unpack mode", sink),
        element_predicates=tuple(
            ElementPredicate(e, predicates[e], doc.mark((SECTION, "element_types", e))) for e in elements if e in predicates
        ),
        mark=doc.key_mark((SECTION,)),
    )
