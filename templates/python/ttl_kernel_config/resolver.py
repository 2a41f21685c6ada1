"""Policy normalization, requirement collection, the joint search, and the plan.

The search is the one the design specifies: hard policy constraints first, then every
fixed op's requirements, then ops with strategy alternatives, each step taking the
unresolved op with the fewest compatible options (ties: earliest in walk order) and
trying its options in strategy order on a copy of the domains, backtracking on
failure. Preferences come after and never empty a domain.

It is implemented with propagation instead of recounting every op at every step, and
returns the same answer:

- An op with one compatible option would be picked next anyway, and applying forced
  options commutes, so forced ops are applied as soon as they have one option; an op
  with none is the conflict the plain search would hit. The next decision is then the
  earliest unresolved op, exactly as the fewest-first rule picks it.
- Every domain has two values (16/32 bits; default/unpack-to-DST), every relation is a
  product of allowed widths and modes, and every op has at most two options (the op
  vocabulary allows at most two strategies), so the problem is 2-SAT. When an option's
  propagation ends without conflict, the rest is satisfiable exactly when it was before
  the decision; the plain search would therefore never come back to take the other
  option with success. A decision whose first option conflicts takes the second; if
  that conflicts too, no plan exists.
- An op is rechecked only when a variable it depends on narrows to a value that rules
  out one of its options, so each op is looked at a constant number of times.

Requirements are built from per-op-shape templates cached per target, so a kernel op
only pairs a shared template with its id and buffers.
"""
from __future__ import annotations

import gc
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .diagnostics import (
    Conflict,
    ConflictKind,
    Diagnostic,
    Note,
    Requirement,
    ResolveFailure,
    ResolveWarning,
    Source,
    TargetError,
)
from .environment import TargetEnvironment
from .kernel import DfbOperand, KernelDescription, TileOp, ValueOperand
from .lookup import select_target
from .ops_table import FULL_FP32_PREFERENCE, OPS
from .semantics import (
    ALL_MODES,
    ALL_WIDTHS,
    MODE_BIT,
    WIDTH_BIT,
    DestWidth,
    LegalityCondition,
    OpSemantics,
    Preference,
    Route,
    Selection,
    StrategySemantics,
    SyncMode,
    UnpackMode,
)
from .vocabulary import FPU_POLICY_GATED, ElementType, FullFp32Kind, Primitive, Strategy

W16 = WIDTH_BIT[DestWidth.BITS16]
W32 = WIDTH_BIT[DestWidth.BITS32]
M_DEFAULT = MODE_BIT[UnpackMode.DEFAULT]
M_UNPACK = MODE_BIT[UnpackMode.UNPACK_TO_DEST]

OPTION_NAMES = (
    "fp32-dest-acc-en",
    "dst-full-sync-en",
    "reduce-full-fp32",
    "matmul-full-fp32",
    "enable-fpu-binary-ops",
)
ATTRIBUTE_NAMES = (
    "fp32_dest_acc_en",
    "dst_full_sync_en",
    "ttl.enable_fpu_binary_ops",
    "ttl.unpack_to_dest_fp32",
)
STRATEGY_ATTRIBUTE = "ttl.tile_execution_strategy"

_TRI_STATE = {
    "auto": Selection.AUTO,
    "enabled": Selection.ENABLED,
    "disabled": Selection.DISABLED,
    "true": Selection.ENABLED,
    "1": Selection.ENABLED,
    "false": Selection.DISABLED,
    "0": Selection.DISABLED,
}
_BOOLS = {"true": True, "1": True, "false": False, "0": False}


# --------------------------------------------------------------------------- policy


@dataclass(frozen=True)
class KernelConfigPolicy:
    """Normalized pass options and function attributes. Attributes are hard constraints."""

    fp32_dest_acc: Selection = Selection.AUTO
    dst_full_sync: Selection = Selection.AUTO
    preferences: frozenset[Preference] = frozenset(Preference)
    fpu_binary_ops: bool = True
    unpack_to_dest_fp32: tuple[int, ...] | None = None  # sorted, de-duplicated


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _tri_state(name: str, value: object, errors: list[Diagnostic]) -> Selection:
    found = _TRI_STATE.get(_text(value).lower()) if isinstance(value, str | bool | int) else None
    if found is None:
        errors.append(Diagnostic(None, None, f"invalid {name} value '{_text(value)}'; expected auto, enabled, or disabled"))
        return Selection.AUTO
    return found


def _bool(name: str, value: object, errors: list[Diagnostic], what: str = "value") -> bool:
    found = _BOOLS.get(_text(value).lower()) if isinstance(value, str | bool | int) else None
    if found is None:
        errors.append(Diagnostic(None, None, f"invalid {name} {what} '{_text(value)}'; expected true or false"))
        return False
    return found


def normalize_policy(
    options: Mapping[str, object] | None = None, attributes: Mapping[str, object] | None = None
) -> KernelConfigPolicy | ResolveFailure:
    """Pass options (``fp32-dest-acc-en: auto``...) and function attributes -> policy."""
    options = options or {}
    attributes = attributes or {}
    errors: list[Diagnostic] = []
    for key in options:
        if key not in OPTION_NAMES:
            errors.append(Diagnostic(None, None, f"unknown pass option {key!r}; known: {', '.join(OPTION_NAMES)}"))
    for key in attributes:
        if key not in ATTRIBUTE_NAMES:
            errors.append(Diagnostic(None, None, f"unknown function attribute {key!r}; known: {', '.join(ATTRIBUTE_NAMES)}"))
    fp32 = _tri_state("fp32-dest-acc-en", options.get("fp32-dest-acc-en", "auto"), errors)
    sync = _tri_state("dst-full-sync-en", options.get("dst-full-sync-en", "auto"), errors)
    preferences = {
        pref for pref in Preference if _bool(pref.value, options.get(pref.value, True), errors)
    }
    fpu = _bool("enable-fpu-binary-ops", options.get("enable-fpu-binary-ops", True), errors)
    if "fp32_dest_acc_en" in attributes:
        fp32 = Selection.ENABLED if _bool("fp32_dest_acc_en", attributes["fp32_dest_acc_en"], errors, "attribute value") else Selection.DISABLED
    if "dst_full_sync_en" in attributes:
        sync = Selection.ENABLED if _bool("dst_full_sync_en", attributes["dst_full_sync_en"], errors, "attribute value") else Selection.DISABLED
    if "ttl.enable_fpu_binary_ops" in attributes:
        fpu = _bool("ttl.enable_fpu_binary_ops", attributes["ttl.enable_fpu_binary_ops"], errors, "attribute value")
    unpack: tuple[int, ...] | None = None
    if "ttl.unpack_to_dest_fp32" in attributes:
        raw = attributes["ttl.unpack_to_dest_fp32"]
        entries: list[int] = []
        if not isinstance(raw, list | tuple):
            errors.append(Diagnostic(None, None, f"invalid ttl.unpack_to_dest_fp32 value '{_text(raw)}'; expected a list of dataflow buffer indices"))
        else:
            for entry in raw:
                if isinstance(entry, bool) or not isinstance(entry, int):
                    errors.append(Diagnostic(None, None, f"invalid ttl.unpack_to_dest_fp32 entry '{_text(entry)}'; expected a dataflow buffer index"))
                else:
                    entries.append(entry)
        unpack = tuple(sorted(set(entries)))
    if errors:
        return ResolveFailure(tuple(errors))
    return KernelConfigPolicy(fp32, sync, frozenset(preferences), fpu, unpack)


# ----------------------------------------------------------------------------- plan

_PLAN_TOKEN = object()


@dataclass(frozen=True)
class Plan:
    """A resolved kernel configuration. Only the resolver constructs one."""

    target: str
    strategies: tuple[tuple[str, Strategy], ...]  # op id -> strategy, walk order
    dest_width: DestWidth
    sync: SyncMode
    unpack_to_dest_fp32: tuple[int, ...]  # sorted DFB indices
    warnings: tuple[ResolveWarning, ...] = ()
    dfb_elements: tuple[tuple[int, ElementType], ...] = ()  # the kernel's bound DFBs
    consumed_dfbs: tuple[int, ...] = ()  # DFBs some op reads
    _token: object = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self._token is not _PLAN_TOKEN:
            raise TypeError("a Plan is constructed only by the resolver")

    @property
    def fp32_dest_acc_en(self) -> bool:
        return self.dest_width is DestWidth.BITS32

    @property
    def dst_full_sync_en(self) -> bool:
        return self.sync is SyncMode.FULL

    def strategy_of(self, op_id: str) -> Strategy | None:
        return next((s for i, s in self.strategies if i == op_id), None)

    def op_attributes(self) -> dict[str, dict[str, str]]:
        """What application writes on each op with strategy alternatives."""
        return {op_id: {STRATEGY_ATTRIBUTE: s.value} for op_id, s in self.strategies}

    def function_attributes(self, existing: Mapping[str, object] | None = None) -> dict[str, object]:
        """The function's attributes after application: the configuration is written
        and the input-only ttl.enable_fpu_binary_ops is removed. Nothing else changes."""
        out = {k: v for k, v in (existing or {}).items() if k != "ttl.enable_fpu_binary_ops"}
        out["fp32_dest_acc_en"] = self.fp32_dest_acc_en
        out["dst_full_sync_en"] = self.dst_full_sync_en
        out["ttl.unpack_to_dest_fp32"] = list(self.unpack_to_dest_fp32)
        return out

    def to_json(self) -> dict[str, object]:
        return {
            "strategies": {op_id: s.value for op_id, s in self.strategies},
            "fp32_dest_acc_en": self.fp32_dest_acc_en,
            "dst_full_sync_en": self.dst_full_sync_en,
            "unpack_to_dest_fp32": list(self.unpack_to_dest_fp32),
        }


# ---------------------------------------------------------------------- requirements


# Internally a requirement is ``(template, op id, dfb)``: the template holds everything
# that is the same for every op with the same name, operand types and shape, so a kernel
# op only pairs a shared template with its id and buffer. Template fields:
_T_SOURCE, _T_NAME, _T_OPERAND, _T_PRIMITIVE, _T_ELEMENT, _T_ROUTE, _T_WIDTHS, _T_MODES, _T_K = range(9)
_Req = tuple[tuple[Any, ...], str | None, int | None]
# An option of one op: (strategy, requirement templates, combined width mask,
# ((dfb, combined mode mask), ...), op id, the DFB of each kernel operand or None).
# Requirements are paired with the op only when the option is applied.
_Opt = tuple[
    Strategy | None, tuple[tuple[Any, ...], ...], int, tuple[tuple[int, int], ...], str,
    tuple[int | None, ...],
]
# A cached option template: (strategy, requirement templates, width mask, ((k, mode mask), ...)).
_OptTemplate = tuple[Strategy | None, tuple[tuple[Any, ...], ...], int, tuple[tuple[int, int], ...]]


class _StrategyInfo:
    __slots__ = ("gated", "needs_float", "needs_same_tile", "routes", "strategy")

    def __init__(self, sem: StrategySemantics, data: tuple[int, ...]) -> None:
        self.strategy = sem.strategy
        self.gated = sem.strategy in FPU_POLICY_GATED
        self.needs_same_tile = LegalityCondition.OPERANDS_FROM_DFB_SAME_TILE in sem.legal_when
        self.needs_float = LegalityCondition.FLOAT_RESULT in sem.legal_when
        # (operand number, route) per kernel operand position.
        self.routes = tuple((number, sem.routes[number]) for number in data)


class _OpInfo:
    """What the collection needs from an op's semantics, computed once per op name."""

    __slots__ = ("data", "fixed_primitive", "max_operands", "min_operands", "sem", "strategies")

    def __init__(self, sem: OpSemantics) -> None:
        self.sem = sem
        self.data = sem.data_operands
        self.max_operands = len(self.data)
        self.min_operands = sum(1 for i in self.data if not sem.operands[i].optional)
        self.fixed_primitive = sem.primitive.fixed if sem.primitive.attribute is None else None
        self.strategies = tuple(_StrategyInfo(s, self.data) for s in sem.strategies)


_INFO: dict[str, _OpInfo] = {name: _OpInfo(sem) for name, sem in OPS.items()}
_FLOAT = frozenset(e for e in ElementType if e.is_float)
_TEMPLATES: dict[str, dict[tuple[Any, ...], tuple[bool, tuple[_OptTemplate, ...], tuple[tuple[int, int], ...]]]] = {}


@dataclass
class _Collected:
    fixed: list[_Req] = field(default_factory=list)
    search: list[tuple[str, list[_Opt], list[int]]] = field(default_factory=list)
    chosen: dict[str, Strategy] = field(default_factory=dict)
    listed: list[str] = field(default_factory=list)  # ops with alternatives, walk order
    fp32_ops: list[tuple[str, FullFp32Kind]] = field(default_factory=list)
    consumed: set[int] = field(default_factory=set)
    errors: list[Diagnostic] = field(default_factory=list)


def _legal(info: _StrategyInfo, operands: Sequence[DfbOperand | ValueOperand], result: ElementType | None) -> bool:
    tile = None
    for (_, route), operand in zip(info.routes, operands, strict=False):
        is_dfb = type(operand) is DfbOperand
        if route is Route.DFB and not is_dfb:
            return False
        if info.needs_same_tile:
            if not is_dfb:
                return False
            if tile is None:
                tile = operand.tile  # type: ignore[union-attr]
            elif operand.tile != tile:  # type: ignore[union-attr]
                return False
    if info.needs_same_tile and not operands:
        return False
    return not info.needs_float or result in _FLOAT


def _option_template(
    op: TileOp, info: _StrategyInfo, sem: OpSemantics, primitive: Primitive,
    elements: Sequence[ElementType], result: ElementType | None, target: TargetEnvironment,
) -> _OptTemplate:
    reqs: list[tuple[Any, ...]] = []
    widths = ALL_WIDTHS
    modes: list[tuple[int, int]] = []
    name = op.op
    for k, ((number, route), operand, element) in enumerate(zip(info.routes, op.operands, elements, strict=False)):
        if route is not Route.NONE and type(operand) is DfbOperand:
            w, m = target.dfb_unpack_mask(primitive, element, route)
            reqs.append((Source.OP, name, number, primitive, element, route, w, m, k))
            widths &= w
            if m != ALL_MODES:
                modes.append((k, m))
    if sem.result_in_dst:
        if result is not None:
            w = target.dest_width_mask(primitive, result)
            reqs.append((Source.OP, name, None, primitive, result, None, w, ALL_MODES, -1))
            widths &= w
    elif not sem.has_result:
        for (number, route), element in zip(info.routes, elements, strict=False):
            if route is Route.DST:
                w = target.dest_width_mask(primitive, element)
                reqs.append((Source.OP, name, number, primitive, element, Route.DST, w, ALL_MODES, -1))
                widths &= w
    return (info.strategy, tuple(reqs), widths, tuple(modes))


def _instantiate(template: _OptTemplate, op_id: str, dfbs: tuple[int | None, ...]) -> _Opt:
    strategy, treqs, widths, tmodes = template
    if not tmodes:
        return (strategy, treqs, widths, (), op_id, dfbs)
    if len(tmodes) == 1:
        k, m = tmodes[0]
        only = dfbs[k]
        assert only is not None
        return (strategy, treqs, widths, ((only, m),), op_id, dfbs)
    merged: dict[int, int] = {}
    for k, m in tmodes:
        dfb = dfbs[k]
        assert dfb is not None
        merged[dfb] = merged.get(dfb, ALL_MODES) & m
    return (strategy, treqs, widths, tuple(merged.items()), op_id, dfbs)


def _requirements(option: _Opt) -> list[_Req]:
    _, treqs, _, _, op_id, dfbs = option
    return [(t, op_id, dfbs[t[_T_K]] if t[_T_K] >= 0 else None) for t in treqs]


def _self_conflict(op_id: str, template: _OptTemplate, operands: Sequence[DfbOperand | ValueOperand]) -> Diagnostic | None:
    for t in template[1]:
        element = t[_T_ELEMENT].value
        if t[_T_K] < 0 and t[_T_WIDTHS] == 0:
            return Diagnostic(op_id, t[_T_OPERAND], f"has no target-supported destination element width for '{element}' elements")
        if t[_T_K] >= 0 and (t[_T_WIDTHS] == 0 or t[_T_MODES] == 0):
            dfb = operands[t[_T_K]].dfb  # type: ignore[union-attr]
            return Diagnostic(op_id, t[_T_OPERAND], f"has no target-supported configuration for dataflow buffer {dfb} with '{element}' elements")
    modes: dict[int, int] = {}
    for k, m in template[3]:
        dfb = operands[k].dfb  # type: ignore[union-attr]
        modes[dfb] = modes.get(dfb, ALL_MODES) & m
        if not modes[dfb]:
            return Diagnostic(op_id, None, f"has no target-supported configuration for dataflow buffer {dfb}")
    if not template[2]:
        return Diagnostic(op_id, None, "has no destination element width compatible with all of its operands")
    return None


def _sensitivity(templates: Sequence[_OptTemplate]) -> tuple[tuple[int, int], ...]:
    """(kernel operand k, or -1 for the width; value) pairs: narrowing that variable to
    that single value rules out one of the options, so the op must be rechecked."""
    masks: dict[int, list[int]] = {}
    for template in templates:
        if template[2] != ALL_WIDTHS:
            masks.setdefault(-1, []).append(template[2])
        for k, modes in template[3]:
            masks.setdefault(k, []).append(modes)
    out = []
    for k, var_masks in sorted(masks.items()):
        if len(var_masks) < len(templates):
            var_masks.append(ALL_MODES)
        for value in (1, 2):
            if any(not mask & value for mask in var_masks):
                out.append((k, value))
    return tuple(out)


def _templates(
    op: TileOp, info: _OpInfo, primitive: Primitive, elements: Sequence[ElementType],
    result: ElementType | None, target: TargetEnvironment, fpu_enabled: bool,
) -> tuple[bool, tuple[_OptTemplate, ...], tuple[tuple[int, int], ...]] | Diagnostic:
    """The op's legal options as templates, or the diagnostic that rejects the op."""
    sem = info.sem
    candidates: Sequence[_StrategyInfo] = info.strategies
    operands = op.operands
    if op.strategy is not None:
        if not sem.has_alternatives:
            return Diagnostic(op.id, None, f"{STRATEGY_ATTRIBUTE} is only valid on tile operations with execution-strategy alternatives")
        explicit = next((s for s in candidates if s.strategy is not None and s.strategy.value == op.strategy), None)
        if explicit is not None and explicit.gated and not fpu_enabled:
            return Diagnostic(op.id, None, f"explicit {op.strategy.upper()} strategy conflicts with disabled FPU binary policy")
        if explicit is None or not _legal(explicit, operands, result):
            return Diagnostic(op.id, None, f"explicit {STRATEGY_ATTRIBUTE} is not legal for its operands")
        candidates = (explicit,)
    else:
        candidates = [s for s in candidates if (fpu_enabled or not s.gated) and _legal(s, operands, result)]
    if not candidates:
        if sem.strategies[0].strategy is None:
            for (number, route), operand in zip(info.strategies[0].routes, operands, strict=False):
                if route is Route.DFB and type(operand) is not DfbOperand:
                    return Diagnostic(op.id, number, "requires a dataflow buffer, but has no finalized DFB index")
        return Diagnostic(op.id, None, "has no legal execution strategy for its operands")
    options = []
    problem: Diagnostic | None = None
    for strategy in candidates:
        template = _option_template(op, strategy, sem, primitive, elements, result, target)
        problem = _self_conflict(op.id, template, operands)
        if problem is None:
            options.append(template)
    if not options:
        assert problem is not None
        return problem
    return sem.has_alternatives, tuple(options), _sensitivity(options)


def _collect(kernel: KernelDescription, target: TargetEnvironment, policy: KernelConfigPolicy) -> _Collected:
    out = _Collected()
    errors = out.errors
    capacity = target.DFB_CAPACITY
    dfb_types = kernel.dfbs
    consumed = out.consumed
    fixed, search, chosen_by_legality, listed = out.fixed, out.search, out.chosen, out.listed
    fpu_enabled = policy.fpu_binary_ops
    cache = _TEMPLATES.setdefault(target.NAME, {})
    results: dict[str, ElementType | None] = {}  # typed ops -> result (None: no result)
    failed: set[str] = set()
    seen_fixed: set[tuple[int, int | None]] = set()
    for op in kernel.ops:
        op_id = op.id
        info = _INFO.get(op.op)
        if info is None:
            errors.append(Diagnostic(op_id, None, f"has no tile execution semantics: {op.op!r} is not a known tile operation"))
            failed.add(op_id)
            continue
        sem = info.sem
        operands = op.operands
        if not info.min_operands <= len(operands) <= info.max_operands:
            names = ", ".join(sem.operands[i].name for i in info.data) or "none"
            errors.append(Diagnostic(op_id, None, f"{op.op} takes {info.max_operands} tile-data operand(s) ({names}), got {len(operands)}"))
            failed.add(op_id)
            continue
        elements: list[ElementType] = []
        op_dfbs: list[int | None] = []
        signature: list[Any] = []
        tile = None
        same_tile = True
        ok = True
        for k, operand in enumerate(operands):
            if type(operand) is DfbOperand:
                dfb = operand.dfb
                if not 0 <= dfb < capacity:
                    errors.append(Diagnostic(op_id, info.data[k], f"uses dataflow buffer index {dfb} outside the supported range [0, {capacity - 1}]"))
                    ok = False
                    continue
                element = dfb_types.get(dfb)
                if element is None:
                    errors.append(Diagnostic(op_id, info.data[k], f"reads dataflow buffer {dfb}, which has no finalized element type in this kernel"))
                    ok = False
                    continue
                consumed.add(dfb)
                elements.append(element)
                op_dfbs.append(dfb)
                signature.append(element._value_)
                if tile is None:
                    tile = operand.tile
                elif operand.tile != tile:
                    same_tile = False
            else:
                value = operand.value  # type: ignore[union-attr]
                same_tile = False
                if value in failed:
                    ok = False  # reported at that op
                elif value not in results:
                    errors.append(Diagnostic(op_id, info.data[k], f"refers to {value!r}, which is not an earlier op"))
                    ok = False
                else:
                    value_element = results[value]
                    if value_element is None:
                        errors.append(Diagnostic(op_id, info.data[k], f"refers to {value!r}, which has no result"))
                        ok = False
                    else:
                        elements.append(value_element)
                        op_dfbs.append(None)
                        signature.append((value_element._value_,))
        result = op.result or (elements[0] if elements else None)
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
        if sem.full_fp32 is not None:
            kind = sem.full_fp32.select(op.attrs)
            if kind is None:
                errors.append(Diagnostic(op_id, None, f"attribute {sem.full_fp32.attribute!r} must be one of {', '.join(sem.full_fp32.choices)}"))
                continue
            out.fp32_ops.append((op_id, kind))
        key = (
            op.op, primitive._value_, tuple(signature), result._value_ if result is not None else None,
            same_tile, fpu_enabled, op.strategy,
        )
        found = cache.get(key)
        if found is None:
            built = _templates(op, info, primitive, elements, result, target, fpu_enabled)
            if isinstance(built, Diagnostic):
                errors.append(built)
                continue
            found = cache[key] = built
        alternatives, templates, sensitivity = found
        if alternatives:
            listed.append(op_id)
        if len(templates) == 1:
            template = templates[0]
            for t in template[1]:
                k = t[_T_K]
                req_dfb: int | None = operands[k].dfb if k >= 0 else None  # type: ignore[union-attr]
                if t[_T_WIDTHS] == ALL_WIDTHS and (req_dfb is None or t[_T_MODES] == ALL_MODES):
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
                fixed.append((t, op_id, req_dfb))
            if alternatives and template[0] is not None:
                chosen_by_legality[op_id] = template[0]
        else:
            dfbs = tuple(op_dfbs)
            watch = []
            for k, value in sensitivity:
                var = dfbs[k] if k >= 0 else -1
                assert var is not None
                watch.append((var + 1) * 4 + value)
            search.append((op_id, [_instantiate(t, op_id, dfbs) for t in templates], watch))
    return out


# --------------------------------------------------------------------------- domains


def _requirement(req: _Req | None) -> Requirement | None:
    if req is None:
        return None
    t, op_id, dfb = req
    return Requirement(t[_T_SOURCE], op_id, t[_T_NAME], t[_T_OPERAND], t[_T_PRIMITIVE], t[_T_ELEMENT], t[_T_ROUTE], dfb, t[_T_WIDTHS], t[_T_MODES])


def _conflict(kind: ConflictKind, req: _Req, by: _Req | None) -> Conflict:
    requirement = _requirement(req)
    assert requirement is not None
    return Conflict(kind, requirement, _requirement(by))


class _Domains:
    """Kernel-wide domains as bit masks, with the requirement that last narrowed each,
    and an undo trail."""

    __slots__ = ("m", "m_by", "trail", "w", "w_by")

    def __init__(self) -> None:
        self.w = ALL_WIDTHS
        self.w_by: _Req | None = None
        self.m: dict[int, int] = {}
        self.m_by: dict[int, _Req] = {}
        # (variable, previous mask, previous evidence); variable -1 is the width.
        self.trail: list[tuple[int, int, _Req | None]] = []

    def apply(self, req: _Req) -> Conflict | None:
        t = req[0]
        widths = t[_T_WIDTHS]
        if widths != ALL_WIDTHS:
            narrowed = self.w & widths
            if not narrowed:
                return _conflict(ConflictKind.DEST_WIDTH, req, self.w_by)
            if narrowed != self.w:
                self.trail.append((-1, self.w, self.w_by))
                self.w = narrowed
                self.w_by = req
        dfb = req[2]
        modes = t[_T_MODES]
        if dfb is not None and modes != ALL_MODES:
            current = self.m.get(dfb, ALL_MODES)
            narrowed = current & modes
            if not narrowed:
                return _conflict(ConflictKind.UNPACK_MODE, req, self.m_by.get(dfb))
            if narrowed != current:
                self.trail.append((dfb, current, self.m_by.get(dfb)))
                self.m[dfb] = narrowed
                self.m_by[dfb] = req
        return None

    def first_conflict(self, option: _Opt) -> Conflict:
        for req in _requirements(option):
            t = req[0]
            if not self.w & t[_T_WIDTHS]:
                return _conflict(ConflictKind.DEST_WIDTH, req, self.w_by)
            dfb = req[2]
            if dfb is not None and not self.m.get(dfb, ALL_MODES) & t[_T_MODES]:
                return _conflict(ConflictKind.UNPACK_MODE, req, self.m_by.get(dfb))
        raise AssertionError("option is compatible")

    def undo(self, mark: int) -> None:
        trail = self.trail
        while len(trail) > mark:
            var, mask, by = trail.pop()
            if var < 0:
                self.w, self.w_by = mask, by
            else:
                self.m[var] = mask
                if by is None:
                    self.m_by.pop(var, None)
                else:
                    self.m_by[var] = by


def _search(dom: _Domains, ops: list[tuple[str, list[_Opt], list[int]]]) -> tuple[list[int], Conflict | None]:
    """Choose an option for every op; returns (option index per op, conflict or None)."""
    n = len(ops)
    choice = [-1] * n
    chosen_trail: list[int] = []
    # watchers[(variable + 1) * 4 + value]: ops to recheck when the variable (-1 for the
    # width, else a DFB) narrows to that single value (bit 1 or 2). An op is listed only
    # if the value rules out one of its options, so narrowing that leaves every option
    # compatible costs nothing.
    watchers: dict[int, list[int]] = {}
    for i, (_, _, watch) in enumerate(ops):
        for key in watch:
            found = watchers.get(key)
            if found is None:
                watchers[key] = [i]
            else:
                found.append(i)
    m = dom.m

    def settle(i: int) -> Conflict | None:
        options = ops[i][1]
        found = -1
        w = dom.w
        for k, option in enumerate(options):
            if not w & option[2]:
                continue
            for dfb, modes in option[3]:
                if not m.get(dfb, ALL_MODES) & modes:
                    break
            else:
                if found >= 0:
                    return None  # still two compatible options
                found = k
        if found < 0:
            return dom.first_conflict(options[-1])
        choice[i] = found
        chosen_trail.append(i)
        option = options[found]
        if narrows(option):
            _, treqs, _, _, op_id, dfbs = option
            for t in treqs:
                k = t[_T_K]
                dom.apply((t, op_id, dfbs[k] if k >= 0 else None))  # cannot conflict: compatible
        return None

    def narrows(option: _Opt) -> bool:
        w = dom.w
        if w & option[2] != w:
            return True
        for dfb, modes in option[3]:
            current = m.get(dfb, ALL_MODES)
            if current & modes != current:
                return True
        return False

    def propagate(pos: int, pending: deque[int]) -> Conflict | None:
        trail = dom.trail
        while True:
            while pos < len(trail):
                var = trail[pos][0]
                value = dom.w if var < 0 else m[var]
                for j in watchers.get((var + 1) * 4 + value, ()):
                    if choice[j] < 0:
                        pending.append(j)
                pos += 1
            if not pending:
                return None
            j = pending.popleft()
            if choice[j] < 0:
                conflict = settle(j)
                if conflict is not None:
                    return conflict

    def undo(mark: int, chosen_mark: int) -> None:
        dom.undo(mark)
        while len(chosen_trail) > chosen_mark:
            choice[chosen_trail.pop()] = -1

    conflict = propagate(len(dom.trail), deque(range(n)))
    if conflict is not None:
        return choice, conflict
    pending: deque[int] = deque()
    for i in range(n):
        if choice[i] >= 0:
            continue
        options = ops[i][1]
        mark, chosen_mark = len(dom.trail), len(chosen_trail)
        for k, option in enumerate(options):
            choice[i] = k
            chosen_trail.append(i)
            if not narrows(option):
                conflict = None  # nothing changes, so nothing can conflict
                break
            for req in _requirements(option):
                dom.apply(req)
            conflict = propagate(mark, pending)
            if conflict is None:
                break
            pending.clear()
            undo(mark, chosen_mark)
        if conflict is not None:
            return choice, conflict
    return choice, None


# ----------------------------------------------------------------------- diagnostics


def _op_label(req: Requirement) -> str:
    return req.op_name or "?"


def _width_note(req: Requirement) -> Note:
    element = req.element.value if req.element else "?"
    return Note(req.op, None, f"the target does not support 32-bit destination elements for {_op_label(req)} with '{element}' elements")


def diagnose(conflict: Conflict) -> Diagnostic:
    """The diagnostic for a conflict, naming both requirements."""
    req, other = conflict.requirement, conflict.established_by
    if conflict.kind is ConflictKind.DEST_WIDTH:
        needs32, narrow = (req, other) if req.widths == W32 else (other, req)
        if needs32 is None or narrow is None:
            return Diagnostic(req.op, req.operand, "has no destination element width compatible with the kernel")
        if narrow.source is Source.DEST_POLICY:
            if needs32.source is Source.UNPACK_ENTRY:
                return Diagnostic(None, None, f"ttl.unpack_to_dest_fp32 lists dataflow buffer {needs32.dfb}, which this target accepts only with 32-bit destination elements, but fp32 destination accumulation is explicitly disabled")
            return Diagnostic(needs32.op, needs32.operand, "requires 32-bit destination elements, but fp32 destination accumulation is explicitly disabled")
        if needs32.source is Source.DEST_POLICY:
            return Diagnostic(None, None, "explicit 32-bit destination elements are unsupported by the kernel's tile operations", (_width_note(narrow),))
        if needs32.source is Source.UNPACK_ENTRY:
            return Diagnostic(None, None, f"ttl.unpack_to_dest_fp32 lists dataflow buffer {needs32.dfb}, which this target accepts only with 32-bit destination elements, unsupported by the kernel's tile operations", (_width_note(narrow),))
        return Diagnostic(needs32.op, needs32.operand, "requires 32-bit destination elements, but no kernel-wide destination width supports all tile operations", (_width_note(narrow),))
    if conflict.kind is ConflictKind.UNPACK_MODE:
        dfb = req.dfb
        if other is not None and other.source is Source.UNPACK_POLICY:
            if req.modes == M_UNPACK:
                return Diagnostic(req.op, req.operand, f"dataflow buffer {dfb} requires unpack-to-DST-f32 mode, but ttl.unpack_to_dest_fp32 excludes this index")
            return Diagnostic(req.op, req.operand, f"dataflow buffer {dfb} requires default unpack mode, but ttl.unpack_to_dest_fp32 includes this index")
        notes = (Note(other.op, other.operand, f"operand {other.operand} establishes the conflicting unpack mode"),) if other is not None else ()
        return Diagnostic(req.op, req.operand, f"dataflow buffer {dfb} requires incompatible unpack modes in one kernel", notes)
    element = req.element.value if req.element else "?"
    return Diagnostic(req.op, req.operand, f"has no target-supported destination element width for '{element}' elements")


# -------------------------------------------------------------------------- resolve


def resolve(
    kernel: KernelDescription, target: TargetEnvironment, policy: KernelConfigPolicy | None = None
) -> Plan | ResolveFailure:
    """Jointly choose strategies, DST width, sync and the unpack set for one kernel.

    The resolver builds many small acyclic tuples; the cyclic garbage collector is
    paused while it runs (and restored after), since its full collections would
    otherwise make large kernels superlinear.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        return _resolve(kernel, target, policy or KernelConfigPolicy())
    finally:
        if paused:
            gc.enable()


def _resolve(kernel: KernelDescription, target: TargetEnvironment, policy: KernelConfigPolicy) -> Plan | ResolveFailure:
    capacity = target.DFB_CAPACITY
    errors: list[Diagnostic] = []
    if policy.unpack_to_dest_fp32 is not None:
        for entry in policy.unpack_to_dest_fp32:
            if not 0 <= entry < capacity:
                errors.append(Diagnostic(None, None, f"ttl.unpack_to_dest_fp32 uses dataflow buffer index {entry} outside the supported range [0, {capacity - 1}]"))
            elif target.UNPACK_UNBOUND_ENTRIES_REJECTED and entry not in kernel.dfbs:
                api = target.RUNTIME_API.name if target.RUNTIME_API else target.NAME
                errors.append(Diagnostic(None, None, f"ttl.unpack_to_dest_fp32 lists dataflow buffer {entry}, which the kernel does not bind; {api} rejects such entries"))
    collected = _collect(kernel, target, policy)
    errors.extend(collected.errors)
    if errors:
        return ResolveFailure(tuple(errors))

    dom = _Domains()
    hard: list[_Req] = []
    if policy.fp32_dest_acc is not Selection.AUTO:
        widths = W32 if policy.fp32_dest_acc is Selection.ENABLED else W16
        hard.append(((Source.DEST_POLICY, None, None, None, None, None, widths, ALL_MODES, -1), None, None))
    if policy.unpack_to_dest_fp32 is not None:
        listed = set(policy.unpack_to_dest_fp32)
        for dfb, element in sorted(kernel.dfbs.items()):
            if element in target.UNPACK_EFFECTIVE_FOR:
                modes = M_UNPACK if dfb in listed else M_DEFAULT
                hard.append(((Source.UNPACK_POLICY, None, None, None, element, None, ALL_WIDTHS, modes, -1), None, dfb))
            elif dfb in listed and target.UNPACK_OTHER_ENTRIES_NEED_32BIT_DEST:
                hard.append(((Source.UNPACK_ENTRY, None, None, None, element, None, W32, ALL_MODES, -1), None, dfb))
    for req in (*hard, *collected.fixed):
        conflict = dom.apply(req)
        if conflict is not None:
            return ResolveFailure((diagnose(conflict),), conflict)

    choice, conflict = _search(dom, collected.search)
    if conflict is not None:
        return ResolveFailure((diagnose(conflict),), conflict)
    chosen = dict(collected.chosen)
    for (op_id, options, _), k in zip(collected.search, choice, strict=True):
        strategy = options[k][0]
        assert strategy is not None
        chosen[op_id] = strategy

    warnings: list[ResolveWarning] = []
    wanting: list[str] = []
    for op_id, kind in collected.fp32_ops:
        if FULL_FP32_PREFERENCE[kind] not in policy.preferences:
            continue
        support = target.full_fp32(kind)
        if support.supported:
            wanting.append(op_id)
        elif support.warning:
            warnings.append(ResolveWarning(op_id, support.warning))
    prefer32 = bool(wanting and dom.w & W32)
    width = DestWidth.BITS32 if prefer32 or not dom.w & W16 else DestWidth.BITS16
    if wanting and not dom.w & W32 and policy.fp32_dest_acc is not Selection.DISABLED:
        warnings.extend(
            ResolveWarning(op_id, "preferred full-fp32 accumulation is unavailable in the resolved kernel configuration; using non-full-fp32 lowering")
            for op_id in wanting
        )
    sync = SyncMode.FULL if policy.dst_full_sync is Selection.ENABLED else SyncMode.DOUBLE_BUFFERED
    if policy.unpack_to_dest_fp32 is not None:
        unpack = policy.unpack_to_dest_fp32
    else:
        unpack = tuple(sorted(dfb for dfb, modes in dom.m.items() if modes == M_UNPACK))
    return Plan(
        target=target.NAME,
        strategies=tuple((op_id, chosen[op_id]) for op_id in collected.listed),
        dest_width=width,
        sync=sync,
        unpack_to_dest_fp32=unpack,
        warnings=tuple(warnings),
        dfb_elements=tuple(sorted(kernel.dfbs.items())),
        consumed_dfbs=tuple(sorted(collected.consumed)),
        _token=_PLAN_TOKEN,
    )


def resolve_kernel(
    kernel: KernelDescription,
    *,
    target: str | None = None,
    device_arch: str | None = None,
    options: Mapping[str, object] | None = None,
    attributes: Mapping[str, object] | None = None,
) -> Plan | ResolveFailure:
    """Target selection, policy normalization and resolution in one call."""
    try:
        env = select_target(target, device_arch)
    except TargetError as exc:
        return ResolveFailure((Diagnostic(None, None, exc.message),))
    policy = normalize_policy(options, attributes)
    if isinstance(policy, ResolveFailure):
        return policy
    return resolve(kernel, env, policy)


def resolve_all(
    requests: Sequence[tuple[KernelDescription, TargetEnvironment, KernelConfigPolicy]],
) -> tuple[Plan, ...] | ResolveFailure:
    """Plans for every function, or the first failure: nothing is applied unless all
    functions resolve."""
    plans = []
    for kernel, target, policy in requests:
        plan = resolve(kernel, target, policy)
        if isinstance(plan, ResolveFailure):
            return plan
        plans.append(plan)
    return tuple(plans)


__all__ = [
    "ATTRIBUTE_NAMES",
    "OPTION_NAMES",
    "KernelConfigPolicy",
    "Plan",
    "diagnose",
    "normalize_policy",
    "resolve",
    "resolve_all",
    "resolve_kernel",
]
