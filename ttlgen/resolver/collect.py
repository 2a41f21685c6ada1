"""Requirement collection: every op of a kernel, checked and turned into requirements.

The walk does not modify anything. An op with one legal option contributes its
requirements in walk order (``Collected.fixed``); an op with more becomes a
``SearchOp`` holding every legal option for the joint search. The options of an op
shape are built once per target and kept in ``TargetEnvironment.shapes``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .diagnostics import Diagnostic, Source
from .environment import TargetEnvironment
from .kernel import DfbOperand, KernelDescription, Operand, TileOp
from .policy import STRATEGY_ATTRIBUTE, KernelConfigPolicy
from .requirements import (
    WIDTH,
    Candidate,
    DfbModes,
    OpInfo,
    OpShape,
    OptionTemplate,
    Req,
    RequirementTemplate,
    SearchOp,
    Watch,
)
from .semantics import ALL_MODES, ALL_WIDTHS, Route


@dataclass
class Collected:
    """A kernel's requirements: fixed ones in walk order, the ops the search decides,
    and what the preferences and the plan need."""

    fixed: list[Req] = field(default_factory=list)
    search: list[SearchOp] = field(default_factory=list)
    chosen: dict[str, str] = field(default_factory=dict)  # ops with alternatives but one legal option
    listed: list[str] = field(default_factory=list)  # ops with alternatives, walk order
    fp32_ops: list[tuple[str, str]] = field(default_factory=list)  # (op id, full-fp32 kind)
    consumed: set[int] = field(default_factory=set)
    errors: list[Diagnostic] = field(default_factory=list)
    # The op holding the most DST slots at once and their number (None: every op holds one).
    residency: tuple[str, int] | None = None


def range_suffix(target: TargetEnvironment) -> str:
    """`` for <the capacity's description>`` when the target's generation names it."""
    description = target.table.dfb_capacity_description
    return f" for {description}" if description else ""


def _dst_slots(op: TileOp, attribute: str) -> int | Diagnostic:
    raw = op.attrs.get(attribute)
    text = str(raw).strip() if raw is not None else ""
    if not text.isdecimal() or not text.isascii():
        return Diagnostic(op.id, None, f"attribute {attribute!r} must be the number of DST slots the op holds at once, a non-negative integer; got {raw!r}")
    slots = int(text)
    if slots == 0:
        # TT-Lang's verifyTileExecutionInfo.
        return Diagnostic(op.id, None, "defines a zero-slot DST residency requirement")
    return slots


def _legal(candidate: Candidate, operands: Sequence[Operand], result: str | None, floats: frozenset[str]) -> bool:
    tile = None
    for (_, route), operand in zip(candidate.routes, operands, strict=False):
        if route is Route.DFB and not isinstance(operand, DfbOperand):
            return False
        if candidate.needs_same_tile:
            if not isinstance(operand, DfbOperand):
                return False
            if tile is None:
                tile = operand.coordinates
            elif operand.coordinates != tile:
                return False
    if candidate.needs_same_tile and not operands:
        return False
    return not candidate.needs_float or result in floats


def _option(
    op: TileOp, candidate: Candidate, info: OpInfo, primitive: str,
    elements: Sequence[str], result: str | None, target: TargetEnvironment,
) -> OptionTemplate:
    sem = info.sem
    reqs: list[RequirementTemplate] = []
    widths = ALL_WIDTHS
    modes: list[tuple[int, int]] = []
    name = op.op
    for k, ((number, route), operand, element) in enumerate(zip(candidate.routes, op.operands, elements, strict=False)):
        if route is not Route.NONE and type(operand) is DfbOperand:
            w, m = target.dfb_unpack_mask(primitive, element, route)
            reqs.append(RequirementTemplate(Source.OP, name, number, primitive, element, route, w, m, k))
            widths &= w
            if m != ALL_MODES:
                modes.append((k, m))
    if sem.result_in_dst:
        if result is not None:
            w = target.dest_width_mask(primitive, result)
            reqs.append(RequirementTemplate(Source.OP, name, None, primitive, result, None, w, ALL_MODES, None))
            widths &= w
    elif not sem.has_result:
        for (number, route), element in zip(candidate.routes, elements, strict=False):
            if route is Route.DST:
                w = target.dest_width_mask(primitive, element)
                reqs.append(RequirementTemplate(Source.OP, name, number, primitive, element, Route.DST, w, ALL_MODES, None))
                widths &= w
    return OptionTemplate(candidate.strategy, tuple(reqs), widths, tuple(modes))


def _buffer(operands: Sequence[Operand], position: int) -> int:
    operand = operands[position]
    assert isinstance(operand, DfbOperand), "a requirement with a position restricts a dataflow buffer"
    return operand.dfb


def _self_conflict(op_id: str, option: OptionTemplate, operands: Sequence[Operand]) -> Diagnostic | None:
    for t in option.requirements:
        if t.position is None and t.widths == 0:
            return Diagnostic(op_id, t.operand, f"has no target-supported destination element width for '{t.element}' elements")
        if t.position is not None and (t.widths == 0 or t.modes == 0):
            dfb = _buffer(operands, t.position)
            return Diagnostic(op_id, t.operand, f"has no target-supported configuration for dataflow buffer {dfb} with '{t.element}' elements")
    modes: dict[int, int] = {}
    for k, m in option.modes:
        dfb = _buffer(operands, k)
        modes[dfb] = modes.get(dfb, ALL_MODES) & m
        if not modes[dfb]:
            return Diagnostic(op_id, None, f"has no target-supported configuration for dataflow buffer {dfb}")
    if not option.widths:
        return Diagnostic(op_id, None, "has no destination element width compatible with all of its operands")
    return None


def _watches(options: Sequence[OptionTemplate]) -> tuple[Watch, ...]:
    """Every (position or WIDTH, value) whose narrowing to that single value rules out
    one of the options."""
    masks: dict[int, list[int]] = {}
    for option in options:
        if option.widths != ALL_WIDTHS:
            masks.setdefault(WIDTH, []).append(option.widths)
        for k, modes in option.modes:
            masks.setdefault(k, []).append(modes)
    out = []
    for k, var_masks in sorted(masks.items()):
        if len(var_masks) < len(options):
            var_masks.append(ALL_MODES)  # an option that leaves this variable free
        for value in (1, 2):
            if any(not mask & value for mask in var_masks):
                out.append(Watch(k, value))
    return tuple(out)


def _shape(
    op: TileOp, info: OpInfo, primitive: str, elements: Sequence[str],
    result: str | None, target: TargetEnvironment, fpu_enabled: bool,
) -> OpShape | Diagnostic:
    """The op's legal options, or the diagnostic that rejects the op."""
    sem = info.sem
    floats = target.prepared.float_elements
    operands = op.operands
    candidates: Sequence[Candidate] = info.candidates
    produced = candidates[0].by_producer if candidates else None
    if produced is not None and produced < len(operands):
        from_dfb = type(operands[produced]) is DfbOperand
        candidates = [c.produced(from_dfb) for c in candidates]
    if op.strategy is not None:
        if not sem.has_alternatives:
            return Diagnostic(op.id, None, f"{STRATEGY_ATTRIBUTE} is only valid on tile operations with execution-strategy alternatives")
        explicit = next((c for c in candidates if c.strategy is not None and c.strategy == op.strategy), None)
        if explicit is not None and explicit.gated and not fpu_enabled:
            return Diagnostic(op.id, None, f"explicit {op.strategy.upper()} strategy conflicts with disabled FPU binary policy")
        if explicit is None or not _legal(explicit, operands, result, floats):
            return Diagnostic(op.id, None, f"explicit {STRATEGY_ATTRIBUTE} is not legal for its operands")
        candidates = (explicit,)
    else:
        candidates = [c for c in candidates if (fpu_enabled or not c.gated) and _legal(c, operands, result, floats)]
    if not candidates:
        if sem.strategies[0].strategy is None:
            for (number, route), operand in zip(info.candidates[0].routes, operands, strict=False):
                if route is Route.DFB and type(operand) is not DfbOperand:
                    return Diagnostic(op.id, number, "requires a dataflow buffer, but has no finalized DFB index")
        return Diagnostic(op.id, None, "has no legal execution strategy for its operands")
    options = []
    problem: Diagnostic | None = None
    for candidate in candidates:
        option = _option(op, candidate, info, primitive, elements, result, target)
        problem = _self_conflict(op.id, option, operands)
        if problem is None:
            options.append(option)
    if not options:
        assert problem is not None
        return problem
    return OpShape(sem.has_alternatives, tuple(options), _watches(options))


def _dfb_modes(option: OptionTemplate, dfbs: tuple[int | None, ...]) -> DfbModes:
    """The option's unpack-mode restrictions on this op's buffers (one entry per buffer)."""
    positions = option.modes
    if not positions:
        return ()
    if len(positions) == 1:
        k, m = positions[0]
        only = dfbs[k]
        assert only is not None
        return ((only, m),)
    if len(positions) == 2:  # a binary op: the common case, kept cheap
        (k0, m0), (k1, m1) = positions
        d0, d1 = dfbs[k0], dfbs[k1]
        assert d0 is not None and d1 is not None
        return ((d0, m0 & m1),) if d0 == d1 else ((d0, m0), (d1, m1))
    merged: dict[int, int] = {}
    for k, m in positions:
        dfb = dfbs[k]
        assert dfb is not None
        merged[dfb] = merged.get(dfb, ALL_MODES) & m
    return tuple(merged.items())


def collect(kernel: KernelDescription, target: TargetEnvironment, policy: KernelConfigPolicy) -> Collected:
    """Every op's requirements, or the errors of the ops that have none (``errors``)."""
    out = Collected()
    errors = out.errors
    capacity = target.table.dfb_capacity
    suffix = range_suffix(target)
    known = target.prepared.elements
    infos = target.prepared.ops
    dfb_types = kernel.dfbs
    if not all(map(known.__contains__, dfb_types.values())):  # each reported by resolve()
        dfb_types = {d: e for d, e in dfb_types.items() if e in known}
    consumed = out.consumed
    fixed, search, chosen_by_legality, listed = out.fixed, out.search, out.chosen, out.listed
    fpu_enabled = policy.fpu_binary_ops
    cache = target.shapes
    results: dict[str, str | None] = {}  # typed ops -> result (None: no result)
    failed: set[str] = set()
    seen_fixed: set[tuple[int, int | None]] = set()
    for op in kernel.ops:
        op_id = op.id
        info = infos.get(op.op)
        if info is None:
            errors.append(Diagnostic(op_id, None, f"has no tile execution semantics: {op.op!r} is not a known tile operation"))
            failed.add(op_id)
            continue
        sem = info.sem
        data = info.data
        operands = op.operands
        if not info.min_operands <= len(operands) <= len(data):
            names = ", ".join(sem.operands[i].name for i in data) or "none"
            errors.append(Diagnostic(op_id, None, f"{op.op} takes {len(data)} tile-data operand(s) ({names}), got {len(operands)}"))
            failed.add(op_id)
            continue
        elements: list[str] = []
        op_dfbs: list[int | None] = []
        # Element types of the operands, a DST value's in a 1-tuple: the shape key.
        signature: list[object] = []
        tile = None
        same_tile = True
        ok = True
        for k, operand in enumerate(operands):
            if type(operand) is DfbOperand:
                dfb = operand.dfb
                if not 0 <= dfb < capacity:
                    errors.append(Diagnostic(op_id, data[k], f"uses dataflow buffer index {dfb} outside the supported range [0, {capacity - 1}]{suffix}"))
                    ok = False
                    continue
                element = dfb_types.get(dfb)
                if element is None:
                    if dfb not in kernel.dfbs:  # else its unknown element type is reported
                        errors.append(Diagnostic(op_id, data[k], f"reads dataflow buffer {dfb}, which has no finalized element type in this kernel"))
                    ok = False
                    continue
                consumed.add(dfb)
                elements.append(element)
                op_dfbs.append(dfb)
                signature.append(element)
                if tile is None:
                    tile = operand.coordinates
                elif operand.coordinates != tile:
                    same_tile = False
            else:
                value = operand.value  # type: ignore[union-attr]
                same_tile = False
                if value in failed:
                    ok = False  # reported at that op
                elif value not in results:
                    errors.append(Diagnostic(op_id, data[k], f"refers to {value!r}, which is not an earlier op"))
                    ok = False
                else:
                    value_element = results[value]
                    if value_element is None:
                        errors.append(Diagnostic(op_id, data[k], f"refers to {value!r}, which has no result"))
                        ok = False
                    else:
                        elements.append(value_element)
                        op_dfbs.append(None)
                        signature.append((value_element,))
        if op.result is not None and op.result not in known:
            errors.append(Diagnostic(op_id, None, f"has an unknown result element type {str(op.result)!r}; known: {', '.join(known)}"))
            ok = False
        typed = op.attrs.get(sem.result_element_attribute) if sem.result_element_attribute is not None else None
        if op.result is None and typed is not None and typed not in known:
            errors.append(Diagnostic(op_id, None, f"attribute {sem.result_element_attribute!r} names an unknown element type {str(typed)!r}; known: {', '.join(known)}"))
            ok = False
        result = op.result or typed or (elements[0] if elements else None)
        if not ok:
            failed.add(op_id)
            continue
        if sem.has_result:
            if result is None:
                errors.append(Diagnostic(op_id, None, "has no result element type: give 'result' for an op without operands"))
                failed.add(op_id)
                continue
            results[op_id] = result
        else:
            results[op_id] = None
        primitive = info.fixed_primitive
        if primitive is None:
            primitive = sem.primitive.select(op.attrs)
            if primitive is None:
                errors.append(Diagnostic(op_id, None, f"attribute {sem.primitive.attribute!r} must be one of {', '.join(sem.primitive.choices)}"))
                continue
        if sem.dst_slots_attribute is not None:
            slots = _dst_slots(op, sem.dst_slots_attribute)
            if isinstance(slots, Diagnostic):
                errors.append(slots)
                continue
            if out.residency is None or slots > out.residency[1]:
                out.residency = (op_id, slots)
        if sem.full_fp32 is not None:
            kind = sem.full_fp32.select(op.attrs)
            if kind is None:
                errors.append(Diagnostic(op_id, None, f"attribute {sem.full_fp32.attribute!r} must be one of {', '.join(sem.full_fp32.choices)}"))
                continue
            out.fp32_ops.append((op_id, kind))
        key = (op.op, primitive, tuple(signature), result, same_tile, fpu_enabled, op.strategy)
        shape = cache.get(key)
        if shape is None:
            built = _shape(op, info, primitive, elements, result, target, fpu_enabled)
            if isinstance(built, Diagnostic):
                errors.append(built)
                continue
            shape = cache[key] = built
        if shape.alternatives:
            listed.append(op_id)
        options = shape.options
        if len(options) == 1:
            option = options[0]
            for t in option.requirements:
                position = t.position
                req_dfb = operands[position].dfb if position is not None else None  # type: ignore[union-attr]
                if t.widths == ALL_WIDTHS and (req_dfb is None or t.modes == ALL_MODES):
                    continue  # restricts nothing
                # A requirement equal to an earlier one can neither narrow a domain nor
                # conflict (the earlier one would have), and the evidence of a conflict
                # is the first requirement that narrowed: keeping only the first of each
                # leaves the answer and every diagnostic unchanged, and keeps large
                # kernels' working set small.
                seen = (id(t), req_dfb)
                if seen in seen_fixed:
                    continue
                seen_fixed.add(seen)
                fixed.append(Req(t, op_id, req_dfb))
            if shape.alternatives and option.strategy is not None:
                chosen_by_legality[op_id] = option.strategy
        else:
            dfbs = tuple(op_dfbs)
            search.append(SearchOp(op_id, dfbs, options, tuple([_dfb_modes(o, dfbs) for o in options]), shape.watches))
    return out
