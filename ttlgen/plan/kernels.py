"""Resolve each kernel's configuration plan and lower the kernel to the kernel IR.

Resolution (:mod:`ttlgen.plan.resolution`) describes every tile op with the element type
it computes (:mod:`ttlgen.plan.element_types`); a kernel the resolver rejects is a
located error at the kernel spec showing the resolver's diagnostic. Lowering turns the
block-style body into three IR programs (:mod:`ttlgen.plan.kernel_ir`): compute
(:mod:`ttlgen.plan.lower_compute`), reader and writer (:mod:`ttlgen.plan.lower_dataflow`),
plus the program data the runtime needs (CBs, DRAM buffers, compute config).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ttlgen.errors import Diagnostic, DiagnosticSink, SpecErrors
from ttlgen.model import kernel_names
from ttlgen.model.kernels import Kernel
from ttlgen.model.ops import OpsModel
from ttlgen.model.spelling import SpellingModel
from ttlgen.model.targets import TargetsModel
from ttlgen.plan import kernel_ir as ir
from ttlgen.plan import l1_accumulation, resolution
from ttlgen.plan.lower_compute import Abort, ComputeLowering, used_cbs
from ttlgen.plan.lower_dataflow import DataflowHelpers, dataflow_helpers, dataflow_program


@dataclass(frozen=True)
class CbInfo:
    name: str
    index: int
    format: str
    page_size: int
    num_pages: int


@dataclass(frozen=True)
class TensorInfo:
    name: str  # DFB name, also the DRAM buffer name
    role: str
    format: str
    shape: tuple[int, int]
    block: tuple[int, int]
    cb: int


@dataclass(frozen=True)
class LoweredKernel:
    """A kernel's plan, its three programs and the data its runtime needs."""

    kernel: Kernel
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
    sources: tuple[str, ...]


def lower(
    kernel: Kernel,
    ops: OpsModel,
    spelling: SpellingModel,
    plan: Any,
    compute_config: dict[str, Any],
    helpers: DataflowHelpers,
    sink: DiagnosticSink,
) -> LoweredKernel | None:
    errors_before = sink.count
    acc = l1_accumulation.analyze(kernel, sink)
    width = int(plan.dest_width)
    sync = plan.sync.value
    capacity = spelling.capacity(width, sync)
    if capacity is None:
        sink.error(kernel.mark, f"{spelling.source} gives no DST capacity for {width}-bit {sync} sync")
        return None
    assert spelling.kernel is not None and spelling.dataflow is not None
    low = ComputeLowering(kernel, ops, spelling, plan, sink, acc, capacity)
    compute = low.body(kernel.body)
    cbs = []
    for d in kernel.dfbs:
        fmt = spelling.format(d.dtype)
        if fmt is None:
            sink.error(d.mark, f"element type {d.dtype!r} has no tile format in {spelling.source}")
            continue
        cbs.append(CbInfo(d.name, d.index, fmt.name, fmt.tile_bytes, d.pages))
    if sink.count != errors_before or low.first_compute is None:
        if low.first_compute is None and sink.count == errors_before:
            sink.error(kernel.mark, f"kernel {kernel.name!r} stores nothing")
        return None
    try:
        init = low.hardware_init()
    except Abort:
        return None
    used = used_cbs((init, *compute))
    constants = [
        ir.Declare(kernel_names.cb(c.name), ir.Scalar.U32, ir.Const(c.index), ir.Storage.CONSTEXPR)
        for c in cbs
        if kernel_names.cb(c.name) in used
    ]
    compute_program = ir.Program(
        ir.ProgramKind.COMPUTE,
        tuple(sorted({spelling.kernel.include, *low.includes})),
        (),
        spelling.kernel.entry,
        ir.simplify((*constants, init, *compute)),
    )
    fmt_of = {c.name: c.format for c in cbs}
    tensors = [
        TensorInfo(d.name, d.tensor.role, fmt_of[d.name], d.tensor.shape, d.block, d.index)
        for d in kernel.dfbs
        if d.tensor is not None
    ]
    return LoweredKernel(
        kernel=kernel,
        plan_json=plan.to_json(),
        compute_config=compute_config,
        dest_width=width,
        sync=sync,
        dst_capacity=capacity,
        subblocked=low.subblocked,
        compute=compute_program,
        reader=dataflow_program(kernel, spelling.dataflow, helpers, reading=True),
        writer=dataflow_program(kernel, spelling.dataflow, helpers, reading=False),
        cbs=tuple(cbs),
        inputs=tuple(t for t in tensors if t.role == "input"),
        outputs=tuple(t for t in tensors if t.role == "output"),
        strategies=tuple((op_id, s.value) for op_id, s in plan.strategies),
        sources=tuple(sorted({kernel.source, spelling.source, *ops.sources})),
    )


def plan_kernels(
    kernels: Sequence[Kernel],
    ops: OpsModel,
    targets: TargetsModel,
    spelling: SpellingModel,
) -> list[LoweredKernel]:
    """Resolve and lower every kernel; raises SpecErrors with every problem found."""
    sink = DiagnosticSink()
    if not kernels:
        return []
    if spelling.kernel is None or spelling.cb is None or spelling.dataflow is None:
        raise SpecErrors([Diagnostic(kernels[0].mark, "no ttlgen.op_spelling spec says how to spell kernels")])
    resolver = resolution.Resolver(ops, targets)
    helpers = dataflow_helpers(spelling.dataflow, spelling.cb)
    lowered = []
    for kernel in kernels:
        plan = resolver.resolve(kernel, sink)
        if plan is None:
            continue
        try:
            compute_config = resolver.compute_config(plan, kernel.math_fidelity)
        except resolver.pkg.TranslationError as exc:
            # program.json carries the runtime's compute-config descriptor: a target
            # launched through another API, or none, has no kernel to generate.
            sink.error(
                kernel.target_mark,
                f"kernel {kernel.name!r} cannot be generated: its program.json carries ComputeConfigDescriptor fields, and {exc}",
            )
            continue
        result = lower(kernel, ops, spelling, plan, compute_config, helpers, sink)
        if result is not None:
            lowered.append(result)
    if sink:
        raise SpecErrors(sink.diagnostics)
    return lowered
