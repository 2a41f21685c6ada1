"""The C++ constants header of each layout: ``include/<layout>/device/<prefix>_layout.hpp``.

constexpr constants and enumerations in the layout's namespace with the names the runtime
uses (``kStLast``, ``kGaveLimit``, ``kWhereData``, ``kCbTokenCompute``, ``kArgs``, ...).
"""

from __future__ import annotations

from ttlgen.emit._base import EmitContext, GeneratedFile
from ttlgen.model.layout import Layout, LayoutModel
from ttlgen.model.project import Project
from ttlgen.plan.project import ProjectPlan


def layout_header_path(layout: Layout) -> str:
    return "include/" + layout.names.cpp_header


def emit_layout(layout: Layout, ctx: EmitContext) -> GeneratedFile:
    path = layout_header_path(layout)
    body = ctx.render("cpp/km_layout.hpp.j2", layout=layout, names=layout.names)
    return GeneratedFile(path=path, body=body, sources=(layout.file,))


def emit_layouts(model: LayoutModel, ctx: EmitContext) -> list[GeneratedFile]:
    return [emit_layout(layout, ctx) for layout in model.layouts]


def emit(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
    return emit_layouts(project.layouts, ctx)
