"""The C++ capability tables for TT-Lang's compiler: ``include/ttl_kernel_config/
kernel_target_tables.hpp`` and its equality program ``tests/ttl_kernel_config_tables_dump.cpp``.

Prints the plan's ``KernelTargetCpp`` (the C++ view of the very tables the Python package
is rendered from): TT-Lang's enums, each relation table as constexpr data, one record per
target, the queries, and a static_assert per golden of the target specs. The program
prints every answer of the header as JSON lines, which tests/cpp_tables compares with the
Python resolver's.
"""

from __future__ import annotations

from collections.abc import Sequence

from ttlgen.emit._base import EmitContext, GeneratedFile
from ttlgen.emit._cpp_layout import (
    Braced,
    Fact,
    Item,
    Sourced,
    SourcedLines,
    Text,
    comment,
    commented_list,
    declaration_sourced,
    doc,
    literal,
    render,
    static_assert,
)
from ttlgen.model.goldens import DestWidthGolden, DfbCapacityGolden, DfbUnpackGolden, FullFp32Golden
from ttlgen.model.project import Project
from ttlgen.plan.kernel_target_cpp import (
    CppEnum,
    CppGolden,
    CppRuntimeApi,
    CppTable,
    CppTarget,
    Enumerator,
    KernelTargetCpp,
)
from ttlgen.plan.project import ProjectPlan
from ttlgen.resolver import DestWidth, Match, UnpackRule, WidthRule

TEMPLATES = "cpp/ttl_kernel_config"


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _set(type_name: str, enum: CppEnum, values: object) -> Braced:
    assert isinstance(values, frozenset | tuple)
    return Braced(type_name, enum.refs(values))


def _when(c: KernelTargetCpp, when: Match) -> Item:
    if when == Match():
        return "When{}"
    float_match = "FloatMatch::Any" if when.element_float is None else ("FloatMatch::Float" if when.element_float else "FloatMatch::NotFloat")
    return Braced(
        "When",
        [
            _set("PrimitiveSet", c.primitive, when.primitives),
            _set("ElementTypeSet", c.element_type, when.elements),
            Braced("ElementBitsSet", [str(b) for b in sorted(when.element_bits)]),
            float_match,
            _set("RouteSet", c.route, when.routes),
        ],
    )


def _rule(c: KernelTargetCpp, rule: WidthRule | UnpackRule) -> Item:
    if isinstance(rule, WidthRule):
        return Braced("WidthRule", [_when(c, rule.when), _set("WidthSet", c.dest_width, rule.widths)], origin=rule)
    return Braced(
        "UnpackRule",
        [_when(c, rule.when), _set("WidthSet", c.dest_width, rule.widths), _set("UnpackModeSet", c.unpack_mode, rule.modes)],
        origin=rule,
    )


def _table(c: KernelTargetCpp, table: CppTable) -> SourcedLines:
    """A relation table's rules and record; each line carries the rule (or table) it prints."""
    users = ", ".join(t.name for t in c.targets if table in (t.dest_width, t.dfb_unpack))
    kind = "WidthRule" if table.table.rules and isinstance(table.table.rules[0], WidthRule) else "UnpackRule"
    lines: list[tuple[str, object]] = [(line, table.table) for line in comment(f"{table.table.origin} ({table.source}), used by {users}.")]
    rules = Braced("", [_rule(c, r) for r in table.table.rules], vertical=True)
    lines += declaration_sourced(f"inline constexpr {kind} {table.rules_ident}[] = ", rules, table.table)
    table_type = "WidthTable" if kind == "WidthRule" else "UnpackTable"
    lines += declaration_sourced(
        f"inline constexpr {table_type} ",
        Braced(table.ident, [literal(table.table.origin), table.rules_ident, str(len(table.table.rules))]),
        table.table,
    )
    return SourcedLines.of(lines)


def _text_or_null(text: str | None) -> Item:
    return "nullptr" if text is None else Text(text)


def _target(c: KernelTargetCpp, t: CppTarget) -> SourcedLines:
    """A target's record; each line carries the target, or the value it prints of it (a
    value composed from the architecture or the runtime API is written there)."""

    def fact(item: Item, *attribute: str) -> Sourced:
        return Sourced(item, Fact(t, attribute))

    lines = comment(f"{t.name} ({t.source}): {t.summary}")
    for query, table, reviewed in (("dest_width", t.dest_width, t.dest_width_review), ("dfb_unpack", t.dfb_unpack, t.dfb_unpack_review)):
        if table is not None:
            review = f", reviewed: {reviewed}" if reviewed else ""
            lines += comment(f"{query}: {table.table.origin}{review}")
    record = Braced(
        t.ident,
        [
            literal(t.name),
            fact(c.architecture.ref(t.architecture.value), "architecture"),
            fact(c.runtime_api.ref(t.runtime_api.value), "runtime_api"),
            fact(_bool(t.default_for_architecture), "default_for_architecture"),
            fact(str(t.dfb_capacity), "dfb_capacity"),
            f"&{t.dest_width.ident}" if t.dest_width is not None else "nullptr",
            f"&{t.dfb_unpack.ident}" if t.dfb_unpack is not None else "nullptr",
            fact(
                Braced(
                    "",
                    [fact(Braced("FullFp32Support", [_bool(s.supported), _text_or_null(s.warning)]), "full_fp32", k.spec) for k, s in t.full_fp32],
                    vertical=True,
                ),
                "full_fp32",
            ),
            fact(Braced("ElementTypeSet", [c.element_type.ref(e.value) for e in t.unpack_effective_for]), "unpack_effective_for"),
            fact(_bool(t.unpack_other_entries_need_32bit_dest), "unpack_other_entries"),
            fact(_bool(t.unpack_unbound_entries_rejected), "unpack_unbound_entries"),
            _text_or_null(t.rejection),
            literal(t.generation),
            _bool(t.dst_sync_by_capacity),
            _bool(t.typed_policy_values),
            _text_or_null(t.dfb_capacity_description),
        ],
        vertical=True,
    )
    return SourcedLines.of([*((line, t) for line in lines), *declaration_sourced("inline constexpr TargetRecord ", record, t)])


def _golden(c: KernelTargetCpp, entry: CppGolden) -> list[str]:
    g, target = entry.golden, f"&{entry.target_ident}"
    item: Braced
    if isinstance(g, DestWidthGolden):
        item = Braced("DestWidthGolden", [target, c.primitive.ref(g.primitive), c.element_type.ref(g.element), _set("WidthSet", c.dest_width, g.widths)])
    elif isinstance(g, DfbUnpackGolden):
        item = Braced(
            "DfbUnpackGolden",
            [
                target,
                c.primitive.ref(g.primitive),
                c.element_type.ref(g.element),
                c.route.ref(g.route),
                _set("WidthSet", c.dest_width, g.widths),
                _set("UnpackModeSet", c.unpack_mode, g.modes),
            ],
        )
    elif isinstance(g, FullFp32Golden):
        item = Braced(
            "FullFp32Golden",
            [target, c.full_fp32_kind.ref(g.kind), _bool(g.supported), _bool(g.warns), _text_or_null(g.warning)],
        )
    else:
        assert isinstance(g, DfbCapacityGolden)
        item = Braced("DfbCapacityGolden", [target, str(g.capacity)])
    message = f"{g.origin.file} {g.origin.label}: {g.origin.why}"
    return static_assert("holds", item, message)


def _values(c: KernelTargetCpp, enum: CppEnum, ident: str, enumerators: Sequence[Enumerator]) -> list[str]:
    return commented_list(f"inline constexpr {enum.name} {ident}[] = ", [(f"{enum.name}::{e.cpp}", e.spec) for e in enumerators])


def _runtime_api_info(c: KernelTargetCpp, api: CppRuntimeApi | None) -> list[str] | None:
    if api is None:
        return None
    info = Braced(
        "RuntimeApiInfo",
        [literal(api.pinned_version), c.math_fidelity.ref(api.default_math_fidelity.value), str(api.num_circular_buffers)],
    )
    return render(info, 8, "return ", ";")


def header(c: KernelTargetCpp, ctx: EmitContext) -> str:
    value_arrays = [
        _values(c, c.primitive, "kPrimitives", c.primitive.declared),
        _values(c, c.route, "kRoutes", c.route.enumerators),
        _values(c, c.full_fp32_kind, "kFullFp32Kinds", c.full_fp32_kind.enumerators),
        _values(c, c.dest_width, "kDestinationWidths", c.dest_width.enumerators),
        _values(c, c.unpack_mode, "kUnpackModes", c.unpack_mode.enumerators),
        _values(c, c.element_type, "kElementTypes", c.element_type.enumerators),
        _values(c, c.architecture, "kArchitectures", c.architecture.enumerators),
        _values(c, c.runtime_api, "kRuntimeApis", c.runtime_api.enumerators),
        _values(c, c.math_fidelity, "kMathFidelities", c.math_fidelity.enumerators),
        _values(c, c.unpack_to_dest_mode, "kUnpackToDestModes", c.unpack_to_dest_mode.enumerators),
    ]
    runtime_names = {a.enumerator.cpp: a.runtime_name for a in c.architectures}
    apis = {api.enumerator.cpp: api for api in c.runtime_apis}
    target_list = commented_list(
        "inline constexpr const TargetRecord* kTargets[] = ", [(f"&{t.ident}", t.source) for t in c.targets]
    )
    return ctx.render(
        f"{TEMPLATES}/kernel_target_tables.hpp.j2",
        c=c,
        lit=literal,
        doc=doc,
        value_arrays=value_arrays,
        runtime_names=[runtime_names.get(e.cpp, "") for e in c.architecture.enumerators],
        runtime_api_infos=[_runtime_api_info(c, apis.get(e.cpp)) for e in c.runtime_api.enumerators],
        tables=[_table(c, t) for t in c.tables],
        targets=[_target(c, t) for t in c.targets],
        target_list=target_list,
        goldens=[_golden(c, g) for g in c.goldens],
        wide_width=c.dest_width.of(DestWidth.BITS32).cpp,
        narrow_width=c.dest_width.of(DestWidth.BITS16).cpp,
    )


def emit(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
    c = plan.kernel_target_cpp
    if c is None:
        return []
    return [
        GeneratedFile(path=f"include/{c.header}", body=header(c, ctx), sources=c.sources),
        GeneratedFile(
            path=f"tests/{c.dump_program}",
            body=ctx.render(f"{TEMPLATES}/tables_dump.cpp.j2", c=c, lit=literal, doc=doc),
            sources=c.sources,
        ),
    ]

