"""The C++ view of the resolver's tables, for TT-Lang's compiler.

From the very ``ResolverTables`` the plan stage resolves kernels with (and the Python
package is rendered from) and the model's C++ facts (TT-Lang's spellings in the
vocabulary, the goldens in the target specs), this builds one typed record the C++
emitters print: every enum with its enumerators, each relation table once under the
identifier its targets share, one record per target, the architecture switch and the
goldens. Every identifier of the generated table header and MLIR adapter is derived
here, once, with :class:`ttlgen.naming.CppNaming`, and checked for collisions in the
scope the generated file defines it in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ttlgen.errors import DiagnosticSink, Mark
from ttlgen.model.goldens import (
    Golden,
)
from ttlgen.model.namespaces import KERNEL_CONFIG_PACKAGE, Namespaces, Source
from ttlgen.model.ops import ElementType, Vocabulary
from ttlgen.model.targets import NO_ARCHITECTURE, NO_RUNTIME_API, Target, TargetsModel
from ttlgen.model.ttlang_cpp import ElementPredicate, TtlangCpp
from ttlgen.naming import CNaming, CppNaming
from ttlgen.plan.tables import ResolverTables
from ttlgen.resolver import (
    AutoSync,
    FullFp32Support,
    PolicyValues,
    RejectedTarget,
    SyncMode,
    TargetTable,
    UnpackTable,
    WidthTable,
)
from ttlgen.resolver.lookup import UNIMPLEMENTED_ARCHITECTURE

# Where the outputs go: include/<HEADER>, include/<ADAPTER>, tests/<DUMP_PROGRAM>.
PACKAGE = KERNEL_CONFIG_PACKAGE
HEADER = f"{PACKAGE}/kernel_target_tables.hpp"
ADAPTER = f"{PACKAGE}/KernelTargetEnvironments.gen.inc"
DUMP_PROGRAM = f"{PACKAGE}_tables_dump.cpp"
# The adapter's namespace inside TT-Lang's, and its alias for the tables' namespace.
ADAPTER_NAMESPACE = CppNaming.namespace("kernel_target_environments")
TABLES_ALIAS = CppNaming.namespace("tables")
# Enumerators are bits of a 64-bit set in the generated header.
MAX_ENUMERATORS = 64

cpp = CppNaming()

# What the generated table header defines in its namespace whatever the spec says (the
# template writes them; tests/cpp_tables/test_cpp_names.py checks this list against it).
HEADER_DEFINES = (
    "Primitive", "Route", "Kind", "Width", "UnpackMode",
    "ElementType", "Architecture", "RuntimeApi", "MathFidelity", "UnpackToDestMode",
    "kPrimitives", "kRoutes", "kFullFp32Kinds", "kDestinationWidths", "kUnpackModes", "kElementTypes",
    "kArchitectures", "kRuntimeApis", "kMathFidelities", "kUnpackToDestModes",
    "spec_name", "bits", "is_float", "Element", "undeclared_element", "runtime_name", "architecture_named", "is_lower_case_of",
    "architecture_from_runtime_name", "RuntimeApiInfo", "runtime_api_info",
    "BitSet", "PrimitiveSet", "ElementTypeSet", "ElementBitsSet", "RouteSet", "WidthSet", "UnpackModeSet",
    "FloatMatch", "When", "matches", "WidthRule", "UnpackRule", "WidthTable", "UnpackTable", "DFBConfigurations",
    "FullFp32Support", "kFullFp32KindCount", "TargetRecord", "kTargets",
    "allowed_destination_widths", "supports_destination_element_width", "allowed_dfb_configurations",
    "full_fp32_support", "target_named", "default_target", "dfb_capacity_of", "kDstPhysicalTiles", "dst_capacity", "dst_capacity_for",
    "DestWidthGolden", "DfbUnpackGolden", "FullFp32Golden", "DfbCapacityGolden", "same_configurations", "holds",
)
# What the adapter defines in its namespace whatever the spec says, and what it uses there
# from TT-Lang's namespace.
ADAPTER_DEFINES = (
    TABLES_ALIAS, "Primitive", "Route", "Kind", "Width", "Mode", "toTables", "fromTables", "elementOf",
    "supportsWidth", "dfbConfigurations", "fullFp32Support", "environment", "unimplementedArchitecture",
    "architectureOf", "createForArchitecture", "createForTarget", "dfbCapacity", "dfbCapacityDescription", "dstCapacity",
)
ADAPTER_USES = (
    "KernelTargetEnvironment", "FullFp32AccumulationSupport", "DFBHardwareConfiguration", "FailureOr",
    "SmallVector", "StringRef", "Type", "failure",
)


class Enumerator(NamedTuple):
    """One enumerator: the value the tables hold (None: a C++-only enumerator), how specs
    and the equality program's JSON spell it ("" for TT-Lang's unknown primitive, which
    names no vocabulary value), the C++ enumerator, its number when the enum states
    numbers (the runtime's), and the model object it names when one declares it (an
    element type of the vocabulary), which ``ttlgen explain`` credits its lines to."""

    value: object
    spec: str
    cpp: str
    number: int | None = None
    origin: object = None


@dataclass(frozen=True)
class CppElement:
    """An element type's row of the tables: its enumerator, storage bits and float-ness,
    and the vocabulary's element type stating them (``ttlgen explain`` follows ``origin``)."""

    enumerator: Enumerator
    bits: int
    is_float: bool
    origin: ElementType


def _element(enumerator: Enumerator, bits: int, is_float: bool) -> CppElement:
    # The element type stating the row is the one its enumerator was made from.
    assert isinstance(enumerator.origin, ElementType)
    return CppElement(enumerator, bits, is_float, enumerator.origin)


@dataclass(frozen=True)
class CppPredicate:
    """How the adapter knows an mlir::Type is an element type: its enumerator, and the
    vocabulary's predicate (``ttlgen explain`` follows ``origin``)."""

    enumerator: Enumerator
    predicate: str
    origin: ElementPredicate


class CppEnum(NamedTuple):
    name: str
    enumerators: tuple[Enumerator, ...]

    def of(self, value: object) -> Enumerator:
        for enumerator in self.enumerators:
            if enumerator.value == value:
                return enumerator
        raise KeyError(f"{value!r} is no enumerator of {self.name}")

    def ref(self, value: object) -> str:
        """``TilePrimitive::Copy``."""
        return f"{self.name}::{self.of(value).cpp}"

    def refs(self, values: Iterable[object]) -> list[str]:
        """Refs of ``values`` in the enum's order."""
        wanted = list(values)
        return [f"{self.name}::{e.cpp}" for e in self.enumerators if any(e.value == v for v in wanted)]

    @property
    def declared(self) -> tuple[Enumerator, ...]:
        """The enumerators that name a value of the tables (not C++-only ones)."""
        return tuple(e for e in self.enumerators if e.value is not None)


class CppTable(NamedTuple):
    """A relation table, printed once under ``ident`` (the array of its rules is
    ``rules_ident``) whichever targets use it."""

    ident: str
    rules_ident: str
    table: WidthTable | UnpackTable
    source: str  # the spec file its rules are written in


class CppGolden(NamedTuple):
    golden: Golden
    target_ident: str


class CppTarget(NamedTuple):
    """One target's record (``ident``) and, unless it is rejected, its adapter class."""

    ident: str
    name: str
    summary: str
    architecture: Enumerator
    runtime_api: Enumerator
    default_for_architecture: bool
    dfb_capacity: int
    dest_width: CppTable | None
    dfb_unpack: CppTable | None
    dest_width_review: str | None
    dfb_unpack_review: str | None
    full_fp32: tuple[tuple[Enumerator, FullFp32Support], ...]  # in TT-Lang's kind order
    unpack_effective_for: tuple[Enumerator, ...]
    unpack_other_entries_need_32bit_dest: bool
    unpack_unbound_entries_rejected: bool
    rejection: str | None
    environment_class: str | None
    source: str
    # The resolver generation the target follows and the switches in which generations
    # differ ("" and off for a rejected target).
    generation: str = ""
    dst_sync_by_capacity: bool = False
    typed_policy_values: bool = False
    dfb_capacity_description: str | None = None


class CppArchitecture(NamedTuple):
    enumerator: Enumerator
    runtime_name: str


class CppRuntimeApi(NamedTuple):
    enumerator: Enumerator
    default_math_fidelity: Enumerator
    pinned_version: str
    num_circular_buffers: int


class KernelTargetCpp(NamedTuple):
    interface: str  # the KernelTargetEnvironment generation the adapter implements
    namespace: str
    header: str
    header_guard: str
    adapter: str
    adapter_namespace: str
    tables_alias: str
    dump_program: str
    primitive: CppEnum  # TT-Lang's: its unknown enumerator first
    unknown_primitive: Enumerator
    route: CppEnum
    dest_width: CppEnum
    unpack_mode: CppEnum
    full_fp32_kind: CppEnum
    element_type: CppEnum
    architecture: CppEnum  # ``none`` first: the environment without an architecture
    runtime_api: CppEnum  # ``none`` first: a target without a runtime
    math_fidelity: CppEnum
    unpack_to_dest_mode: CppEnum
    elements: tuple[CppElement, ...]
    element_predicates: tuple[CppPredicate, ...]
    tables: tuple[CppTable, ...]
    targets: tuple[CppTarget, ...]  # sorted by name, rejected ones included
    no_target: CppTarget | None
    architectures: tuple[CppArchitecture, ...]  # without ``none``
    # Each enumerator of ``architecture`` with the target chosen when only it is known.
    default_targets: tuple[tuple[Enumerator, CppTarget | None], ...]
    runtime_apis: tuple[CppRuntimeApi, ...]  # without ``none``
    goldens: tuple[CppGolden, ...]
    # TT-Lang's error for an unimplemented architecture, split where its name goes: the
    # resolver's own text, so both languages print the same.
    unimplemented_architecture: tuple[str, str]
    sources: tuple[str, ...]
    # The DST register: physical tiles, and the capacity of each (width, full sync) pair.
    dst_physical_tiles: int = 0
    dst_capacities: tuple[tuple[Enumerator, bool, int], ...] = ()


def _enum(name: str, values: Sequence[tuple[object, str, str]]) -> CppEnum:
    return CppEnum(name, tuple(Enumerator(value, spec, cpp_name) for value, spec, cpp_name in values))


def _identifier_enum(name: str, members: Sequence[object], spec: Sequence[str], origins: Sequence[object] | None = None) -> CppEnum:
    """An enum of ttlgen's whose enumerators are derived from spec names (``f32`` -> ``F32``),
    each with the model object that declares it when ``origins`` are given."""
    declared = origins if origins is not None else [None] * len(members)
    return CppEnum(name, tuple(Enumerator(m, s, cpp.type(s), origin=o) for m, s, o in zip(members, spec, declared, strict=True)))


class _Build:
    def __init__(self, tables: ResolverTables, spelling: TtlangCpp, vocabulary: Vocabulary) -> None:
        t = tables.tables
        self.primitive = _enum(
            spelling.primitive_enum,
            [(None, "", spelling.unknown_primitive), *((p, str(p), str(p)) for p in t.primitives)],
        )
        self.full_fp32_kind = _enum(
            spelling.full_fp32_kind.name,
            [(tables.full_fp32_kind(k), k, c) for k, c in spelling.full_fp32_kind.enumerators],
        )
        self.route = _enum(spelling.route.name, [(r, r.value, c) for r, c in spelling.route.enumerators])
        self.dest_width = _enum(spelling.dest_width.name, [(w, str(w.value), c) for w, c in spelling.dest_width.enumerators])
        self.unpack_mode = _enum(spelling.unpack_mode.name, [(m, m.value, c) for m, c in spelling.unpack_mode.enumerators])
        self.element_type = _identifier_enum(
            cpp.type("element", "type"),
            [e.name for e in t.elements],
            [str(e.name) for e in t.elements],
            vocabulary.element_types,  # the tables' elements, in the same order
        )
        architectures = [a.name for a in t.architectures]
        self.architecture = _identifier_enum(
            cpp.type("architecture"), [None, *architectures], [NO_ARCHITECTURE, *(str(a) for a in architectures)]
        )
        apis = [api.name for api in t.runtime_apis]
        self.runtime_api = _identifier_enum(cpp.type("runtime", "api"), [None, *apis], [NO_RUNTIME_API, *apis])
        enums = t.runtime_enums
        self.math_fidelity = CppEnum(
            cpp.type("math", "fidelity"), tuple(Enumerator(m, m.name, m.name, int(m)) for m in enums.math_fidelity)
        )
        self.unpack_to_dest_mode = CppEnum(
            cpp.type("unpack", "to", "dest", "mode"), tuple(Enumerator(m, m.name, m.name, int(m)) for m in enums.unpack_to_dest_mode)
        )
        self.tables: dict[tuple[str, str], CppTable] = {}

    def table(self, table: WidthTable | UnpackTable, target: str, query: str, source: str) -> CppTable:
        """The table under one identifier for all its targets: ``kGen1LlkDestWidth`` for a
        shared ``gen1_llk.dest_width``, ``kNebulaDestWidth`` for target nebula's own."""
        key = (table.origin, query)  # a target's own tables share its name as origin
        found = self.tables.get(key)
        if found is None:
            parts = (table.origin,) if table.origin != target else (table.origin, query)
            found = CppTable(cpp.constant(*parts), cpp.constant(*parts, "rules"), table, source)
            self.tables[key] = found
        return found

    def target(self, model: Target, table: TargetTable | RejectedTarget) -> CppTarget:
        if isinstance(table, RejectedTarget):
            return CppTarget(
                ident=cpp.constant("target", table.name),
                name=table.name,
                summary=model.summary,
                architecture=self.architecture.of(table.architecture),
                runtime_api=self.runtime_api.of(None),
                default_for_architecture=table.default_for_architecture,
                dfb_capacity=table.dfb_capacity,
                dest_width=None,
                dfb_unpack=None,
                dest_width_review=None,
                dfb_unpack_review=None,
                full_fp32=tuple((k, FullFp32Support(False)) for k in self.full_fp32_kind.enumerators),
                unpack_effective_for=(),
                unpack_other_entries_need_32bit_dest=False,
                unpack_unbound_entries_rejected=False,
                rejection=table.reason,
                environment_class=None,
                source=model.source,
            )
        assert model.dest_width is not None and model.dfb_unpack is not None  # not rejected
        return CppTarget(
            ident=cpp.constant("target", table.name),
            name=table.name,
            summary=table.summary,
            architecture=self.architecture.of(table.architecture),
            runtime_api=self.runtime_api.of(table.runtime_api.name if table.runtime_api is not None else None),
            default_for_architecture=table.default_for_architecture,
            dfb_capacity=table.dfb_capacity,
            dest_width=self.table(table.dest_width, table.name, "dest_width", model.dest_width.source),
            dfb_unpack=self.table(table.dfb_unpack, table.name, "dfb_unpack", model.dfb_unpack.source),
            dest_width_review=table.dest_width.review,
            dfb_unpack_review=table.dfb_unpack.review,
            full_fp32=tuple((k, table.full_fp32[str(k.value)]) for k in self.full_fp32_kind.enumerators),
            unpack_effective_for=tuple(e for e in self.element_type.enumerators if e.value in table.unpack_effective_for),
            unpack_other_entries_need_32bit_dest=table.unpack_other_entries_need_32bit_dest,
            unpack_unbound_entries_rejected=table.unpack_unbound_entries_rejected,
            rejection=None,
            environment_class=cpp.type(table.name, "kernel", "target", "environment"),
            source=model.source,
            generation=table.generation.name,
            dst_sync_by_capacity=table.generation.auto_sync is AutoSync.BY_CAPACITY,
            typed_policy_values=table.generation.policy_values is PolicyValues.TYPED,
            dfb_capacity_description=table.dfb_capacity_description,
        )


def build(tables: ResolverTables, vocabulary: Vocabulary, targets: TargetsModel) -> KernelTargetCpp | None:
    """The C++ view, or None when the vocabulary states no C++ spelling. Raises SpecErrors
    when two things would get one identifier or an enum has too many enumerators."""
    spelling = vocabulary.cpp
    if spelling is None:
        return None
    b = _Build(tables, spelling, vocabulary)
    t = tables.tables
    by_name: dict[str, TargetTable | RejectedTarget] = {x.name: x for x in t.targets}
    by_name.update((x.name, x) for x in t.rejected)
    built = [b.target(model, by_name[model.name]) for model in targets.targets if model.name in by_name]
    idents = {target.name: target for target in built}
    defaults = {target.architecture.value: target for target in built if target.default_for_architecture}
    no_target = idents.get(t.no_target) if t.no_target is not None else None
    goldens = tuple(
        CppGolden(golden, idents[model.name].ident) for model in targets.targets if model.name in idents for golden in model.goldens
    )
    result = KernelTargetCpp(
        interface=spelling.interface,
        namespace=cpp.namespace(PACKAGE),
        header=HEADER,
        header_guard=CNaming.include_guard(HEADER),
        adapter=ADAPTER,
        adapter_namespace=ADAPTER_NAMESPACE,
        tables_alias=TABLES_ALIAS,
        dump_program=DUMP_PROGRAM,
        primitive=b.primitive,
        unknown_primitive=b.primitive.enumerators[0],
        route=b.route,
        dest_width=b.dest_width,
        unpack_mode=b.unpack_mode,
        full_fp32_kind=b.full_fp32_kind,
        element_type=b.element_type,
        architecture=b.architecture,
        runtime_api=b.runtime_api,
        math_fidelity=b.math_fidelity,
        unpack_to_dest_mode=b.unpack_to_dest_mode,
        elements=tuple(_element(b.element_type.of(e.name), e.bits, e.is_float) for e in t.elements),
        element_predicates=tuple(
            CppPredicate(b.element_type.of(tables.element_type(p.element)), p.predicate, p) for p in spelling.element_predicates
        ),
        tables=tuple(b.tables.values()),
        targets=tuple(built),
        no_target=no_target,
        architectures=tuple(
            CppArchitecture(b.architecture.of(a.name), a.runtime_name or "") for a in t.architectures
        ),
        runtime_apis=tuple(
            CppRuntimeApi(
                b.runtime_api.of(api.name),
                b.math_fidelity.of(t.runtime_enums.math_fidelity[api.default_math_fidelity]),
                api.pinned_version,
                api.num_circular_buffers(),
            )
            for api in t.runtime_apis
        ),
        default_targets=tuple((e, no_target if e.value is None else defaults.get(e.value)) for e in b.architecture.enumerators),
        goldens=goldens,
        unimplemented_architecture=UNIMPLEMENTED_ARCHITECTURE,
        sources=tuple(sorted({vocabulary.source, *targets.sources})),
        dst_physical_tiles=t.dst_capacity.physical_tiles if t.dst_capacity is not None else 0,
        dst_capacities=tuple(
            (width, sync is SyncMode.FULL, t.dst_capacity.tiles(width.value, sync))  # type: ignore[arg-type]
            for width in b.dest_width.enumerators
            for sync in (SyncMode.DOUBLE_BUFFERED, SyncMode.FULL)
        ) if t.dst_capacity is not None else (),
    )
    sink = DiagnosticSink()
    _check(result, vocabulary, spelling, targets, sink)
    sink.raise_if_any()
    return result


def _architecture_marks(targets: TargetsModel) -> dict[str, Mark]:
    """Where each architecture's name is given: the first target naming it (or, for a
    rejected architecture, its own file)."""
    marks: dict[str, Mark] = {}
    for target in targets.targets:
        marks.setdefault(target.architecture, target.mark)
    return marks


def _check(result: KernelTargetCpp, vocabulary: Vocabulary, spelling: TtlangCpp, targets: TargetsModel, sink: DiagnosticSink) -> None:
    """Every identifier of the header and the adapter, in the scope it is defined in."""
    sets = (
        (result.primitive, Mark(vocabulary.source, path=("primitives",)), "primitives (with TT-Lang's unknown enumerator)"),
        (result.element_type, Mark(vocabulary.source, path=("element_types",)), "element types"),
    )
    for enum_, mark, what in sets:
        if len(enum_.enumerators) > MAX_ENUMERATORS:
            sink.error(mark, f"{len(enum_.enumerators)} {what}; the generated C++ sets hold at most {MAX_ENUMERATORS}")
    if not result.math_fidelity.enumerators or not result.unpack_to_dest_mode.enumerators:
        sink.error(spelling.mark, "the C++ tables list the runtime's enum values; declare them in a ttlgen.runtime_api spec, or drop ttlang_cpp")
    ns = Namespaces()
    fixed = "a name the generated C++ table header defines"
    header = ns.scope("", "C++", f"{result.namespace}::{{}}", keywords=["C++"], defines=[(n, fixed) for n in HEADER_DEFINES])
    adapter = ns.scope(
        "",
        "C++",
        f"{result.adapter_namespace}::{{}}",
        keywords=["C++"],
        uses=[(n, "a name of TT-Lang's the adapter uses") for n in ADAPTER_USES],
        defines=[(n, "a name the generated MLIR adapter defines") for n in ADAPTER_DEFINES],
    )
    section = spelling.mark
    tt_enums = (
        (spelling.primitive_enum, "TT-Lang's primitive enum", section.child("primitive")),
        (spelling.full_fp32_kind.name, "TT-Lang's full-fp32 kind enum", spelling.full_fp32_kind.mark),
        (spelling.route.name, "TT-Lang's operand route enum", spelling.route.mark),
        (spelling.dest_width.name, "TT-Lang's DST width enum", spelling.dest_width.mark),
        (spelling.unpack_mode.name, "TT-Lang's unpack mode enum", spelling.unpack_mode.mark),
    )
    for name, what, mark in tt_enums:
        ns.claim(header, name, Source(what, mark))
        ns.claim(adapter, name, Source(what, mark))
    # Enumerators of the enums ttlgen derives from spec names (TT-Lang's are checked in the model).
    derived = (
        (result.element_type, "element type", {e.name: e.mark for e in vocabulary.element_types}),
        (result.architecture, "architecture", _architecture_marks(targets)),
        (result.runtime_api, "runtime API", {api.name: Mark(api.source, path=("apis", api.name)) for api in targets.runtime_apis}),
    )
    for enum_, what, marks in derived:
        scope = ns.scope("", "C++", f"{enum_.name}::{{}}", keywords=["C++"])
        for e in enum_.enumerators:
            ns.claim(scope, e.cpp, Source(f"{what} {e.spec!r}", marks.get(e.spec)))
    models = {t.name: t for t in targets.targets}
    for table in result.tables:
        user = next(t for t in result.targets if table in (t.dest_width, t.dfb_unpack))
        relation = models[user.name].dest_width if table is user.dest_width else models[user.name].dfb_unpack
        mark = relation.mark if relation is not None else models[user.name].mark
        what = f"relation table {table.table.origin!r}" if "." in table.table.origin else f"the own rules of target {table.table.origin!r}"
        ns.claim(header, table.ident, Source(what, mark))
        ns.claim(header, table.rules_ident, Source(what, mark))
    for target in result.targets:
        mark = models[target.name].mark
        ns.claim(header, target.ident, Source(f"target {target.name!r}", mark))
        ns.claim(adapter, target.environment_class, Source(f"target {target.name!r}", mark))
    ns.report(sink)

