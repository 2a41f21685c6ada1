"""The C++ constants header of each layout: ``include/<layout>/device/<prefix>_layout.hpp``.

constexpr constants and enumerations in the layout's namespace with the names the runtime
uses (``kStLast``, ``kGaveLimit``, ``kWhereData``, ``kCbTokenCompute``, ``kArgs``, ...).
"""

from __future__ import annotations

from ttlgen.emit._base import EmitContext, GeneratedFile
from ttlgen.emit.abi_c import header_path
from ttlgen.model.layout import Layout, LayoutModel, cpp_constant
from ttlgen.model.project import Project
from ttlgen.plan.project import ProjectPlan


def layout_header_path(layout: Layout) -> str:
    return f"include/{layout.name}/device/{layout.c_prefix.lower()}_layout.hpp"


def emit_layout(layout: Layout, ctx: EmitContext) -> GeneratedFile:
    path = layout_header_path(layout)
    body = ctx.render(
        "cpp/km_layout.hpp.j2",
        layout=layout,
        guard=path.upper().replace("/", "_").replace(".", "_").removeprefix("INCLUDE_"),
        c_header=header_path(layout).removeprefix("include/"),
        cpp=cpp_constant,
    )
    return GeneratedFile(path=path, body=body, sources=(layout.file,))


def emit_layouts(model: LayoutModel, ctx: EmitContext) -> list[GeneratedFile]:
    return [emit_layout(layout, ctx) for layout in model.layouts]


def emit(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
    return emit_layouts(project.layouts, ctx)
