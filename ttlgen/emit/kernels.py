"""Generated tt-metal kernels: ``kernels/<name>/{compute,reader,writer}.cpp`` and ``program.json``.

Each kernel is resolved and lowered to kernel IR programs by :mod:`ttlgen.plan.kernels`;
this module prints the programs (:mod:`ttlgen.emit._kernel_printer`) and arranges them into
files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ttlgen.emit._base import EmitContext, GeneratedFile
from ttlgen.emit._kernel_printer import PrintedProgram, expression, function, print_program
from ttlgen.model.project import Project
from ttlgen.plan import kernel_ir as ir
from ttlgen.plan.kernels import LoweredKernel
from ttlgen.plan.project import ProjectPlan


def _kernel(source: str, program: ir.Program, defines: Sequence[ir.Define] = ()) -> dict[str, Any]:
    entry: dict[str, Any] = {"source": source}
    if program.compile_time_args:
        entry["compile_time_args"] = [{"accessor_args": name} for name in program.compile_time_args]
    if program.runtime_args:
        entry["runtime_args"] = [{"buffer": name} for name in program.runtime_args]
    if defines:
        # What the host passes as the kernel's defines (ttnn's KernelDescriptor.defines).
        entry["defines"] = {d.name: expression(d.value) for d in defines}
    return entry


def program(k: LoweredKernel) -> dict[str, Any]:
    """program.json: the API level, CBs, the runtime's compute config, DRAM buffers, kernel
    args and the defines the host passes to the compute kernel."""
    return {
        "_kernel": k.kernel.name,
        "_plan": k.plan_json,
        "kernel_api": k.api_level,
        "cbs": [
            {"index": c.index, "format": c.format, "page_size": c.page_size, "num_pages": c.num_pages}
            for c in k.cbs
        ],
        "compute_config": k.compute_config,
        "buffers": [
            {"name": t.name, "role": t.role, "format": t.format, "shape_tiles": list(t.shape)}
            for t in (*k.inputs, *k.outputs)
        ],
        "kernels": {
            "reader": _kernel("reader.cpp", k.reader),
            "compute": _kernel("compute.cpp", k.compute, k.defines),
            "writer": _kernel("writer.cpp", k.writer),
        },
    }


def emit_kernel(k: LoweredKernel, ctx: EmitContext, printed: Mapping[int, str] | None = None) -> list[GeneratedFile]:
    """The files of one kernel, from that kernel alone (``printed``: functions already
    printed, by identity)."""
    base = f"kernels/{k.kernel.name}"

    def code(program: ir.Program) -> PrintedProgram:
        return print_program(program, printed)

    return [
        GeneratedFile(f"{base}/compute.cpp", ctx.render("kernels/compute.cpp.j2", k=k, code=code(k.compute)), k.sources),
        GeneratedFile(f"{base}/reader.cpp", ctx.render("kernels/reader.cpp.j2", k=k, code=code(k.reader)), k.dataflow_sources),
        GeneratedFile(f"{base}/writer.cpp", ctx.render("kernels/writer.cpp.j2", k=k, code=code(k.writer)), k.dataflow_sources),
        GeneratedFile(f"{base}/program.json", ctx.render("kernels/program.json.j2", program=program(k)), k.sources),
    ]


def _helpers_printed(kernels: Sequence[LoweredKernel]) -> dict[int, str]:
    """Each function the kernels' programs define, printed once: the reader's and writer's
    helpers are the same objects for every kernel of an API level."""
    printed: dict[int, str] = {}
    for k in kernels:
        for f in (*k.compute.functions, *k.reader.functions, *k.writer.functions):
            if id(f) not in printed:
                printed[id(f)] = function(f)
    return printed


def emit(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
    del project
    printed = _helpers_printed(plan.kernels)
    return [file for k in plan.kernels for file in emit_kernel(k, ctx, printed)]
