"""The resolver's tables, built once from the op and target models.

The plan stage resolves every kernel with them, and the kernel-configuration emitter
renders the very same objects as the generated package's table modules, so a fact
reaches the engine and the generated package by one path.

Names a spec declares become ``enum.StrEnum`` members here (``ttlgen.resolver.tables``
says why); their Python identifiers are derived once, here, with ``ttlgen.naming``:
upper snake case for the lower-case names (``f32`` -> ``F32``, ``wormhole_b0`` ->
``WORMHOLE_B0``), CamelCase kept for primitives and runtime enum values
(``ElementwiseBinary``, ``HiFi4``), as the runtime spells them.
"""

from __future__ import annotations

import enum
import keyword
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import NamedTuple, cast

from ttlgen import naming
from ttlgen.errors import DiagnosticSink, Mark
from ttlgen.model.ops import OpsModel, Selection
from ttlgen.model.targets import NO_ARCHITECTURE, NO_RUNTIME_API, Condition, Target, TargetsModel
from ttlgen.resolver import (
    ArchitectureInfo,
    AutoSync,
    DestWidth,
    DstCapacity,
    ElementInfo,
    FullFp32KindInfo,
    FullFp32Support,
    Generation,
    Match,
    OperandSemantics,
    OpSemantics,
    PolicyValues,
    Preference,
    RejectedTarget,
    Route,
    RuntimeApi,
    RuntimeEnums,
    RuntimeVersion,
    Selected,
    StrategyInfo,
    StrategySemantics,
    SyncMode,
    Tables,
    TargetTable,
    Translation,
    UnpackMode,
    UnpackRule,
    UnpackTable,
    WidthRule,
    WidthTable,
)


class ResolverTables(NamedTuple):
    """The tables, and the enum classes their spec-declared names are members of (the
    runtime's enum classes are in ``tables.runtime_enums``)."""

    tables: Tables
    element_type: type[enum.StrEnum]
    primitive: type[enum.StrEnum]
    strategy: type[enum.StrEnum]
    full_fp32_kind: type[enum.StrEnum]
    architecture: type[enum.StrEnum]


_last: tuple[OpsModel, TargetsModel, ResolverTables] | None = None


def resolver_tables(ops: OpsModel, targets: TargetsModel) -> ResolverTables:
    """The tables of these models, built once per pair of model objects so that the
    plan stage and the emitter share them. Raises SpecErrors when a spec name cannot
    become a Python identifier."""
    global _last
    if _last is not None:
        last_ops, last_targets, last_tables = _last
        if last_ops is ops and last_targets is targets:
            return last_tables
    built = build_tables(ops, targets)
    _last = (ops, targets, built)
    return built


# ------------------------------------------------------------------------ identifiers


def _names_enum(
    class_name: str,
    names: Sequence[tuple[str, Mark]],
    identifier: Callable[[str], str],
    what: str,
    sink: DiagnosticSink,
) -> type[enum.StrEnum]:
    members: list[tuple[str, str]] = []
    first: dict[str, tuple[str, Mark]] = {}
    for name, mark in names:
        ident = identifier(name)
        if not ident.isidentifier() or keyword.iskeyword(ident):
            sink.error(mark, f"{what} {name!r} would be {class_name}.{ident} in Python, which is not an identifier; rename it")
        elif ident in first:
            other, where = first[ident]
            sink.error(mark, f"{what} {name!r} and {other!r} (at {where}) would both be {class_name}.{ident} in Python; rename one")
        else:
            first[ident] = (name, mark)
            members.append((ident, name))
    # The functional API takes the members as data; mypy types its result as a member.
    return cast("type[enum.StrEnum]", enum.StrEnum(class_name, members))


def _runtime_enum(class_name: str, values: Sequence[tuple[str, int]], source: str, sink: DiagnosticSink) -> type[enum.IntEnum]:
    members: list[tuple[str, int]] = []
    for name, value in values:
        ident = naming.camel(name)
        if ident != name or keyword.iskeyword(ident):
            sink.error(Mark(source, path=("enums", class_name, name)), f"runtime enum value {name!r} is not a Python identifier as written; rename it")
            continue
        members.append((ident, value))
    return cast("type[enum.IntEnum]", enum.IntEnum(class_name, members))


# ------------------------------------------------------------------------------ build


class _Builder:
    def __init__(self, ops: OpsModel, targets: TargetsModel, sink: DiagnosticSink) -> None:
        vocab = ops.vocabulary
        self.element_type = _names_enum(
            "ElementType", [(e.name, e.mark) for e in vocab.element_types], naming.upper_snake, "element type", sink
        )
        self.primitive = _names_enum(
            "Primitive",
            [(p, Mark(vocab.source, path=("primitives", i))) for i, p in enumerate(vocab.primitives)],
            naming.camel,
            "primitive",
            sink,
        )
        self.strategy = _names_enum(
            "Strategy", [(s.name, s.mark) for s in vocab.strategies], naming.upper_snake, "strategy", sink
        )
        self.full_fp32_kind = _names_enum(
            "FullFp32Kind", [(k.name, k.mark) for k in vocab.full_fp32_kinds], naming.upper_snake, "full-fp32 kind", sink
        )
        self.architecture = _names_enum(
            "Architecture",
            [(arch, _first_target(targets, arch).mark) for arch, _ in targets.architectures],
            naming.upper_snake,
            "architecture",
            sink,
        )
        source = targets.runtime_apis[0].source if targets.runtime_apis else vocab.source
        self.runtime_enums = RuntimeEnums(
            _runtime_enum("UnpackToDestMode", targets.runtime_enums.unpack_to_dest_mode, source, sink),
            _runtime_enum("MathFidelity", targets.runtime_enums.math_fidelity, source, sink),
        )

    def selected(self, selection: Selection, names: type[enum.StrEnum]) -> Selected:
        if selection.fixed is not None:
            return Selected(selection.attribute, names(selection.fixed))
        return Selected(selection.attribute, None, tuple((key, names(value)) for key, value in selection.values))

    def ops(self, ops: OpsModel) -> dict[str, OpSemantics]:
        return {
            op.name: OpSemantics(
                name=op.name,
                family=op.family,
                primitive=self.selected(op.primitive, self.primitive),
                operands=tuple(OperandSemantics(o.name, o.optional, o.initialized_by_op, o.by_producer) for o in op.operands),
                result_in_dst=op.result_in_dst,
                has_result=op.has_result,
                full_fp32=self.selected(op.full_fp32, self.full_fp32_kind) if op.full_fp32 is not None else None,
                strategies=tuple(
                    StrategySemantics(
                        self.strategy(s.name) if s.name is not None else None, s.legal_when, s.routes, s.accumulates
                    )
                    for s in op.strategies
                ),
                dst_slots_attribute=op.dst_slots_attribute,
                result_element_attribute=op.result_element_attribute,
            )
            for op in ops.ops
        }

    def match(self, when: Condition) -> Match:
        return Match(
            primitives=frozenset(self.primitive(p) for p in when.primitives),
            elements=frozenset(self.element_type(e) for e in when.elements),
            element_bits=frozenset(when.element_bits),
            element_float=when.element_float,
            routes=frozenset(Route(r) for r in when.routes),
        )

    def target(
        self, target: Target, apis: dict[str, RuntimeApi], generations: dict[str, Generation], dst: DstCapacity
    ) -> TargetTable:
        # A target that is not rejected has both relations, or the model reported it.
        assert target.dest_width is not None and target.dfb_unpack is not None
        dest_width, dfb_unpack = target.dest_width, target.dfb_unpack
        return TargetTable(
            name=target.name,
            summary=target.summary,
            architecture=self.architecture(target.architecture) if target.architecture != NO_ARCHITECTURE else None,
            default_for_architecture=target.default_for_architecture,
            runtime_api=apis[target.runtime_api] if target.runtime_api != NO_RUNTIME_API else None,
            dfb_capacity=target.dfb_capacity,
            dest_width=WidthTable(
                dest_width.origin,
                dest_width.review,
                tuple(
                    WidthRule(self.match(rule.when), frozenset(DestWidth(w) for w in rule.dest_widths))
                    for rule in dest_width.rules
                ),
            ),
            dfb_unpack=UnpackTable(
                dfb_unpack.origin,
                dfb_unpack.review,
                tuple(
                    UnpackRule(
                        self.match(rule.when),
                        frozenset(DestWidth(w) for w in rule.dest_widths),
                        frozenset(UnpackMode(m) for m in rule.unpack_modes),
                    )
                    for rule in dfb_unpack.rules
                ),
            ),
            unpack_effective_for=frozenset(self.element_type(e) for e in target.unpack_effective_for),
            unpack_other_entries_need_32bit_dest=target.unpack_other_entries == "require_32bit_dest",
            unpack_unbound_entries_rejected=target.unpack_unbound_entries == "reject",
            full_fp32=MappingProxyType(
                {self.full_fp32_kind(f.kind): FullFp32Support(f.supported, f.warning) for f in target.full_fp32}
            ),
            generation=generations[target.generation],
            dst_capacity=dst,
            dfb_capacity_description=target.dfb_capacity_description,
        )


def _first_target(targets: TargetsModel, architecture: str) -> Target:
    return next(t for t in targets.targets if t.architecture == architecture)


def build_tables(ops: OpsModel, targets: TargetsModel) -> ResolverTables:
    """The tables of a valid model; raises SpecErrors when a spec name cannot become a
    Python identifier."""
    sink = DiagnosticSink()
    b = _Builder(ops, targets, sink)
    sink.raise_if_any()
    vocab = ops.vocabulary
    apis = {
        api.name: RuntimeApi(
            api.name,
            Translation(api.translation),
            api.default_math_fidelity,
            tuple(RuntimeVersion(v.name, v.num_circular_buffers) for v in api.versions),
            api.pinned_version,
        )
        for api in targets.runtime_apis
    }
    no_target = targets.no_target
    generations = {
        g.name: Generation(g.name, g.summary, AutoSync(g.auto_sync), PolicyValues(g.policy_values)) for g in vocab.generations
    }
    assert vocab.dst is not None, "a valid model has a vocabulary"
    dst = DstCapacity(
        vocab.dst.physical_tiles,
        frozenset(SyncMode(s) for s in vocab.dst.halved_for_sync),
        frozenset(DestWidth(w) for w in vocab.dst.halved_for_width),
    )
    tables = Tables(
        elements=tuple(ElementInfo(b.element_type(e.name), e.bits, e.is_float) for e in vocab.element_types),
        primitives=tuple(b.primitive),
        strategies=tuple(StrategyInfo(b.strategy(s.name), s.gated_by_fpu_binary_policy) for s in vocab.strategies),
        full_fp32_kinds=tuple(
            FullFp32KindInfo(b.full_fp32_kind(k.name), Preference(k.preference)) for k in vocab.full_fp32_kinds
        ),
        architectures=tuple(ArchitectureInfo(b.architecture(arch), name) for arch, name in targets.architectures),
        ops=MappingProxyType(b.ops(ops)),
        runtime_apis=tuple(apis.values()),
        runtime_enums=b.runtime_enums,
        targets=tuple(b.target(t, apis, generations, dst) for t in targets.targets if t.rejected is None),
        rejected=tuple(
            RejectedTarget(
                t.name,
                b.architecture(t.architecture) if t.architecture != NO_ARCHITECTURE else None,
                t.default_for_architecture,
                t.rejected,
                t.dfb_capacity,
            )
            for t in targets.targets
            if t.rejected is not None
        ),
        no_target=no_target.name if no_target is not None and no_target.rejected is None else None,
        generations=tuple(generations.values()),
        dst_capacity=dst,
    )
    return ResolverTables(tables, b.element_type, b.primitive, b.strategy, b.full_fp32_kind, b.architecture)
