"""Generated tt-metal kernels: ``kernels/<name>/{compute,reader,writer}.cpp`` and ``program.json``.

Each kernel is resolved and lowered to kernel IR programs by :mod:`ttlgen.plan.kernels`;
this module prints the programs (:mod:`ttlgen.emit._kernel_printer`) and arranges them into
files.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ttlgen.emit._base import EmitContext, GeneratedFile
from ttlgen.emit._kernel_printer import expression, print_program
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


def emit_kernel(k: LoweredKernel, ctx: EmitContext) -> list[GeneratedFile]:
    """The files of one kernel, from that kernel alone."""
    base = f"kernels/{k.kernel.name}"
    return [
        GeneratedFile(f"{base}/compute.cpp", ctx.render("kernels/compute.cpp.j2", k=k, code=print_program(k.compute)), k.sources),
        GeneratedFile(f"{base}/reader.cpp", ctx.render("kernels/reader.cpp.j2", k=k, code=print_program(k.reader)), k.dataflow_sources),
        GeneratedFile(f"{base}/writer.cpp", ctx.render("kernels/writer.cpp.j2", k=k, code=print_program(k.writer)), k.dataflow_sources),
        GeneratedFile(f"{base}/program.json", ctx.render("kernels/program.json.j2", program=program(k)), k.sources),
    ]


def emit(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
    del project
    return [file for k in plan.kernels for file in emit_kernel(k, ctx)]
