"""Resolve each kernel's configuration plan and lower the kernel to the kernel IR.

Resolution (:mod:`ttlgen.plan.resolution`) describes every tile op with the element type
it computes (:mod:`ttlgen.plan.element_types`); a kernel the resolver rejects is a
located error at the kernel spec showing the resolver's diagnostic. Lowering turns the
block-style body into three IR programs (:mod:`ttlgen.plan.kernel_ir`): compute
(:mod:`ttlgen.plan.lower_compute`), reader and writer (:mod:`ttlgen.plan.lower_dataflow`),
plus the program data the runtime needs (CBs, DRAM buffers, compute config). The calls
are the spelling spec's at the tt-metal API level of the kernel's target; inits and
reconfigurations are hoisted out of loops that do not change them
(:mod:`ttlgen.plan.hoist`), a reconfiguration is kept only where its register holds
another format (:mod:`ttlgen.plan.data_formats`), each program includes the headers
declaring what it calls, every call is checked against the level
(:mod:`ttlgen.plan.api_check`) and every op, copy and pack against the data formats its
registers hold.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ttlgen.errors import Diagnostic, DiagnosticSink, SpecErrors
from ttlgen.model import kernel_names
from ttlgen.model.kernels import Kernel, Store, walk_statements, walk_values
from ttlgen.model.math_spec import Computation
from ttlgen.model.ops import OpsModel
from ttlgen.model.spelling import LevelSpelling, SpellingModel
from ttlgen.model.targets import Rule, TargetsModel
from ttlgen.model.tt_metal_api import ApiLevel, ApiModel, Emulation, KernelKind, State
from ttlgen.plan import (
    api_check,
    data_formats,
    element_types,
    l1_accumulation,
    resolution,
    scaler_fill,
)
from ttlgen.plan import kernel_ir as ir
from ttlgen.plan.hoist import hoist
from ttlgen.plan.lower_compute import Abort, ComputeLowering, first_compute, used_cbs
from ttlgen.plan.lower_dataflow import DataflowHelpers, dataflow_helpers, dataflow_program
from ttlgen.plan.scaler_fill import Fill
from ttlgen.resolver import TranslationError


@dataclass(frozen=True)
class CbInfo:
    """A circular buffer of a lowered kernel, as program.json states it."""

    name: str
    index: int
    format: str
    page_size: int
    num_pages: int


@dataclass(frozen=True)
class TensorInfo:
    """A DRAM tensor a lowered kernel reads or writes, through its DFB's CB."""

    name: str  # DFB name, also the DRAM buffer name
    role: str
    format: str
    shape: tuple[int, int]


@dataclass(frozen=True)
class LoweredKernel:
    """A kernel's plan, its three programs and the data its runtime needs."""

    kernel: Kernel
    api_level: str  # the tt-metal API level of the kernel's target
    plan_json: dict[str, Any]
    compute_config: dict[str, Any]
    dest_width: int
    sync: str
    dst_capacity: int
    subblocked: bool
    compute: ir.Program
    reader: ir.Program
    writer: ir.Program
    cbs: tuple[CbInfo, ...]
    inputs: tuple[TensorInfo, ...]
    outputs: tuple[TensorInfo, ...]
    strategies: tuple[tuple[str, str], ...]  # op id -> strategy, for the report
    sources: tuple[str, ...]  # of the compute kernel and program.json
    dataflow_sources: tuple[str, ...]  # of the reader and writer
    # What each op of the kernel computes (a math function or a runtime primitive: what its
    # float64 reference evaluates), by op name; an op absent computes nothing known.
    op_math: tuple[tuple[str, Computation], ...] = ()
    # The ops whose calls select the approximate form of their math at the kernel's level.
    approximate: frozenset[str] = frozenset()
    # The relation rules the kernel's uses matched, which allowed its DST width and unpack
    # set (resolution.relation_rules): the spec nodes behind those facts, for provenance.
    relation_rules: tuple[Rule, ...] = ()
    fills: tuple[Fill, ...] = ()  # the buffers the reader builds in L1
    # The defines the host passes to the compute kernel (its ops' spellings at the level).
    defines: tuple[ir.Define, ...] = ()

    def deciders(self, attribute: str) -> tuple[Rule, ...]:
        """The model objects that decided the value of ``attribute``, beside the kernel spec."""
        return self.relation_rules if attribute in _DECIDED_BY_RELATIONS else ()


# What the relation rules decide: the DST width and what is made of it.
_DECIDED_BY_RELATIONS = frozenset({"dest_width", "plan_json", "compute_config"})


@dataclass(frozen=True)
class ApiContext:
    """The API level a kernel is lowered at: its declarations, calls and dataflow helpers."""

    level: ApiLevel
    spelling: LevelSpelling
    helpers: DataflowHelpers
    emulation: Emulation | None = None


def lower(
    kernel: Kernel,
    ops: OpsModel,
    spelling: SpellingModel,
    api: ApiContext,
    plan: Any,
    compute_config: dict[str, Any],
    sink: DiagnosticSink,
    hoist_inits: bool = True,
    types: element_types.ValueTypes | None = None,
) -> LoweredKernel | None:
    """``kernel`` lowered under ``plan`` (``types``: the element type each op computes, when
    known), or None after reporting its problems to ``sink``."""
    errors_before = sink.count
    acc = l1_accumulation.analyze(kernel, sink)
    width = int(plan.dest_width)
    sync = plan.sync.value
    # The DST register is the vocabulary's, as the resolver's capacity checks read it.
    dst = plan.environment.table.dst_capacity
    assert dst is not None, "tables built from a valid model state the DST register"
    capacity = dst.tiles(plan.dest_width, plan.sync)
    level, calls = api.level, api.spelling
    l1_acc_elements = frozenset(f.element for f in spelling.formats if f.l1_accumulation)
    low = ComputeLowering(
        kernel, ops, calls, plan, sink, acc, capacity, l1_acc_elements,
        expects=api_check.format_expects(level, KernelKind.COMPUTE),
        unemulated=_unemulated(level, api.emulation) if api.emulation is not None else None,
        format_codes={f.element: f.code for f in spelling.formats if f.code is not None},
        types=types if types is not None else element_types.infer(kernel, ops),
    )
    compute = low.body(kernel.body)
    fills = scaler_fill.fills(kernel, ops, spelling, calls, sink)
    cbs = []
    for d in kernel.dfbs:
        fmt = spelling.format(d.dtype)
        if fmt is None:
            sink.error(d.mark, f"element type {d.dtype!r} has no tile format in {spelling.source}")
            continue
        cbs.append(CbInfo(d.name, d.index, fmt.name, fmt.tile_bytes, d.pages))
    first = first_compute(compute)
    if sink.count != errors_before or first is None:
        if first is None and sink.count == errors_before:
            sink.error(kernel.mark, f"kernel {kernel.name!r} stores nothing")
        return None
    try:
        init = low.hardware_init(first)
    except Abort:
        return None
    used = used_cbs((init, *compute))
    constants = [
        ir.Declare(kernel_names.cb(c.name), ir.Scalar.U32, ir.Const(c.index), ir.Storage.CONSTEXPR)
        for c in cbs
        if kernel_names.cb(c.name) in used
    ]
    body = ir.simplify((*constants, init, *compute))
    loads = api_check.format_loads(level, KernelKind.COMPUTE)
    format_names = {kernel_names.cb(c.name): c.format for c in cbs}

    def format_of(cb: ir.Expr) -> str | None:
        return format_names.get(cb.name) if isinstance(cb, ir.Var) else None

    effects = api_check.effects(level, KernelKind.COMPUTE)
    if hoist_inits:
        body = hoist(body, effects)
        body = data_formats.drop_redundant(body, loads, format_of)
    if acc.scopes or acc.straight_accumulations:
        # After the hoisting, which moves inits next to the enables: an init that may reset
        # the packer is followed by the enable wherever accumulation should be on.
        body = l1_accumulation.rearm(body, lambda call: _resets_packer(call, effects), low.l1(1))
    programs = [
        ir.Program(ir.ProgramKind.COMPUTE, (), (), level.compute_entry, body),
        dataflow_program(kernel, calls.dataflow, api.helpers, level.dataflow_entry, reading=True, fills=fills),
        dataflow_program(kernel, calls.dataflow, api.helpers, level.dataflow_entry, reading=False),
    ]
    compute_program, reader, writer = (api_check.checked(p, level, kernel.mark, sink) for p in programs)
    if sink.count == errors_before:
        # What a call loads is known only for calls that fit the level.
        for problem in data_formats.check(compute_program.body, loads, format_of, kernel.name):
            sink.error(problem.mark or kernel.mark, problem.message)
    if len(sink.diagnostics) != errors_before:
        return None
    fmt_of = {c.name: c.format for c in cbs}
    tensors = [
        TensorInfo(d.name, d.tensor.role, fmt_of[d.name], d.tensor.shape)
        for d in kernel.dfbs
        if d.tensor is not None
    ]
    return LoweredKernel(
        kernel=kernel,
        api_level=level.level,
        plan_json=plan.to_json(),
        compute_config=compute_config,
        dest_width=width,
        sync=sync,
        dst_capacity=capacity,
        subblocked=low.subblocked,
        compute=compute_program,
        reader=reader,
        writer=writer,
        cbs=tuple(cbs),
        inputs=tuple(t for t in tensors if t.role == "input"),
        outputs=tuple(t for t in tensors if t.role == "output"),
        strategies=tuple((op_id, s.value) for op_id, s in plan.strategies),
        sources=tuple(sorted({kernel.source, spelling.source, level.source, *ops.sources})),
        dataflow_sources=tuple(sorted({kernel.source, spelling.source, level.source})),
        op_math=tuple((op, math) for op in sorted(_ops_of(kernel)) if (math := spelling.math_of(op)) is not None),
        approximate=frozenset(op for op in _ops_of(kernel) if spelling.selects_approximate(level.level, op)),
        fills=fills,
        defines=low.kernel_defines(),
    )


def _unemulated(level: ApiLevel, emulation: Emulation) -> Callable[[ir.Call], str | None]:
    """Why a compute call at ``level`` has no body in the emulator (no binding of the form it
    binds to), or None; a call that fits no form is api_check's to report."""

    def problem(call: ir.Call) -> str | None:
        form = api_check.form_of(level, call, KernelKind.COMPUTE)
        if form is None or emulation.binding(form) is not None:
            return None
        params = ", ".join(form.signature.names()) or "none"
        return (
            f"{call.function!r} (API level {level.level!r}, {form.header}) has no emulator binding: add "
            f"{call.function}: {{computes: <math>, call: <glue routine>(...)}} under functions in {emulation.source} "
            f"(its parameters: {params})"
        )

    return problem


# The inits that may reset the packer's L1-accumulation flag: those whose API form
# configures the packer (its data format or its L1 accumulation, or all hardware).
_INITS = frozenset({ir.Step.OP_INIT, ir.Step.COPY_INIT, ir.Step.HW_INIT})
_PACKER = frozenset({State.PACK_FORMAT, State.PACKER_L1_ACC})


def _resets_packer(call: ir.Call, effects: Callable[[ir.Call], frozenset[State]]) -> bool:
    return call.step in _INITS and bool(effects(call) & _PACKER)


def _ops_of(kernel: Kernel) -> set[str]:
    return {v.op for s in walk_statements(kernel.body) if isinstance(s, Store) for v in walk_values(s.value)}


def plan_kernels(
    kernels: Sequence[Kernel],
    ops: OpsModel,
    targets: TargetsModel,
    spelling: SpellingModel,
    api: ApiModel,
    hoist_inits: bool = True,
) -> list[LoweredKernel]:
    """Resolve and lower every kernel; raises SpecErrors with every problem found.

    ``hoist_inits=False`` keeps every init and reconfiguration where the lowering puts it
    (to measure what hoisting and dropping redundant reconfigurations save)."""
    sink = DiagnosticSink()
    if not kernels:
        return []
    if not spelling.levels:
        raise SpecErrors([Diagnostic(kernels[0].mark, "no ttlgen.op_spelling spec (with a ttlgen.tt_metal_api level) says how to spell kernels")])
    resolver = resolution.Resolver(ops, targets)
    contexts: dict[str, ApiContext] = {}
    for level in api.levels:
        calls = spelling.at(level.level)
        if calls is not None:
            contexts[level.level] = ApiContext(level, calls, dataflow_helpers(calls.dataflow, calls.cb), api.emulation)
    by_name = {t.name: t for t in targets.targets}
    lowered = []
    for kernel in kernels:
        resolved = resolver.resolved(kernel, sink)
        if resolved is None:
            continue
        plan = resolved.plan
        target = by_name.get(kernel.target)
        context = contexts.get(target.kernel_api or "") if target is not None else None
        if context is None:
            name = target.kernel_api if target is not None else None
            why = f"uses tt-metal API level {name!r}, which no ttlgen.tt_metal_api spec declares" if name else "has no runtime API, so no tt-metal API level to write kernels for"
            sink.error(kernel.mark, f"target {kernel.target!r} {why}")
            continue
        try:
            compute_config = resolver.compute_config(plan, kernel.math_fidelity)
        except TranslationError as exc:
            # program.json carries the runtime's compute-config descriptor: a target
            # launched through another API, or none, has no kernel to generate.
            sink.error(
                kernel.target_mark,
                f"kernel {kernel.name!r} cannot be generated: its program.json carries ComputeConfigDescriptor fields, and {exc}",
            )
            continue
        result = lower(kernel, ops, spelling, context, plan, compute_config, sink, hoist_inits, resolved.types)
        if result is not None:
            assert target is not None
            lowered.append(replace(result, relation_rules=resolution.relation_rules(kernel, resolved, target)))
    if sink:
        raise SpecErrors(sink.diagnostics)
    return lowered
