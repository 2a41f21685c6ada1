"""Resolution of one kernel: hard policy, fixed ops, the joint search, preferences, and
the plan.

Hard policy constraints apply first, then every fixed op's requirements (``collect``),
then the search decides the ops with strategy alternatives (``search``). Preferences
come after and never empty a domain. Nothing is applied anywhere: the result is a
``Plan`` or a ``ResolveFailure`` with typed evidence of the conflict.
"""

from __future__ import annotations

import gc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .collect import Collected, collect, range_suffix
from .diagnostics import (
    Conflict,
    ConflictKind,
    Diagnostic,
    Note,
    Requirement,
    ResolveFailure,
    ResolveWarning,
    Source,
)
from .environment import TargetEnvironment
from .kernel import KernelDescription
from .policy import STRATEGY_ATTRIBUTE, KernelConfigPolicy
from .requirements import Req, RequirementTemplate, requirement
from .search import Domains, search
from .semantics import (
    ALL_MODES,
    ALL_WIDTHS,
    MODE_BIT,
    WIDTH_BIT,
    AutoSync,
    DestWidth,
    DstCapacity,
    Selection,
    SyncMode,
    UnpackMode,
    widths_of,
)

W16 = WIDTH_BIT[DestWidth.BITS16]
W32 = WIDTH_BIT[DestWidth.BITS32]
M_DEFAULT = MODE_BIT[UnpackMode.DEFAULT]
M_UNPACK = MODE_BIT[UnpackMode.UNPACK_TO_DEST]


# ----------------------------------------------------------------------------- plan

_PLAN_TOKEN = object()


@dataclass(frozen=True)
class Plan:
    """A resolved kernel configuration. Only the resolver constructs one."""

    target: str
    strategies: tuple[tuple[str, str], ...]  # op id -> strategy, walk order
    dest_width: DestWidth
    sync: SyncMode
    unpack_to_dest_fp32: tuple[int, ...]  # sorted DFB indices
    environment: TargetEnvironment = field(repr=False, compare=False)  # the target resolved for
    warnings: tuple[ResolveWarning, ...] = ()
    dfb_elements: tuple[tuple[int, str], ...] = ()  # the kernel's bound DFBs
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

    def strategy_of(self, op_id: str) -> str | None:
        return next((s for i, s in self.strategies if i == op_id), None)

    def op_attributes(self) -> dict[str, dict[str, str]]:
        """What application writes on each op with strategy alternatives."""
        return {op_id: {STRATEGY_ATTRIBUTE: str(s)} for op_id, s in self.strategies}

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
            "strategies": {op_id: str(s) for op_id, s in self.strategies},
            "fp32_dest_acc_en": self.fp32_dest_acc_en,
            "dst_full_sync_en": self.dst_full_sync_en,
            "unpack_to_dest_fp32": list(self.unpack_to_dest_fp32),
        }


# ----------------------------------------------------------------------- diagnostics


def _width_note(req: Requirement) -> Note:
    return Note(req.op, None, f"the target does not support 32-bit destination elements for {req.op_name or '?'} with '{req.element or '?'}' elements")


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
    return Diagnostic(req.op, req.operand, f"has no target-supported destination element width for '{req.element or '?'}' elements")


# -------------------------------------------------------------------------- resolve


def resolve(
    kernel: KernelDescription, target: TargetEnvironment, policy: KernelConfigPolicy | None = None
) -> Plan | ResolveFailure:
    """Jointly choose strategies, DST width, sync and the unpack set for one kernel.

    The resolver builds many small acyclic objects; the cyclic garbage collector is
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


def _policy_requirement(source: Source, element: str | None, widths: int, modes: int, dfb: int | None) -> Req:
    return Req(RequirementTemplate(source, None, None, None, element, None, widths, modes, None), None, dfb)


def _syncs(policy: KernelConfigPolicy) -> tuple[SyncMode, ...]:
    """The sync modes the policy leaves, double-buffered first (the one auto prefers)."""
    if policy.dst_full_sync is Selection.ENABLED:
        return (SyncMode.FULL,)
    if policy.dst_full_sync is Selection.DISABLED:
        return (SyncMode.DOUBLE_BUFFERED,)
    return (SyncMode.DOUBLE_BUFFERED, SyncMode.FULL)


class _Residency:
    """The largest DST residency of a kernel's ops, checked against the capacity of each
    width and sync mode the policy leaves (TT-Lang's main line: "fixed operation
    requirements are intersected with ... the DST capacity for each width-and-
    synchronization pair")."""

    def __init__(self, op: str, slots: int, capacity: DstCapacity, syncs: tuple[SyncMode, ...]) -> None:
        self.op, self.slots, self.capacity, self.syncs = op, slots, capacity, syncs
        self.widths = 0
        for width in DestWidth:
            if any(capacity.tiles(width, sync) >= slots for sync in syncs):
                self.widths |= WIDTH_BIT[width]
        self.req = Req(RequirementTemplate(Source.DST_RESIDENCY, None, None, None, None, None, self.widths, ALL_MODES, None), op, None)

    def available(self, widths: int) -> int:
        """The most slots any width of ``widths`` holds under a sync mode the policy leaves."""
        return max((self.capacity.tiles(w, s) for w in widths_of(widths) for s in self.syncs), default=0)

    def diagnostic(self, widths: int) -> Diagnostic:
        return Diagnostic(
            self.op, None,
            f"requires {self.slots} simultaneous DST slots, but at most {self.available(widths)} are available under the kernel configuration",
        )

    def explains(self, conflict: Conflict) -> Diagnostic | None:
        """The capacity diagnostic when the residency is one side of a width conflict."""
        req, other = conflict.requirement, conflict.established_by
        if conflict.kind is not ConflictKind.DEST_WIDTH:
            return None
        if other is not None and other.source is Source.DST_RESIDENCY:
            return self.diagnostic(req.widths)
        if req.source is Source.DST_RESIDENCY:
            return self.diagnostic(other.widths if other is not None else ALL_WIDTHS)
        return None

    def sync(self, width: DestWidth) -> SyncMode:
        """Double-buffered when the residency fits it, otherwise full (the width was chosen
        among those where some sync mode fits)."""
        return next((s for s in self.syncs if self.capacity.tiles(width, s) >= self.slots), self.syncs[-1])


def _residency(target: TargetEnvironment, policy: KernelConfigPolicy, collected: Collected) -> _Residency | None:
    capacity = target.table.dst_capacity
    if target.table.generation.auto_sync is not AutoSync.BY_CAPACITY or collected.residency is None or capacity is None:
        return None
    op, slots = collected.residency
    return _Residency(op, slots, capacity, _syncs(policy))


def _failure(conflict: Conflict, residency: _Residency | None) -> ResolveFailure:
    explained = residency.explains(conflict) if residency is not None else None
    return ResolveFailure((explained or diagnose(conflict),), conflict)


def _resolve(kernel: KernelDescription, target: TargetEnvironment, policy: KernelConfigPolicy) -> Plan | ResolveFailure:
    table = target.table
    capacity = table.dfb_capacity
    known = target.prepared.elements
    errors: list[Diagnostic] = []
    if not all(map(known.__contains__, kernel.dfbs.values())):
        errors.extend(
            Diagnostic(None, None, f"dataflow buffer {dfb} has an unknown element type {str(element)!r}; known: {', '.join(known)}")
            for dfb, element in sorted(kernel.dfbs.items())
            if element not in known
        )
    if policy.unpack_to_dest_fp32 is not None:
        description = table.dfb_capacity_description
        for entry in policy.unpack_to_dest_fp32:
            if not 0 <= entry < capacity:
                if description:  # TT-Lang's main-line wording, once for the attribute
                    errors.append(Diagnostic(None, None, f"ttl.unpack_to_dest_fp32 must contain dataflow buffer indices in range [0, {capacity - 1}]{range_suffix(target)}"))
                    break
                errors.append(Diagnostic(None, None, f"ttl.unpack_to_dest_fp32 uses dataflow buffer index {entry} outside the supported range [0, {capacity - 1}]"))
            elif table.unpack_unbound_entries_rejected and entry not in kernel.dfbs:
                api = table.runtime_api.name if table.runtime_api else table.name
                errors.append(Diagnostic(None, None, f"ttl.unpack_to_dest_fp32 lists dataflow buffer {entry}, which the kernel does not bind; {api} rejects such entries"))
    collected = collect(kernel, target, policy)
    errors.extend(collected.errors)
    if errors:
        return ResolveFailure(tuple(errors))

    dom = Domains()
    hard: list[Req] = []
    if policy.fp32_dest_acc is not Selection.AUTO:
        widths = W32 if policy.fp32_dest_acc is Selection.ENABLED else W16
        hard.append(_policy_requirement(Source.DEST_POLICY, None, widths, ALL_MODES, None))
    if policy.unpack_to_dest_fp32 is not None:
        listed = set(policy.unpack_to_dest_fp32)
        for dfb, element in sorted(kernel.dfbs.items()):
            if element in table.unpack_effective_for:
                modes = M_UNPACK if dfb in listed else M_DEFAULT
                hard.append(_policy_requirement(Source.UNPACK_POLICY, element, ALL_WIDTHS, modes, dfb))
            elif dfb in listed and table.unpack_other_entries_need_32bit_dest:
                hard.append(_policy_requirement(Source.UNPACK_ENTRY, element, W32, ALL_MODES, dfb))
    residency = _residency(target, policy, collected)
    if residency is not None:
        for req in hard:
            conflict = dom.apply(req)
            if conflict is not None:
                return ResolveFailure((diagnose(conflict),), conflict)
        if not residency.widths & dom.w:
            found = requirement(residency.req)
            assert found is not None
            evidence = Conflict(ConflictKind.NO_WIDTH, found, requirement(dom.w_by))
            return ResolveFailure((residency.diagnostic(dom.w),), evidence)
        hard = [residency.req]
    for req in (*hard, *collected.fixed):
        conflict = dom.apply(req)
        if conflict is not None:
            return _failure(conflict, residency)

    choice, conflict = search(dom, collected.search)
    if conflict is not None:
        return _failure(conflict, residency)
    chosen = dict(collected.chosen)
    for op, k in zip(collected.search, choice, strict=True):
        strategy = op.options[k].strategy
        assert strategy is not None
        chosen[op.op] = strategy

    warnings: list[ResolveWarning] = []
    wanting: list[str] = []
    preferences = target.prepared.preferences
    for op_id, kind in collected.fp32_ops:
        if preferences[kind] not in policy.preferences:
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
    if residency is not None:
        sync = residency.sync(width)
    else:
        sync = SyncMode.FULL if policy.dst_full_sync is Selection.ENABLED else SyncMode.DOUBLE_BUFFERED
    if policy.unpack_to_dest_fp32 is not None:
        unpack = policy.unpack_to_dest_fp32
    else:
        unpack = tuple(sorted(dfb for dfb, modes in dom.m.items() if modes == M_UNPACK))
    return Plan(
        target=table.name,
        strategies=tuple((op_id, chosen[op_id]) for op_id in collected.listed),
        dest_width=width,
        sync=sync,
        unpack_to_dest_fp32=unpack,
        environment=target,
        warnings=tuple(warnings),
        dfb_elements=tuple(sorted(kernel.dfbs.items())),
        consumed_dfbs=tuple(sorted(collected.consumed)),
        _token=_PLAN_TOKEN,
    )


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
