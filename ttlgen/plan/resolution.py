"""Kernel-configuration resolution of the kernels of the model.

A kernel body becomes the resolver's kernel description (its tile ops, their operands and
element types), the resolver library decides the plan from the tables built from the
model (:mod:`ttlgen.plan.tables`), and a rejection becomes a located error at the kernel
spec showing the resolver's diagnostic. Nothing is rendered or imported from templates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ttlgen.errors import Diagnostic, DiagnosticSink, Mark
from ttlgen.model.kernels import DfbRef, Kernel, OpExpr, Store, Value, walk_statements, walk_values
from ttlgen.model.ops import BlockShape, OpSemantics, OpsModel
from ttlgen.model.targets import Rule, Target, TargetsModel
from ttlgen.plan import element_types
from ttlgen.plan.tables import resolver_tables
from ttlgen.resolver import (
    Catalog,
    DfbOperand,
    KernelDescription,
    Operand,
    Plan,
    ResolveFailure,
    TileOp,
    UnpackRule,
    ValueOperand,
    WidthRule,
    normalize_policy,
    to_compute_config_descriptor,
)
from ttlgen.resolver.collect import collect

# The indexing maps a block-style kernel implies, as TT-Lang's ttl.compute states them: an
# operand whose block is the op's block is read at the op's tile coordinates; a one-tile
# block broadcast over a larger one always at its tile (0, 0).
_IDENTITY = "(d0, d1) -> (d0, d1)"
_BROADCAST = "(d0, d1) -> (0, 0)"


def _block(value: Value, kernel: Kernel, semantics: dict[str, OpSemantics]) -> tuple[int, int]:
    """The block of tiles ``value`` computes (the lowering reports shapes that disagree)."""
    if isinstance(value, DfbRef):
        return kernel.dfb(value.dfb).block
    op = semantics.get(value.op)
    shapes = [_block(a, kernel, semantics) for a in value.args]
    if op is not None and op.block_shape is BlockShape.CONTRACTION and len(shapes) >= 2:
        return (shapes[0][0], shapes[1][1])
    return next((s for s in shapes if s != (1, 1)), (1, 1))


def _operand_map(arg: DfbRef, expr: OpExpr, kernel: Kernel, semantics: dict[str, OpSemantics]) -> str:
    if kernel.dfb(arg.dfb).block == (1, 1) and _block(expr, kernel, semantics) != (1, 1):
        return _BROADCAST
    return _IDENTITY


def _describe(kernel: Kernel, ops: OpsModel, catalog: Catalog, value_types: element_types.ValueTypes) -> KernelDescription:
    """The resolver's description of ``kernel``: each op is described with the element type
    it computes (``value_types``, plan/element_types.py), not the type of the buffer its
    value is stored to."""
    elements = {e.name: e.name for e in catalog.tables.elements}
    dfbs = {d.index: elements[d.dtype] for d in kernel.dfbs if d.dtype in elements}
    tile_ops = []
    semantics = {op.name: op for op in ops.ops}
    copy = element_types.copy_op(ops)
    for stmt in walk_statements(kernel.body):
        if not isinstance(stmt, Store):
            continue
        if isinstance(stmt.value, DfbRef):
            src = kernel.dfb(stmt.value.dfb)
            if copy is not None:
                tile_ops.append(
                    TileOp(
                        id=f"copy_{stmt.mark.line}_{stmt.mark.column}",
                        op=copy.name,
                        operands=(DfbOperand(src.index),),
                        result=elements.get(src.dtype),
                    )
                )
            continue
        for expr in walk_values(stmt.value):
            if expr.op not in semantics:
                continue
            operands: list[Operand] = []
            for arg in expr.args:
                if isinstance(arg, DfbRef):
                    operands.append(DfbOperand(kernel.dfb(arg.dfb).index, map=_operand_map(arg, expr, kernel, semantics)))
                else:
                    operands.append(ValueOperand(arg.id))
            result = value_types.of(expr)
            tile_ops.append(
                TileOp(
                    id=expr.id,
                    op=expr.op,
                    operands=tuple(operands),
                    result=elements.get(result) if result is not None else None,
                    attrs=dict(expr.attrs),
                    strategy=expr.strategy,
                )
            )
    return KernelDescription(dfbs=dfbs, ops=tuple(tile_ops), name=kernel.name)


def _op_marks(kernel: Kernel) -> dict[str, Mark]:
    marks: dict[str, Mark] = {}
    for stmt in walk_statements(kernel.body):
        if isinstance(stmt, Store):
            marks[f"copy_{stmt.mark.line}_{stmt.mark.column}"] = stmt.mark
            for expr in walk_values(stmt.value):
                marks[expr.id] = expr.mark
    return marks


def resolve_plan(kernel: Kernel, description: KernelDescription, catalog: Catalog, sink: DiagnosticSink) -> Plan | None:
    result = catalog.resolve_kernel(
        description, target=kernel.target, options=dict(kernel.options), attributes=dict(kernel.attributes)
    )
    if isinstance(result, ResolveFailure):
        marks = _op_marks(kernel)
        # An error of no op is kernel-wide (a policy the ops' needs contradict), so it is
        # reported at the kernel. A policy entry the resolver cannot read never gets here:
        # the model reports it at the entry (model/kernels.py, _check_policy).
        for err in result.errors:
            where = marks.get(err.op or "", kernel.mark)
            notes = [Diagnostic(marks.get(n.op or "", kernel.mark), n.message) for n in err.notes]
            operand = f" operand {err.operand}:" if err.operand is not None else ""
            sink.error(where, f"the configuration resolver rejects kernel {kernel.name!r}:{operand} {err.message}", notes)
        return None
    return result


def relation_rules(kernel: Kernel, resolved: Resolved, target: Target) -> tuple[Rule, ...]:
    """The rules of the target's relation tables that the kernel's uses matched under its
    plan (each use takes the first rule that matches it), in table order: what allowed the
    plan's DST width and unpack set, for provenance. The uses are the resolver's own
    requirements of the strategies the plan chose."""
    plan = resolved.plan
    environment = plan.environment
    policy = normalize_policy(dict(kernel.options), dict(kernel.attributes), environment.table.generation)
    if isinstance(policy, ResolveFailure) or target.dest_width is None or target.dfb_unpack is None:
        return ()
    collected = collect(resolved.description, environment, policy)
    uses = [req.template for req in collected.fixed]
    strategies = dict(plan.strategies)
    for op in collected.search:
        chosen = strategies.get(op.op)
        uses += [t for option in op.options if option.strategy == chosen for t in option.requirements]
    asked: tuple[Sequence[WidthRule | UnpackRule], ...] = (environment.table.dest_width.rules, environment.table.dfb_unpack.rules)
    stated = (target.dest_width.rules, target.dfb_unpack.rules)
    matched: dict[tuple[int, int], Rule] = {}  # (table, rule index) -> the model's rule
    for use in uses:
        if use.primitive is None or use.element is None:
            continue
        element = environment.prepared.elements[use.element]
        # A use of a dataflow buffer (``position``) is answered by the dfb_unpack table, a
        # value in DST by the dest_width table, as the resolver asks them.
        table = 0 if use.position is None else 1
        route = None if use.position is None else use.route
        index = next((i for i, rule in enumerate(asked[table]) if rule.when.matches(use.primitive, element, route)), None)
        if index is not None:
            matched.setdefault((table, index), stated[table][index])
    return tuple(matched[key] for key in sorted(matched))


@dataclass(frozen=True)
class Resolved:
    """A kernel's plan, with what the resolver was asked: the kernel's description, from
    the element type each op computes."""

    plan: Plan
    description: KernelDescription
    types: element_types.ValueTypes


class Resolver:
    """Resolves kernels against the op and target models."""

    def __init__(self, ops: OpsModel, targets: TargetsModel) -> None:
        self.ops = ops
        self.catalog = Catalog(resolver_tables(ops, targets).tables)

    def resolved(self, kernel: Kernel, sink: DiagnosticSink) -> Resolved | None:
        """The kernel's plan and description, or None after reporting the resolver's
        diagnostics (and ops computing on element types their family does not take) to ``sink``."""
        errors = sink.count
        types = element_types.infer(kernel, self.ops)
        element_types.check_elements(kernel, self.ops, types, sink)
        if sink.count != errors:
            return None
        description = _describe(kernel, self.ops, self.catalog, types)
        plan = resolve_plan(kernel, description, self.catalog, sink)
        return Resolved(plan, description, types) if plan is not None else None

    def resolve(self, kernel: Kernel, sink: DiagnosticSink) -> Plan | None:
        """The kernel's plan, or None after reporting its problems to ``sink`` (:meth:`resolved`)."""
        found = self.resolved(kernel, sink)
        return found.plan if found is not None else None

    def compute_config(self, plan: Plan, math_fidelity: str | None) -> dict[str, Any]:
        """The runtime's compute-config descriptor fields for a plan, as program.json holds them."""
        return to_compute_config_descriptor(plan, math_fidelity).to_json()
